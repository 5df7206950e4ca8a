package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/minikafka/minikafka"
)

// listenerSettings are Kafka's listeners, advertised.listeners and
// listener.security.protocol.map, as flags.
type listenerSettings struct {
	listeners, advertised, protocols string

	set map[string]bool // flags given (command line or environment)
}

func (s *listenerSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&s.listeners, "listeners", "", "named listeners `NAME://host:port,...` (Kafka listeners), e.g. INTERNAL://:9092,EXTERNAL://:29092; replaces -listen")
	fs.StringVar(&s.advertised, "advertised-listeners", "", "`NAME://host:port,...` handed to the clients of each listener (Kafka advertised.listeners); a listener not named is advertised like -advertise's default")
	fs.StringVar(&s.protocols, "listener-security-protocol-map", "", "`NAME:PROTOCOL,...`, PROTOCOL one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL (Kafka listener.security.protocol.map); a listener named after a protocol uses it")
}

// used reports whether any of the listener flags is given.
func (s *listenerSettings) used() bool {
	return s.listeners != "" || s.advertised != "" || s.protocols != ""
}

// check returns the problems with the listener flags and how they combine
// with -listen, -advertise and the security flags.
func (s *listenerSettings) check(fs *flag.FlagSet, listen string, sec *securitySettings) []string {
	s.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { s.set[f.Name] = true })
	if !s.used() {
		return nil
	}
	var bad []string
	if s.listeners != "" && s.set["listen"] {
		bad = append(bad, "-listen and -listeners cannot be combined: give every listen address in -listeners")
	}
	if s.set["advertise"] {
		bad = append(bad, "-advertise and -listeners/-advertised-listeners cannot be combined: use -advertised-listeners")
	}
	specs, err := s.specs(listen, sec)
	if err != nil {
		return append(bad, "listener flags: "+err.Error())
	}
	withTLS, withSASL := sec.tlsCert != "", sec.saslUsers != "" || sec.saslUsersFile != ""
	usesTLS, usesSASL := false, false
	for _, l := range specs {
		wantTLS := l.Security == minikafka.SSL || l.Security == minikafka.SASLSSL
		wantSASL := l.Security == minikafka.SASLPlaintext || l.Security == minikafka.SASLSSL
		if wantTLS && !withTLS {
			bad = append(bad, fmt.Sprintf("listener %s is %s: it needs -tls-cert and -tls-key", l.Name, l.Security))
		}
		if wantSASL && !withSASL {
			bad = append(bad, fmt.Sprintf("listener %s is %s: it needs -sasl-users or -sasl-users-file", l.Name, l.Security))
		}
		usesTLS, usesSASL = usesTLS || wantTLS, usesSASL || wantSASL
	}
	if withTLS && !usesTLS {
		bad = append(bad, "-tls-cert is given but no listener is SSL or SASL_SSL (see -listener-security-protocol-map)")
	}
	if withSASL && !usesSASL {
		bad = append(bad, "SASL users are given but no listener is SASL_PLAINTEXT or SASL_SSL (see -listener-security-protocol-map)")
	}
	return bad
}

// specs parses the flags. Without -listeners the one listener is -listen's,
// named after its security protocol as Kafka's default listener is, so
// -advertised-listeners and -listener-security-protocol-map can name it.
func (s *listenerSettings) specs(listen string, sec *securitySettings) ([]minikafka.ListenerSpec, error) {
	listeners := s.listeners
	if listeners == "" {
		listeners = defaultListenerName(sec) + "://" + listen
	}
	return minikafka.ParseListeners(listeners, s.advertised, s.protocols)
}

// defaultListenerName is the protocol the security flags select for the
// single listener.
func defaultListenerName(sec *securitySettings) string {
	tls, sasl := sec.tlsCert != "", sec.saslUsers != "" || sec.saslUsersFile != ""
	switch {
	case tls && sasl:
		return minikafka.SASLSSL
	case tls:
		return minikafka.SSL
	case sasl:
		return minikafka.SASLPlaintext
	}
	return minikafka.Plaintext
}

// options returns WithListeners when a listener flag is given (checked
// already), else nothing: -listen and -advertise apply.
func (s *listenerSettings) options(listen string, sec *securitySettings) ([]minikafka.Option, error) {
	if !s.used() {
		return nil, nil
	}
	specs, err := s.specs(listen, sec)
	if err != nil {
		return nil, err
	}
	return []minikafka.Option{minikafka.WithListeners(specs...)}, nil
}

// describeListeners is the startup line's part on where the broker
// listens: "listening on ADDR, advertised as ADDR" for the one listener of
// -listen, each listener by name otherwise.
func describeListeners(b *minikafka.Broker, named bool) string {
	ls := b.Listeners()
	if !named && len(ls) == 1 {
		return fmt.Sprintf("listening on %s, advertised as %s", ls[0].Addr, ls[0].Advertised)
	}
	var parts []string
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%s://%s (%s), advertised as %s", l.Name, l.Addr, l.Security, l.Advertised))
	}
	return "listening on " + strings.Join(parts, "; ")
}
