package broker

import (
	"context"
	"encoding/binary"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func reauthBroker(t *testing.T, lifetime time.Duration) (string, *lockedBuf) {
	t.Helper()
	_, addr, logs := secureBroker(t, &SASLConfig{Users: saslTestUsers, MaxReauth: lifetime}, nil)
	return addr, logs
}

// plainLogin authenticates w with PLAIN over SaslHandshake v1 and
// SaslAuthenticate v2, returning the answer.
func plainLogin(t *testing.T, w *wire, user, pass string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	if r := w.roundTrip(handshake(1, SASLPlain)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("handshake: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	return w.roundTrip(authenticate(2, "\x00"+user+"\x00"+pass)).(*kmsg.SASLAuthenticateResponse)
}

func mustMetadata(t *testing.T, w *wire) {
	t.Helper()
	if r := w.roundTrip(metadata()).(*kmsg.MetadataResponse); r.ClusterID == nil {
		t.Fatal("metadata answer without cluster id")
	}
}

// The session lifetime Kafka announces, and re-authentication on the wire:
// same mechanism and user succeeds (and restarts the session), at most once
// a second; another user or mechanism fails as in Kafka.
func TestSASLReauthWire(t *testing.T) {
	addr, logs := reauthBroker(t, time.Minute)
	produce := steadyClient(t, addr)

	t.Run("lifetime", func(t *testing.T) {
		w := dialWire(t, addr)
		a := plainLogin(t, w, "alice", saslTestPass)
		if a.ErrorCode != 0 || a.SessionLifetimeMillis != 60000 {
			t.Fatalf("PLAIN: code %d, lifetime %d", a.ErrorCode, a.SessionLifetimeMillis)
		}
		// SCRAM: 0 on the intermediate answer, the lifetime on the last.
		w = dialWire(t, addr)
		w.roundTrip(handshake(1, SASLScramSHA256))
		const bare = "n=alice,r=clientnonce"
		first := w.roundTrip(authenticate(1, "n,,"+bare)).(*kmsg.SASLAuthenticateResponse)
		if first.ErrorCode != 0 || first.SessionLifetimeMillis != 0 {
			t.Fatalf("server-first: code %d, lifetime %d", first.ErrorCode, first.SessionLifetimeMillis)
		}
		sf := string(first.SASLAuthBytes)
		nonce := strings.TrimPrefix(strings.Split(sf, ",")[0], "r=")
		final := w.roundTrip(authenticate(1, buildClientFinal(t, SASLScramSHA256, saslTestPass, bare, sf, nonce))).(*kmsg.SASLAuthenticateResponse)
		if final.ErrorCode != 0 || final.SessionLifetimeMillis != 60000 {
			t.Fatalf("server-final: code %d, lifetime %d", final.ErrorCode, final.SessionLifetimeMillis)
		}
		mustMetadata(t, w)
	})

	t.Run("same-user", func(t *testing.T) {
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		mustMetadata(t, w)
		if a := plainLogin(t, w, "alice", saslTestPass); a.ErrorCode != 0 || a.SessionLifetimeMillis != 60000 {
			t.Fatalf("re-authentication: code %d, lifetime %d", a.ErrorCode, a.SessionLifetimeMillis)
		}
		mustMetadata(t, w)
		// A second one within a second: ILLEGAL_SASL_STATE, as Kafka's
		// KafkaApis answers; the session goes on.
		if r := w.roundTrip(handshake(1, SASLPlain)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("re-authentication within a second: code %d", r.ErrorCode)
		}
		if r := w.roundTrip(authenticate(2, "\x00alice\x00"+saslTestPass)).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("authenticate without handshake: code %d", r.ErrorCode)
		}
		mustMetadata(t, w)
		time.Sleep(minReauthInterval)
		if a := plainLogin(t, w, "alice", saslTestPass); a.ErrorCode != 0 {
			t.Fatalf("re-authentication after a second: code %d", a.ErrorCode)
		}
		mustMetadata(t, w)
	})

	t.Run("raw-tokens", func(t *testing.T) {
		// Kafka also re-authenticates after SaslHandshake v0 (bare tokens).
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		w.roundTrip(handshake(0, SASLPlain))
		tok := "\x00alice\x00" + saslTestPass
		w.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
		if b, err := w.frame(); err != nil || len(b) != 0 {
			t.Fatalf("raw PLAIN answer: %q, %v", b, err)
		}
		mustMetadata(t, w)
	})

	t.Run("other-user", func(t *testing.T) {
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		a := plainLogin(t, w, "bob,=odd", "another")
		want := "Cannot change principals during re-authentication from User.alice: User.bob,=odd"
		if a.ErrorCode != kerr.SaslAuthenticationFailed.Code || deref(a.ErrorMessage) != want {
			t.Fatalf("re-authentication as bob: code %d, %q", a.ErrorCode, deref(a.ErrorMessage))
		}
		w.expectClosed()
	})

	t.Run("wrong-password", func(t *testing.T) {
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		w.roundTrip(handshake(1, SASLPlain))
		a := w.roundTrip(authenticate(2, "no separators")).(*kmsg.SASLAuthenticateResponse)
		want := "Authentication failed during re-authentication due to invalid credentials with SASL mechanism PLAIN"
		if a.ErrorCode != kerr.SaslAuthenticationFailed.Code || deref(a.ErrorMessage) != want {
			t.Fatalf("malformed re-authentication: code %d, %q", a.ErrorCode, deref(a.ErrorMessage))
		}
		w.expectClosed()
	})

	t.Run("other-mechanism", func(t *testing.T) {
		// Kafka answers the handshake, then fails whatever comes next
		// without an answer.
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		if r := w.roundTrip(handshake(1, SASLScramSHA256)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
			t.Fatalf("handshake: code %d", r.ErrorCode)
		}
		w.send(authenticate(2, "n,,n=alice,r=abc"))
		w.expectClosed()
		// An unknown one: UNSUPPORTED_SASL_MECHANISM, closed.
		w = dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		if r := w.roundTrip(handshake(1, "GSSAPI")).(*kmsg.SASLHandshakeResponse); r.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
			t.Fatalf("handshake: code %d", r.ErrorCode)
		}
		w.expectClosed()
	})

	t.Run("pipelined", func(t *testing.T) {
		w := dialWire(t, addr)
		plainLogin(t, w, "alice", saslTestPass)
		// A long poll, a metadata request and the handshake in a row:
		// answered in order, the fetch after its wait.
		m := metadataFor("reauth-pipe")
		m.AllowAutoTopicCreation = true
		w.roundTrip(m)
		w.send(fetchReq(11, "reauth-pipe", [16]byte{}, 0, 0, 300*time.Millisecond, 1))
		w.send(metadata())
		start := time.Now()
		w.send(handshake(1, SASLPlain))
		for i, key := range []int16{1, 3, 17} {
			b, err := w.frame()
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			if cid := int32(binary.BigEndian.Uint32(b)); cid != w.corr-2+int32(i) {
				t.Fatalf("answer %d (key %d) has correlation id %d", i, key, cid)
			}
			if key == 1 {
				f := kmsg.NewPtrFetchResponse()
				f.Version = 11
				if err := f.ReadFrom(b[4:]); err != nil || f.ErrorCode != 0 || len(f.Topics) != 1 || f.Topics[0].Partitions[0].ErrorCode != 0 {
					t.Fatalf("fetch answer %+v, %v", f, err)
				}
				if time.Since(start) < 250*time.Millisecond {
					t.Fatal("the long poll did not wait")
				}
			}
		}
		if a := w.roundTrip(authenticate(2, "\x00alice\x00"+saslTestPass)).(*kmsg.SASLAuthenticateResponse); a.ErrorCode != 0 {
			t.Fatalf("re-authentication: code %d", a.ErrorCode)
		}
		mustMetadata(t, w)

		// A request pipelined behind the handshake is in the exchange:
		// ILLEGAL_SASL_STATE, closed (after a second: Kafka's limit).
		time.Sleep(minReauthInterval)
		w.send(handshake(1, SASLPlain))
		w.send(metadataFor("reauth-pipe"))
		if _, err := w.frame(); err != nil {
			t.Fatal(err)
		}
		b, err := w.frame()
		if err != nil {
			t.Fatal(err)
		}
		r := kmsg.NewPtrMetadataResponse()
		r.Version = 9
		if err := r.ReadFrom(b[5:]); err != nil || len(r.Topics) != 1 || r.Topics[0].ErrorCode != kerr.IllegalSaslState.Code {
			t.Fatalf("metadata during re-authentication: %+v, %v", r, err)
		}
		w.expectClosed()
	})
	produce()
	out := logs.String()
	for _, want := range []string{"SASL re-authenticated", "SASL re-authentication failed", "user=alice"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q", want)
		}
	}
}

// A client that does not re-authenticate is cut off at its first request
// after the session's end, SaslAuthenticate included; a SaslHandshake
// still re-authenticates an ended session.
func TestSASLReauthExpiry(t *testing.T) {
	addr, logs := reauthBroker(t, 500*time.Millisecond)
	produce := steadyClient(t, addr)

	w := dialWire(t, addr)
	if a := plainLogin(t, w, "alice", saslTestPass); a.SessionLifetimeMillis != 500 {
		t.Fatalf("lifetime %d", a.SessionLifetimeMillis)
	}
	mustMetadata(t, w)
	w2 := dialWire(t, addr)
	plainLogin(t, w2, "alice", saslTestPass)
	w3 := dialWire(t, addr)
	plainLogin(t, w3, "alice", saslTestPass)
	// Raw tokens (SaslHandshake v0): the session ends just the same.
	w4 := dialWire(t, addr)
	w4.roundTrip(handshake(0, SASLPlain))
	tok := "\x00alice\x00" + saslTestPass
	w4.c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	if _, err := w4.frame(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)

	w.send(metadata())
	w.expectClosed()
	w2.send(authenticate(2, "\x00alice\x00"+saslTestPass))
	w2.expectClosed()
	w4.send(metadata())
	w4.expectClosed()
	// Ended, but a handshake re-authenticates.
	if a := plainLogin(t, w3, "alice", saslTestPass); a.ErrorCode != 0 {
		t.Fatalf("re-authentication after the end: code %d", a.ErrorCode)
	}
	mustMetadata(t, w3)
	produce() // kgo re-authenticates its own connections
	if n := strings.Count(logs.String(), "SASL session expired without re-authentication; closing connection"); n != 3 {
		t.Fatalf("%d expiry log lines, want 3:\n%s", n, logs)
	}
}

var reauthLine = regexp.MustCompile(`msg="SASL re-authenticated" client=(\S+)`)

// kgo keeps producing and consuming across several session lifetimes on
// the same connections, re-authenticating each of them (KIP-368).
func TestSASLReauthKgo(t *testing.T) {
	// kgo re-authenticates a second before the end (at least), and Kafka
	// refuses re-authentications less than a second apart: with a 1 s
	// lifetime kgo would re-authenticate before every request and be
	// refused. 2 s is the shortest lifetime kgo lives with.
	const lifetime = 2 * time.Second
	addr, logs := reauthBroker(t, lifetime)
	var dialed sync.Map
	var dials atomic.Int32
	hook := kgo.WithHooks(connectHook(func(c net.Conn) {
		dials.Add(1)
		dialed.Store(c.LocalAddr().String(), true)
	}))
	// The producer logs in with SCRAM, the consumer with PLAIN.
	const topic = "reauth-kgo"
	p := newClient(t, addr, hook, kgo.SASL(mechanism(SASLScramSHA256, "alice", saslTestPass)),
		kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	c := newClient(t, addr, hook, kgo.SASL(mechanism(SASLPlain, "alice", saslTestPass)),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	ctx := testCtx(t)
	consumeCtx, stop := context.WithCancel(ctx)
	const run = 4500 * time.Millisecond
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for consumeCtx.Err() == nil {
			fs := c.PollFetches(consumeCtx)
			fs.EachError(func(tp string, part int32, err error) {
				if consumeCtx.Err() == nil {
					t.Errorf("fetch %s[%d]: %v", tp, part, err)
				}
			})
			got.Add(int64(len(fs.Records())))
		}
	}()
	defer func() { stop(); <-done }()
	sent, settled := 0, int32(-1)
	for start := time.Now(); time.Since(start) < run; sent++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce %d after %v: %v", sent, time.Since(start), err)
		}
		if settled < 0 && time.Since(start) > lifetime/2 && got.Load() > 0 {
			// Both clients have all their connections now.
			settled = dials.Load()
		}
		time.Sleep(50 * time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); got.Load() < int64(sent); {
		if time.Now().After(deadline) {
			t.Fatalf("consumed %d of %d", got.Load(), sent)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Across two more lifetimes no connection was replaced.
	if n := dials.Load(); settled < 0 || n != settled {
		t.Fatalf("%d connections dialed, %d after the first %v", n, settled, lifetime/2)
	}
	per := map[string]int{}
	for _, m := range reauthLine.FindAllStringSubmatch(logs.String(), -1) {
		if _, ok := dialed.Load(m[1]); ok {
			per[m[1]]++
		}
	}
	most := 0
	for _, n := range per {
		most = max(most, n)
	}
	t.Logf("re-authentications per kgo connection: %v", per)
	// Over 4.5 s with a re-authentication every second or so, on the
	// producer's and on the consumer's connections.
	if most < 2 || len(per) < 2 {
		t.Fatalf("re-authentications per kgo connection: %v", per)
	}
	if strings.Contains(logs.String(), "closing connection") {
		t.Fatalf("a connection was closed:\n%s", logs)
	}
}

type connectHook func(net.Conn)

func (h connectHook) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, c net.Conn, err error) {
	if err == nil {
		h(c)
	}
}
