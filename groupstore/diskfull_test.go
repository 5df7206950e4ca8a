package groupstore

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// fullDisk tears every write half way with ENOSPC while full is set (a
// compaction's new generation fails the same way).
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) Inject(op vfs.Op, path string, n int) (int, error) {
	if d.full.Load() && op == vfs.OpWrite {
		return n / 2, syscall.ENOSPC
	}
	return n, nil
}

// A commit that meets a full disk fails, is not visible, and leaves the
// store taking commits again once there is space, without a reopen, both
// for appends and for compactions; a reopen finds exactly the commits that
// succeeded.
func TestDiskFullCommitsResume(t *testing.T) {
	for _, compact := range []int64{0, 600} {
		t.Run(fmt.Sprint("compact-bytes-", compact), func(t *testing.T) {
			disk := &fullDisk{}
			mem := vfs.NewMem()
			o := Options{FS: vfs.NewFaultFS(mem, disk), Dir: "/g", Sync: SyncAlways, CompactBytes: compact}
			s, _ := open(t, o)
			want := map[string]int64{}
			commit := func(group string, at int64) error {
				err := s.Commit(group, []Commit{{Topic: "t", Partition: 0, Offset: off(at)}})
				if err == nil {
					want[group] = at
				}
				return err
			}
			for i := int64(0); i < 30; i++ {
				must(t, commit(fmt.Sprint("g", i%3), i))
			}
			disk.full.Store(true)
			for i := int64(100); i < 110; i++ {
				err := commit(fmt.Sprint("g", i%3), i)
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("commit on a full disk: %v, want ENOSPC", err)
				}
			}
			if s.Err() != nil {
				t.Fatalf("the store is sticky after an undone write: %v", s.Err())
			}
			for g, at := range want {
				if got, _ := s.Get(g, "t", 0); got.Offset != at {
					t.Fatalf("%s reads %d while full, want the last successful %d", g, got.Offset, at)
				}
			}
			disk.full.Store(false)
			for i := int64(200); i < 230; i++ {
				must(t, commit(fmt.Sprint("g", i%3), i))
			}
			must(t, s.Close())
			s2, _ := open(t, Options{FS: mem, Dir: "/g", Sync: SyncAlways})
			defer s2.Close()
			for g, at := range want {
				if got, _ := s2.Get(g, "t", 0); got.Offset != at {
					t.Fatalf("reopened: %s at %d, want %d", g, got.Offset, at)
				}
			}
		})
	}
}

// A store closed (or synced) right after a commit failed on a full disk
// reports no error for it: its caller was told, and nothing else is
// pending. A reopen finds the commits that succeeded.
func TestDiskFullCloseAfterFailedCommit(t *testing.T) {
	for _, policy := range []SyncMode{SyncAlways, SyncNever} {
		t.Run(fmt.Sprint("sync-", policy), func(t *testing.T) {
			disk := &fullDisk{}
			mem := vfs.NewMem()
			s, _ := open(t, Options{FS: vfs.NewFaultFS(mem, disk), Dir: "/g", Sync: policy})
			must(t, s.Commit("g", []Commit{{Topic: "t", Partition: 0, Offset: off(5)}}))
			disk.full.Store(true)
			if err := s.Commit("g", []Commit{{Topic: "t", Partition: 0, Offset: off(9)}}); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("commit on a full disk: %v, want ENOSPC", err)
			}
			disk.full.Store(false)
			if err := s.Sync(); err != nil {
				t.Fatalf("Sync after a failed commit: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close after a failed commit: %v", err)
			}
			s2, _ := open(t, Options{FS: mem, Dir: "/g", Sync: SyncAlways})
			defer s2.Close()
			if got, _ := s2.Get("g", "t", 0); got.Offset != 5 {
				t.Fatalf("reopened: offset %d, want the acknowledged 5", got.Offset)
			}
		})
	}
}
