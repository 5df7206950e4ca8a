package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker/uplink"
	"github.com/minikafka/minikafka/spool"
)

// uplinkSettings are the flags of store-and-forward to an upstream cluster.
type uplinkSettings struct {
	upstream      string
	forward       []string
	tls           bool
	tlsCA         string
	tlsSkipVerify bool
	mechanism     string
	user, pass    string
	spoolMax      int64
	syncGroups    bool          // -forward-group-offsets
	syncInterval  time.Duration // -forward-group-offsets-interval
	checkpoints   string        // -forward-checkpoints
	keyFile       string        // -spool-encryption-key-file
	oldKeyFiles   []string      // -spool-encryption-previous-key-file
}

func (u *uplinkSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&u.upstream, "upstream", "", "upstream Kafka `brokers` (host:port[,host:port]) that -forward topics are shipped to")
	fs.Func("forward", "forward topics matching `PATTERN[=PREFIX]` upstream (repeatable; whitespace separates several): a glob (edge-*) or /regexp/; PREFIX is prepended to the upstream topic name", func(v string) error {
		for _, p := range strings.Fields(v) {
			if _, err := uplink.ParseForwardRule(p); err != nil {
				return err
			}
			u.forward = append(u.forward, p)
		}
		return nil
	})
	fs.BoolVar(&u.tls, "upstream-tls", false, "connect to the upstream with TLS")
	fs.StringVar(&u.tlsCA, "upstream-tls-ca", "", "PEM `file` of CAs to verify the upstream with (default: system roots)")
	fs.BoolVar(&u.tlsSkipVerify, "upstream-tls-insecure", false, "do not verify the upstream's certificate (testing only)")
	fs.StringVar(&u.mechanism, "upstream-sasl-mechanism", "", "SASL `mechanism` for the upstream: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	fs.StringVar(&u.user, "upstream-sasl-user", "", "SASL `user` for the upstream")
	fs.StringVar(&u.pass, "upstream-sasl-password", "", "SASL `password` for the upstream (prefer MINIKAFKA_UPSTREAM_SASL_PASSWORD)")
	fs.BoolVar(&u.syncGroups, "forward-group-offsets", false, "commit local consumer groups' offsets on forwarded topics, translated, to the same groups upstream (as MirrorMaker 2's sync.group.offsets.enabled), so a consumer can move upstream and resume")
	fs.DurationVar(&u.syncInterval, "forward-group-offsets-interval", time.Minute, "how often -forward-group-offsets and -forward-checkpoints run")
	fs.StringVar(&u.checkpoints, "forward-checkpoints", "", "write MirrorMaker 2 checkpoints of local consumer groups' translated offsets on forwarded topics to the upstream topic `ALIAS`.checkpoints.internal (ALIAS: this cluster's name as MM2's source alias), for consumers and tools that move groups with MM2")
	fs.StringVar(&u.keyFile, "spool-encryption-key-file", "", "encrypt forwarded topics' spool at rest with AES-256-GCM under the 32-byte key in `file` (raw, 64 hex digits or base64; mode 0600 or stricter)")
	fs.Func("spool-encryption-previous-key-file", "a previous spool key `file` (repeatable), for a rotation: segments sealed under it stay readable until shipped", func(v string) error {
		u.oldKeyFiles = append(u.oldKeyFiles, v)
		return nil
	})
	fs.Int64Var(&u.spoolMax, "spool-max-bytes", 1<<30, "bound of each forwarded partition's spool in `bytes`; produce is throttled from 90% and refused (retriably) when full")
}

// check returns the problems with the settings.
func (u *uplinkSettings) check() []string {
	var bad []string
	if len(u.forward) > 0 && u.upstream == "" {
		bad = append(bad, "-forward needs -upstream")
	}
	if u.upstream != "" && len(u.forward) == 0 {
		bad = append(bad, "-upstream needs at least one -forward pattern")
	}
	switch strings.ToUpper(u.mechanism) {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		bad = append(bad, fmt.Sprintf("-upstream-sasl-mechanism %q: must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", u.mechanism))
	}
	if u.mechanism != "" && u.user == "" {
		bad = append(bad, "-upstream-sasl-mechanism needs -upstream-sasl-user")
	}
	if u.spoolMax <= 0 {
		bad = append(bad, "-spool-max-bytes: must be positive")
	}
	if u.syncGroups && u.upstream == "" {
		bad = append(bad, "-forward-group-offsets needs -upstream and -forward")
	}
	if u.checkpoints != "" {
		if u.upstream == "" {
			bad = append(bad, "-forward-checkpoints needs -upstream and -forward")
		}
		if err := uplink.ValidateCheckpointsAlias(u.checkpoints); err != nil {
			bad = append(bad, "-forward-checkpoints: "+err.Error())
		}
	}
	if u.keyFile != "" && u.upstream == "" {
		bad = append(bad, "-spool-encryption-key-file needs -upstream and -forward (only the spool is encrypted)")
	}
	if len(u.oldKeyFiles) > 0 && u.keyFile == "" {
		bad = append(bad, "-spool-encryption-previous-key-file needs -spool-encryption-key-file (the key new segments are sealed with)")
	}
	return bad
}

// options turns the settings into Start options.
func (u *uplinkSettings) options() ([]minikafka.Option, error) {
	if u.upstream == "" {
		return nil, nil
	}
	opts := []minikafka.Option{
		minikafka.WithUpstream(u.upstream),
		minikafka.WithForward(u.forward...),
		minikafka.WithSpoolMaxBytes(u.spoolMax),
	}
	if u.tls || u.tlsCA != "" || u.tlsSkipVerify {
		cfg := &tls.Config{InsecureSkipVerify: u.tlsSkipVerify}
		if u.tlsCA != "" {
			var err error
			if cfg.RootCAs, err = loadCertPool("-upstream-tls-ca", u.tlsCA); err != nil {
				return nil, err
			}
		}
		opts = append(opts, minikafka.WithUpstreamTLS(cfg))
	}
	if u.mechanism != "" {
		opts = append(opts, minikafka.WithUpstreamSASL(u.mechanism, u.user, u.pass))
	}
	if u.syncGroups {
		opts = append(opts, minikafka.WithForwardGroupOffsets(u.syncInterval))
	}
	if u.checkpoints != "" {
		opts = append(opts, minikafka.WithForwardCheckpoints(u.checkpoints, u.syncInterval))
	}
	if u.keyFile != "" {
		key, err := readKeyFile("-spool-encryption-key-file", u.keyFile)
		if err != nil {
			return nil, err
		}
		var olds [][]byte
		for _, f := range u.oldKeyFiles {
			k, err := readKeyFile("-spool-encryption-previous-key-file", f)
			if err != nil {
				return nil, err
			}
			olds = append(olds, k)
		}
		opts = append(opts, minikafka.WithSpoolEncryptionKey(key, olds...))
	}
	return opts, nil
}

// readKeyFile reads a spool key, refusing a file that others than its
// owner may read or write: a key anyone on the host can read protects
// nothing.
func readKeyFile(flag, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: %s is a directory", flag, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s: %s has mode %04o; a key file must not be accessible to group or others (chmod 600 %s)", flag, path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	key, err := spool.ParseKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", flag, path, err)
	}
	return key, nil
}
