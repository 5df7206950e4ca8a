package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"strings"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
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
}

func (u *uplinkSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&u.upstream, "upstream", "", "upstream Kafka `brokers` (host:port[,host:port]) that -forward topics are shipped to")
	fs.Func("forward", "forward topics matching `PATTERN[=PREFIX]` upstream (repeatable; whitespace separates several): a glob (edge-*) or /regexp/; PREFIX is prepended to the upstream topic name", func(v string) error {
		for _, p := range strings.Fields(v) {
			if _, err := broker.ParseForwardRule(p); err != nil {
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
	return opts, nil
}
