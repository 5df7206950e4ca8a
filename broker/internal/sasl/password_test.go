package sasl

import (
	"testing"

	"github.com/minikafka/minikafka/internal/vfs"
)

func TestCheckPassword(t *testing.T) {
	srv, err := NewServer(Config{Users: map[string]string{"alice": "s3cret"}, Mechanisms: []string{ScramSHA512}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(vfs.Default, t.TempDir(), srv)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, pass string
		want       bool
	}{{"alice", "s3cret", true}, {"alice", "S3cret", false}, {"alice", "", false}, {"bob", "s3cret", false}, {"", "", false}} {
		if got := st.CheckPassword(tc.user, tc.pass); got != tc.want {
			t.Errorf("CheckPassword(%q, %q) = %v, want %v", tc.user, tc.pass, got, tc.want)
		}
	}
	var none *Store
	if none.CheckPassword("alice", "s3cret") {
		t.Error("a nil store accepted a password")
	}
}
