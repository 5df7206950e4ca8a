package main

// minikafka acl create|list|delete: ACLs (CreateAcls, DescribeAcls,
// DeleteAcls), in the spirit of kafka-acls.sh --add/--list/--remove.
// create fills in what is not given as kafka-acls does (host *, operation
// All, pattern literal); for list and delete a flag not given matches
// anything, and list without resource flags lists every ACL. A broker
// without an authorizer answers SECURITY_DISABLED, which is reported with
// a hint rather than as a bare code.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	cliVerbs["acl"] = &cliVerb{summary: "Creates, lists and deletes ACLs (the broker needs an authorizer: minikafka -authorizer).\nRESOURCE is -topic T, -group G, -transactional-id X or -cluster, each repeatable.", sub: map[string]cliCommand{
		"create": {"-allow-principal P|-deny-principal P... RESOURCE... [-operation OP]... [-allow-host H]... [-deny-host H]... [-resource-pattern-type literal|prefixed]",
			"add an ACL for every principal, host, operation and resource (host *, operation All, literal unless given)", aclCreate},
		"list": {"[RESOURCE...] [-principal P]... [-resource-pattern-type any|match|literal|prefixed]",
			"the ACLs matching the flags; every ACL without RESOURCE", aclList},
		"delete": {"RESOURCE... [-allow-principal P]... [-deny-principal P]... [-operation OP]... [-allow-host H]... [-deny-host H]... [-resource-pattern-type any|match|literal|prefixed]",
			"remove the ACLs matching the flags (a flag not given matches anything) and print them", aclDelete},
	}}
}

// aclResourceFlags name the resources; every sub-verb has them.
type aclResourceFlags struct {
	topics, groups, txnIDs multiFlag
	cluster                *bool
	pattern                *string
}

func newACLResourceFlags(c *cliCmd, patternDefault, patterns string) *aclResourceFlags {
	f := &aclResourceFlags{}
	c.fs.Var(&f.topics, "topic", "topic `T` (repeatable)")
	c.fs.Var(&f.groups, "group", "consumer group `G` (repeatable)")
	c.fs.Var(&f.txnIDs, "transactional-id", "transactional ID `X` (repeatable)")
	f.cluster = c.fs.Bool("cluster", false, "the cluster resource (kafka-cluster)")
	f.pattern = c.fs.String("resource-pattern-type", patternDefault, "how resource names match: "+patterns)
	return f
}

func (f *aclResourceFlags) given() bool {
	return len(f.topics)+len(f.groups)+len(f.txnIDs) > 0 || *f.cluster
}

// apply adds the named resources to b; an empty list must not reach
// kadm's Topics() and the like, which would mean every topic.
func (f *aclResourceFlags) apply(b *kadm.ACLBuilder) {
	if len(f.topics) > 0 {
		b.Topics(f.topics...)
	}
	if len(f.groups) > 0 {
		b.Groups(f.groups...)
	}
	if len(f.txnIDs) > 0 {
		b.TransactionalIDs(f.txnIDs...)
	}
	if *f.cluster {
		b.Clusters()
	}
}

// parsePattern reads -resource-pattern-type, one of allowed.
func (f *aclResourceFlags) parsePattern(allowed ...kadm.ACLPattern) (kadm.ACLPattern, error) {
	p, err := kmsg.ParseACLResourcePatternType(*f.pattern)
	if err == nil {
		for _, a := range allowed {
			if p == a {
				return p, nil
			}
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strings.ToLower(a.String())
	}
	want := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	return 0, usagef("-resource-pattern-type %q: want %s", *f.pattern, want)
}

// aclOperationNames are Kafka's operation names, for the usage error.
const aclOperationNames = "All, Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens"

// parseOperations reads -operation values (Kafka's names, any case); none
// gives def. Any is a filter value only, so create refuses it.
func parseOperations(vals []string, def kadm.ACLOperation, allowAny bool) ([]kadm.ACLOperation, error) {
	if len(vals) == 0 {
		return []kadm.ACLOperation{def}, nil
	}
	var ops []kadm.ACLOperation
	for _, v := range vals {
		op, err := kmsg.ParseACLOperation(v)
		if err != nil || op == kadm.OpUnknown || op == kadm.OpAny && !allowAny {
			want := aclOperationNames
			if allowAny {
				want += ", Any"
			}
			return nil, usagef("-operation %q: want one of %s", v, want)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// aclPrincipalFlags are the permission flags of create and delete.
type aclPrincipalFlags struct {
	allow, deny           multiFlag
	allowHosts, denyHosts multiFlag
	ops                   multiFlag
}

func newACLPrincipalFlags(c *cliCmd, hostDefault, opDefault string) *aclPrincipalFlags {
	f := &aclPrincipalFlags{}
	c.fs.Var(&f.allow, "allow-principal", "principal `P` to allow, Type:name (User:alice, User:* for everyone; repeatable)")
	c.fs.Var(&f.deny, "deny-principal", "principal `P` to deny, Type:name (repeatable)")
	c.fs.Var(&f.allowHosts, "allow-host", "host `H` (IP address) the allowed principals connect from, repeatable; "+hostDefault)
	c.fs.Var(&f.denyHosts, "deny-host", "host `H` the denied principals connect from, repeatable; "+hostDefault)
	c.fs.Var(&f.ops, "operation", "operation `OP`, Kafka's name in any case (Read, Write, Describe, All, ...; repeatable); "+opDefault)
	return f
}

// checkHosts refuses hosts given without their principals: they would
// be dropped silently.
func (f *aclPrincipalFlags) checkHosts() error {
	if len(f.allowHosts) > 0 && len(f.allow) == 0 {
		return usagef("-allow-host needs -allow-principal")
	}
	if len(f.denyHosts) > 0 && len(f.deny) == 0 {
		return usagef("-deny-host needs -deny-principal")
	}
	return nil
}

// aclOut is one ACL as printed, the enums by Kafka's names.
type aclOut struct {
	ResourceType string `json:"resource_type"`
	PatternType  string `json:"pattern_type"`
	Name         string `json:"name"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
	Error        string `json:"error,omitempty"`
}

func newACLOut(rt kmsg.ACLResourceType, name string, pt kadm.ACLPattern, principal, host string, op kadm.ACLOperation, perm kmsg.ACLPermissionType) aclOut {
	return aclOut{ResourceType: rt.String(), PatternType: pt.String(), Name: name, Principal: principal, Host: host,
		Operation: op.String(), Permission: perm.String()}
}

func (a aclOut) row() []string {
	return []string{a.ResourceType, a.PatternType, a.Name, a.Principal, a.Host, a.Operation, a.Permission}
}

// String names the ACL in an error line.
func (a aclOut) String() string {
	return fmt.Sprintf("%s %s from %s %s on %s %s %q", a.Permission, a.Principal, a.Host, a.Operation, a.ResourceType, a.PatternType, a.Name)
}

var aclHeader = []string{"TYPE", "PATTERN", "NAME", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"}

// sortACLs orders by every column and drops repeats (filters of one
// command may select the same ACL).
func sortACLs(out []aclOut) []aclOut {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].row(), out[j].row()
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return out[i].Error < out[j].Error
	})
	return compactACLs(out)
}

func compactACLs(out []aclOut) []aclOut {
	res := out[:0]
	for i, a := range out {
		if i > 0 && a == out[i-1] {
			continue
		}
		res = append(res, a)
	}
	return res
}

// errNoAuthorizer is what SECURITY_DISABLED means to the user.
var errNoAuthorizer = errors.New("the broker runs without an authorizer (SECURITY_DISABLED): ACLs are off; start minikafka with -authorizer (Kafka: authorizer.class.name)")

// aclErr is a per-ACL or per-filter error: the code's name and the
// broker's message.
func aclErr(err error, msg string) string {
	s := err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		s = ke.Message
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// clusterOpNeeded is the hint for CLUSTER_AUTHORIZATION_FAILED, which
// Kafka answers without a message: managing ACLs needs an operation on
// the cluster resource.
func clusterOpNeeded(op string) string {
	return fmt.Sprintf("CLUSTER_AUTHORIZATION_FAILED: this principal may not %s ACLs (needs %s on the cluster, or to be a super user)",
		strings.ToLower(op), op)
}

// filterFailure is the command's failure for a filter (or whole request)
// error; op is the cluster operation the request needs.
func filterFailure(err error, msg, op string) error {
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		return errNoAuthorizer
	case errors.Is(err, kerr.ClusterAuthorizationFailed) && msg == "":
		return errors.New(clusterOpNeeded(op))
	}
	return errors.New(aclErr(err, msg))
}

// aclFailure is create's failure for one ACL.
func aclFailure(err error, o aclOut) error {
	switch {
	case errors.Is(err, kerr.SecurityDisabled):
		return errNoAuthorizer
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return errors.New(clusterOpNeeded("ALTER"))
	}
	return fmt.Errorf("acl %s: %s", o, o.Error)
}

// answerACLs answers create or delete: the ACLs done in a table (all as
// JSON), each failure once on stderr.
func (c *cliCmd) answerACLs(out []aclOut, failure map[aclOut]error) error {
	var rows [][]string
	var ok []bool
	var errs []error
	for _, o := range out {
		rows = append(rows, append(o.row(), statusText(o.Error)))
		ok = append(ok, o.Error == "")
		if o.Error != "" {
			errs = append(errs, failure[o])
		}
	}
	return c.answerItems(out, append(aclHeader[:len(aclHeader):len(aclHeader)], "STATUS"), rows, ok, errs)
}

func aclCreate(c *cliCmd) func(context.Context) error {
	rf := newACLResourceFlags(c, "literal", "literal or prefixed")
	pf := newACLPrincipalFlags(c, "default *", "default All")
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		if len(pf.allow)+len(pf.deny) == 0 {
			return usagef("give the principals: -allow-principal or -deny-principal")
		}
		if !rf.given() {
			return usagef("give the resources: -topic, -group, -transactional-id or -cluster")
		}
		if err := pf.checkHosts(); err != nil {
			return err
		}
		pattern, err := rf.parsePattern(kadm.ACLPatternLiteral, kadm.ACLPatternPrefixed)
		if err != nil {
			return err
		}
		ops, err := parseOperations(pf.ops, kadm.OpAll, false)
		if err != nil {
			return err
		}
		b := kadm.NewACLs().ResourcePatternType(pattern).Operations(ops...)
		rf.apply(b)
		if len(pf.allow) > 0 {
			b.Allow(pf.allow...).MaybeAllowHosts(pf.allowHosts...)
		}
		if len(pf.deny) > 0 {
			b.Deny(pf.deny...).MaybeDenyHosts(pf.denyHosts...)
		}
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return err
		}
		out := []aclOut{}
		failure := map[aclOut]error{}
		for _, r := range res {
			o := newACLOut(r.Type, r.Name, r.Pattern, r.Principal, r.Host, r.Operation, r.Permission)
			if r.Err != nil {
				o.Error = aclErr(r.Err, r.ErrMessage)
				failure[o] = aclFailure(r.Err, o)
			}
			out = append(out, o)
		}
		out = sortACLs(out)
		return c.answerACLs(out, failure)
	}
}

func aclList(c *cliCmd) func(context.Context) error {
	rf := newACLResourceFlags(c, "any", "any (every pattern, the name exactly), match (every ACL that applies to the name), literal or prefixed")
	var principals multiFlag
	c.fs.Var(&principals, "principal", "only ACLs of principal `P`, allowed or denied (repeatable)")
	return func(ctx context.Context) error {
		adm, err := c.admin(0, 0, "no arguments")
		if err != nil {
			return err
		}
		pattern, err := rf.parsePattern(kadm.ACLPatternAny, kadm.ACLPatternMatch, kadm.ACLPatternLiteral, kadm.ACLPatternPrefixed)
		if err != nil {
			return err
		}
		b := kadm.NewACLs().ResourcePatternType(pattern).Operations()
		if rf.given() {
			rf.apply(b)
		} else {
			b.AnyResource()
		}
		if len(principals) > 0 {
			b.Allow(principals...).AllowHosts().Deny(principals...).DenyHosts()
		} else {
			b.Allow().AllowHosts().Deny().DenyHosts()
		}
		res, err := adm.DescribeACLs(ctx, b)
		if err != nil {
			return err
		}
		out := []aclOut{}
		for _, r := range res {
			if r.Err != nil {
				return filterFailure(r.Err, r.ErrMessage, "DESCRIBE")
			}
			for _, d := range r.Described {
				out = append(out, newACLOut(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission))
			}
		}
		out = sortACLs(out)
		var rows [][]string
		for _, o := range out {
			rows = append(rows, o.row())
		}
		return c.answer(out, aclHeader, rows, nil)
	}
}

func aclDelete(c *cliCmd) func(context.Context) error {
	rf := newACLResourceFlags(c, "any", "any (every pattern, the name exactly), match (every ACL that applies to the name; careful), literal or prefixed")
	pf := newACLPrincipalFlags(c, "default any", "default any")
	return func(ctx context.Context) error {
		if err := c.needArgs(0, 0, "no arguments"); err != nil {
			return err
		}
		// As kafka-acls --remove: a resource is required, so a slip
		// cannot delete every ACL.
		if !rf.given() {
			return usagef("give the resources: -topic, -group, -transactional-id or -cluster")
		}
		if err := pf.checkHosts(); err != nil {
			return err
		}
		pattern, err := rf.parsePattern(kadm.ACLPatternAny, kadm.ACLPatternMatch, kadm.ACLPatternLiteral, kadm.ACLPatternPrefixed)
		if err != nil {
			return err
		}
		ops, err := parseOperations(pf.ops, kadm.OpAny, true)
		if err != nil {
			return err
		}
		b := kadm.NewACLs().ResourcePatternType(pattern).Operations(ops...)
		rf.apply(b)
		if len(pf.allow)+len(pf.deny) == 0 {
			b.Allow().AllowHosts().Deny().DenyHosts()
		}
		// An empty host list means any host here.
		if len(pf.allow) > 0 {
			b.Allow(pf.allow...).AllowHosts(pf.allowHosts...)
		}
		if len(pf.deny) > 0 {
			b.Deny(pf.deny...).DenyHosts(pf.denyHosts...)
		}
		_, adm, err := c.client()
		if err != nil {
			return err
		}
		res, err := adm.DeleteACLs(ctx, b)
		if err != nil {
			return err
		}
		out := []aclOut{}
		failure := map[aclOut]error{}
		var filterErrs []error
		for _, r := range res {
			if r.Err != nil {
				if errors.Is(r.Err, kerr.SecurityDisabled) || errors.Is(r.Err, kerr.ClusterAuthorizationFailed) {
					return filterFailure(r.Err, r.ErrMessage, "ALTER")
				}
				filterErrs = append(filterErrs, filterFailure(r.Err, r.ErrMessage, "ALTER"))
				continue
			}
			for _, d := range r.Deleted {
				o := newACLOut(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission)
				if d.Err != nil {
					o.Error = aclErr(d.Err, d.ErrMessage)
					failure[o] = fmt.Errorf("acl %s: %s", o, o.Error)
				}
				out = append(out, o)
			}
		}
		out = sortACLs(out)
		return errors.Join(c.answerACLs(out, failure), errors.Join(filterErrs...))
	}
}
