//go:build unix

package spool

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time of the whole test process, so a
// benchmark can report CPU per record, which a busy shared machine distorts
// far less than wall-clock throughput.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
