package bench

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync is fdatasync(2): what the disk probes measure.
func datasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
