package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/broker"
	"github.com/minikafka/minikafka/internal/vfs"
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
	// The root package takes the mapping rules only with the authorizer,
	// so without it they would be silently ignored: quotas then name a
	// TLS client by its whole subject DN. Refusing them says so.
	fs.StringVar(&a.mappingRules, "ssl-principal-mapping-rules", "", "`rules` turning a TLS client certificate's subject into its principal name, Kafka's ssl.principal.mapping.rules (RULE:^CN=(.*?),.*$/$1/,DEFAULT); used by ACLs and by user quotas; needs -authorizer (without it the name is the whole subject DN, DEFAULT)")
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
		if a.mappingRules != "" {
			bad = append(bad, "-ssl-principal-mapping-rules needs -authorizer (without it TLS clients are named by their whole subject DN)")
		}
	}
	if _, err := parseSuperUsers(a.superUsers); err != nil {
		bad = append(bad, err.Error())
	}
	return bad
}

// options returns WithAuthorizer when -authorizer is set. The mapping
// rules are parsed by the broker itself, which the binary cannot reach
// otherwise: a throwaway broker on an in-memory filesystem opens with
// them, so a bad rule is reported against the flag before the data dir
// is touched, not as a failure to open it.
func (a *authorizerSettings) options() ([]minikafka.Option, error) {
	if !a.on {
		return nil, nil
	}
	users, err := parseSuperUsers(a.superUsers)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.mappingRules) != "" {
		probe, err := broker.New(broker.Config{DataDir: "/probe", FS: vfs.NewMem(),
			Authorizer: &broker.AuthorizerConfig{SSLPrincipalMappingRules: a.mappingRules}})
		if err != nil {
			return nil, fmt.Errorf("-ssl-principal-mapping-rules %q: %v", a.mappingRules,
				strings.TrimPrefix(err.Error(), "broker: ssl.principal.mapping.rules: "))
		}
		probe.Close()
	}
	return []minikafka.Option{minikafka.WithAuthorizer(minikafka.AuthorizerConfig{
		SuperUsers:                users,
		AllowEveryoneIfNoACLFound: a.allowEveryone,
		SSLPrincipalMappingRules:  a.mappingRules,
	})}, nil
}
