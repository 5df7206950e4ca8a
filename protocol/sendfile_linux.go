package protocol

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// maxSendfileChunk keeps one sendfile call under Linux's 0x7ffff000 limit.
const maxSendfileChunk = 1 << 30

func sendFile(w io.Writer, f *os.File, pos, n int64) (written int64, handled bool, err error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return 0, false, nil
	}
	dst, err := sc.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	src, err := f.SyscallConn()
	if err != nil {
		return 0, false, nil
	}
	var serr error
	cerr := src.Control(func(srcFD uintptr) {
		serr = dst.Write(func(dstFD uintptr) bool {
			for written < n {
				off := pos + written
				m, e := syscall.Sendfile(int(dstFD), int(srcFD), &off, int(min(n-written, maxSendfileChunk)))
				if m > 0 {
					written += int64(m)
				}
				switch {
				case errors.Is(e, syscall.EAGAIN):
					return false // wait until the socket is writable
				case errors.Is(e, syscall.EINTR):
				case e != nil:
					err = e
					return true
				case m == 0:
					err = io.ErrUnexpectedEOF // the file ends before pos+n
					return true
				}
			}
			return true
		})
	})
	if err == nil {
		err = errors.Join(serr, cerr)
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		err = &os.SyscallError{Syscall: "sendfile", Err: err}
	}
	return written, true, err
}
