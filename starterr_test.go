package minikafka_test

import (
	"context"
	"strings"
	"testing"

	"github.com/minikafka/minikafka"
)

// startFails checks that Start refuses opts (in memory, on a free port)
// with an error containing want, and closes a broker that did start.
func startFails(t *testing.T, want string, opts ...minikafka.Option) {
	t.Helper()
	// A free port first, so the options under test (listeners) override it.
	all := append([]minikafka.Option{minikafka.WithListenAddr("127.0.0.1:0")}, opts...)
	b, err := minikafka.Start(context.Background(), append(all, minikafka.WithInMemory())...)
	if err == nil {
		b.Close()
		t.Errorf("started; want an error containing %q", want)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to contain %q", err, want)
	}
}
