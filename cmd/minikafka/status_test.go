package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/protocol"
)

// forward-status against real brokers: a table and JSON while forwarding
// works, with the group offset sync table once a local group's commit is
// synced upstream, the upstream's failure once it is gone, a clear error
// and exit 1 when the broker is unreachable.
func TestForwardStatus(t *testing.T) {
	up, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	upClosed := false
	defer func() {
		if !upClosed {
			up.Close()
		}
	}()
	local, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithUpstream(up.Addr()), minikafka.WithForward("edge-*=central."),
		minikafka.WithTopic("edge-a", 2), minikafka.WithTopic("plain", 1), minikafka.WithForwardGroupOffsets(50*time.Millisecond),
		minikafka.WithForwardCheckpoints("edge", 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(local.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "edge-a", Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil := func(what string, cond func([]uplink.ForwardStat) bool) {
		t.Helper()
		for !cond(local.ForwardStats()) {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s: %+v", what, local.ForwardStats())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitUntil("everything shipped", func(s []uplink.ForwardStat) bool {
		return len(s) == 2 && s[0].Lag == 0 && s[1].Lag == 0 && s[0].State == "idle" && s[1].State == "idle"
	})
	// A local group commits on the forwarded topic; the sync carries it
	// upstream (offsets there equal the local ones: the upstream topic
	// holds only what was forwarded).
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: "edge-a", Partition: 0, At: 5, LeaderEpoch: -1})
	commits.Add(kadm.Offset{Topic: "edge-a", Partition: 1, At: 3, LeaderEpoch: -1})
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, "billing", commits); err != nil {
		t.Fatal(err)
	}
	for synced := 0; synced != 2; {
		synced = 0
		for _, g := range local.ForwardGroupOffsets() {
			if g.Group == "billing" && g.Lag == 0 && g.Committed == g.LocalOffset && g.Checkpoint == g.LocalOffset && g.Err == "" {
				synced++
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for the group sync: %+v", local.ForwardGroupOffsets())
		}
		time.Sleep(20 * time.Millisecond)
	}
	status := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"forward-status"}, args...), func(string) (string, bool) { return "", false }, &out, &errOut, nil)
		return code, out.String(), errOut.String()
	}

	code, out, errOut := status("-bootstrap", local.Addr())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	tables := strings.Split(strings.TrimSpace(out), "\n\n")
	if len(tables) != 2 {
		t.Fatalf("want the partition and the group table:\n%s", out)
	}
	lines := strings.Split(tables[0], "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TOPIC") {
		t.Fatalf("output:\n%s", out)
	}
	for p, line := range lines[1:] {
		f := strings.Fields(line)
		// topic partition upstream hw acked lag spool pressure encryption producer state error
		if len(f) != 12 || f[0] != "edge-a" || f[1] != string(rune('0'+p)) || f[2] != "central.edge-a" ||
			f[3] != "5" || f[4] != "5" || f[5] != "0" || f[8] != "off" || !strings.HasSuffix(f[9], "/0") || f[10] != "idle" || f[11] != "-" {
			t.Errorf("row %d: %q", p, line)
		}
	}

	groupLines := strings.Split(tables[1], "\n")
	if len(groupLines) != 3 || strings.Join(strings.Fields(groupLines[0]), " ") != "GROUP TOPIC PARTITION LOCAL OFFSET UPSTREAM OFFSET UPSTREAM COMMITTED CHECKPOINT LAG SYNCED ERROR" {
		t.Fatalf("group table:\n%s", tables[1])
	}
	for p, want := range []string{"5", "3"} {
		f := strings.Fields(groupLines[1+p])
		// group topic partition local upstream committed checkpoint lag synced("1.2s ago") error
		if len(f) != 11 || f[0] != "billing" || f[1] != "edge-a" || f[2] != string(rune('0'+p)) ||
			f[3] != want || f[4] != want || f[5] != want || f[6] != want || f[7] != "0" || f[9] != "ago" || f[10] != "-" {
			t.Errorf("group row %d: %q", p, groupLines[1+p])
		}
	}
	code, out, errOut = status("-bootstrap", local.Addr(), "-json", "-groups", "edge-a")
	if code != 0 {
		t.Fatalf("json groups: exit %d: %s", code, errOut)
	}
	var gjs []uplink.GroupOffsetSync
	if err := json.Unmarshal([]byte(out), &gjs); err != nil {
		t.Fatalf("json groups: %v\n%s", err, out)
	}
	if len(gjs) != 2 || gjs[1].Group != "billing" || gjs[1].Partition != 1 || gjs[1].UpstreamTopic != "central.edge-a" ||
		gjs[1].LocalOffset != 3 || gjs[1].Committed != 3 || gjs[1].Checkpoint != 3 || gjs[1].Lag != 0 || gjs[1].SyncedAt.IsZero() {
		t.Errorf("json groups: %+v", gjs)
	}
	if code, out, _ = status("-bootstrap", local.Addr(), "-json", "-groups", "plain"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("json groups of a non-forwarded topic: exit %d, %q", code, out)
	}

	code, out, errOut = status("-bootstrap", local.Addr(), "-json", "edge-a")
	if code != 0 {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var js []uplink.ForwardStat
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(js) != 2 || js[1].Partition != 1 || js[1].UpstreamTopic != "central.edge-a" || js[1].Forwarded != 5 || js[1].UpstreamAcked != 5 {
		t.Errorf("json: %+v", js)
	}
	if code, out, _ = status("-bootstrap", local.Addr(), "plain"); code != 0 || !strings.Contains(out, "no forwarded partitions") {
		t.Errorf("non-forwarded topic: exit %d, %q", code, out)
	}

	// The upstream goes away: the lag grows and the error shows.
	up.Close()
	upClosed = true
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "edge-a", Partition: 0, Value: []byte("later")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitUntil("the upstream failure", func(s []uplink.ForwardStat) bool { return len(s) == 2 && s[0].LastError != "" })
	code, out, errOut = status("-bootstrap", local.Addr())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	row := strings.Split(strings.TrimSpace(out), "\n")[1]
	if f := strings.Fields(row); len(f) < 12 || f[3] != "6" || f[4] != "5" || f[5] != "1" || f[8] != "off" || f[10] != "retrying" {
		t.Errorf("row while the upstream is down: %q", row)
	}

	// Nothing listening: a clear message and exit 1.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	code, _, errOut = status("-bootstrap", dead, "-timeout", "3s")
	if code != 1 || !strings.Contains(errOut, "cannot reach the broker at "+dead) {
		t.Errorf("unreachable: exit %d, stderr %q", code, errOut)
	}
}

// A forward config value that is not a JSON array of rows (a broker of
// another version, a damaged answer) is an error and adds nothing; good
// values append in order.
func TestAppendJSONRows(t *testing.T) {
	rows := []uplink.ForwardStat{{Topic: "a"}}
	for _, bad := range []string{"", "{", `{"topic":"b"}`, `[{"partition":"x"}]`} {
		got, err := appendJSONRows(rows, bad)
		if err == nil || len(got) != 1 {
			t.Errorf("%q: %d rows, err %v; want the one row and an error", bad, len(got), err)
		}
	}
	got, err := appendJSONRows(rows, `[{"topic":"b","partition":1},{"topic":"c"}]`)
	if err != nil || len(got) != 3 || got[1].Topic != "b" || got[1].Partition != 1 || got[2].Topic != "c" {
		t.Fatalf("good rows: %+v, %v", got, err)
	}
}

// forward-status against a broker whose forwarding config values are not
// the JSON rows it expects (another program answering, or a newer broker
// changed the format): a clear error naming the topic and the config, exit
// 1, and no table printed from half a reply.
func TestForwardStatusMalformedAnswer(t *testing.T) {
	for _, c := range []struct{ config, value string }{
		{forwardPartitionsConfig, `[{"topic": "t", "partition": "zero"}]`},
		{forwardGroupOffsetsConfig, `{"not": "an array"}`},
		{forwardPartitionsConfig, `[{"topic": "t"`},
	} {
		addr := fakeConfigBroker(t, c.config, c.value)
		var out, errOut bytes.Buffer
		code := run(context.Background(), []string{"forward-status", "-bootstrap", addr, "t"}, func(string) (string, bool) { return "", false }, &out, &errOut, nil)
		if code != 1 {
			t.Errorf("%s = %s: exit %d, want 1 (stdout %q)", c.config, c.value, code, out.String())
		}
		if want := "topic t: bad " + c.config + ":"; !strings.Contains(errOut.String(), want) {
			t.Errorf("%s = %s: stderr %q, want it to say %q", c.config, c.value, errOut.String(), want)
		}
		if out.Len() != 0 {
			t.Errorf("%s = %s: printed %q from a malformed answer", c.config, c.value, out.String())
		}
	}
}

// fakeConfigBroker serves, on a real listener, the Kafka requests
// forward-status makes (ApiVersions, Metadata, DescribeConfigs), answering
// DescribeConfigs on any topic with config = value.
func fakeConfigBroker(t *testing.T, config, value string) string {
	t.Helper()
	var port int32
	srv, err := protocol.Listen(protocol.Config{Addr: "127.0.0.1:0"}, protocol.HandlerFunc(func(_ context.Context, req *protocol.Request) protocol.Reply {
		switch r := req.Body.(type) {
		case *kmsg.ApiVersionsRequest:
			resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
			for _, k := range []struct{ key, max int16 }{{3, 12}, {18, 3}, {32, 4}} {
				resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k.key, MaxVersion: k.max})
			}
			return protocol.Reply{Response: resp}
		case *kmsg.MetadataRequest:
			resp := r.ResponseKind().(*kmsg.MetadataResponse)
			resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "127.0.0.1", Port: port}}
			resp.ControllerID = 1
			return protocol.Reply{Response: resp}
		case *kmsg.DescribeConfigsRequest:
			resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
			for _, rr := range r.Resources {
				res := kmsg.NewDescribeConfigsResponseResource()
				res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
				cfg := kmsg.NewDescribeConfigsResponseResourceConfig()
				cfg.Name, cfg.Value = config, kmsg.StringPtr(value)
				res.Configs = append(res.Configs, cfg)
				resp.Resources = append(resp.Resources, res)
			}
			return protocol.Reply{Response: resp}
		}
		return protocol.Reply{Err: fmt.Errorf("fake broker: key %d not served", req.Key)}
	}))
	if err != nil {
		t.Fatal(err)
	}
	port = int32(srv.Addr().(*net.TCPAddr).Port)
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return srv.Addr().String()
}
