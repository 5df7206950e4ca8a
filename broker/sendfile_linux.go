package broker

import (
	"io"
	"os"
	"syscall"
)

// sendfile sends n bytes of src from pos to w with sendfile(2), passing the
// offset explicitly so that concurrent readers sharing src's descriptor
// never race on its file position. handled is false when w is not a
// descriptor (the caller copies instead).
func sendfile(w io.Writer, src *os.File, pos, n int64) (handled bool, err error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return false, nil
	}
	dst, err := sc.SyscallConn()
	if err != nil {
		return false, nil
	}
	srcRaw, err := src.SyscallConn()
	if err != nil {
		return false, nil
	}
	var serr error
	cerr := srcRaw.Control(func(sfd uintptr) {
		werr := dst.Write(func(dfd uintptr) bool {
			for n > 0 {
				chunk := n
				if chunk > 1<<30 { // one call sends at most 0x7ffff000 bytes
					chunk = 1 << 30
				}
				m, e := syscall.Sendfile(int(dfd), int(sfd), &pos, int(chunk))
				if m > 0 {
					n -= int64(m)
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until the socket is writable
				case e == syscall.EINTR:
					continue
				case e != nil:
					serr = e
					return true
				case m == 0:
					serr = io.ErrUnexpectedEOF // file shorter than the range
					return true
				}
			}
			return true
		})
		if serr == nil {
			serr = werr
		}
	})
	if serr == nil {
		serr = cerr
	}
	return true, serr
}
