package compat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// TestClusterJavaTransactCoordinatorMove: Apache Kafka's Java client runs a
// transactional consume-transform-produce loop (java/.../ClusterTxn.java)
// on three nodes while this test moves the transactional ID's coordinator,
// an output partition's leader, the group's coordinator and the
// transaction coordinator again, each once the group has committed more:
// the output holds every input record exactly once, in order per
// partition, and the group's offsets are the input's ends.
func TestClusterJavaTransactCoordinatorMove(t *testing.T) {
	javaTools(t)
	cp, err := buildJava()
	if err != nil {
		t.Fatal(err)
	}
	b := minikafkatest.New(t, minikafka.WithNodes(3))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	const in, out, group, txid, total = "jctp-in", "jctp-out", "jctp-group", "jctp-txid", 450
	for _, tp := range []string{in, out} {
		if _, err := adm.CreateTopic(ctx, clusterParts, 3, nil, tp); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, "java", "-cp", cp, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
		"minikafka.compat.ClusterTxn", strings.Join(b.Addrs(), ","), in, out, group, txid, fmt.Sprint(total))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	feeder := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	go func() {
		for i := 0; i < total && ctx.Err() == nil; i++ {
			r := &kgo.Record{Topic: in, Partition: int32(i % clusterParts), Value: []byte(fmt.Sprintf("in-%d", i))}
			if err := feeder.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Errorf("feed: %v", err)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	other := func(n int32) int32 { return (n + 1) % 3 }
	moves := []struct {
		after int64
		what  string
		do    func() (string, error)
	}{
		{40, "transaction coordinator", func() (string, error) {
			c, _ := b.Coordinator("transaction", txid)
			return fmt.Sprintf("%d -> %d", c, other(c)), b.MoveCoordinator("transaction", txid, other(c))
		}},
		{100, "leader of the output's partition 0", func() (string, error) {
			pl, _ := b.Placement(out, 0)
			return fmt.Sprintf("%d -> %d", pl.Leader, other(pl.Leader)), b.MoveLeader(out, 0, other(pl.Leader))
		}},
		{160, "group coordinator", func() (string, error) {
			c, _ := b.Coordinator("group", group)
			return fmt.Sprintf("%d -> %d", c, other(c)), b.MoveCoordinator("group", group, other(c))
		}},
		{220, "transaction coordinator", func() (string, error) {
			c, _ := b.Coordinator("transaction", txid)
			return fmt.Sprintf("%d -> %d", c, other(c)), b.MoveCoordinator("transaction", txid, other(c))
		}},
	}
	var exitErr error
	running := true
	for len(moves) > 0 && running {
		select {
		case exitErr = <-exited:
			running = false
			continue
		case <-time.After(50 * time.Millisecond):
		}
		offs, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			continue
		}
		var sum int64
		offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
		if sum >= moves[0].after {
			how, err := moves[0].do()
			if err != nil {
				t.Fatalf("move the %s: %v", moves[0].what, err)
			}
			t.Logf("moved the %s %s with %d input records committed", moves[0].what, how, sum)
			moves = moves[1:]
		}
	}
	if running {
		select {
		case exitErr = <-exited:
		case <-ctx.Done():
			t.Fatalf("ClusterTxn did not finish: %s", lastLines(stderr.String(), 20))
		}
	}
	if exitErr != nil {
		t.Fatalf("ClusterTxn: %v: %s", exitErr, lastLines(stderr.String(), 30))
	}
	if len(moves) > 0 {
		t.Fatalf("the loop finished before the move of the %s", moves[0].what)
	}
	var res struct{ Commits, Transformed int }
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("ClusterTxn answered %q: %v", stdout.String(), err)
	}
	t.Logf("java: %d transactions committed, %d records", res.Commits, res.Transformed)
	if res.Transformed != total {
		t.Fatalf("java transformed %d records, fed %d", res.Transformed, total)
	}
	checkTransformed(t, b.Addrs(), adm, in, out, group, total)
}
