package groupstore

import (
	"fmt"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestCrashThroughFaultFS fails the Nth write, fsync, directory fsync or
// rename (tearing writes), keeps going until the store refuses, then
// simulates power loss (only fsynced data and durable directory entries
// survive) and reopens. Every acknowledged commit must survive; nothing that
// was never attempted may appear. A small CompactBytes makes the run cross
// several compactions, so faults also hit the atomic replace.
func TestCrashThroughFaultFS(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSyncDir, vfs.OpRename} {
		for n := 1; n <= 45; n++ {
			t.Run(fmt.Sprintf("%v-%d", op, n), func(t *testing.T) {
				mem := vfs.NewMem()
				inj := &vfs.FailNth{Op: op, N: n, Tear: 7, Sticky: true}
				const parts = 3
				acked := map[int32]int64{}
				tried := map[int32]int64{}
				s, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/data/groups", Sync: SyncAlways, CompactBytes: 600})
				if err != nil {
					if !inj.Fired() {
						t.Fatal(err)
					}
				} else {
					for i := range int64(80) {
						p := int32(i % parts)
						tried[p] = i
						if err := s.Commit("g", []Commit{{"t", p, off(i)}}); err != nil {
							if !inj.Fired() {
								t.Fatalf("commit %d failed without a fault: %v", i, err)
							}
							break
						}
						acked[p] = i
					}
					_ = s.Close()
				}
				if (op == vfs.OpWrite || op == vfs.OpSync) && !inj.Fired() {
					t.Fatalf("fault %v #%d never fired", op, n)
				}
				s2, rep, err := Open(Options{FS: mem.CrashClone(), Dir: "/data/groups"})
				if err != nil {
					t.Fatalf("open after crash: %v", err)
				}
				defer s2.Close()
				for p := range int32(parts) {
					got, ok := s2.Get("g", "t", p)
					a, wasAcked := acked[p]
					switch {
					case wasAcked && !ok:
						t.Fatalf("partition %d: acknowledged offset %d lost (report %+v)", p, a, rep)
					case wasAcked && got.Offset < a:
						t.Fatalf("partition %d: offset %d older than acknowledged %d", p, got.Offset, a)
					case ok && (got.Offset > tried[p] || got.Offset%parts != int64(p) || got != off(got.Offset)):
						t.Fatalf("partition %d: offset %+v was never committed", p, got)
					}
				}
			})
		}
	}
}
