package minikafkatest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// The faults the README teaches cost a Client little: a produce through
// two NOT_LEADER_OR_FOLLOWER answers and one through a 500 ms Down()/Up()
// each take well under the seconds kgo's defaults need (5 s between
// metadata refreshes, a backoff up to seconds).
func TestClientFastUnderFaults(t *testing.T) {
	b := minikafkatest.New(t, minikafka.WithTopic("t", 1))
	cl := minikafkatest.Client(t, b, kgo.DefaultProduceTopic("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	produce := func() time.Duration {
		t.Helper()
		start := time.Now()
		if err := cl.ProduceSync(ctx, kgo.StringRecord("v")).FirstErr(); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	produce() // connected, metadata known

	if _, err := b.AddFault(minikafka.Fault{Keys: []int16{0}, Topic: "t", ErrorCode: 6, Times: 2}); err != nil {
		t.Fatal(err)
	}
	notLeader := produce()

	b.Down()
	up := time.AfterFunc(500*time.Millisecond, func() {
		if err := b.Up(); err != nil {
			t.Error(err)
		}
	})
	defer up.Stop()
	down := produce()
	t.Logf("through two NOT_LEADER_OR_FOLLOWER: %v; through a 500 ms Down/Up: %v", notLeader, down)
	// Bounds with room for a loaded machine: kgo's defaults take ~10 s
	// and ~6 s here.
	if notLeader > 3*time.Second {
		t.Errorf("produce through two NOT_LEADER_OR_FOLLOWER took %v", notLeader)
	}
	if down > 3*time.Second {
		t.Errorf("produce through a 500 ms Down/Up took %v", down)
	}
}

// deadlineTB is a test whose deadline is near.
type deadlineTB struct {
	testing.TB
	deadline time.Time
}

func (d deadlineTB) Deadline() (time.Time, bool) { return d.deadline, true }

// A wait on a condition that never holds, called with
// context.Background(), ends by itself: at the test's deadline (a second
// early), or after the timeout WithWaitTimeout gives, saying what it last
// saw. A context with its own deadline keeps it.
func TestWaitsBounded(t *testing.T) {
	near := deadlineTB{TB: t, deadline: time.Now().Add(2500 * time.Millisecond)}
	b := minikafkatest.New(near, minikafka.WithTopic("t", 1))
	start := time.Now()
	err := b.WaitHighWatermark(context.Background(), "t", 0, 5)
	if d := time.Since(start); err == nil || d > 2*time.Second {
		t.Fatalf("wait with the test's deadline 2.5 s away returned %v after %v", err, d)
	}
	for _, want := range []string{"t/0 high watermark 5", "the test's deadline", "last seen: high watermark 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}

	b = minikafkatest.New(t, minikafka.WithTopic("t", 1), minikafka.WithWaitTimeout(200*time.Millisecond, time.Time{}))
	start = time.Now()
	err = b.WaitGroupStable(context.Background(), "g", 1)
	if d := time.Since(start); err == nil || d > 5*time.Second || !strings.Contains(err.Error(), "gave up after 200ms") ||
		!strings.Contains(err.Error(), "last seen: unknown group") {
		t.Fatalf("wait with a 200 ms limit: %v after %v", err, d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = b.WaitTopic(ctx, "nope")
	if err == nil || strings.Contains(err.Error(), "WithWaitTimeout") || !strings.Contains(err.Error(), "last seen: absent") {
		t.Fatalf("wait with its own deadline: %v", err)
	}
}
