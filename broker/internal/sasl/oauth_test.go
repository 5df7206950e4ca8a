package sasl

import (
	"bytes"
	"testing"
)

// FuzzOAuthClientFirst: the RFC 7628 client first message parser never
// panics, and what it accepts has a token and came from a message ending
// in %x01%x01.
func FuzzOAuthClientFirst(f *testing.F) {
	f.Add([]byte("n,,\x01auth=Bearer abc\x01\x01"))
	f.Add([]byte("n,a=svc,\x01auth=Bearer abc\x01ext=1\x01\x01"))
	f.Add([]byte("\x01"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		_, tok, err := parseOAuthClientFirst(msg)
		if err != nil {
			return
		}
		if tok == "" || !bytes.HasSuffix(msg, []byte{1, 1}) {
			t.Fatalf("accepted %q with token %q", msg, tok)
		}
	})
}
