package sasl

import (
	"errors"
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

func TestSCRAMStoreRoundTrip(t *testing.T) {
	salted := []byte("0123456789abcdef0123456789abcdef")
	m := map[storeKey]*Cred{
		{"a", ScramSHA256}: credFromSalted(ScramSHA256, []byte("s"), salted, 4096),
		{"a", ScramSHA512}: nil,
		{"b", ScramSHA512}: credFromSalted(ScramSHA512, nil, salted, 16384),
	}
	data, err := encodeChanges(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeChanges(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := encodeChanges(back)
	if string(again) != string(data) || len(back) != 3 || back[storeKey{"a", ScramSHA512}] != nil {
		t.Fatalf("round trip:\n%s\n%s", data, again)
	}
	for _, bad := range []string{
		`{"version":2,"credentials":[]}`,
		`{"version":1,"credentials":[{"user":"","mechanism":"SCRAM-SHA-256","deleted":true}]}`,
		`{"version":1,"credentials":[{"user":"a","mechanism":"PLAIN","deleted":true}]}`,
		`{"version":1,"credentials":[{"user":"a","mechanism":"SCRAM-SHA-256","deleted":true},{"user":"a","mechanism":"SCRAM-SHA-256","deleted":true}]}`,
		`{"version":1,"credentials":[{"user":"a","mechanism":"SCRAM-SHA-256","iterations":4096,"stored_key":"AA==","server_key":"AA=="}]}`,
	} {
		if _, err := decodeChanges([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func FuzzSCRAMStoreDecode(f *testing.F) {
	salted := []byte("0123456789abcdef0123456789abcdef")
	data, _ := encodeChanges(map[storeKey]*Cred{
		{"a", ScramSHA256}: credFromSalted(ScramSHA256, []byte("s"), salted, 4096),
		{"b", ScramSHA512}: nil,
	})
	f.Add(data)
	f.Add([]byte(`{"version":1,"credentials":null}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeChanges(data)
		if err != nil {
			return
		}
		// What decodes re-encodes to something that decodes the same.
		enc, err := encodeChanges(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := decodeChanges(enc)
		if err != nil || len(m2) != len(m) {
			t.Fatalf("re-decode: %v (%d vs %d)", err, len(m2), len(m))
		}
		enc2, _ := encodeChanges(m2)
		if string(enc2) != string(enc) {
			t.Fatalf("unstable encoding:\n%s\n%s", enc, enc2)
		}
	})
}

// Alter's per-user validation and Describe, against a store on disk,
// then reopened: changes persist, a start-up credential deleted stays
// deleted (tombstone), a failed user's changes do not apply.
func TestStoreAlterDescribe(t *testing.T) {
	dir := t.TempDir()
	srv, err := NewServer(Config{Users: map[string]string{"boot": "pw"}, Mechanisms: []string{ScramSHA256}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(vfs.Default, dir, srv)
	if err != nil {
		t.Fatal(err)
	}
	salted := []byte("0123456789abcdef0123456789abcdef")
	up := func(u string, mech int8, iters int32) Change {
		return Change{User: u, Mechanism: mech, Salt: []byte("s"), SaltedPassword: salted, Iterations: iters}
	}
	res, stored := s.Alter([]Change{
		{User: "boot", Mechanism: 1, Delete: true},
		{User: "ghost", Mechanism: 2, Delete: true},
		up("new", 2, 8192),
		up("twice", 1, 4096), up("twice", 2, 4096),
		up("", 1, 4096),
		up("mech", 3, 4096),
		up("few", 1, 4095), up("many", 1, 16385),
		{User: "empty", Mechanism: 1, Iterations: 4096},
	})
	if stored != nil {
		t.Fatal(stored)
	}
	want := map[string]error{"boot": nil, "ghost": ErrNoCredential, "new": nil, "twice": ErrDuplicateUser,
		"": ErrUnacceptableCredential, "mech": ErrUnknownMechanism, "few": ErrUnacceptableCredential,
		"many": ErrUnacceptableCredential, "empty": ErrUnacceptableCredential}
	order := []string{"boot", "ghost", "new", "twice", "", "mech", "few", "many", "empty"}
	if len(res) != len(order) {
		t.Fatalf("%d results: %+v", len(res), res)
	}
	for i, r := range res {
		if r.User != order[i] || !errors.Is(r.Err, want[r.User]) || (want[r.User] == nil) != (r.Err == nil) {
			t.Errorf("result %d: %q %v, want %q %v", i, r.User, r.Err, order[i], want[order[i]])
		}
	}
	for _, s := range []*Store{s, reopen(t, dir, srv)} {
		if s.Get("boot", ScramSHA256) != nil || s.Get("twice", ScramSHA256) != nil {
			t.Error("a deleted or refused credential is there")
		}
		if c := s.Get("new", ScramSHA512); c == nil || c.Iterations() != 8192 {
			t.Errorf("new: %+v", c)
		}
		d := s.Describe([]string{"new", "boot", "new"})
		if len(d) != 2 || d[0].User != "boot" || !errors.Is(d[0].Err, ErrNoCredential) ||
			d[1].User != "new" || !errors.Is(d[1].Err, ErrDuplicateUser) {
			t.Errorf("describe: %+v", d)
		}
		if d := s.Describe(nil); len(d) != 1 || d[0].User != "new" || len(d[0].Creds) != 1 ||
			d[0].Creds[0] != (CredInfo{Mechanism: 2, Iterations: 8192}) {
			t.Errorf("describe all: %+v", d)
		}
	}
}

func reopen(t *testing.T, dir string, srv *Server) *Store {
	t.Helper()
	s, err := OpenStore(vfs.Default, dir, srv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
