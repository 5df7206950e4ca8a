package ratelog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is a concurrency-safe log sink that counts records.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *lines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *lines) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := strings.Split(strings.TrimRight(s.buf.String(), "\n"), "\n")
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

func newSink() (*lines, *slog.Logger) {
	s := &lines{}
	return s, slog.New(slog.NewTextHandler(s, nil))
}

func TestFloodOneWindowYieldsFirstLineAndCount(t *testing.T) {
	sink, log := newSink()
	l := New(log, time.Hour)
	const n = 20000
	for i := range n {
		l.Warn("metadata: invalid topic name", "client", fmt.Sprintf("127.0.0.1:%d", i), "topic", "a*b")
	}
	got := sink.all()
	if len(got) != 1 {
		t.Fatalf("before flush: %d lines, want 1: %q", len(got), got)
	}
	if !strings.Contains(got[0], "client=127.0.0.1:0 ") {
		t.Errorf("first line is not the first call's: %s", got[0])
	}
	l.Close()
	got = sink.all()
	if len(got) != 2 {
		t.Fatalf("after close: %d lines, want 2: %q", len(got), got)
	}
	if !strings.Contains(got[1], fmt.Sprintf("and %d more like it in the last 1h0m0s", n-1)) ||
		!strings.Contains(got[1], fmt.Sprintf("suppressed=%d", n-1)) ||
		!strings.Contains(got[1], fmt.Sprintf("client=127.0.0.1:%d ", n-1)) ||
		!strings.Contains(got[1], "level=WARN") {
		t.Errorf("summary line: %s", got[1])
	}
}

func TestFloodAcrossIntervalsIsBounded(t *testing.T) {
	sink, log := newSink()
	const interval = 20 * time.Millisecond
	l := New(log, interval)
	defer l.Close()
	// A concurrent flood for ~10 intervals, bounded in count and time.
	start := time.Now()
	var calls sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for g := range 4 {
		calls.Add(1)
		go func() {
			defer calls.Done()
			for i := 0; i < 200000 && time.Since(start) < 10*interval; i++ {
				l.Warn("refused", "g", g)
				mu.Lock()
				total++
				mu.Unlock()
			}
		}()
	}
	calls.Wait()
	elapsed := time.Since(start)
	// Wait for the last summaries: one interval to report, one to forget.
	deadline := time.Now().Add(2 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.keys)
		l.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(interval / 2)
	}
	got := sink.all()
	// One first line plus at most one summary per interval elapsed (+2 for
	// timer slack at both ends).
	maxLines := 1 + int(elapsed/interval) + 2
	if len(got) > maxLines {
		t.Fatalf("%d lines for %d calls in %v, want at most %d", len(got), total, elapsed, maxLines)
	}
	if len(got) < 2 {
		t.Fatalf("%d lines, want a first line and summaries: %q", len(got), got)
	}
	// Every call is accounted for: the first line plus the summed counts.
	sum := 1
	for _, line := range got[1:] {
		var n int
		i := strings.Index(line, "suppressed=")
		if i < 0 {
			t.Fatalf("line without a count: %s", line)
		}
		fmt.Sscanf(line[i:], "suppressed=%d", &n)
		sum += n
	}
	if sum != total {
		t.Fatalf("lines account for %d calls, made %d", sum, total)
	}
}

func TestQuietKeyLogsAgainAfterInterval(t *testing.T) {
	sink, log := newSink()
	const interval = 10 * time.Millisecond
	l := New(log, interval)
	defer l.Close()
	l.Warn("once")
	// Nothing held back: after the interval the key is forgotten.
	deadline := time.Now().Add(2 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.keys)
		l.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("key not forgotten")
		}
		time.Sleep(interval)
	}
	l.Warn("once")
	if got := sink.all(); len(got) != 2 || strings.Contains(got[1], "more like it") {
		t.Fatalf("lines: %q", got)
	}
}

func TestKeysAreIndependent(t *testing.T) {
	sink, log := newSink()
	l := New(log, time.Hour)
	for range 100 {
		l.Warn("a")
		l.Info("b")
		l.LogKey(context.Background(), slog.LevelWarn, "c", "c for user x")
	}
	if got := sink.all(); len(got) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(got), got)
	}
	l.Close()
	got := sink.all()
	if len(got) != 6 {
		t.Fatalf("%d lines after close, want 6: %q", len(got), got)
	}
	for _, line := range got[3:] {
		if !strings.Contains(line, "and 99 more like it") {
			t.Errorf("summary: %s", line)
		}
	}
}

func TestKeyTableIsBounded(t *testing.T) {
	sink, log := newSink()
	l := New(log, time.Hour)
	for i := range 3 * MaxKeys {
		l.LogKey(context.Background(), slog.LevelWarn, fmt.Sprint(i), "varying")
	}
	l.mu.Lock()
	n := len(l.keys)
	l.mu.Unlock()
	if n > MaxKeys+1 {
		t.Fatalf("%d keys held", n)
	}
	if got := len(sink.all()); got != MaxKeys+1 {
		t.Fatalf("%d lines, want %d", got, MaxKeys+1)
	}
	l.Close()
	got := sink.all()
	if last := got[len(got)-1]; !strings.Contains(last, fmt.Sprintf("log lines of other kinds (and %d more", 2*MaxKeys-1)) {
		t.Fatalf("overflow summary: %s", last)
	}
}

func TestDisabledLevelAndNilLimiter(t *testing.T) {
	sink := &lines{}
	log := slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelError}))
	l := New(log, time.Hour)
	l.Warn("not written")
	l.Close()
	if got := sink.all(); len(got) != 0 {
		t.Fatalf("lines: %q", got)
	}
	var nl *Limiter
	nl.Warn("dropped")
	nl.Close()
}
