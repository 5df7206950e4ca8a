package logstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// crashAfter is an Injector that lets n mutating operations through, fails
// the next (tearing a write at a random byte), and fails every mutating
// operation after it: the machine is dead from then on.
type crashAfter struct {
	mu      sync.Mutex
	n       int
	rng     *rand.Rand
	crashed bool
}

func (c *crashAfter) Inject(op vfs.Op, path string, n int) (int, error) {
	if op == vfs.OpRead || op == vfs.OpOpen {
		return n, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return 0, vfs.ErrInjected
	}
	if c.n > 0 {
		c.n--
		return n, nil
	}
	c.crashed = true
	if op == vfs.OpWrite && n > 0 {
		return c.rng.IntN(n + 1), vfs.ErrInjected
	}
	return 0, vfs.ErrInjected
}

type attempt struct {
	base int64
	data []byte
}

// TestCrashAlways: concurrent appenders under SyncAlways, crash at a random
// operation; after recovery every acknowledged batch is there, byte for
// byte, and the log is a valid contiguous prefix of what was attempted.
func TestCrashAlways(t *testing.T) {
	rounds := 150
	if testing.Short() {
		rounds = 30
	}
	var totalAcked, crashes, lost, fromCheckpoint, unsealed int
	defer func() {
		t.Logf("%d rounds, %d crashed, %d acknowledged batches checked, %d unacknowledged tails lost, %d recovered from a checkpoint, %d with a segment whose seal had not finished", rounds, crashes, totalAcked, lost, fromCheckpoint, unsealed)
		if crashes < rounds/2 || totalAcked < rounds*10 {
			t.Errorf("the test did not exercise crashes: %d crashes, %d acks", crashes, totalAcked)
		}
		if fromCheckpoint < rounds/10 {
			t.Errorf("only %d recoveries started from a recovery checkpoint", fromCheckpoint)
		}
		if unsealed < rounds/10 {
			t.Errorf("only %d recoveries found a segment whose seal had not finished", unsealed)
		}
	}()
	for round := 0; round < rounds; round++ {
		seed := uint64(round)
		rng := rand.New(rand.NewPCG(seed, 1))
		mem := vfs.NewMem()
		inj := &crashAfter{n: rng.IntN(400), rng: rand.New(rand.NewPCG(seed, 2))}
		cfg := DefaultConfig()
		cfg.SegmentBytes = int64(500 + rng.IntN(3000))
		cfg.IndexIntervalBytes = 200
		// Recovery checkpoints smaller than a segment, so crashes land
		// around them too.
		checkpoint := int64(100 + seed%8*150)
		l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: SyncAlways}, RecoveryCheckpointBytes: checkpoint})
		if err != nil {
			continue // crashed while creating the log
		}
		var mu sync.Mutex
		acked := map[int64][]byte{}
		attempts := map[int64][]byte{}
		var deleted int64
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 60; i++ {
					b := batch(t, 1+(g+i)%5, int64(i), fmt.Sprintf("g%d-%d", g, i))
					res, err := l.Append(b)
					if err != nil {
						return
					}
					mu.Lock()
					attempts[res.BaseOffset] = b
					mu.Unlock()
					if err := l.WaitDurable(context.Background(), res.LastOffset+1); err != nil {
						return
					}
					mu.Lock()
					acked[res.BaseOffset] = b
					mu.Unlock()
					if g == 0 && i%20 == 19 {
						if n, err := l.DeleteRecords(res.BaseOffset); err == nil {
							mu.Lock()
							deleted = max(deleted, n)
							mu.Unlock()
						}
					}
				}
			}()
		}
		wg.Wait()
		l.Close()
		crashed := mem.CrashClone()
		l2, rep, err := Open(Options{FS: crashed, Dir: "/p", Config: cfg, Sync: SyncPolicy{Mode: SyncAlways}, RecoveryCheckpointBytes: checkpoint})
		if err != nil {
			t.Fatalf("round %d: recovery failed: %v", round, err)
		}
		if l2.LogStartOffset() < deleted {
			t.Fatalf("round %d: log start %d, DeleteRecords acknowledged %d", round, l2.LogStartOffset(), deleted)
		}
		got := readAll(t, l2, l2.LogStartOffset())
		present := map[int64][]byte{}
		if err := records.Split(got, func(_ int, h records.BatchHeader, b []byte) error {
			present[h.BaseOffset] = b
			if want, ok := attempts[h.BaseOffset]; !ok || !bytes.Equal(want, b) {
				t.Fatalf("round %d: batch at %d was never appended there", round, h.BaseOffset)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for off, b := range acked {
			if off < l2.LogStartOffset() {
				continue
			}
			if !bytes.Equal(present[off], b) {
				t.Fatalf("round %d (crashed=%v): acknowledged batch at %d lost (leo %d, report %+v)", round, inj.crashed, off, l2.LogEndOffset(), rep)
			}
		}
		if inj.crashed {
			crashes++
		}
		if len(rep.Checkpointed) > 0 {
			fromCheckpoint++
		}
		if len(rep.Unsealed) > 0 {
			unsealed++
		}
		totalAcked += len(acked)
		lost += len(attempts) - len(present) // includes batches below the log start
		l2.Close()
	}
}

// TestCrashNever: under SyncNever a crash may lose the unsynced tail but the
// log is still a contiguous prefix of what was appended.
func TestCrashNever(t *testing.T) {
	fromCheckpoint, unsealed := 0, 0
	defer func() {
		t.Logf("%d recoveries from a recovery checkpoint, %d with a segment whose seal had not finished", fromCheckpoint, unsealed)
		if fromCheckpoint < 15 {
			t.Errorf("only %d recoveries started from a recovery checkpoint", fromCheckpoint)
		}
		if unsealed < 15 {
			t.Errorf("only %d recoveries found a segment whose seal had not finished", unsealed)
		}
	}()
	for round := 0; round < 150; round++ {
		seed := uint64(round)
		rng := rand.New(rand.NewPCG(seed, 3))
		mem := vfs.NewMem()
		inj := &crashAfter{n: rng.IntN(300), rng: rand.New(rand.NewPCG(seed, 4))}
		cfg := DefaultConfig()
		cfg.SegmentBytes = int64(300 + rng.IntN(2000))
		cfg.IndexIntervalBytes = 100
		checkpoint := int64(100 + seed%8*150)
		l, _, err := Open(Options{FS: vfs.NewFaultFS(mem, inj), Dir: "/p", Config: cfg, RecoveryCheckpointBytes: checkpoint})
		if err != nil {
			continue
		}
		var attempts []attempt
		for i := 0; i < 200; i++ {
			b := batch(t, 1+i%3, int64(i), fmt.Sprint("n", i))
			base := l.LogEndOffset()
			_, err := l.Append(b)
			attempts = append(attempts, attempt{base, b})
			if err != nil {
				break
			}
			if rng.IntN(10) == 0 {
				l.Sync()
				// Recovery checkpoints run in the background: let
				// one that is due land, so crashes after it are
				// tested too.
				l.waitCheckpoint()
			}
		}
		l.Close()
		l2, rep, err := Open(Options{FS: mem.CrashClone(), Dir: "/p", Config: cfg})
		if err != nil {
			t.Fatalf("round %d: recovery failed: %v", round, err)
		}
		if len(rep.Checkpointed) > 0 {
			fromCheckpoint++
		}
		if len(rep.Unsealed) > 0 {
			unsealed++
		}
		got := readAll(t, l2, 0)
		i := 0
		if err := records.Split(got, func(_ int, h records.BatchHeader, b []byte) error {
			if i >= len(attempts) || attempts[i].base != h.BaseOffset || !bytes.Equal(attempts[i].data, b) {
				t.Fatalf("round %d: batch %d (offset %d) is not the prefix of what was appended", round, i, h.BaseOffset)
			}
			i++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if i < len(attempts) && l2.LogEndOffset() != attempts[i].base {
			t.Fatalf("round %d: leo %d after %d batches", round, l2.LogEndOffset(), i)
		}
		l2.Close()
	}
}
