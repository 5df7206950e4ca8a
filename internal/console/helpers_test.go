package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// The seeded broker's state, which the tests compare pages and answers
// against.
const (
	eventsRecords   = 230 // in events/0
	billingCommit   = 100 // billing's commit on events/0
	txnRecords      = 5   // committed by txn-1 to orders/1
	seededGroup     = "billing"
	seededTxnID     = "txn-1"
	everyTenthMatch = "tenth" // in the value of every 10th record of events
)

type seeded struct {
	b    *minikafka.Broker
	base string // http://127.0.0.1:port
	cl   *kgo.Client
	adm  *kadm.Client
}

// seed starts a broker with the console on a free loopback port and fills
// it: topics orders (3 partitions), events (1, eventsRecords records with
// JSON values), empty (1); a group with a commit; a committed transaction.
func seed(t testing.TB, opts ...minikafka.Option) *seeded {
	t.Helper()
	opts = append([]minikafka.Option{minikafka.WithHTTPAddr("127.0.0.1:0"), minikafka.WithGroupInitialRebalanceDelay(0),
		minikafka.WithTopic("orders", 3), minikafka.WithTopic("events", 1), minikafka.WithTopic("empty", 1)}, opts...)
	b := minikafkatest.New(t, opts...)
	cl := minikafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	s := &seeded{b: b, base: "http://" + b.HTTPAddr().String(), cl: cl, adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range eventsRecords {
		kind := "odd"
		if i%2 == 0 {
			kind = "even"
		}
		if i%10 == 0 {
			kind = everyTenthMatch
		}
		recs = append(recs, &kgo.Record{Topic: "events", Key: fmt.Appendf(nil, "k-%03d", i),
			Value: fmt.Appendf(nil, `{"n":%d,"kind":%q}`, i, kind), Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("seed")}}})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: billingCommit, LeaderEpoch: -1})
	if err := s.adm.CommitAllOffsets(ctx, seededGroup, offs); err != nil {
		t.Fatal(err)
	}
	txn := minikafkatest.Client(t, b, kgo.TransactionalID(seededTxnID), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range txnRecords {
		if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 1, Value: fmt.Appendf(nil, "order %d", i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends a JSON request to the API and decodes the answer into out
// (when not nil), returning the status.
func (s *seeded) call(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		if raw, ok := body.(string); ok {
			rd = bytes.NewBufferString(raw)
		} else {
			buf, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			rd = bytes.NewReader(buf)
		}
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); path != "" && len(raw) > 0 && ct != "application/json; charset=utf-8" {
		t.Errorf("%s %s: content type %q", method, path, ct)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

// No keep-alive: no idle connection outlives a test.
var httpClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
