package minikafka

import (
	"crypto/tls"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker"
)

// uplinkConfig collects the upstream options; forwarding is on when
// WithUpstream names brokers and WithForward names at least one pattern.
type uplinkConfig struct {
	brokers    []string
	tls        *tls.Config
	mechanism  string
	user, pass string
	forward    []string
	spoolMax   int64
	clientOpts []kgo.Opt
}

// WithUpstream names the upstream Kafka cluster that forwarded topics are
// shipped to: "host:port[,host:port...]".
func WithUpstream(brokers string) Option {
	return optionFunc(func(c *config) {
		c.uplink.brokers = nil
		for _, b := range strings.Split(brokers, ",") {
			if b = strings.TrimSpace(b); b != "" {
				c.uplink.brokers = append(c.uplink.brokers, b)
			}
		}
	})
}

// WithForward adds topic patterns to forward upstream (repeatable). Each is
// PATTERN[=PREFIX]: a glob ("edge-*", path.Match syntax) or a regexp
// between slashes ("/^(a|b)\.logs$/", matched against the whole name),
// optionally followed by "=prefix": the upstream topic is then
// prefix+name. The first matching pattern wins. Records of a forwarded
// topic are held in a disk spool until the upstream acknowledges them.
func WithForward(patterns ...string) Option {
	return optionFunc(func(c *config) { c.uplink.forward = append(c.uplink.forward, patterns...) })
}

// WithUpstreamTLS enables TLS to the upstream with cfg (nil: no TLS).
func WithUpstreamTLS(cfg *tls.Config) Option {
	return optionFunc(func(c *config) { c.uplink.tls = cfg })
}

// WithUpstreamSASL authenticates to the upstream with mechanism "PLAIN",
// "SCRAM-SHA-256" or "SCRAM-SHA-512".
func WithUpstreamSASL(mechanism, user, password string) Option {
	return optionFunc(func(c *config) { c.uplink.mechanism, c.uplink.user, c.uplink.pass = mechanism, user, password })
}

// WithSpoolMaxBytes bounds each forwarded partition's spool (default
// 1 GiB). From 90 % full, produce responses throttle clients; when full,
// produce fails with the retriable KAFKA_STORAGE_ERROR.
func WithSpoolMaxBytes(n int64) Option {
	return optionFunc(func(c *config) { c.uplink.spoolMax = n })
}

// WithUpstreamClientOpts appends kgo options to the upstream client
// (tuning, tests).
func WithUpstreamClientOpts(opts ...kgo.Opt) Option {
	return optionFunc(func(c *config) { c.uplink.clientOpts = append(c.uplink.clientOpts, opts...) })
}

// build returns the broker's uplink config, nil when forwarding is off.
func (u *uplinkConfig) build() (*broker.UplinkConfig, error) {
	if len(u.forward) == 0 && len(u.brokers) == 0 {
		return nil, nil
	}
	if len(u.brokers) == 0 {
		return nil, fmt.Errorf("minikafka: forwarding %q needs an upstream (WithUpstream)", u.forward)
	}
	if len(u.forward) == 0 {
		return nil, fmt.Errorf("minikafka: an upstream is set but no topic is forwarded (WithForward)")
	}
	cfg := &broker.UplinkConfig{
		Brokers: u.brokers, TLS: u.tls,
		SASLMechanism: u.mechanism, SASLUser: u.user, SASLPassword: u.pass,
		SpoolMaxBytes: u.spoolMax, ClientOpts: u.clientOpts,
	}
	switch strings.ToUpper(u.mechanism) {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, fmt.Errorf("minikafka: unknown upstream SASL mechanism %q", u.mechanism)
	}
	for _, p := range u.forward {
		r, err := broker.ParseForwardRule(p)
		if err != nil {
			return nil, fmt.Errorf("minikafka: %w", err)
		}
		cfg.Forward = append(cfg.Forward, r)
	}
	return cfg, nil
}
