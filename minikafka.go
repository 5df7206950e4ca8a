package minikafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/protocol"
)

// closeGrace bounds how long Close waits for requests already read (a
// long-poll fetch, an acks=all produce waiting for fsync) before it closes
// their connections anyway.
const closeGrace = 5 * time.Second

// Broker is a running broker. Its methods are safe for concurrent use.
type Broker struct {
	brk        *broker.Broker
	srv        *protocol.Server
	log        *slog.Logger
	listen     net.Addr
	advertised string
	dataDir    string // "" in memory
	metrics    *metrics
	http       *httpSide     // nil without WithHTTPAddr
	admin      *httpServer   // the control API (admin.go); nil without WithAdminAddr
	registry   *registrySide // nil without WithSchemaRegistry
	started    time.Time
	osDataDir  string         // dataDir when it is on the OS filesystem
	storage    *StorageFaults // WithStorageFaults; nil without
	waitLimit  waitLimit

	listeners []ListenerInfo
	srvs      []*protocol.Server // one per listener (of every node); srv is the first

	nodeMu  sync.Mutex
	stopped map[int32]bool // nodes StopNode took down (cluster.go)

	served    chan error
	unlock    func() // releases the data dir lock
	closeOnce sync.Once
	closeErr  error
}

// Addrs returns the bootstrap addresses clients should use (the advertised
// host:port of the first listener of every node), e.g.
// kgo.SeedBrokers(b.Addrs()...).
func (b *Broker) Addrs() []string {
	var out []string
	seen := map[int32]bool{}
	for _, l := range b.listeners {
		if !seen[l.Node] {
			seen[l.Node] = true
			out = append(out, l.Advertised)
		}
	}
	if len(out) == 0 {
		return []string{b.advertised}
	}
	return out
}

// Addr is the first of Addrs.
func (b *Broker) Addr() string { return b.advertised }

// ListenAddr is the address the listener is bound to (with the real port).
func (b *Broker) ListenAddr() net.Addr { return b.listen }

// DataDir is the absolute data directory, or "" for an in-memory broker.
func (b *Broker) DataDir() string { return b.dataDir }

// Close stops accepting connections, answers the requests already read
// (waiting at most a few seconds for long polls), closes the connections,
// then flushes and closes the storage. It is idempotent: later calls return
// the first call's result.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		b.admin.stop(time.Second) // first: faults and waits are clients of the broker
		b.http.stop()             // the console is one too, and reads the registry
		b.registry.stop()         // a client of the broker too
		b.metrics.stop()
		ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
		defer cancel()
		var errs []error
		// Every listener drains at once, within the one grace period.
		closed := make(chan error, len(b.srvs))
		for _, srv := range b.srvs {
			go func() { closed <- srv.Close(ctx) }()
		}
		for range b.srvs {
			if err := <-closed; err != nil && !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, err)
			}
		}
		for range b.srvs {
			if err := <-b.served; err != nil {
				errs = append(errs, fmt.Errorf("minikafka: serving: %w", err))
			}
		}
		if err := b.brk.Close(); err != nil {
			errs = append(errs, fmt.Errorf("minikafka: closing storage: %w", err))
		}
		b.unlock()
		b.closeErr = errors.Join(errs...)
	})
	return b.closeErr
}

// ErrDataDirLocked is returned by Start when another broker (in this or
// another process) uses the data dir.
var ErrDataDirLocked = errors.New("minikafka: data dir locked")

// MetricsAddr is the bound address of the metrics endpoint, nil when
// WithMetricsAddr was not given.
func (b *Broker) MetricsAddr() net.Addr { return b.metrics.addr() }

// AdminAddr is the bound address of the control API (WithAdminAddr), nil
// without it.
func (b *Broker) AdminAddr() net.Addr { return b.admin.addr() }

// SchemaRegistryAddr is the bound address of WithSchemaRegistry's
// listener, nil without one.
func (b *Broker) SchemaRegistryAddr() net.Addr {
	return b.registry.addr()
}

// SchemaRegistryURL is the registry's base URL (http://host:port) for
// clients and serializers, "" without WithSchemaRegistry.
func (b *Broker) SchemaRegistryURL() string {
	a := b.SchemaRegistryAddr()
	if a == nil {
		return ""
	}
	return "http://" + a.String()
}

// Listeners returns every listener with its bound and advertised address,
// in the order configured.
func (b *Broker) Listeners() []ListenerInfo { return slices.Clone(b.listeners) }

// Listener returns the listener named name (case insensitive).
func (b *Broker) Listener(name string) (ListenerInfo, bool) {
	for _, l := range b.listeners {
		if strings.EqualFold(l.Name, name) {
			return l, true
		}
	}
	return ListenerInfo{}, false
}

// StorageFaults returns the switches of a broker started
// WithStorageFaults, nil otherwise.
func (b *Broker) StorageFaults() *StorageFaults { return b.storage }

// HTTPAddr is the bound address of WithHTTPAddr's listener, nil without
// one.
func (b *Broker) HTTPAddr() net.Addr { return b.http.addr() }

// do sends one request straight to the broker's handler.
func (b *Broker) do(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	return callBroker(ctx, b.brk, req)
}
