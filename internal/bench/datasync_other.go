//go:build !linux

package bench

import "os"

// datasync falls back to a full fsync where fdatasync(2) is not offered.
func datasync(f *os.File) error { return f.Sync() }
