package dtoken

import (
	"encoding/base64"
	"errors"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/minikafka/minikafka/broker/internal/sasl"
	"github.com/minikafka/minikafka/internal/vfs"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var (
	alice = Principal{UserType, "alice"}
	bob   = Principal{UserType, "bob"}
	carol = Principal{UserType, "carol"}
)

func open(t *testing.T, fsys vfs.FS, cfg Config) *Manager {
	t.Helper()
	m, err := Open(fsys, "/d", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newFS(t *testing.T) vfs.FS {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	return fsys
}

// The HMAC is Kafka's: HmacSHA512 of the token ID keyed by the secret's
// bytes. The expected value comes from
// `printf tok-1 | openssl dgst -sha512 -hmac k3y -binary | base64`.
func TestHMACIsKafkas(t *testing.T) {
	m := open(t, newFS(t), Config{Secret: "k3y"})
	got := base64.StdEncoding.EncodeToString(m.hmac("tok-1"))
	const want = "tBRvg8ayt5apsPTDBFV0crvldorOalDdoOHeK9rnHuISr0wQDTopBKFW/aCgiq1Rxf+Ab/+aUfohAJWWs9wJmw=="
	if got != want {
		t.Fatalf("hmac = %s, want %s", got, want)
	}
}

// Timestamps and refusals follow Kafka's DelegationTokenControlManager.
func TestLifecycle(t *testing.T) {
	c := &clock{t: time.UnixMilli(1_000_000)}
	m := open(t, newFS(t), Config{Now: c.now})
	now := c.now().UnixMilli()
	day, week := DefaultExpiryTime.Milliseconds(), DefaultMaxLifetime.Milliseconds()

	tok, err := m.Create(alice, alice, []Principal{bob}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Issue != now || tok.Expiry != now+day || tok.Max != now+week {
		t.Fatalf("timestamps %d %d %d, want %d %d %d", tok.Issue, tok.Expiry, tok.Max, now, now+day, now+week)
	}
	short, _ := m.Create(alice, alice, nil, 3_600_000) // max lifetime below the expiry time
	if short.Max != now+3_600_000 || short.Expiry != short.Max {
		t.Fatalf("short token max %d expiry %d", short.Max, short.Expiry)
	}
	if _, err := m.Create(alice, alice, []Principal{{"Group", "g"}}, 0); !errors.Is(err, ErrPrincipalType) {
		t.Fatalf("group renewer: %v", err)
	}

	// Renew: owner or renewer; the period capped by the expiry time, the
	// expiry by the max timestamp.
	if _, err := m.Renew(carol, tok.HMAC, -1); !errors.Is(err, ErrOwnerMismatch) {
		t.Fatalf("carol renews: %v", err)
	}
	if _, err := m.Renew(bob, []byte("nope"), -1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown hmac: %v", err)
	}
	c.add(time.Hour)
	now = c.now().UnixMilli()
	if n := len(m.Tokens(nil)); n != 2 { // a sweep with nothing to drop
		t.Fatalf("%d tokens, want 2", n)
	}
	if exp, err := m.Renew(bob, tok.HMAC, 60_000); err != nil || exp != now+60_000 {
		t.Fatalf("renew 1m: %d %v", exp, err)
	}
	if exp, err := m.Renew(alice, tok.HMAC, 10*day); err != nil || exp != now+day {
		t.Fatalf("renew 10d: %d %v (want capped at a day)", exp, err)
	}
	if exp, err := m.Renew(alice, short.HMAC, -1); err != nil || exp != short.Max {
		t.Fatalf("renew short: %d %v (want its max %d)", exp, err, short.Max)
	}

	// A token logs in until it expires; then it neither logs in nor renews.
	if _, owner, _, ok := m.TokenCred(tok.ID, sasl.ScramSHA512); !ok || owner != "alice" {
		t.Fatalf("TokenCred: %v %q", ok, owner)
	}
	if exp, err := m.Expire(alice, tok.HMAC, 0); err != nil || exp != now {
		t.Fatalf("expire 0: %d %v", exp, err)
	}
	c.add(time.Millisecond)
	if _, _, _, ok := m.TokenCred(tok.ID, sasl.ScramSHA256); ok {
		t.Fatal("expired token still logs in")
	}
	if _, err := m.Renew(alice, tok.HMAC, -1); !errors.Is(err, ErrExpired) {
		t.Fatalf("renew expired: %v", err)
	}
	if n := len(m.Tokens(nil)); n != 2 {
		t.Fatalf("%d tokens listed before the sweep, want 2", n)
	}

	// A negative period removes the token and answers now.
	third, _ := m.Create(bob, alice, nil, 0)
	if exp, err := m.Expire(bob, third.HMAC, -5); err != nil || exp != c.now().UnixMilli() {
		t.Fatalf("expire -5: %d %v", exp, err)
	}
	if _, err := m.Renew(bob, third.HMAC, -1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("renew removed: %v", err)
	}
	// The hourly sweep drops the expired ones.
	c.add(SweepInterval)
	if got := m.Tokens(nil); len(got) != 0 {
		t.Fatalf("after the sweep: %d tokens", len(got))
	}
}

// Tokens and the generated secret outlive a restart; a configured secret
// replaces the generated one and with it every HMAC; a damaged file stops
// Open.
func TestPersistence(t *testing.T) {
	fsys := newFS(t)
	m := open(t, fsys, Config{})
	tok, err := m.Create(alice, bob, []Principal{carol}, 0)
	if err != nil {
		t.Fatal(err)
	}
	m2 := open(t, fsys, Config{})
	got := m2.Tokens(nil)
	if len(got) != 1 || got[0].ID != tok.ID || string(got[0].HMAC) != string(tok.HMAC) ||
		got[0].Owner != alice || got[0].Requester != bob || len(got[0].Renewers) != 1 || got[0].Renewers[0] != carol ||
		got[0].Expiry != tok.Expiry || got[0].Max != tok.Max || got[0].Issue != tok.Issue {
		t.Fatalf("after reopen: %+v, want %+v", got, tok)
	}
	if _, err := m2.Renew(carol, tok.HMAC, -1); err != nil {
		t.Fatalf("renew after reopen: %v", err)
	}
	m3 := open(t, fsys, Config{Secret: "configured"})
	if got := m3.Tokens(nil); len(got) != 1 || string(got[0].HMAC) == string(tok.HMAC) {
		t.Fatal("a new secret kept the old HMAC")
	}
	if err := vfs.WriteFileAtomic(fsys, path.Join("/d", File), []byte(`{"version":1,"tokens":[{"id":"x","owner":"nocolon"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(fsys, "/d", Config{}); err == nil {
		t.Fatal("Open accepted a token with a bad owner")
	}
}

// FuzzOpen: any file content either fails Open or loads tokens that
// survive a rewrite unchanged; nothing panics.
func FuzzOpen(f *testing.F) {
	f.Add([]byte(`{"version":1,"secret":"s","tokens":[{"id":"a","owner":"User:x","requester":"User:y","renewers":["User:z"],"issue_ms":1,"max_ms":3,"expiry_ms":2}]}`))
	f.Add([]byte(`{"version":1,"tokens":[]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"tokens":[{"id":"a","owner":"User:x","requester":"User:x"},{"id":"a","owner":"User:x","requester":"User:x"}]}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := vfs.NewMem()
		if err := fsys.MkdirAll("/d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(fsys, "/d/"+File, data, 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := Open(fsys, "/d", Config{Now: func() time.Time { return time.UnixMilli(0) }})
		if err != nil {
			return
		}
		before := m.Tokens(nil)
		if err := m.persist(m.tokens); err != nil {
			t.Fatal(err)
		}
		m2, err := Open(fsys, "/d", Config{Now: func() time.Time { return time.UnixMilli(0) }})
		if err != nil {
			t.Fatalf("reopen after a rewrite: %v", err)
		}
		after := m2.Tokens(nil)
		if len(before) != len(after) {
			t.Fatalf("%d tokens, %d after a rewrite", len(before), len(after))
		}
		for i := range before {
			b, a := before[i], after[i]
			if b.ID != a.ID || b.Owner != a.Owner || b.Requester != a.Requester || b.Expiry != a.Expiry ||
				b.Max != a.Max || b.Issue != a.Issue || string(b.HMAC) != string(a.HMAC) || len(b.Renewers) != len(a.Renewers) {
				t.Fatalf("token %d changed by a rewrite: %+v → %+v", i, b, a)
			}
		}
	})
}
