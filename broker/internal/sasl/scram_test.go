package sasl

import (
	"crypto/pbkdf2"
	"crypto/subtle"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
)

// FuzzScramClientFirst: no panic; a parsed message is its gs2 header plus
// the bare part, the user name escapes back to what was sent, the nonce
// is printable without commas.
func FuzzScramClientFirst(f *testing.F) {
	for _, s := range []string{
		"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL",
		"n,a=alice,n=alice,r=abc,tokenauth=true",
		"y,,n=bob=2C=3Dodd,r=x",
		"p=tls-unique,,n=alice,r=abc",
		"n,,n=a=2Xb,r=abc",
		"n,,m=ext,n=alice,r=abc",
		"n,,n=,r=abc",
		"n,,n=alice,r=a,b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		m, err := parseScramClientFirst(msg)
		if err != nil {
			return
		}
		if m.gs2Header+m.bare != msg {
			t.Fatalf("header %q + bare %q != %q", m.gs2Header, m.bare, msg)
		}
		if !strings.HasPrefix(m.bare, "n="+scramEscape(m.user)+",r="+m.nonce) {
			t.Fatalf("user %q / nonce %q do not round-trip in %q", m.user, m.nonce, m.bare)
		}
		if !validNonce(m.nonce) {
			t.Fatalf("invalid nonce %q accepted", m.nonce)
		}
	})
}

// FuzzScramClientFinal: no panic; a parsed message is its part without
// proof plus the canonical base64 of the proof.
func FuzzScramClientFinal(f *testing.F) {
	for _, s := range []string{
		"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
		"c=biws,r=abc,ext=1,p=AAAA",
		"c=biws,r=abc,p=",
		"c=bad!,r=abc,p=AAAA",
		"r=abc,c=biws,p=AAAA",
		"c=biws,r=abc,p=AAA",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		m, err := parseScramClientFinal(msg)
		if err != nil {
			return
		}
		if m.withoutProof+",p="+base64.StdEncoding.EncodeToString(m.proof) != msg {
			t.Fatalf("parsed %+v does not rebuild %q", m, msg)
		}
		if !validNonce(m.nonce) {
			t.Fatalf("invalid nonce %q accepted", m.nonce)
		}
	})
}

// FuzzScramExchange: any two client messages against a real credential
// never panic and never authenticate without the proof.
func FuzzScramExchange(f *testing.F) {
	cred, err := newCred(scramHashes[ScramSHA256], "pw", DefaultSCRAMIterations)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("n,,n=alice,r=abc", "c=biws,r=abc,p=AAAA")
	f.Add("n,,n=alice,r=abc", "c=biws,r=abcdef,p="+base64.StdEncoding.EncodeToString(make([]byte, 32)))
	f.Add("n,,n=nobody,r=abc", "")
	f.Fuzz(func(t *testing.T, first, final string) {
		s := &scramServer{mech: ScramSHA256, hash: scramHashes[ScramSHA256], lookup: credsOf(map[string]*Cred{"alice": cred})}
		if _, done, ferr := s.step([]byte(first)); done || ferr != nil {
			return
		}
		// The server nonce is random: a final message cannot know it.
		if _, done, _ := s.step([]byte(final)); done {
			t.Fatalf("authenticated with %q / %q", first, final)
		}
		if _, done, ferr := s.step([]byte(final)); done || ferr == nil {
			t.Fatal("a third message was accepted")
		}
	})
}

// The client-final nonce: the combined nonce (RFC), or the client nonce
// before it (librdkafka < 2.6.1, accepted as Kafka 3.8.1-3.9 did); the
// client nonce alone or another value is refused even with a valid proof.
func TestScramNonceForms(t *testing.T) {
	cred, err := newCred(scramHashes[ScramSHA256], "pw", DefaultSCRAMIterations)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		form func(cnonce, combined string) string
		ok   bool
	}{
		{"rfc", func(c, all string) string { return all }, true},
		{"librdkafka-before-2.6.1", func(c, all string) string { return c + all }, true},
		{"client-nonce-only", func(c, all string) string { return c }, false},
		{"server-part-only", func(c, all string) string { return strings.TrimPrefix(all, c) }, false},
		{"twice", func(c, all string) string { return all + all }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scramServer{mech: ScramSHA256, hash: scramHashes[ScramSHA256], lookup: credsOf(map[string]*Cred{"u": cred})}
			const bare = "n=u,r=clientnonce"
			sf, done, ferr := s.step([]byte("n,," + bare))
			if done || ferr != nil {
				t.Fatalf("client-first: %v", ferr)
			}
			combined := strings.TrimPrefix(strings.Split(string(sf), ",")[0], "r=")
			out, done, ferr := s.step([]byte(buildClientFinal(t, ScramSHA256, "pw", bare, string(sf), tc.form("clientnonce", combined))))
			if tc.ok != (done && ferr == nil) {
				t.Fatalf("accepted %v (%v), want %v", done, ferr, tc.ok)
			}
			if tc.ok && !strings.HasPrefix(string(out), "v=") {
				t.Fatalf("server-final %q", out)
			}
		})
	}
}

// credsOf is a credential lookup over a fixed set.
func credsOf(m map[string]*Cred) func(string) *Cred {
	return func(u string) *Cred { return m[u] }
}

// buildClientFinal computes a client-final message for nonce as a client
// knowing pass would (RFC 5802), from the server-first message.
func buildClientFinal(t *testing.T, mech, pass, clientFirstBare, serverFirst, nonce string) string {
	t.Helper()
	h := scramHashes[mech]
	var salt []byte
	var iters int
	for _, a := range strings.Split(serverFirst, ",") {
		switch {
		case strings.HasPrefix(a, "s="):
			salt, _ = base64.StdEncoding.DecodeString(a[2:])
		case strings.HasPrefix(a, "i="):
			iters, _ = strconv.Atoi(a[2:])
		}
	}
	salted, err := pbkdf2.Key(h, pass, salt, iters, h().Size())
	if err != nil {
		t.Fatal(err)
	}
	clientKey := scramHMAC(h, salted, []byte("Client Key"))
	hh := h()
	hh.Write(clientKey)
	withoutProof := "c=biws,r=" + nonce
	sig := scramHMAC(h, hh.Sum(nil), []byte(clientFirstBare+","+serverFirst+","+withoutProof))
	proof := make([]byte, len(sig))
	subtle.XORBytes(proof, clientKey, sig)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof)
}
