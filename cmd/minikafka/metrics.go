package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/minikafka/minikafka"
)

// metricsSettings is the broker's HTTP side: -http-addr (console, API,
// /metrics, /healthz, /readyz) and -metrics-addr (a listener of its own
// that serves /metrics alone, as before -http-addr existed).
type metricsSettings struct {
	addr     string
	httpAddr string
	httpAny  bool

	registryAddr string // -schema-registry-addr: Confluent's REST API
	registryAny  bool
	registryAuth bool

	adminAddr      string // the control API (faults, inspection, waits)
	adminTokenFile string
	storageFaults  bool // -storage-faults: the data dir behind switches
}

func (m *metricsSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics at http://`host:port`/metrics on a listener of their own (default: off; -http-addr serves /metrics too)")
	fs.StringVar(&m.httpAddr, "http-addr", "", "serve the web console, its JSON API, /metrics, /healthz and /readyz at http://`host:port`/ (default: off; \":8080\" means 127.0.0.1:8080)")
	fs.BoolVar(&m.httpAny, "http-addr-any", false, "let -http-addr listen on every interface (0.0.0.0, ::, or a bare \":port\"); the console has no password")
	fs.StringVar(&m.registryAddr, "schema-registry-addr", "", "serve a Confluent-compatible schema registry (Avro, Protobuf, JSON Schema; kept in the _schemas topic) at http://`host:port`/ (default: off; \":8081\" means 127.0.0.1:8081)")
	fs.BoolVar(&m.registryAny, "schema-registry-addr-any", false, "let -schema-registry-addr listen on every interface; the registry has no password")
	fs.BoolVar(&m.registryAuth, "schema-registry-auth", false, "require HTTP basic authentication on the schema registry: a SCRAM user's name and password")
	fs.StringVar(&m.adminAddr, "admin-addr", "", "serve the control API (faults, inspection, waits, seeding) with /metrics and /healthz at http://`host:port`/v1/ (default: off; \":9644\" means 127.0.0.1:9644; other than loopback needs -admin-token-file)")
	fs.StringVar(&m.adminTokenFile, "admin-token-file", "", "`file` holding the bearer token the control API requires (one line)")
	fs.BoolVar(&m.storageFaults, "storage-faults", false, "put the data dir behind switches the control API can flip (POST /v1/storage: failing fsyncs, a full disk, slow fsyncs), for tests; not for production")
}

func (m *metricsSettings) options() ([]minikafka.Option, error) {
	var opts []minikafka.Option
	if m.adminAddr != "" {
		opts = append(opts, minikafka.WithAdminAddr(m.adminAddr))
	}
	if m.adminTokenFile != "" {
		tok, err := readTokenFile(m.adminTokenFile)
		if err != nil {
			return nil, fmt.Errorf("-admin-token-file: %w", err)
		}
		opts = append(opts, minikafka.WithAdminToken(tok))
	}
	if m.storageFaults {
		opts = append(opts, minikafka.WithStorageFaults())
	}
	if m.addr != "" {
		opts = append(opts, minikafka.WithMetricsAddr(m.addr))
	}
	if m.httpAddr != "" {
		opts = append(opts, minikafka.WithHTTPAddr(m.httpAddr))
	}
	if m.httpAny {
		opts = append(opts, minikafka.WithHTTPAddrAny())
	}
	if m.registryAddr != "" {
		opts = append(opts, minikafka.WithSchemaRegistry(m.registryAddr))
	}
	if m.registryAny {
		opts = append(opts, minikafka.WithSchemaRegistryAny())
	}
	if m.registryAuth {
		opts = append(opts, minikafka.WithSchemaRegistryAuth())
	}
	return opts, nil
}

// readTokenFile reads a one-line secret; an empty one is refused (it would
// mean no authentication).
func readTokenFile(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" || strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("%s: want one non-empty line", path)
	}
	return tok, nil
}
