package minikafka

import (
	"slices"

	"github.com/minikafka/minikafka/broker"
)

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
