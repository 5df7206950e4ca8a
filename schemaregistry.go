package minikafka

// The schema registry (WithSchemaRegistry): package schemaregistry served
// on its own HTTP listener. The registry is a Kafka client of this broker
// (it keeps its state in the _schemas topic) over an in-process connection
// of its own, as the console is: no port, no TLS or SASL to configure, and
// its requests queue behind no client's.

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/console"
	"github.com/minikafka/minikafka/internal/schemaregistry"
)

// registrySide is the registry, its HTTP listener and its Kafka pipe.
type registrySide struct {
	reg    *schemaregistry.Registry
	server *httpServer
	kafka  *kafkaPipe
	once   sync.Once
}

// startRegistry binds the registry's listener and serves it; nil when
// cfg has no address. The registry reads its topic on the first request.
// With az, each request is decided by the broker's ACLs.
func startRegistry(cfg schemaRegistryConfig, az *broker.AuthorizerConfig, brk *broker.Broker, log *slog.Logger) (_ *registrySide, err error) {
	if cfg.addr == "" {
		return nil, nil
	}
	addr, err := cfg.bindAddr()
	if err != nil {
		return nil, err
	}
	r := &registrySide{}
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	if r.kafka, err = openKafkaPipe("schema-registry", brk, log); err != nil {
		return nil, err
	}
	var authenticate func(user, pass string) bool
	if cfg.auth {
		authenticate = brk.CheckSCRAMPassword
	}
	var acls func(context.Context) (*schemaregistry.ACLSet, error)
	if az != nil {
		acls = func(ctx context.Context) (*schemaregistry.ACLSet, error) { return registryACLs(ctx, brk, az) }
	}
	r.reg, err = schemaregistry.New(schemaregistry.Config{
		Authenticate: authenticate,
		ACLs:         acls,
		Kafka: []kgo.Opt{
			// Every address the broker advertises leads to the same pipe.
			kgo.SeedBrokers("schema-registry.internal:9092"),
			kgo.Dialer(func(ctx context.Context, _, _ string) (net.Conn, error) { return r.kafka.dial(ctx) }),
			kgo.ClientID("minikafka-schema-registry"),
		},
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("minikafka: schema registry: listen on %s: %w", addr, err)
	}
	r.server = serveHTTP(ln, r.reg, httpWriteTimeout, log)
	return r, nil
}

// registryACLs reads the broker's ACLs (DescribeAcls, straight to the
// handler: nothing to encode, and no ACL of its own to pass) for the
// registry to decide a request by. Read for every request, so that an ACL
// created or deleted applies to the next one, as on the Kafka side.
func registryACLs(ctx context.Context, brk *broker.Broker, az *broker.AuthorizerConfig) (*schemaregistry.ACLSet, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.Version = 3
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := callBroker(ctx, brk, req)
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
		r.server.stop(2 * time.Second)
		if r.reg != nil {
			r.reg.Close()
		}
		r.kafka.close()
	})
}

// addr is the bound address, nil when off.
func (r *registrySide) addr() net.Addr {
	if r == nil {
		return nil
	}
	return r.server.addr()
}

// schemas is the registry for the console, nil when off.
func (r *registrySide) schemas() console.Schemas {
	if r == nil {
		return nil
	}
	return r.reg
}
