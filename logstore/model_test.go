package logstore

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/minikafka/minikafka/internal/records"
	"github.com/minikafka/minikafka/internal/vfs"
)

// model is the obvious in-memory log the real one is checked against.
type model struct {
	batches  []mbatch
	logStart int64
	leo      int64
}

type mbatch struct {
	base, last int64
	firstTs    int64
	data       []byte
}

// expectRead computes what Read must return; bound (exclusive, 0 = none)
// keeps only batches that end below it.
func (m *model) expectRead(off int64, maxBytes int, minOne bool, bound int64) []byte {
	var out []byte
	for _, b := range m.batches {
		if b.last < off {
			continue
		}
		if bound > 0 && b.last >= bound {
			break
		}
		if len(out)+len(b.data) > maxBytes && !(minOne && len(out) == 0) {
			break
		}
		out = append(out, b.data...)
	}
	return out
}

func (m *model) offsetForTimestamp(ts int64) (int64, int64, bool) {
	for _, b := range m.batches {
		for o := b.base; o <= b.last; o++ {
			t := b.firstTs + (o - b.base)
			if o >= m.logStart && t >= ts {
				return o, t, true
			}
		}
	}
	return -1, -1, false
}

// truncate drops batches containing offsets >= off.
func (m *model) truncate(off int64) {
	for i, b := range m.batches {
		if b.last >= off {
			m.batches = m.batches[:i]
			m.leo = b.base
			break
		}
	}
	m.logStart = min(m.logStart, m.leo)
}

func (m *model) dropBelow(ls int64) {
	m.logStart = ls
	i := 0
	for i < len(m.batches) && m.batches[i].last < ls {
		i++
	}
	m.batches = m.batches[i:]
}

func TestModel(t *testing.T) {
	seeds := 12
	if testing.Short() || raceEnabled {
		seeds = 4
	}
	for seed := 0; seed < seeds; seed++ {
		useOS := seed%4 == 3
		t.Run("", func(t *testing.T) { runModel(t, uint64(seed), useOS) })
	}
}

func runModel(t *testing.T, seed uint64, useOS bool) {
	rng := rand.New(rand.NewPCG(seed, 99))
	var e *testEnv
	if useOS {
		e = osEnv(t)
	} else {
		e = memEnv(t)
	}
	e.opts.Config.SegmentBytes = int64(400 + rng.IntN(4000))
	e.opts.Config.IndexIntervalBytes = 1 + rng.IntN(1000)
	l, _ := e.open(t)
	defer func() { l.Close() }()
	m := &model{}
	check := func(op string) {
		t.Helper()
		if l.LogEndOffset() != m.leo || l.HighWatermark() != m.leo || l.LogStartOffset() != m.logStart {
			t.Fatalf("seed %d after %s: leo %d/%d hw %d log start %d/%d", seed, op, l.LogEndOffset(), m.leo, l.HighWatermark(), l.LogStartOffset(), m.logStart)
		}
	}
	for step := 0; step < 400; step++ {
		switch op := rng.IntN(100); {
		case op < 45: // append 1-3 batches in one call
			var buf []byte
			var mbs []mbatch
			off := m.leo
			for k := 0; k < 1+rng.IntN(3); k++ {
				n := 1 + rng.IntN(5)
				ts := int64(rng.IntN(10000))
				recs := make([]records.Record, n)
				for i := range recs {
					recs[i] = records.Record{TimestampDelta: int64(i), Value: bytes.Repeat([]byte{byte(step)}, rng.IntN(300))}
				}
				codec := records.CodecNone
				if rng.IntN(4) == 0 {
					codec = records.CodecSnappy
				}
				b, err := records.AppendBatch(nil, records.BatchSpec{BaseOffset: 777, Codec: codec, FirstTimestamp: ts, ProducerID: -1}, recs)
				if err != nil {
					t.Fatal(err)
				}
				records.SetBaseOffset(b, off) // what the log will write
				mbs = append(mbs, mbatch{base: off, last: off + int64(n) - 1, firstTs: ts, data: append([]byte(nil), b...)})
				off += int64(n)
				records.SetBaseOffset(b, 777)
				buf = append(buf, b...)
			}
			res, err := l.Append(buf)
			if err != nil {
				t.Fatal(err)
			}
			if res.BaseOffset != m.leo || res.LastOffset != off-1 {
				t.Fatalf("append result %+v, model leo %d", res, m.leo)
			}
			m.batches = append(m.batches, mbs...)
			m.leo = off
			check("append")
		case op < 65: // read
			off := m.logStart + rng.Int64N(m.leo-m.logStart+1)
			maxBytes := rng.IntN(3000)
			minOne := rng.IntN(2) == 0
			bound := int64(0)
			if rng.IntN(3) == 0 {
				bound = off + rng.Int64N(m.leo-off+1) // like an LSO
			}
			r, err := l.Read(ReadOptions{Offset: off, MaxBytes: maxBytes, MinOneBatch: minOne, MaxOffset: bound})
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.AppendTo(nil)
			r.Release()
			if err != nil {
				t.Fatal(err)
			}
			if want := m.expectRead(off, maxBytes, minOne, bound); !bytes.Equal(got, want) {
				t.Fatalf("seed %d step %d: Read(%d, %d, %v, bound %d) returned %d bytes, model %d", seed, step, off, maxBytes, minOne, bound, len(got), len(want))
			}
		case op < 70:
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
		case op < 75: // retention by size
			c := l.config()
			c.RetentionBytes = int64(rng.IntN(8000))
			l.SetConfig(c)
			if _, err := l.EnforceRetention(epoch); err != nil {
				t.Fatal(err)
			}
			ls := l.LogStartOffset()
			if ls < m.logStart || ls > m.leo {
				t.Fatalf("retention moved log start from %d to %d (leo %d)", m.logStart, ls, m.leo)
			}
			if ls != m.logStart {
				boundary := false
				for _, b := range m.batches {
					boundary = boundary || b.base == ls
				}
				if !boundary && ls != m.leo {
					t.Fatalf("retention log start %d is not a batch boundary", ls)
				}
				m.dropBelow(ls)
			}
			c.RetentionBytes = -1
			l.SetConfig(c)
			check("retention")
		case op < 80: // truncate
			off := m.logStart + rng.Int64N(m.leo-m.logStart+1)
			if err := l.Truncate(off); err != nil {
				t.Fatal(err)
			}
			m.truncate(off)
			check("truncate")
		case op < 85: // delete records
			off := m.logStart + rng.Int64N(m.leo-m.logStart+1)
			n, err := l.DeleteRecords(off)
			if err != nil || n != max(off, m.logStart) {
				t.Fatal(n, err)
			}
			m.dropBelow(max(off, m.logStart))
			check("delete records")
		case op < 90: // offset for timestamp
			ts := int64(rng.IntN(10010))
			wo, wt, wok := m.offsetForTimestamp(ts)
			o, tt, ok, err := l.OffsetForTimestamp(ts)
			if err != nil || ok != wok || o != wo || tt != wt {
				t.Fatalf("seed %d: OffsetForTimestamp(%d) = %d %d %v %v, model %d %d %v", seed, ts, o, tt, ok, err, wo, wt, wok)
			}
		case op < 95: // clean reopen
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			var rep *RecoveryReport
			l, rep = e.open(t)
			if len(rep.Rescanned) != 0 || len(rep.Truncated) != 0 {
				t.Fatalf("clean reopen: %+v", rep)
			}
			check("reopen")
		default: // crash after an fsync: nothing may change
			mem, ok := e.fs.(*vfs.MemFS)
			if !ok {
				continue
			}
			if err := l.Sync(); err != nil {
				t.Fatal(err)
			}
			crashed := mem.CrashClone()
			l.Close()
			e.fs, e.opts.FS = crashed, crashed
			var rep *RecoveryReport
			l, rep = e.open(t)
			if len(rep.Truncated) != 0 {
				t.Fatalf("crash after sync lost data: %+v", rep)
			}
			check("crash")
		}
	}
	// Final full comparison.
	if got, want := readAll(t, l, m.logStart), m.expectRead(m.logStart, 1<<30, true, 0); !bytes.Equal(got, want) {
		t.Fatalf("seed %d: final content differs: %d vs %d bytes", seed, len(got), len(want))
	}
}
