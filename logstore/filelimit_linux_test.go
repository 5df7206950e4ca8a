//go:build linux

package logstore

import (
	"syscall"
	"testing"
)

// The shared file cache follows the process's open-file limit: half of
// it, never below the floor the broker asks for.
func TestFileCacheSizeFollowsLimit(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Max < 4000 {
		t.Skipf("hard open-file limit %d is below what the test sets", rl.Max)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl) })
	for _, c := range []struct{ soft, floor, want int }{{4000, 512, 2000}, {800, 512, 512}} {
		lim := syscall.Rlimit{Cur: uint64(c.soft), Max: rl.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		if got := FileCacheSize(c.floor); got != c.want {
			t.Errorf("soft limit %d, floor %d: %d files, want %d", c.soft, c.floor, got, c.want)
		}
	}
}
