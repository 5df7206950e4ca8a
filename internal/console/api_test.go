package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

type apiErr struct {
	Error string `json:"error"`
}

// wantErr checks a refused request: the status and a JSON message
// containing msg.
func (s *seeded) wantErr(t *testing.T, method, path string, body any, status int, msg string) {
	t.Helper()
	var e apiErr
	got := s.call(t, method, path, body, &e)
	if got != status || !strings.Contains(e.Error, msg) {
		t.Errorf("%s %s: %d %q, want %d with %q", method, path, got, e.Error, status, msg)
	}
}

func TestAPIOverview(t *testing.T) {
	s := seed(t)
	var o struct {
		NodeID       int32 `json:"node_id"`
		Topics       int   `json:"topics"`
		DataDir      string
		DataDirBytes int64  `json:"data_dir_bytes"`
		ProduceBytes uint64 `json:"produce_bytes"`
		UptimeS      int64  `json:"uptime_s"`
		Listeners    []struct {
			Name, Addr string
		} `json:"listeners"`
	}
	if st := s.call(t, "GET", "/api/overview", nil, &o); st != 200 {
		t.Fatalf("status %d", st)
	}
	if o.Topics != 3 || o.DataDirBytes <= 0 || o.ProduceBytes == 0 || len(o.Listeners) != 1 || o.Listeners[0].Addr != s.b.ListenAddr().String() {
		t.Errorf("overview %+v", o)
	}
	s.wantErr(t, "GET", "/api/nonsense", nil, 404, "no such API endpoint")
	s.wantErr(t, "POST", "/api/overview", "{}", 404, "no such API endpoint: POST /api/overview")
}

type topicPart struct {
	Partition   int32 `json:"partition"`
	StartOffset int64 `json:"start_offset"`
	EndOffset   int64 `json:"end_offset"`
	Bytes       int64 `json:"bytes"`
}

type topicResp struct {
	Name          string      `json:"name"`
	Partitions    int         `json:"partitions"`
	Records       int64       `json:"records"`
	Bytes         int64       `json:"bytes"`
	PartitionList []topicPart `json:"partition_list"`
	Configs       []struct {
		Name, Value, Source string
		Default             bool
	} `json:"configs"`
}

func TestAPITopics(t *testing.T) {
	s := seed(t)
	var list []topicResp
	if st := s.call(t, "GET", "/api/topics", nil, &list); st != 200 {
		t.Fatalf("list: %d", st)
	}
	byName := map[string]topicResp{}
	for _, tp := range list {
		byName[tp.Name] = tp
	}
	if _, ok := byName["__consumer_offsets"]; len(list) != 4 || !ok {
		t.Errorf("list: %+v, want the 3 seeded topics and __consumer_offsets", list)
	}
	if e := byName["events"]; e.Partitions != 1 || e.Records != eventsRecords || e.Bytes <= 0 {
		t.Errorf("events %+v", e)
	}

	var created map[string]any
	if st := s.call(t, "POST", "/api/topics", map[string]any{"name": "made", "partitions": 2, "configs": map[string]string{"retention.ms": "60000"}}, &created); st != 201 {
		t.Fatalf("create: %d %v", st, created)
	}
	var d topicResp
	if st := s.call(t, "GET", "/api/topics/made", nil, &d); st != 200 || d.Partitions != 2 || len(d.PartitionList) != 2 {
		t.Fatalf("describe: %d %+v", st, d)
	}
	config := func(name string) string {
		for _, c := range d.Configs {
			if c.Name == name {
				return c.Value + "/" + c.Source
			}
		}
		return ""
	}
	if got := config("retention.ms"); got != "60000/dynamic_topic" {
		t.Errorf("retention.ms %q", got)
	}
	if st := s.call(t, "PATCH", "/api/topics/made/configs", map[string]any{"set": map[string]string{"cleanup.policy": "compact"}, "delete": []string{"retention.ms"}}, nil); st != 200 {
		t.Fatalf("alter: %d", st)
	}
	s.call(t, "GET", "/api/topics/made", nil, &d)
	if got := config("cleanup.policy"); got != "compact/dynamic_topic" {
		t.Errorf("cleanup.policy after alter %q", got)
	}
	if got := config("retention.ms"); strings.HasSuffix(got, "dynamic_topic") {
		t.Errorf("retention.ms after delete %q", got)
	}

	// The user's mistakes: 4xx with a message.
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": "made"}, 409, "TOPIC_ALREADY_EXISTS")
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": ""}, 400, "name: required")
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": "bad/name"}, 400, "INVALID_TOPIC_EXCEPTION")
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": "x", "partitions": -5}, 400, "partitions -5")
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": "x", "partitons": 1}, 400, "unknown field")
	s.wantErr(t, "POST", "/api/topics", "{not json", 400, "request body")
	s.wantErr(t, "POST", "/api/topics", `{"name":"x"} {}`, 400, "more than one")
	s.wantErr(t, "POST", "/api/topics", `{"name":"`+strings.Repeat("a", 2<<20)+`"}`, 413, "larger than")
	s.wantErr(t, "POST", "/api/topics", map[string]any{"name": "x", "configs": map[string]string{"retention.ms": "soon"}}, 400, "INVALID_CONFIG")
	s.wantErr(t, "GET", "/api/topics/nope", nil, 404, `topic "nope" does not exist`)
	s.wantErr(t, "PATCH", "/api/topics/made/configs", map[string]any{}, 400, "nothing to change")
	s.wantErr(t, "PATCH", "/api/topics/made/configs", map[string]any{"set": map[string]string{"retention.ms": "x"}}, 400, "INVALID_CONFIG")
	s.wantErr(t, "PATCH", "/api/topics/nope/configs", map[string]any{"delete": []string{"retention.ms"}}, 404, "does not exist")
	s.wantErr(t, "DELETE", "/api/topics/nope", nil, 404, "does not exist")

	if st := s.call(t, "DELETE", "/api/topics/made", nil, nil); st != 200 {
		t.Fatalf("delete: %d", st)
	}
	s.wantErr(t, "GET", "/api/topics/made", nil, 404, "does not exist")
}

type pageResp struct {
	Partition   int32 `json:"partition"`
	StartOffset int64 `json:"start_offset"`
	EndOffset   int64 `json:"end_offset"`
	From        int64 `json:"from"`
	Next        int64 `json:"next"`
	Prev        int64 `json:"prev"`
	Scanned     int   `json:"scanned"`
	Records     []struct {
		Offset    int64  `json:"offset"`
		Timestamp int64  `json:"timestamp"`
		Key       []byte `json:"key"`
		Value     []byte `json:"value"`
		Headers   []struct {
			Key   string `json:"key"`
			Value []byte `json:"value"`
		} `json:"headers"`
	} `json:"records"`
}

func TestAPIRecords(t *testing.T) {
	s := seed(t)
	var p pageResp
	get := func(q string) {
		t.Helper()
		p = pageResp{}
		if st := s.call(t, "GET", "/api/topics/events/records?"+q, nil, &p); st != 200 {
			t.Fatalf("%s: status %d", q, st)
		}
	}
	get("partition=0")
	if len(p.Records) != 50 || p.Records[0].Offset != 0 || p.Next != 50 || p.EndOffset != eventsRecords {
		t.Fatalf("first page: %d records from %d, next %d, end %d", len(p.Records), p.Records[0].Offset, p.Next, p.EndOffset)
	}
	r := p.Records[7]
	if string(r.Key) != "k-007" || string(r.Value) != `{"n":7,"kind":"odd"}` || len(r.Headers) != 1 || string(r.Headers[0].Value) != "seed" {
		t.Errorf("record 7: %q %q %+v", r.Key, r.Value, r.Headers)
	}
	get("partition=0&offset=200")
	if len(p.Records) != 30 || p.Records[0].Offset != 200 || p.Next != eventsRecords || p.Prev != 150 {
		t.Errorf("last page: %d records, next %d, prev %d", len(p.Records), p.Next, p.Prev)
	}
	get("partition=0&from=latest&limit=10")
	if len(p.Records) != 10 || p.Records[0].Offset != eventsRecords-10 {
		t.Errorf("latest: %d records from %d", len(p.Records), p.From)
	}
	get("partition=0&filter=" + everyTenthMatch)
	if len(p.Records) != eventsRecords/10 || p.Records[1].Offset != 10 || p.Next != eventsRecords {
		t.Errorf("filter: %d records, next %d", len(p.Records), p.Next)
	}
	get("partition=0&filter=k-12")
	if len(p.Records) != 10 || string(p.Records[0].Key) != "k-120" {
		t.Errorf("key filter: %d records", len(p.Records))
	}
	get("partition=0&offset=60")
	ts := p.Records[0].Timestamp
	get(fmt.Sprintf("partition=0&timestamp=%d", ts))
	if len(p.Records) == 0 || p.Records[0].Timestamp < ts || p.Records[0].Offset > 60 {
		t.Errorf("timestamp %d: from %d", ts, p.From)
	}
	get(fmt.Sprintf("partition=0&timestamp=%d", time.Now().Add(time.Hour).UnixMilli()))
	if len(p.Records) != 0 || p.From != eventsRecords {
		t.Errorf("future timestamp: %d records from %d", len(p.Records), p.From)
	}
	// Past the end and below the start are clamped, not errors.
	get("partition=0&offset=99999")
	if len(p.Records) != 0 || p.From != eventsRecords {
		t.Errorf("past the end: %+v", p)
	}
	// A transaction's records, around its commit marker.
	s.call(t, "GET", "/api/topics/orders/records?partition=1", nil, &p)
	if len(p.Records) != txnRecords || p.EndOffset != txnRecords+1 {
		t.Errorf("orders/1: %d records, end %d", len(p.Records), p.EndOffset)
	}

	s.wantErr(t, "GET", "/api/topics/events/records?partition=7", nil, 404, "no partition 7")
	s.wantErr(t, "GET", "/api/topics/events/records?partition=x", nil, 400, "not an integer")
	s.wantErr(t, "GET", "/api/topics/events/records?offset=-3", nil, 400, "must be >= 0")
	s.wantErr(t, "GET", "/api/topics/events/records?timestamp=-1", nil, 400, "must be >= 0")
	s.wantErr(t, "GET", "/api/topics/events/records?limit=5000", nil, 400, "limit 5000")
	s.wantErr(t, "GET", "/api/topics/events/records?from=middle", nil, 400, `from "middle"`)
	s.wantErr(t, "GET", "/api/topics/events/records?filter="+strings.Repeat("z", 300), nil, 400, "filter longer")
	s.wantErr(t, "GET", "/api/topics/nope/records", nil, 404, "does not exist")

	// Produce from the form, then read it back.
	var res struct {
		Partition int32 `json:"partition"`
		Offset    int64 `json:"offset"`
	}
	if st := s.call(t, "POST", "/api/topics/orders/records", map[string]any{"partition": 2, "key": "k", "value": `{"a":1}`, "headers": []map[string]string{{"key": "h", "value": "v"}}}, &res); st != 201 || res.Partition != 2 || res.Offset != 0 {
		t.Fatalf("produce: %d %+v", st, res)
	}
	s.call(t, "GET", "/api/topics/orders/records?partition=2", nil, &p)
	if len(p.Records) != 1 || string(p.Records[0].Key) != "k" || string(p.Records[0].Value) != `{"a":1}` || p.Records[0].Headers[0].Key != "h" {
		t.Errorf("produced record read back: %+v", p.Records)
	}
	if st := s.call(t, "POST", "/api/topics/orders/records", map[string]any{"value": "by key", "key": "some key"}, &res); st != 201 || res.Partition < 0 || res.Partition > 2 {
		t.Errorf("produce by key: %d %+v", st, res)
	}
	s.wantErr(t, "POST", "/api/topics/orders/records", map[string]any{"partition": 3, "value": "x"}, 400, "partition 3")
	s.wantErr(t, "POST", "/api/topics/orders/records", map[string]any{"partition": -2, "value": "x"}, 400, "partition -2")
	s.wantErr(t, "POST", "/api/topics/orders/records", map[string]any{"value": "x", "headers": []map[string]string{{"value": "v"}}}, 400, "empty header key")
	s.wantErr(t, "POST", "/api/topics/orders/records", map[string]any{"value": 5}, 400, "request body")
	s.wantErr(t, "POST", "/api/topics/nope/records", map[string]any{"value": "x"}, 404, "does not exist")
}

type groupResp struct {
	Group    string `json:"group"`
	Type     string `json:"type"`
	State    string `json:"state"`
	TotalLag int64  `json:"total_lag"`
	Members  []struct {
		MemberID string `json:"member_id"`
	} `json:"members"`
	Lag []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Committed int64  `json:"committed"`
		End       int64  `json:"end"`
		Lag       int64  `json:"lag"`
	} `json:"lag"`
}

func TestAPIGroups(t *testing.T) {
	s := seed(t)
	var list []struct{ Group, Type, State string }
	if st := s.call(t, "GET", "/api/groups", nil, &list); st != 200 || len(list) != 1 || list[0].Group != seededGroup || list[0].State != "Empty" {
		t.Fatalf("list: %d %+v", st, list)
	}
	var g groupResp
	if st := s.call(t, "GET", "/api/groups/"+seededGroup, nil, &g); st != 200 {
		t.Fatalf("describe: %d", st)
	}
	if g.Type != "classic" || len(g.Lag) != 1 || g.Lag[0].Committed != billingCommit || g.Lag[0].Lag != eventsRecords-billingCommit || g.TotalLag != eventsRecords-billingCommit {
		t.Errorf("describe: %+v", g)
	}
	for _, c := range []struct {
		body any
		want int64
	}{
		{map[string]any{"to": "end"}, eventsRecords},
		{map[string]any{"to": "start"}, 0},
		{map[string]any{"to": "timestamp", "timestamp": time.Now().Add(time.Hour).UnixMilli()}, eventsRecords},
		{map[string]any{"to": "timestamp", "timestamp": 0, "topic": "events"}, 0},
	} {
		g = groupResp{}
		if st := s.call(t, "POST", "/api/groups/"+seededGroup+"/reset", c.body, &g); st != 200 || len(g.Lag) != 1 || g.Lag[0].Committed != c.want {
			t.Errorf("reset %v: %d %+v, want commit %d", c.body, st, g.Lag, c.want)
		}
	}
	s.wantErr(t, "GET", "/api/groups/nope", nil, 404, `group "nope" does not exist`)
	s.wantErr(t, "POST", "/api/groups/"+seededGroup+"/reset", map[string]any{"to": "yesterday"}, 400, `to "yesterday"`)
	s.wantErr(t, "POST", "/api/groups/"+seededGroup+"/reset", map[string]any{"to": "timestamp", "timestamp": -4}, 400, "must be >= 0")
	s.wantErr(t, "POST", "/api/groups/"+seededGroup+"/reset", map[string]any{"to": "start", "topic": "nope"}, 404, "nope")
	s.wantErr(t, "POST", "/api/groups/nope/reset", map[string]any{"to": "start"}, 404, "does not exist")

	// A group with a live member refuses.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	member, err := kgo.NewClient(kgo.SeedBrokers(s.b.Addr()), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("events"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for {
		if member.PollRecords(ctx, 10).NumRecords() > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("live member got no records")
		}
	}
	s.wantErr(t, "POST", "/api/groups/live/reset", map[string]any{"to": "start", "topic": "events"}, 409, "only when it is empty")
	s.call(t, "GET", "/api/groups/live", nil, &g)
	if len(g.Members) != 1 || g.State != "Stable" {
		t.Errorf("live group: %+v", g)
	}
}

func TestAPITransactionsForwarding(t *testing.T) {
	s := seed(t)
	var tx struct {
		Transactions []struct {
			ID         string           `json:"id"`
			State      string           `json:"state"`
			Partitions map[string][]int `json:"partitions"`
		} `json:"transactions"`
		Producers []struct {
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
		} `json:"producers"`
	}
	if st := s.call(t, "GET", "/api/transactions", nil, &tx); st != 200 || len(tx.Transactions) != 1 || tx.Transactions[0].ID != seededTxnID || tx.Transactions[0].State != "CompleteCommit" {
		t.Fatalf("transactions: %d %+v", st, tx)
	}
	var fw []any
	if st := s.call(t, "GET", "/api/forwarding", nil, &fw); st != 200 || len(fw) != 0 {
		t.Errorf("forwarding: %d %v", st, fw)
	}
	var groups []any
	if st := s.call(t, "GET", "/api/forwarding/groups", nil, &groups); st != 200 || groups == nil || len(groups) != 0 {
		t.Errorf("forwarding groups without forwarding: %d %v, want []", st, groups)
	}
}

// forwardGroupRow is a row of /api/forwarding/groups, spelled out here
// rather than decoded into uplink.GroupOffsetSync: the field names are
// the API the console page and scripts read, and a renamed JSON tag on
// the uplink side must fail this test, not silently follow it.
type forwardGroupRow struct {
	Group          string    `json:"group"`
	Topic          string    `json:"topic"`
	Partition      int32     `json:"partition"`
	UpstreamTopic  string    `json:"upstream_topic"`
	LocalOffset    int64     `json:"local_offset"`
	UpstreamOffset int64     `json:"upstream_offset"`
	Committed      int64     `json:"committed"`
	Checkpoint     int64     `json:"checkpoint"`
	Lag            int64     `json:"lag"`
	SyncedAt       time.Time `json:"synced_at"`
	Err            string    `json:"error"`
}

// seedForwarding is seed with events forwarded to a real upstream broker
// (as central.events), group offsets synced and checkpointed every 50 ms;
// it waits until the seeded group's commit is synced and checkpointed.
func seedForwarding(t *testing.T) *seeded {
	t.Helper()
	up := minikafkatest.New(t)
	s := seed(t, minikafka.WithUpstream(up.Addr()), minikafka.WithForward("events=central."),
		minikafka.WithForwardGroupOffsets(50*time.Millisecond), minikafka.WithForwardCheckpoints("edge", 50*time.Millisecond))
	deadline := time.Now().Add(20 * time.Second)
	for {
		var rows []forwardGroupRow
		s.call(t, "GET", "/api/forwarding/groups", nil, &rows)
		if len(rows) == 1 && rows[0].Committed == billingCommit && rows[0].Checkpoint == billingCommit && rows[0].Lag == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the seeded group was not synced upstream: %+v", rows)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAPIForwardingGroups: with the group offset sync on, the seeded
// group's commit on the forwarded topic shows with its upstream
// translation and lag 0 once synced.
func TestAPIForwardingGroups(t *testing.T) {
	s := seedForwarding(t)
	var rows []forwardGroupRow
	if st := s.call(t, "GET", "/api/forwarding/groups", nil, &rows); st != 200 || len(rows) != 1 {
		t.Fatalf("forwarding groups: %d %+v", st, rows)
	}
	// The upstream topic holds only what was forwarded: offsets match.
	if r := rows[0]; r.Group != seededGroup || r.Topic != "events" || r.Partition != 0 || r.UpstreamTopic != "central.events" ||
		r.LocalOffset != billingCommit || r.UpstreamOffset != billingCommit || r.Committed != billingCommit || r.Checkpoint != billingCommit || r.Lag != 0 ||
		r.SyncedAt.IsZero() || r.Err != "" {
		t.Errorf("row: %+v", r)
	}
	var fw []struct {
		Topic string `json:"topic"`
	}
	if st := s.call(t, "GET", "/api/forwarding", nil, &fw); st != 200 || len(fw) != 1 || fw[0].Topic != "events" {
		t.Errorf("forwarding: %d %+v", st, fw)
	}
}

// TestAPIUnderSASL: the console works when the only listener requires
// SASL, since it reaches the broker in-process.
func TestAPIUnderSASL(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSASL(map[string]string{"alice": "secret"}, "SCRAM-SHA-256", "PLAIN"), minikafka.WithTopic("locked", 1),
		minikafka.WithHTTPAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := &seeded{b: b, base: "http://" + b.HTTPAddr().String()}
	var users []struct {
		User        string
		Credentials []struct{ Mechanism string }
	}
	if st := s.call(t, "GET", "/api/scram", nil, &users); st != 200 || len(users) != 1 || users[0].User != "alice" || len(users[0].Credentials) == 0 {
		t.Errorf("scram: %d %+v", st, users)
	}
	var res struct{ Offset int64 }
	if st := s.call(t, "POST", "/api/topics/locked/records", map[string]any{"value": "hello"}, &res); st != 201 {
		t.Fatalf("produce under SASL: %d", st)
	}
	var p pageResp
	if st := s.call(t, "GET", "/api/topics/locked/records?partition=0", nil, &p); st != 200 || len(p.Records) != 1 || string(p.Records[0].Value) != "hello" {
		t.Errorf("browse under SASL: %d %+v", st, p)
	}
}

// TestAPIRefusesCrossOrigin: a page of another site cannot make the
// browser change anything on a console on localhost.
func TestAPIRefusesCrossOrigin(t *testing.T) {
	s := seed(t)
	req, _ := http.NewRequest("DELETE", s.base+"/api/topics/events", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("cross-site delete: %d", resp.StatusCode)
	}
	req, _ = http.NewRequest("GET", s.base+"/api/topics", nil)
	req.Host = "rebound.example:80"
	resp, err = httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("foreign Host on loopback: %d", resp.StatusCode)
	}
	var d topicResp
	if st := s.call(t, "GET", "/api/topics/events", nil, &d); st != 200 || d.Records != eventsRecords {
		t.Errorf("events after the refused delete: %d %+v", st, d)
	}
}

// TestAPIConsumerGroup: a KIP-848 group is described with
// ConsumerGroupDescribe: its type, epoch, members and their assignment.
func TestAPIConsumerGroup(t *testing.T) {
	s := seed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	member, err := kgo.NewClient(kgo.SeedBrokers(s.b.Addr()), kgo.ConsumerGroup("nextgen"), kgo.ConsumeTopics("orders"),
		kgo.Balancers(kgo.RangeBalancer()), kgo.ServerSideBalancer())
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	for member.PollRecords(ctx, 10).NumRecords() == 0 {
		if ctx.Err() != nil {
			t.Fatal("the KIP-848 member got no records")
		}
	}
	var g struct {
		Type    string `json:"type"`
		State   string `json:"state"`
		Epoch   int32  `json:"epoch"`
		Members []struct {
			Assigned map[string][]int32 `json:"assigned"`
		} `json:"members"`
	}
	for {
		if st := s.call(t, "GET", "/api/groups/nextgen", nil, &g); st != 200 {
			t.Fatalf("describe: %d", st)
		}
		if len(g.Members) == 1 && len(g.Members[0].Assigned["orders"]) == 3 || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if g.Type != "consumer" || g.State != "Stable" || g.Epoch < 1 || len(g.Members) != 1 || fmt.Sprint(g.Members[0].Assigned["orders"]) != "[0 1 2]" {
		t.Errorf("KIP-848 group: %+v", g)
	}
}

// partition=all pages down from the end with a cursor, also when a
// filter makes one read window hold more matches than a page.
func TestAPIRecordsAll(t *testing.T) {
	s := seed(t)
	type allResp struct {
		Cursor  string `json:"cursor"`
		Next    string `json:"next"`
		Records []struct {
			Partition int32 `json:"partition"`
			Offset    int64 `json:"offset"`
		} `json:"records"`
	}
	get := func(q string) (p allResp) {
		t.Helper()
		if st := s.call(t, "GET", "/api/topics/events/records?partition=all&"+q, nil, &p); st != 200 {
			t.Fatalf("%s: status %d", q, st)
		}
		return p
	}
	offsets := func(p allResp) (out []int64) {
		for _, r := range p.Records {
			out = append(out, r.Offset)
		}
		return out
	}
	p := get("limit=100")
	if len(p.Records) != 100 || p.Records[0].Offset != eventsRecords-1 || p.Records[99].Offset != eventsRecords-100 || p.Next != "0:130" || p.Cursor != "0:230" {
		t.Fatalf("first page: %d records %v, cursor %q next %q", len(p.Records), offsets(p)[:3], p.Cursor, p.Next)
	}
	p = get("limit=100&before=" + p.Next)
	if len(p.Records) != 100 || p.Records[0].Offset != 129 || p.Next != "0:30" {
		t.Fatalf("second page: %d records, next %q", len(p.Records), p.Next)
	}
	p = get("limit=100&before=" + p.Next)
	if len(p.Records) != 30 || p.Next != "" {
		t.Fatalf("last page: %d records, next %q", len(p.Records), p.Next)
	}
	p = get("limit=5&filter=" + everyTenthMatch)
	if got := fmt.Sprint(offsets(p)); got != "[220 210 200 190 180]" || p.Next != "0:180" {
		t.Fatalf("filtered: %s next %q", got, p.Next)
	}
	p = get("limit=5&filter=" + everyTenthMatch + "&before=" + p.Next)
	if got := fmt.Sprint(offsets(p)); got != "[170 160 150 140 130]" {
		t.Fatalf("filtered page 2: %s next %q", got, p.Next)
	}
	s.wantErr(t, "GET", "/api/topics/events/records?partition=all&offset=3", nil, 400, "newest first")
	s.wantErr(t, "GET", "/api/topics/events/records?partition=all&from=start", nil, 400, "newest first")
	s.wantErr(t, "GET", "/api/topics/events/records?partition=all&before=x", nil, 400, "PARTITION:OFFSET")
	s.wantErr(t, "GET", "/api/topics/events/records?partition=all&before=4:1", nil, 404, "no partition 4")
}

// TestAPIScramUsers: the console creates a SCRAM user, changes its
// password and deletes it, and a real SASL login sees each change; bad
// input is refused with the reason.
func TestAPIScramUsers(t *testing.T) {
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"),
		minikafka.WithSASL(map[string]string{"alice": "secret"}, "SCRAM-SHA-256", "SCRAM-SHA-512"), minikafka.WithTopic("locked", 1),
		minikafka.WithHTTPAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := &seeded{b: b, base: "http://" + b.HTTPAddr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// login reports whether user can authenticate with pass under the
	// mechanism (a fresh client, so no connection is reused).
	login := func(user, pass string, sha512 bool) error {
		mech := scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
		if sha512 {
			mech = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.SASL(mech), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
		defer lcancel()
		return cl.Ping(lctx)
	}
	type user struct {
		User        string `json:"user"`
		Credentials []struct {
			Mechanism  string `json:"mechanism"`
			Iterations int32  `json:"iterations"`
		} `json:"credentials"`
	}

	var u user
	if st := s.call(t, "PUT", "/api/scram/bob", map[string]any{"password": "bob-pw-1"}, &u); st != 200 ||
		u.User != "bob" || len(u.Credentials) != 1 || u.Credentials[0].Mechanism != "SCRAM-SHA-256" || u.Credentials[0].Iterations != 8192 {
		t.Fatalf("create bob: %d %+v", st, u)
	}
	if err := login("bob", "bob-pw-1", false); err != nil {
		t.Errorf("bob cannot log in after the console created him: %v", err)
	}
	if st := s.call(t, "PUT", "/api/scram/bob", map[string]any{"password": "bob-pw-2", "mechanism": "SCRAM-SHA-512", "iterations": 4096}, &u); st != 200 || len(u.Credentials) != 2 {
		t.Fatalf("add SHA-512 to bob: %d %+v", st, u)
	}
	if err := login("bob", "bob-pw-2", true); err != nil {
		t.Errorf("bob's SHA-512 login: %v", err)
	}
	// A new password replaces the old one.
	if st := s.call(t, "PUT", "/api/scram/bob", map[string]any{"password": "bob-pw-3", "mechanism": "SCRAM-SHA-256"}, &u); st != 200 {
		t.Fatalf("change bob's password: %d", st)
	}
	if err := login("bob", "bob-pw-1", false); err == nil {
		t.Error("bob's old password still works")
	}
	if err := login("bob", "bob-pw-3", false); err != nil {
		t.Errorf("bob's new password: %v", err)
	}

	s.wantErr(t, "PUT", "/api/scram/bob", map[string]any{"password": "x", "mechanism": "MD5"}, 400, `mechanism "MD5"`)
	s.wantErr(t, "PUT", "/api/scram/bob", map[string]any{"password": ""}, 400, "password: required")
	s.wantErr(t, "PUT", "/api/scram/bob", map[string]any{"password": "x", "iterations": 100}, 400, "iterations 100")
	s.wantErr(t, "PUT", "/api/scram/bob", map[string]any{"password": "x", "salt": "y"}, 400, "unknown field")
	s.wantErr(t, "DELETE", "/api/scram/nobody", nil, 404, "nobody")
	s.wantErr(t, "DELETE", "/api/scram/bob?mechanism=SCRAM-SHA-1", nil, 400, "SCRAM-SHA-1")

	// A name with a slash and an @ travels escaped in the path.
	if st := s.call(t, "PUT", "/api/scram/svc%2Fingest%40corp", map[string]any{"password": "svc-pw"}, &u); st != 200 || u.User != "svc/ingest@corp" {
		t.Fatalf("create svc/ingest@corp: %d %+v", st, u)
	}
	if err := login("svc/ingest@corp", "svc-pw", false); err != nil {
		t.Errorf("svc/ingest@corp cannot log in: %v", err)
	}
	if st := s.call(t, "DELETE", "/api/scram/svc%2Fingest%40corp", nil, nil); st != 200 {
		t.Fatalf("delete svc/ingest@corp: %d", st)
	}

	// One mechanism, then the whole user.
	if st := s.call(t, "DELETE", "/api/scram/bob?mechanism=SCRAM-SHA-512", nil, nil); st != 200 {
		t.Fatalf("remove bob's SHA-512: %d", st)
	}
	if err := login("bob", "bob-pw-2", true); err == nil {
		t.Error("bob's removed SHA-512 credential still logs in")
	}
	s.wantErr(t, "DELETE", "/api/scram/bob?mechanism=SCRAM-SHA-512", nil, 404, "bob")
	if st := s.call(t, "DELETE", "/api/scram/alice", nil, nil); st != 200 {
		t.Fatalf("delete alice: %d", st)
	}
	if err := login("alice", "secret", false); err == nil {
		t.Error("deleted alice still logs in")
	}
	var users []user
	if st := s.call(t, "GET", "/api/scram", nil, &users); st != 200 || len(users) != 1 || users[0].User != "bob" || len(users[0].Credentials) != 1 {
		t.Errorf("users left: %d %+v, want bob with one credential", st, users)
	}
}
