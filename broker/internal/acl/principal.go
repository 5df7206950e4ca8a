package acl

import (
	"crypto/x509"
	"fmt"
	"regexp"
	"strings"
)

// MappingRules turn a TLS client certificate's subject into a principal
// name, with Kafka's ssl.principal.mapping.rules syntax: a comma-separated
// list of RULE:pattern/replacement/[LU] and DEFAULT, tried in order; the
// first rule whose pattern matches the whole name gives the principal
// (replacement with $1.. groups, then L lower- or U upper-cased), DEFAULT
// gives the name unchanged. With no rule matching, the name is kept.
type MappingRules struct{ rules []mappingRule }

type mappingRule struct {
	isDefault   bool
	pattern     *regexp.Regexp
	replacement string
	toLower     bool
	toUpper     bool
}

// ruleSyntax is one rule at the front of the list: DEFAULT or
// RULE:pattern/replacement/ with an optional L or U; a "/" inside the
// pattern or replacement is escaped as "\/".
var ruleSyntax = regexp.MustCompile(`^\s*(DEFAULT|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(,|$)`)

// ParseMappingRules parses Kafka's ssl.principal.mapping.rules; "" is
// DEFAULT.
func ParseMappingRules(s string) (*MappingRules, error) {
	m := &MappingRules{}
	if strings.TrimSpace(s) == "" {
		m.rules = []mappingRule{{isDefault: true}}
		return m, nil
	}
	rest := s
	for strings.TrimSpace(rest) != "" {
		g := ruleSyntax.FindStringSubmatch(rest)
		if g == nil {
			return nil, fmt.Errorf("invalid rule: %s", strings.TrimSpace(rest))
		}
		rest = rest[len(g[0]):]
		if g[1] == "DEFAULT" {
			m.rules = append(m.rules, mappingRule{isDefault: true})
			continue
		}
		pat := strings.ReplaceAll(g[2], `\/`, `/`)
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid rule pattern %q: %v", pat, err)
		}
		m.rules = append(m.rules, mappingRule{pattern: re, replacement: strings.ReplaceAll(g[3], `\/`, `/`), toLower: g[4] == "L", toUpper: g[4] == "U"})
	}
	return m, nil
}

// Apply maps a distinguished name to a principal name.
func (m *MappingRules) Apply(dn string) string {
	for _, r := range m.rules {
		if r.isDefault {
			return dn
		}
		if !r.pattern.MatchString(dn) {
			continue
		}
		out := r.pattern.ReplaceAllString(dn, javaGroups(r.replacement))
		switch {
		case r.toLower:
			out = strings.ToLower(out)
		case r.toUpper:
			out = strings.ToUpper(out)
		}
		return out
	}
	return dn
}

// javaGroups rewrites Java's $1 group references as Go's ${1}, so that
// "$1x" keeps meaning group 1 followed by x.
func javaGroups(repl string) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c == '$' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9' {
			j := i + 1
			for j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			b.WriteString("${" + repl[i+1:j] + "}")
			i = j - 1
			continue
		}
		if c == '\\' && i+1 < len(repl) {
			i++
			c = repl[i]
			if c == '$' {
				b.WriteString("$$")
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// SubjectName is a certificate subject as Kafka's default principal
// builder writes it (X500Principal.getName(), RFC 2253: the most specific
// attribute first, "CN=client,OU=eng,O=example,C=US").
func SubjectName(cert *x509.Certificate) string {
	return cert.Subject.ToRDNSequence().String()
}
