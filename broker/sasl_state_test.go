package broker

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func metadataFor(topic string) *kmsg.MetadataRequest {
	r := metadata()
	r.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
	return r
}

func apiVersionsReq(version int16) *kmsg.ApiVersionsRequest {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = version
	r.ClientSoftwareName, r.ClientSoftwareVersion = "test", "1"
	return r
}

func saslProduceReq(acks int16) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = 9, acks, 1000
	r.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 2}}}}
	return r
}

// steadyClient is an authenticated kgo client whose produce must keep
// working while other connections misbehave.
func steadyClient(t *testing.T, addr string) func() {
	cl := newClient(t, addr, kgo.SASL(mechanism(SASLScramSHA512, "alice", saslTestPass)), kgo.DefaultProduceTopic("steady"), kgo.AllowAutoTopicCreation())
	return func() {
		t.Helper()
		if err := cl.ProduceSync(testCtx(t), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatalf("authenticated client: %v", err)
		}
	}
}

// What Kafka's SaslServerAuthenticator does with a request out of place,
// phase by phase, over real TCP; each misbehaving connection is closed and
// an authenticated client keeps working.
//   - Before the handshake (first request, or after ApiVersions): closed
//     without an answer (IllegalSaslStateException is raised before the
//     request is parsed; a second ApiVersions is an IllegalStateException).
//   - After SaslHandshake v1, also in the middle of a SCRAM exchange: the
//     request's own error response with ILLEGAL_SASL_STATE, then closed
//     (produce with acks=0 has no error response: just closed).
//   - After SaslHandshake v0: the frame is a bare token; closed.
//   - After a failed handshake or authentication: the failure answer, and
//     nothing for requests pipelined behind it.
func TestSASLIllegalState(t *testing.T) {
	_, addr, logs := secureBroker(t, &SASLConfig{Users: saslTestUsers}, nil)
	produce := steadyClient(t, addr)
	produce()
	const illegal = 34 // ILLEGAL_SASL_STATE
	if kerr.IllegalSaslState.Code != illegal {
		t.Fatal("kerr code changed")
	}

	t.Run("before-handshake", func(t *testing.T) {
		for _, tc := range []struct {
			name        string
			apiVersions bool
			req         kmsg.Request
		}{
			{"metadata", false, metadataFor("t")},
			{"authenticate", false, authenticate(1, "\x00alice\x00"+saslTestPass)},
			{"produce", false, saslProduceReq(1)},
			{"after-apiversions/metadata", true, metadataFor("t")},
			{"after-apiversions/apiversions", true, apiVersionsReq(3)},
			{"after-apiversions/authenticate", true, authenticate(1, "\x00alice\x00"+saslTestPass)},
		} {
			w := dialWire(t, addr)
			if tc.apiVersions {
				if r := w.roundTrip(apiVersionsReq(3)).(*kmsg.ApiVersionsResponse); r.ErrorCode != 0 {
					t.Fatalf("%s: ApiVersions: %d", tc.name, r.ErrorCode)
				}
			}
			w.send(tc.req)
			w.expectClosed()
		}
		produce()
	})

	t.Run("after-handshake-v1", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			req   kmsg.Request
			check func(kmsg.Response) bool
		}{
			{"metadata", metadataFor("t"), func(r kmsg.Response) bool {
				m := r.(*kmsg.MetadataResponse)
				return len(m.Topics) == 1 && deref(m.Topics[0].Topic) == "t" && m.Topics[0].ErrorCode == illegal
			}},
			{"apiversions", apiVersionsReq(3), func(r kmsg.Response) bool {
				return r.(*kmsg.ApiVersionsResponse).ErrorCode == illegal
			}},
			{"handshake", handshake(1, SASLPlain), func(r kmsg.Response) bool {
				return r.(*kmsg.SASLHandshakeResponse).ErrorCode == illegal
			}},
			{"produce", saslProduceReq(-1), func(r kmsg.Response) bool {
				p := r.(*kmsg.ProduceResponse)
				return len(p.Topics) == 1 && p.Topics[0].Topic == "t" && len(p.Topics[0].Partitions) == 1 &&
					p.Topics[0].Partitions[0].Partition == 2 && p.Topics[0].Partitions[0].ErrorCode == illegal
			}},
			{"list-groups", &kmsg.ListGroupsRequest{Version: 4}, func(r kmsg.Response) bool {
				return r.(*kmsg.ListGroupsResponse).ErrorCode == illegal
			}},
		} {
			for _, mech := range []string{SASLPlain, SASLScramSHA256} {
				w := dialWire(t, addr)
				if r := w.roundTrip(handshake(1, mech)).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
					t.Fatalf("handshake: %d", r.ErrorCode)
				}
				if mech != SASLPlain {
					// Mid-exchange: the client-first message was answered.
					if r := w.roundTrip(authenticate(1, "n,,n=alice,r=abcdefgh")).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 || len(r.SASLAuthBytes) == 0 {
						t.Fatalf("client-first: %d", r.ErrorCode)
					}
				}
				if r := w.roundTrip(tc.req); !tc.check(r) {
					t.Fatalf("%s/%s: answer %+v", tc.name, mech, r)
				}
				w.expectClosed()
			}
		}
		// A newer ApiVersions than ours: a v0 answer with the code.
		w := dialWire(t, addr)
		w.roundTrip(handshake(1, SASLPlain))
		w.send(apiVersionsReq(9))
		b, err := w.frame()
		if err != nil {
			t.Fatal(err)
		}
		av := kmsg.NewPtrApiVersionsResponse()
		if err := av.ReadFrom(b[4:]); err != nil || av.ErrorCode != illegal {
			t.Fatalf("ApiVersions v9: %+v, %v", av, err)
		}
		w.expectClosed()
		// Produce with acks=0: Kafka has no error response for it.
		w = dialWire(t, addr)
		w.roundTrip(handshake(1, SASLPlain))
		w.send(saslProduceReq(0))
		w.expectClosed()
		produce()
	})

	t.Run("after-handshake-v0", func(t *testing.T) {
		// The request is read as a bare PLAIN token and fails.
		w := dialWire(t, addr)
		w.roundTrip(handshake(0, SASLPlain))
		w.send(metadataFor("t"))
		w.expectClosed()
		produce()
	})

	t.Run("after-failure", func(t *testing.T) {
		// Pipelined behind a failed authentication: no answer.
		w := dialWire(t, addr)
		w.send(handshake(1, SASLPlain))
		w.send(authenticate(1, "\x00alice\x00wrong"))
		// The broker may have closed already: only the answers matter.
		w.sendMayFail(metadataFor("t"))
		w.sendMayFail(apiVersionsReq(3))
		if b, err := w.frame(); err != nil || len(b) < 4 {
			t.Fatalf("handshake answer: %v", err)
		}
		b, err := w.frame()
		if err != nil {
			t.Fatal(err)
		}
		a := kmsg.NewPtrSASLAuthenticateResponse()
		a.Version = 1
		if err := a.ReadFrom(b[4:]); err != nil || a.ErrorCode != kerr.SaslAuthenticationFailed.Code {
			t.Fatalf("authenticate answer %+v, %v", a, err)
		}
		w.expectClosed()
		// Behind an unsupported mechanism: the same.
		w = dialWire(t, addr)
		w.send(handshake(1, "GSSAPI"))
		w.sendMayFail(metadataFor("t"))
		b, err = w.frame()
		if err != nil {
			t.Fatal(err)
		}
		h := kmsg.NewPtrSASLHandshakeResponse()
		h.Version = 1
		if err := h.ReadFrom(b[4:]); err != nil || h.ErrorCode != kerr.UnsupportedSaslMechanism.Code {
			t.Fatalf("handshake answer %+v, %v", h, err)
		}
		w.expectClosed()
		produce()
	})

	if !strings.Contains(logs.String(), "ILLEGAL_SASL_STATE; closing connection") {
		t.Fatal("ILLEGAL_SASL_STATE answers not logged")
	}
}
