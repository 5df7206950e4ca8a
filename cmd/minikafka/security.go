package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
)

// securitySettings are the flags of the client listener's TLS and SASL.
type securitySettings struct {
	tlsCert, tlsKey, tlsClientCA string
	saslUsers                    string
	saslUsersFile                string
	saslMechanisms               string
	saslMaxReauth                time.Duration

	// Delegation tokens (on with SASL users).
	dtokenSecret      string
	dtokenMaxLifetime time.Duration
	dtokenExpiryTime  time.Duration

	oauth                          bool
	oauthJWKS, oauthIssuer         string
	oauthAudience, oauthScope      string
	oauthSubClaim, oauthScopeClaim string
	oauthClockSkew                 time.Duration
}

func (s *securitySettings) register(fs *flag.FlagSet) {
	fs.StringVar(&s.tlsCert, "tls-cert", "", "PEM `file` with the listener's certificate (chain); with -tls-key, clients must connect with TLS")
	fs.StringVar(&s.tlsKey, "tls-key", "", "PEM `file` with the private key of -tls-cert")
	fs.StringVar(&s.tlsClientCA, "tls-client-ca", "", "PEM `file` of CAs for client certificates: mutual TLS, a client without a valid certificate is refused")
	fs.StringVar(&s.saslUsers, "sasl-users", "", "require SASL authentication as one of these `user:password,...` (prefer MINIKAFKA_SASL_USERS or -sasl-users-file: flags show in ps)")
	fs.StringVar(&s.saslUsersFile, "sasl-users-file", "", "require SASL authentication as one of the users in this `file`: one user:password per line, # comments")
	fs.StringVar(&s.saslMechanisms, "sasl-mechanisms", strings.Join(broker.SASLMechanisms, ","), "enabled SASL `mechanisms` (comma-separated)")
	fs.BoolVar(&s.oauth, "sasl-oauthbearer", false, "enable SASL/OAUTHBEARER: unsecured JWTs (alg none, for development) unless -sasl-oauthbearer-jwks is given")
	fs.StringVar(&s.oauthJWKS, "sasl-oauthbearer-jwks", "", "JWKS `file or URL` (Kafka sasl.oauthbearer.jwks.endpoint.url): OAUTHBEARER tokens must be signed by one of its keys (implies -sasl-oauthbearer)")
	fs.StringVar(&s.oauthIssuer, "sasl-oauthbearer-issuer", "", "required token issuer (sasl.oauthbearer.expected.issuer)")
	fs.StringVar(&s.oauthAudience, "sasl-oauthbearer-audience", "", "accepted token `audiences`, comma-separated (sasl.oauthbearer.expected.audience)")
	fs.StringVar(&s.oauthScope, "sasl-oauthbearer-required-scope", "", "`scopes` every token must hold, comma-separated (unsecuredValidatorRequiredScope)")
	fs.StringVar(&s.oauthSubClaim, "sasl-oauthbearer-sub-claim", "sub", "token claim naming the principal (sasl.oauthbearer.sub.claim.name)")
	fs.StringVar(&s.oauthScopeClaim, "sasl-oauthbearer-scope-claim", "scope", "token claim holding the scopes (sasl.oauthbearer.scope.claim.name)")
	fs.DurationVar(&s.oauthClockSkew, "sasl-oauthbearer-clock-skew", 0, "allowed clock difference for token times; 0: Kafka's default (0 unsecured, 30s signed)")
	fs.StringVar(&s.dtokenSecret, "delegation-token-secret", "", "key of the delegation tokens' HMACs (Kafka delegation.token.secret.key; prefer MINIKAFKA_DELEGATION_TOKEN_SECRET: flags show in ps); empty: generated once and kept in the data dir")
	fs.DurationVar(&s.dtokenMaxLifetime, "delegation-token-max-lifetime", 0, "longest a delegation token can be renewed for (delegation.token.max.lifetime.ms); 0: 7 days")
	fs.DurationVar(&s.dtokenExpiryTime, "delegation-token-expiry-time", 0, "lifetime of a new or renewed delegation token (delegation.token.expiry.time.ms); 0: 1 day")
	fs.DurationVar(&s.saslMaxReauth, "sasl-max-reauth", 0, "SASL session lifetime (Kafka connections.max.reauth.ms): clients must re-authenticate within it (KIP-368) or their connection is closed; 0: sessions never end")
}

// check returns the problems with the settings that need no file access.
func (s *securitySettings) check() []string {
	var bad []string
	if (s.tlsCert == "") != (s.tlsKey == "") {
		bad = append(bad, "-tls-cert and -tls-key go together")
	}
	if s.tlsClientCA != "" && s.tlsCert == "" {
		bad = append(bad, "-tls-client-ca needs -tls-cert and -tls-key")
	}
	for _, m := range splitList(s.saslMechanisms) {
		if strings.ToUpper(m) == broker.SASLOAuthBearer && (s.oauth || s.oauthJWKS != "") {
			continue
		}
		if !slices.Contains(broker.SASLMechanisms, strings.ToUpper(m)) {
			bad = append(bad, fmt.Sprintf("-sasl-mechanisms: unknown mechanism %q (want %s)", m, strings.Join(broker.SASLMechanisms, ", ")))
		}
	}
	if d := s.saslMaxReauth; d < 0 || d > 0 && d < time.Millisecond {
		bad = append(bad, fmt.Sprintf("-sasl-max-reauth %v: want 0 (off) or at least 1ms", d))
	}
	if s.dtokenMaxLifetime < 0 || s.dtokenExpiryTime < 0 {
		bad = append(bad, "-delegation-token-max-lifetime and -delegation-token-expiry-time: want 0 (Kafka's default) or more")
	}
	if len(splitList(s.saslMechanisms)) == 0 {
		bad = append(bad, "-sasl-mechanisms: empty")
	}
	if _, err := parseUsers(strings.ReplaceAll(s.saslUsers, ",", "\n"), "-sasl-users"); err != nil {
		bad = append(bad, err.Error())
	}
	return bad
}

// options turns the settings into Start options, reading the files.
func (s *securitySettings) options() ([]minikafka.Option, error) {
	var opts []minikafka.Option
	if s.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(s.tlsCert, s.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if s.tlsClientCA != "" {
			if cfg.ClientCAs, err = loadCertPool("-tls-client-ca", s.tlsClientCA); err != nil {
				return nil, err
			}
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
		opts = append(opts, minikafka.WithTLS(cfg))
	}
	users, err := parseUsers(strings.ReplaceAll(s.saslUsers, ",", "\n"), "-sasl-users")
	if err != nil {
		return nil, err
	}
	if s.saslUsersFile != "" {
		data, err := os.ReadFile(s.saslUsersFile)
		if err != nil {
			return nil, fmt.Errorf("-sasl-users-file: %w", err)
		}
		fileUsers, err := parseUsers(string(data), s.saslUsersFile)
		if err != nil {
			return nil, err
		}
		if len(fileUsers) == 0 {
			return nil, fmt.Errorf("-sasl-users-file %s: no users", s.saslUsersFile)
		}
		for u, p := range fileUsers {
			users[u] = p
		}
	}
	oauthOn := s.oauth || s.oauthJWKS != ""
	if oauthOn {
		oc := minikafka.OAuthBearerConfig{Issuer: s.oauthIssuer, Audiences: splitList(s.oauthAudience),
			RequiredScopes: splitList(s.oauthScope), PrincipalClaim: s.oauthSubClaim, ScopeClaim: s.oauthScopeClaim,
			ClockSkew: s.oauthClockSkew}
		if strings.HasPrefix(s.oauthJWKS, "http://") || strings.HasPrefix(s.oauthJWKS, "https://") || strings.HasPrefix(s.oauthJWKS, "file:") {
			oc.JWKSURL = s.oauthJWKS
		} else {
			oc.JWKSFile = s.oauthJWKS
		}
		opts = append(opts, minikafka.WithSASLOAuthBearer(oc), minikafka.WithSASLMaxReauth(s.saslMaxReauth))
	}
	dtokens := s.dtokenSecret != "" || s.dtokenMaxLifetime != 0 || s.dtokenExpiryTime != 0
	if len(users) > 0 {
		opts = append(opts, minikafka.WithSASL(users, splitList(s.saslMechanisms)...),
			minikafka.WithSASLMaxReauth(s.saslMaxReauth))
		if dtokens {
			opts = append(opts, minikafka.WithDelegationTokens(minikafka.DelegationTokenConfig{
				Secret: s.dtokenSecret, MaxLifetime: s.dtokenMaxLifetime, ExpiryTime: s.dtokenExpiryTime}))
		}
	} else if s.saslMaxReauth > 0 && !oauthOn {
		return nil, errors.New("-sasl-max-reauth needs SASL users (-sasl-users or -sasl-users-file)")
	}
	if dtokens && len(users) == 0 {
		return nil, errors.New("-delegation-token-* need SASL users (-sasl-users or -sasl-users-file): tokens log in with SCRAM")
	}
	return opts, nil
}

// parseUsers reads user:password lines (blank lines and # comments
// skipped). Errors name the line, never the password.
func parseUsers(text, source string) (map[string]string, error) {
	users := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader([]byte(text)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, pass, ok := strings.Cut(line, ":")
		switch {
		case !ok:
			return nil, fmt.Errorf("%s: entry %d: want user:password", source, n)
		case user == "":
			return nil, fmt.Errorf("%s: entry %d: empty user name", source, n)
		case pass == "":
			return nil, fmt.Errorf("%s: entry %d (user %s): empty password", source, n, user)
		}
		if _, dup := users[user]; dup {
			return nil, fmt.Errorf("%s: user %s given twice", source, user)
		}
		users[user] = pass
	}
	return users, sc.Err()
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// loadCertPool reads the PEM certificates in path, given by flag.
func loadCertPool(flag, path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificates", flag, path)
	}
	return pool, nil
}
