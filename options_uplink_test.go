package minikafka_test

import (
	"context"
	"testing"

	"github.com/minikafka/minikafka"
)

func TestUplinkOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opts []minikafka.Option
		want string
	}{
		{[]minikafka.Option{minikafka.WithForward("a-*")}, "needs an upstream"},
		{[]minikafka.Option{minikafka.WithUpstream("127.0.0.1:1")}, "no topic is forwarded"},
		{[]minikafka.Option{minikafka.WithUpstream("127.0.0.1:1"), minikafka.WithForward("/(/")}, "forward"},
		{[]minikafka.Option{minikafka.WithUpstream("127.0.0.1:1"), minikafka.WithForward("a"),
			minikafka.WithUpstreamSASL("GSSAPI", "u", "p")}, "SASL mechanism"},
		{[]minikafka.Option{minikafka.WithUpstream("127.0.0.1:1"), minikafka.WithForward("a"),
			minikafka.WithForwardCheckpoints("edge/site", 0)}, `checkpoints alias "edge/site"`},
		{[]minikafka.Option{minikafka.WithForwardCheckpoints("edge", 0)}, "no topic is forwarded"},
		{[]minikafka.Option{minikafka.WithForwardGroupOffsets(0)}, "no topic is forwarded"},
	} {
		startFails(t, c.want, c.opts...)
	}
	// No forwarding configured: no stats.
	b, err := minikafka.Start(context.Background(), minikafka.WithInMemory(), minikafka.WithListenAddr("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if s := b.ForwardStats(); s != nil {
		t.Errorf("ForwardStats without an uplink: %v", s)
	}
}
