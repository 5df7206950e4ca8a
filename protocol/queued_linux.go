package protocol

import (
	"net"

	"golang.org/x/sys/unix"
)

// queuedBytes is how many bytes the kernel holds received on nc and not yet
// read (SIOCINQ); 0 when it cannot tell. A frame mostly there already is
// read into a buffer of its whole size (readFrame).
func queuedBytes(nc net.Conn) int {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return 0
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
