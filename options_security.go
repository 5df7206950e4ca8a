package minikafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/minikafka/minikafka/broker"
)

// securityConfig collects the listener's TLS and SASL options.
type securityConfig struct {
	tls            *tls.Config
	saslUsers      map[string]string
	saslMechanisms []string
	saslOn         bool
	saslMaxReauth  time.Duration
	oauth          *broker.OAuthConfig
	dtoken         *DelegationTokenConfig // options_dtoken.go
}

// OAuthBearerConfig configures SASL/OAUTHBEARER token validation (Kafka's
// sasl.oauthbearer.* broker options); see WithSASLOAuthBearer.
type OAuthBearerConfig = broker.OAuthConfig

// WithSASLOAuthBearer enables SASL/OAUTHBEARER (and so SASL on the
// listener) beside any WithSASL mechanisms. Without JWKSFile or JWKSURL,
// tokens are unsecured JWTs ({"alg":"none"}, KIP-255), for development;
// with them, tokens must be signed (RS256/384/512, ES256/384) by a key of
// that JWKS and pass the issuer, audience, expiry and scope checks
// (KIP-768). The principal is the token's "sub" (PrincipalClaim); its
// session ends at the token's expiry (or WithSASLMaxReauth), and clients
// re-authenticate with a fresh token.
func WithSASLOAuthBearer(cfg OAuthBearerConfig) Option {
	return optionFunc(func(c *config) {
		c.security.oauth = &cfg
		c.security.saslOn = true
	})
}

// WithTLS serves clients over TLS with cfg (Kafka's SSL listener, or
// SASL_SSL together with WithSASL); nil turns TLS off. cfg needs a
// certificate. For mutual TLS set cfg.ClientAuth to
// tls.RequireAndVerifyClientCert and cfg.ClientCAs: a client without a
// valid certificate is refused in the handshake. Fetches over TLS copy file
// bytes through the TLS layer instead of using sendfile.
func WithTLS(cfg *tls.Config) Option {
	return optionFunc(func(c *config) { c.security.tls = cfg })
}

// WithSASL requires every client connection to authenticate with SASL
// (Kafka's SASL_PLAINTEXT listener, SASL_SSL with WithTLS) as one of users
// (name → password; repeated calls add users). mechanisms are the enabled
// ones among "PLAIN", "SCRAM-SHA-256" and "SCRAM-SHA-512"; none means all
// three. SCRAM credentials are derived at Start with a random salt and 4096
// iterations; passwords are not kept. The program's own calls (WithTopic)
// need no authentication.
func WithSASL(users map[string]string, mechanisms ...string) Option {
	return optionFunc(func(c *config) {
		if c.security.saslUsers == nil {
			c.security.saslUsers = map[string]string{}
		}
		maps.Copy(c.security.saslUsers, users)
		c.security.saslOn = true
		if len(mechanisms) > 0 {
			c.security.saslMechanisms = mechanisms
		}
	})
}

// WithSASLMaxReauth is Kafka's connections.max.reauth.ms for WithSASL:
// with d > 0 every authenticated session lasts d (clients learn it from
// SaslAuthenticate v1+, session_lifetime_ms) and a client must
// re-authenticate on its connection before it ends (KIP-368; kgo,
// librdkafka and the Java client do so by themselves, with the same
// mechanism and user). A connection whose session has ended is closed at
// its next request. 0, the default, means sessions never end. d is
// rounded down to whole milliseconds and must be 0 or at least 1ms.
func WithSASLMaxReauth(d time.Duration) Option {
	return optionFunc(func(c *config) { c.security.saslMaxReauth = d })
}

// securitySettings is what Start hands the broker and the listener.
type securitySettings struct {
	tls        *tls.Config
	sasl       *broker.SASLConfig
	preAuthMax int32
}

// build validates the options.
func (s *securityConfig) build() (securitySettings, error) {
	var out securitySettings
	var errs []error
	if s.tls != nil {
		if len(s.tls.Certificates) == 0 && s.tls.GetCertificate == nil && s.tls.GetConfigForClient == nil {
			errs = append(errs, errors.New("WithTLS: the tls.Config has no certificate"))
		}
		out.tls = s.tls
	}
	if s.saslOn {
		if len(s.saslUsers) == 0 && s.oauth == nil {
			errs = append(errs, errors.New("WithSASL: no users"))
		}
		if slices.Contains(slices.Collect(maps.Keys(s.saslUsers)), "") {
			errs = append(errs, errors.New("WithSASL: a user with an empty name"))
		}
		var mechs []string
		for _, m := range s.saslMechanisms {
			m = strings.ToUpper(strings.TrimSpace(m))
			if m == broker.SASLOAuthBearer && s.oauth != nil {
				mechs = append(mechs, m)
				continue
			}
			if !slices.Contains(broker.SASLMechanisms, m) {
				errs = append(errs, fmt.Errorf("WithSASL: unknown mechanism %q (want %s)", m, strings.Join(broker.SASLMechanisms, ", ")))
			}
			mechs = append(mechs, m)
		}
		if s.oauth != nil {
			switch {
			case len(s.saslUsers) == 0:
				mechs = []string{broker.SASLOAuthBearer}
			case len(mechs) == 0:
				mechs = append(slices.Clone(broker.SASLMechanisms), broker.SASLOAuthBearer)
			case !slices.Contains(mechs, broker.SASLOAuthBearer):
				mechs = append(mechs, broker.SASLOAuthBearer)
			}
		}
		out.sasl = &broker.SASLConfig{Users: s.saslUsers, Mechanisms: mechs, MaxReauth: s.saslMaxReauth, OAuth: s.oauth}
		out.preAuthMax = broker.PreAuthMaxRequestBytes
	}
	switch d := s.saslMaxReauth; {
	case d < 0 || d > 0 && d < time.Millisecond:
		errs = append(errs, fmt.Errorf("WithSASLMaxReauth(%v): want 0 (off) or at least 1ms", d))
	case d > 0 && !s.saslOn:
		errs = append(errs, errors.New("WithSASLMaxReauth without WithSASL"))
	}
	if err := s.applyDelegationTokens(&out); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("minikafka: invalid options: %w", err)
	}
	return out, nil
}

// AuthorizerConfig configures ACL enforcement (WithAuthorizer).
type AuthorizerConfig struct {
	// SuperUsers are Kafka's super.users: principals ("User:admin")
	// allowed everything whatever the ACLs say.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is Kafka's
	// allow.everyone.if.no.acl.found: a resource that no ACL names is
	// open to every principal. The default, false, closes it to all but
	// super users, as Kafka does.
	AllowEveryoneIfNoACLFound bool
}

// WithAuthorizer turns ACL enforcement on, as Kafka's StandardAuthorizer
// (authorizer.class.name): CreateAcls, DescribeAcls and DeleteAcls manage
// the ACLs (kept in the data dir), and every client request is checked
// against them with Kafka's error codes. A connection's principal is
// User:<SASL user>, else User:<mapped certificate subject> with mutual
// TLS (WithSSLPrincipalMappingRules), else User:ANONYMOUS; so with no
// ACLs and no super users every
// client is refused. The program's own calls (WithTopic, the control API)
// are not checked. Without this option the ACL APIs answer
// SECURITY_DISABLED and nothing is checked.
func WithAuthorizer(cfg AuthorizerConfig) Option {
	return optionFunc(func(c *config) {
		c.authorizer = &broker.AuthorizerConfig{
			SuperUsers:                slices.Clone(cfg.SuperUsers),
			AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound,
		}
	})
}

// WithSSLPrincipalMappingRules is Kafka's ssl.principal.mapping.rules:
// how a TLS client certificate's subject becomes the principal name of a
// connection that did not authenticate with SASL, for ACLs
// (WithAuthorizer) and user quotas. Rules are RULE:pattern/replacement/
// with an optional L or U (lower or upper case), and DEFAULT, comma
// separated and tried in order ("RULE:^CN=(.*?),.*$/$1/,DEFAULT"); empty
// is DEFAULT, the whole subject DN ("CN=app,OU=eng,O=example"). A bad
// rule fails Start.
func WithSSLPrincipalMappingRules(rules string) Option {
	return optionFunc(func(c *config) { c.sslPrincipalMappingRules = rules })
}
