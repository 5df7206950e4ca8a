package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adminPost sends one control API request and decodes its answer.
func adminPost(t *testing.T, admin, method, path string, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+admin+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClusterSIGKILLUnderMoves: a 3-node broker process, an RF 3 topic, an
// idempotent acks=all producer running while a node stops and starts and
// a leader moves, then SIGKILL of the whole process mid-stream: after a
// restart every acknowledged record is there, and no partition's leader
// epoch went back (clients would refuse the metadata).
func TestClusterSIGKILLUnderMoves(t *testing.T) {
	dir := t.TempDir()
	admin := freePort(t)
	args := []string{"-nodes", "3", "-listen", "127.0.0.1:0", "-data", dir, "-durability", "always", "-admin-addr", admin}
	p := serve(t, nil, args...)
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
	adminPost(t, admin, "POST", "/v1/cluster/nodes/1/stop", "", nil)
	time.Sleep(300 * time.Millisecond)
	adminPost(t, admin, "POST", "/v1/cluster/nodes/1/start", "", nil)
	time.Sleep(200 * time.Millisecond)
	adminPost(t, admin, "POST", "/v1/cluster/move-leader", `{"topic":"k","partition":2,"node":1}`, nil)
	time.Sleep(300 * time.Millisecond)
	type placement struct {
		Leader      int32 `json:"leader"`
		LeaderEpoch int32 `json:"leader_epoch"`
	}
	var before [3]placement
	for i := range before {
		adminPost(t, admin, "GET", fmt.Sprintf("/v1/cluster/placement?topic=k&partition=%d", i), "", &before[i])
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

	p = serve(t, nil, args...)
	got := consumeAll(t, p.addr, "k", len(want))
	for _, v := range want {
		if !got[v] {
			t.Fatalf("acknowledged record %s lost (%d acknowledged, %d read)", v, len(want), len(got))
		}
	}
	for i := range before {
		var now placement
		adminPost(t, admin, "GET", fmt.Sprintf("/v1/cluster/placement?topic=k&partition=%d", i), "", &now)
		if now.LeaderEpoch < before[i].LeaderEpoch {
			t.Fatalf("partition %d: leader epoch %d after restart, %d before", i, now.LeaderEpoch, before[i].LeaderEpoch)
		}
	}
	if before[2].LeaderEpoch < 1 {
		t.Fatalf("partition 2's leader moved but its epoch is %d", before[2].LeaderEpoch)
	}
	t.Logf("%d records acknowledged before SIGKILL, all read back; epochs %+v", len(want), before)
}
