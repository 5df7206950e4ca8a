package protocol

import (
	"io"
	"os"
)

// SendFile writes n bytes of f starting at pos to w, the connection a
// BodyWriter receives. When w is a TCP connection on Linux it uses
// sendfile(2) with an explicit offset, so the bytes never pass through user
// space and f's file position is neither used nor moved: concurrent fetches
// may share one descriptor. Elsewhere it copies through a buffer. A file
// shorter than pos+n yields io.ErrUnexpectedEOF.
func SendFile(w io.Writer, f *os.File, pos, n int64) (int64, error) {
	if n <= 0 {
		return 0, nil
	}
	if written, handled, err := sendFile(w, f, pos, n); handled {
		return written, err
	}
	written, err := io.Copy(w, io.NewSectionReader(f, pos, n))
	if err == nil && written < n {
		err = io.ErrUnexpectedEOF
	}
	return written, err
}
