package minikafka

// The schema registry (WithSchemaRegistry): package schemaregistry served
// on its own HTTP listener. The registry is a Kafka client of this broker
// (it keeps its state in the _schemas topic) over an in-process connection
// of its own, as the console is: no port, no TLS or SASL to configure, and
// its requests queue behind no client's.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/net/netutil"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/schemaregistry"
	"github.com/minikafka/minikafka/protocol"
)

// registrySide is the registry, its HTTP listener and its Kafka pipe.
type registrySide struct {
	reg   *schemaregistry.Registry
	ln    net.Listener
	srv   *http.Server
	done  chan struct{}
	pipes *pipeListener
	kafka *protocol.Server
	kdone chan struct{}
	once  sync.Once
}

// startRegistry binds the registry's listener and serves it; nil when
// cfg has no address. The registry reads its topic on the first request.
func startRegistry(cfg schemaRegistryConfig, az *broker.AuthorizerConfig, b *Broker) (_ *registrySide, err error) {
	if cfg.addr == "" {
		return nil, nil
	}
	addr, err := cfg.bindAddr()
	if err != nil {
		return nil, err
	}
	r := &registrySide{pipes: newPipeListener(), kdone: make(chan struct{}), done: make(chan struct{})}
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	r.kafka, err = protocol.Listen(protocol.Config{Listener: r.pipes, ListenerName: "schema-registry", Logger: b.log}, trusted{b.brk})
	if err != nil {
		close(r.kdone)
		return nil, err
	}
	go func() {
		defer close(r.kdone)
		_ = r.kafka.Serve()
	}()
	var authenticate func(user, pass string) bool
	if cfg.auth {
		authenticate = b.brk.CheckSCRAMPassword
	}
	var acls func(context.Context) (*schemaregistry.ACLSet, error)
	if az != nil {
		acls = func(ctx context.Context) (*schemaregistry.ACLSet, error) { return b.registryACLs(ctx, az) }
	}
	r.reg, err = schemaregistry.New(schemaregistry.Config{
		Authenticate: authenticate,
		ACLs:         acls,
		Kafka: []kgo.Opt{
			// Every address the broker advertises leads to the same pipe.
			kgo.SeedBrokers("schema-registry.internal:9092"),
			kgo.Dialer(func(ctx context.Context, _, _ string) (net.Conn, error) { return r.pipes.dial(ctx) }),
			kgo.ClientID("minikafka-schema-registry"),
		},
		Logger: b.log,
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minikafka: schema registry: listen on %s: %w", addr, err)
	}
	r.ln = ln
	r.srv = &http.Server{
		Handler:           r.reg,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		ReadTimeout:       httpReadTimeout,
		WriteTimeout:      httpWriteTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
	}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(netutil.LimitListener(ln, maxHTTPConns))
	}()
	return r, nil
}

// registryACLs reads the broker's ACLs (DescribeAcls, straight to the
// handler: nothing to encode, and no ACL of its own to pass) for the
// registry to decide a request by. Read for every request, so that an ACL
// created or deleted applies to the next one, as on the Kafka side.
func (b *Broker) registryACLs(ctx context.Context, az *broker.AuthorizerConfig) (*schemaregistry.ACLSet, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.Version = 3
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := b.do(ctx, req)
	if err != nil {
		return nil, err
	}
	r := resp.(*kmsg.DescribeACLsResponse)
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		return nil, fmt.Errorf("DescribeAcls: %w", err)
	}
	set := &schemaregistry.ACLSet{SuperUsers: az.SuperUsers, AllowEveryoneIfNoACLFound: az.AllowEveryoneIfNoACLFound}
	for _, res := range r.Resources {
		for _, a := range res.ACLs {
			set.Bindings = append(set.Bindings, schemaregistry.ACL{Principal: a.Principal, Host: a.Host,
				ResourceType: res.ResourceType, Name: res.ResourceName, Pattern: res.ResourcePatternType,
				Operation: a.Operation, Permission: a.PermissionType})
		}
	}
	return set, nil
}

// stop closes the listener, then the registry and its Kafka connection
// (idempotent).
func (r *registrySide) stop() {
	if r == nil {
		return
	}
	r.once.Do(func() {
		if r.srv != nil {
			shutdownHTTP(r.srv, r.done, 2*time.Second)
		}
		if r.reg != nil {
			r.reg.Close()
		}
		r.pipes.Close()
		if r.kafka != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = r.kafka.Close(ctx)
			<-r.kdone
		}
	})
}

// SchemaRegistryAddr is the bound address of WithSchemaRegistry's
// listener, nil without one.
func (b *Broker) SchemaRegistryAddr() net.Addr {
	if b.registry == nil || b.registry.ln == nil {
		return nil
	}
	return b.registry.ln.Addr()
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
