package schemaregistry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// memStore is a topic in memory; failNext makes the next append keep
// its records but answer an error, as a produce that landed but timed
// out does.
type memStore struct {
	mu       sync.Mutex
	recs     []record
	failNext bool
	loads    int
}

func (m *memStore) load(_ context.Context, fn func(key, value []byte)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	for _, r := range m.recs {
		fn(r.key, r.value)
	}
	return nil
}

func (m *memStore) append(_ context.Context, recs []record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, recs...)
	if m.failNext {
		m.failNext = false
		return errors.New("request timed out")
	}
	return nil
}

func (m *memStore) close() {}

func register(t *testing.T, h http.Handler, subject, schema string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/subjects/"+subject+"/versions", bytes.NewReader(body)))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

// TestWriteErrorRereads: a registration whose record reached the topic
// but whose write answered an error is not trusted away: the next request
// reads the topic again, so the ID that record holds is not given to
// another schema.
func TestWriteErrorRereads(t *testing.T) {
	st := &memStore{}
	r := &Registry{cfg: Config{Topic: DefaultTopic, MaxSchemaBytes: DefaultMaxSchemaBytes}, log: discardLog(), st: st, s: newState(), auth: newAuthCache()}
	if code, body := register(t, r, "a", `"int"`); code != 200 || body != `{"id":1}` {
		t.Fatalf("%d %s", code, body)
	}
	st.failNext = true
	if code, body := register(t, r, "b", `"long"`); code != 500 || !strings.Contains(body, "50001") {
		t.Fatalf("the failed write: %d %s", code, body)
	}
	if code, body := register(t, r, "c", `"float"`); body != `{"id":3}` {
		t.Errorf("after a failed write that landed: %d %s, want id 3 (2 is in the topic)", code, body)
	}
	if st.loads != 2 {
		t.Errorf("%d loads, want 2 (the first request, and after the failed write)", st.loads)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/subjects/b/versions/1", nil))
	if !strings.Contains(rec.Body.String(), `"id":2`) {
		t.Errorf("the write that landed: %s", rec.Body.String())
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
