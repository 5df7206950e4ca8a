package minikafka

import (
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/spool"
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
	// spoolKey seals new spool segments; spoolOldKeys open older ones.
	spoolKey     []byte
	spoolOldKeys [][]byte
	// syncGroups: WithForwardGroupOffsets; checkpointsAlias:
	// WithForwardCheckpoints (both run every syncGroupsInterval).
	syncGroups         bool
	syncGroupsInterval time.Duration
	checkpointsAlias   string
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
func (u *uplinkConfig) build() (*uplink.Config, error) {
	if len(u.forward) == 0 && len(u.brokers) == 0 {
		if u.spoolKey != nil || u.spoolOldKeys != nil {
			return nil, fmt.Errorf("minikafka: a spool encryption key is set but no topic is forwarded (WithForward, WithUpstream)")
		}
		if u.syncGroups || u.checkpointsAlias != "" {
			return nil, fmt.Errorf("minikafka: WithForwardGroupOffsets or WithForwardCheckpoints is set but no topic is forwarded (WithForward, WithUpstream)")
		}
		return nil, nil
	}
	if len(u.brokers) == 0 {
		return nil, fmt.Errorf("minikafka: forwarding %q needs an upstream (WithUpstream)", u.forward)
	}
	if len(u.forward) == 0 {
		return nil, fmt.Errorf("minikafka: an upstream is set but no topic is forwarded (WithForward)")
	}
	cfg := &uplink.Config{
		Brokers: u.brokers, TLS: u.tls,
		SASLMechanism: u.mechanism, SASLUser: u.user, SASLPassword: u.pass,
		SpoolMaxBytes: u.spoolMax, ClientOpts: u.clientOpts,
		SyncGroupOffsets: u.syncGroups, SyncGroupOffsetsInterval: u.syncGroupsInterval,
		CheckpointsAlias: u.checkpointsAlias,
	}
	if u.spoolKey != nil {
		c, err := spoolCipher(u.spoolKey, u.spoolOldKeys)
		if err != nil {
			return nil, err
		}
		cfg.Cipher, cfg.EncryptionKeyID = c, spool.KeyID(u.spoolKey)
	} else if len(u.spoolOldKeys) > 0 {
		return nil, fmt.Errorf("minikafka: previous spool keys are given but no current one")
	}
	switch strings.ToUpper(u.mechanism) {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, fmt.Errorf("minikafka: unknown upstream SASL mechanism %q", u.mechanism)
	}
	for _, p := range u.forward {
		r, err := uplink.ParseForwardRule(p)
		if err != nil {
			return nil, fmt.Errorf("minikafka: %w", err)
		}
		cfg.Forward = append(cfg.Forward, r)
	}
	return cfg, nil
}

// WithSpoolEncryptionKey encrypts the spool of forwarded topics at rest
// with AES-256-GCM under key (32 bytes; spool.ParseKey reads the forms an
// operator writes to a file). Every segment is sealed with its header as
// associated data, so neither its records nor its header can be read or
// edited without the key. previous are older keys, for a rotation:
// segments sealed under them stay readable until they are shipped and
// deleted, while new segments use key. Starting with a key that opens
// neither the oldest nor the newest encrypted segment fails, naming the
// segment; so does starting without a key when the spool holds encrypted
// segments. Only the spool is encrypted: the local log of every topic,
// forwarded or not, is stored as Kafka stores it (see README, Edge).
func WithSpoolEncryptionKey(key []byte, previous ...[]byte) Option {
	return optionFunc(func(c *config) {
		c.uplink.spoolKey = append([]byte(nil), key...)
		c.uplink.spoolOldKeys = nil
		for _, k := range previous {
			c.uplink.spoolOldKeys = append(c.uplink.spoolOldKeys, append([]byte(nil), k...))
		}
	})
}

// spoolCipher is AES-256-GCM under key, in a ring with previous keys if
// any.
func spoolCipher(key []byte, previous [][]byte) (spool.Cipher, error) {
	cur, err := spool.NewAESGCM(key)
	if err != nil {
		return nil, fmt.Errorf("minikafka: spool encryption key: %w", err)
	}
	if len(previous) == 0 {
		return cur, nil
	}
	var olds []spool.Cipher
	for i, k := range previous {
		c, err := spool.NewAESGCM(k)
		if err != nil {
			return nil, fmt.Errorf("minikafka: previous spool encryption key %d: %w", i+1, err)
		}
		olds = append(olds, c)
	}
	return spool.NewKeyRing(cur, olds...)
}

// WithForwardGroupOffsets makes consumer groups able to move upstream, as
// MirrorMaker 2's sync.group.offsets.enabled: every interval (0: 60 s, MM2's
// default) each local group's committed offsets on forwarded topics are
// translated to upstream offsets and committed to the group of the same
// name upstream, on the upstream topic name, while that group has no
// members and never backwards. A consumer pointed at the upstream then
// resumes where it was here: exactly where the offset lies in a batch
// already shipped, else at the end of what was shipped (it re-reads the
// records not shipped yet). Broker.ForwardGroupOffsets shows the last pass.
func WithForwardGroupOffsets(interval time.Duration) Option {
	return optionFunc(func(c *config) {
		c.uplink.syncGroups, c.uplink.syncGroupsInterval = true, interval
	})
}

// WithForwardCheckpoints writes MirrorMaker 2 checkpoints upstream: every
// interval (0: 60 s, MM2's emit.checkpoints.interval.seconds; one interval
// with WithForwardGroupOffsets, the last given wins) each local group's
// committed offsets on forwarded topics, translated as
// WithForwardGroupOffsets translates them, are written to the upstream
// topic alias+".checkpoints.internal" (created compacted, one partition)
// in MM2's format, so consumers and tools that move groups with MM2
// (RemoteClusterUtils.translateOffsets with alias as the source cluster)
// find where to resume upstream. Unlike WithForwardGroupOffsets it changes
// no upstream group.
func WithForwardCheckpoints(alias string, interval time.Duration) Option {
	return optionFunc(func(c *config) {
		c.uplink.checkpointsAlias, c.uplink.syncGroupsInterval = alias, interval
	})
}
