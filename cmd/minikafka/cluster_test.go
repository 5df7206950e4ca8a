package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterSIGKILLUnderMoves: a 3-node broker process, an RF 3 topic, an
// idempotent acks=all producer running while a node stops and starts and
// a leader moves, then SIGKILL of the whole process mid-stream: after a
// restart every acknowledged record is there, and no partition's leader
// epoch went back (clients would refuse the metadata).
func TestClusterSIGKILLUnderMoves(t *testing.T) {
	args := []string{"-nodes", "3", "-data", t.TempDir(), "-durability", "always"}
	p, admin := serveAdmin(t, args...)
	call := func(method, path, body string) map[string]any {
		t.Helper()
		code, out := adminCall(t, admin, method, path, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, code, out)
		}
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.addr), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.DefaultProduceTopic("k"), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }),
		kgo.MetadataMinAge(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 3, nil, "k"); err != nil {
		t.Fatal(err)
	}

	var (
		mu    sync.Mutex
		acked []string
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf("r%d", i)
			if err := cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
				return // the process was killed under it
			}
			mu.Lock()
			acked = append(acked, v)
			mu.Unlock()
		}
	}()
	time.Sleep(300 * time.Millisecond)
	call("POST", "/v1/cluster/nodes/1/stop", "")
	time.Sleep(300 * time.Millisecond)
	call("POST", "/v1/cluster/nodes/1/start", "")
	time.Sleep(200 * time.Millisecond)
	call("POST", "/v1/cluster/move-leader", `{"topic":"k","partition":2,"node":1}`)
	time.Sleep(300 * time.Millisecond)
	epoch := func(i int) float64 {
		return call("GET", fmt.Sprintf("/v1/cluster/placement?topic=k&partition=%d", i), "")["leader_epoch"].(float64)
	}
	var before [3]float64
	for i := range before {
		before[i] = epoch(i)
	}
	p.cmd.Process.Kill()
	p.wait(t)
	close(stop)
	// The restarted process listens on other ports: an idempotent
	// record in flight would be retried for ever; Close fails it.
	cl.Close()
	<-done
	mu.Lock()
	want := append([]string(nil), acked...)
	mu.Unlock()
	if len(want) < 20 {
		t.Fatalf("only %d records acknowledged before the kill", len(want))
	}

	p, admin = serveAdmin(t, args...)
	got := consumeAll(t, p.addr, "k", len(want))
	for _, v := range want {
		if !got[v] {
			t.Fatalf("acknowledged record %s lost (%d acknowledged, %d read)", v, len(want), len(got))
		}
	}
	for i := range before {
		if now := epoch(i); now < before[i] {
			t.Fatalf("partition %d: leader epoch %v after restart, %v before", i, now, before[i])
		}
	}
	if before[2] < 1 {
		t.Fatalf("partition 2's leader moved but its epoch is %v", before[2])
	}
	t.Logf("%d records acknowledged before SIGKILL, all read back; epochs %+v", len(want), before)
}
