package broker

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzParsePlain: no panic; a parsed message is exactly its three parts
// joined by NUL.
func FuzzParsePlain(f *testing.F) {
	for _, s := range []string{"\x00alice\x00secret", "alice\x00alice\x00secret", "", "\x00\x00", "a\x00b", "a\x00b\x00c\x00d", "\xff\x00u\x00p"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		authz, user, pass, err := parsePlain(msg)
		if err != nil {
			return
		}
		if authz+"\x00"+user+"\x00"+pass != string(msg) {
			t.Fatalf("parts %q %q %q do not rebuild %q", authz, user, pass, msg)
		}
	})
}

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
	cred, err := newScramCred(scramHashes[SASLScramSHA256], "pw", DefaultSCRAMIterations)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("n,,n=alice,r=abc", "c=biws,r=abc,p=AAAA")
	f.Add("n,,n=alice,r=abc", "c=biws,r=abcdef,p="+base64.StdEncoding.EncodeToString(make([]byte, 32)))
	f.Add("n,,n=nobody,r=abc", "")
	f.Fuzz(func(t *testing.T, first, final string) {
		s := &scramServer{mech: SASLScramSHA256, hash: scramHashes[SASLScramSHA256], creds: map[string]*scramCred{"alice": cred}}
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

// FuzzErrorResponse: whatever request a client sends mid-exchange (any API
// and version we serve, any body kmsg decodes), its ILLEGAL_SASL_STATE
// answer is built without panicking and decodes as that API's response.
func FuzzErrorResponse(f *testing.F) {
	for _, r := range []kmsg.Request{saslProduceReq(1), metadataFor("t"), &kmsg.DescribeGroupsRequest{Groups: []string{"g"}}} {
		for i, a := range apis {
			if a.key == r.Key() {
				f.Add(uint8(i), uint8(r.GetVersion()-a.min), r.AppendTo(nil))
			}
		}
	}
	f.Fuzz(func(t *testing.T, k, v uint8, body []byte) {
		a := apis[int(k)%len(apis)]
		version := a.min + int16(v)%(a.max-a.min+1)
		req := kmsg.RequestForKey(a.key)
		req.SetVersion(version)
		if req.ReadFrom(body) != nil {
			return
		}
		resp := errorResponse(req, kerr.IllegalSaslState.Code)
		back := req.ResponseKind()
		back.SetVersion(version)
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("%s v%d: %v", kmsg.NameForKey(a.key), version, err)
		}
	})
}
