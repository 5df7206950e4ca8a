package vfs

import (
	"errors"
	"syscall"
)

// IsNoSpace reports whether err is the filesystem being out of space or
// quota (ENOSPC, EDQUOT): the one write failure storage undoes and retries
// once space returns, where any other I/O error (EIO) stays sticky.
func IsNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
