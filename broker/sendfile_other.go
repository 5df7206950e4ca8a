//go:build !linux

package broker

import (
	"io"
	"os"
)

// sendfile is Linux-only here; elsewhere the caller copies.
func sendfile(io.Writer, *os.File, int64, int64) (bool, error) { return false, nil }
