package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
)

// authorizerSettings are the flags of ACL enforcement (Kafka's
// authorizer.class.name=StandardAuthorizer and its settings).
type authorizerSettings struct {
	on            bool
	superUsers    string
	allowEveryone bool
	mappingRules  string
}

func (a *authorizerSettings) register(fs *flag.FlagSet) {
	fs.BoolVar(&a.on, "authorizer", false, "enforce ACLs, as Kafka's StandardAuthorizer (authorizer.class.name); clients are User:<SASL user>, User:<mapped certificate subject> or User:ANONYMOUS, and with no ACLs only -super-users get in. Without it the ACL APIs answer SECURITY_DISABLED")
	fs.StringVar(&a.superUsers, "super-users", "", "`principals` allowed everything, Kafka's super.users: Type:name separated by ';' (User:admin;User:ops); needs -authorizer")
	fs.BoolVar(&a.allowEveryone, "allow-everyone-if-no-acl-found", false, "a resource no ACL names is open to every principal (Kafka's allow.everyone.if.no.acl.found); needs -authorizer")
	fs.StringVar(&a.mappingRules, "ssl-principal-mapping-rules", "", "`rules` turning a TLS client certificate's subject into its principal name, Kafka's ssl.principal.mapping.rules (RULE:^CN=(.*?),.*$/$1/,DEFAULT), for ACLs and user quotas; empty: the whole subject DN (DEFAULT)")
}

// parseSuperUsers splits Kafka's super.users list; each entry must be
// Type:name.
func parseSuperUsers(s string) ([]string, error) {
	var out []string
	for _, u := range strings.Split(s, ";") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		typ, name, ok := strings.Cut(u, ":")
		if !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("-super-users: %q is not Type:name (User:admin)", u)
		}
		out = append(out, u)
	}
	return out, nil
}

// check returns the problems found without starting anything.
func (a *authorizerSettings) check() []string {
	var bad []string
	if !a.on {
		if a.superUsers != "" {
			bad = append(bad, "-super-users needs -authorizer")
		}
		if a.allowEveryone {
			bad = append(bad, "-allow-everyone-if-no-acl-found needs -authorizer")
		}
	}
	if _, err := parseSuperUsers(a.superUsers); err != nil {
		bad = append(bad, err.Error())
	}
	if err := broker.ValidatePrincipalMappingRules(a.mappingRules); err != nil {
		bad = append(bad, fmt.Sprintf("-ssl-principal-mapping-rules %q: %v", a.mappingRules, err))
	}
	return bad
}

// options returns WithAuthorizer when -authorizer is set, and the mapping
// rules (checked by check) when given.
func (a *authorizerSettings) options() ([]minikafka.Option, error) {
	var opts []minikafka.Option
	if a.mappingRules != "" {
		opts = append(opts, minikafka.WithSSLPrincipalMappingRules(a.mappingRules))
	}
	if !a.on {
		return opts, nil
	}
	users, err := parseSuperUsers(a.superUsers)
	if err != nil {
		return nil, err
	}
	return append(opts, minikafka.WithAuthorizer(minikafka.AuthorizerConfig{
		SuperUsers:                users,
		AllowEveryoneIfNoACLFound: a.allowEveryone,
	})), nil
}
