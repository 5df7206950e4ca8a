package minikafka

import (
	"fmt"
	"net"
	"strconv"
)

// schemaRegistryConfig holds WithSchemaRegistry and WithSchemaRegistryAny;
// the registry is started in schemaregistry.go.
type schemaRegistryConfig struct {
	addr string
	any  bool
	auth bool
}

// WithSchemaRegistry serves a Confluent-compatible schema registry (the
// REST API that Avro, Protobuf and JSON Schema serializers use) on addr,
// over HTTP. Its schemas are kept in the broker's own compacted _schemas
// topic, so they survive restarts as any topic does. Port 0 picks a free
// port (see Broker.SchemaRegistryURL). Default: off.
//
// The registry asks for no password, so, as the console, it stays on
// loopback unless told otherwise: an address with only a port (":8081")
// listens on 127.0.0.1, and the wildcard hosts 0.0.0.0 and :: are refused
// unless WithSchemaRegistryAny is given too.
func WithSchemaRegistry(addr string) Option {
	return optionFunc(func(c *config) { c.schemaRegistry.addr = addr })
}

// WithSchemaRegistryAny allows WithSchemaRegistry to listen on every
// interface.
func WithSchemaRegistryAny() Option {
	return optionFunc(func(c *config) { c.schemaRegistry.any = true })
}

// WithSchemaRegistryAuth makes every request to the schema registry
// authenticate with HTTP basic credentials: a user and password of the
// broker's SCRAM users (WithSASL's, and those created with
// AlterUserScramCredentials, e.g. minikafka user create), as Redpanda's
// registry does. Without it the registry asks for no password.
//
// With WithAuthorizer too, each request is also decided by the broker's
// ACLs, the user being User:<name>: a subject's rights are those of its
// topic (orders-value: topic orders; WRITE to register, READ to read),
// the global config and mode the cluster's; a refusal is 403 with
// Confluent's 40301. Package internal/schemaregistry's doc has the table.
func WithSchemaRegistryAuth() Option {
	return optionFunc(func(c *config) { c.schemaRegistry.auth = true })
}

// bindAddr is the address to listen on: a port alone means loopback
// unless any is set; a wildcard needs any.
func (s schemaRegistryConfig) bindAddr() (string, error) {
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return "", fmt.Errorf("schema registry address %q: %w", s.addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("schema registry address %q: bad port", s.addr)
	}
	wildcard := host == "0.0.0.0" || host == "::" || host == "[::]"
	switch {
	case host == "" && !s.any:
		host = "127.0.0.1"
	case wildcard && !s.any:
		return "", fmt.Errorf("schema registry address %q listens on every interface, and the registry has no password: give WithSchemaRegistryAny (-schema-registry-addr-any) to mean it, or a loopback address", s.addr)
	}
	return net.JoinHostPort(host, port), nil
}

func (s schemaRegistryConfig) check() []error {
	if s.addr == "" {
		return nil
	}
	if _, err := s.bindAddr(); err != nil {
		return []error{err}
	}
	return nil
}
