package schemaregistry

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Authorization (Config.ACLs; the package doc's "Authorization" says the
// model). The registry keeps no ACLs of its own: it decides with the
// broker's, read for each request, on Kafka's resources: a subject is its
// topic, the registry as a whole the cluster.

// ClusterName is the one name of Kafka's cluster resource.
const ClusterName = "kafka-cluster"

// ACL is one Kafka ACL binding, as DescribeAcls lists it.
type ACL struct {
	Principal    string // "User:alice", or "User:*"
	Host         string // an IP address, or "*"
	ResourceType kmsg.ACLResourceType
	Name         string
	Pattern      kmsg.ACLResourcePatternType // LITERAL or PREFIXED
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType // ALLOW or DENY
}

// ACLSet is the broker's authorizer at one moment: its bindings and its
// settings (Kafka's super.users and allow.everyone.if.no.acl.found).
type ACLSet struct {
	Bindings                  []ACL
	SuperUsers                []string
	AllowEveryoneIfNoACLFound bool
}

// Allowed decides whether principal from host may do op on the resource,
// by Kafka's StandardAuthorizer rules: super users may do anything; a DENY
// that matches wins over any ALLOW; an ALLOW of ALL allows everything, of
// READ, WRITE, DELETE or ALTER allows DESCRIBE too, of ALTER_CONFIGS
// allows DESCRIBE_CONFIGS; a resource that no binding names is open only
// with AllowEveryoneIfNoACLFound.
func (s *ACLSet) Allowed(principal, host string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	for _, u := range s.SuperUsers {
		if u == principal {
			return true
		}
	}
	named, allow := false, false
	for i := range s.Bindings {
		b := &s.Bindings[i]
		if b.ResourceType != rt || !b.names(name) {
			continue
		}
		named = true
		if b.Principal != principal && b.Principal != "User:*" || b.Host != "*" && b.Host != host {
			continue
		}
		if b.Permission == kmsg.ACLPermissionTypeDeny {
			if b.Operation == op || b.Operation == kmsg.ACLOperationAll {
				return false
			}
			continue
		}
		if implies(b.Operation, op) {
			allow = true
		}
	}
	return allow || !named && s.AllowEveryoneIfNoACLFound
}

func (b *ACL) names(name string) bool {
	if b.Pattern == kmsg.ACLResourcePatternTypePrefixed {
		return strings.HasPrefix(name, b.Name)
	}
	return b.Name == name || b.Name == "*"
}

// implies reports whether an ALLOW of granted allows op.
func implies(granted, op kmsg.ACLOperation) bool {
	if granted == op || granted == kmsg.ACLOperationAll {
		return true
	}
	switch op {
	case kmsg.ACLOperationDescribe:
		return granted == kmsg.ACLOperationRead || granted == kmsg.ACLOperationWrite ||
			granted == kmsg.ACLOperationDelete || granted == kmsg.ACLOperationAlter
	case kmsg.ACLOperationDescribeConfigs:
		return granted == kmsg.ACLOperationAlterConfigs
	}
	return false
}

// SubjectTopic is the topic whose ACLs decide for subject: Confluent's
// TopicNameStrategy read backwards ("orders-value" and "orders-key" are
// topic orders); any other subject (RecordNameStrategy's "com.acme.Order",
// TopicRecordNameStrategy's "orders-com.acme.Order") is a topic of its own
// name, which a PREFIXED topic ACL ("orders-") can cover.
func SubjectTopic(subject string) string {
	for _, suffix := range []string{"-value", "-key"} {
		if t, ok := strings.CutSuffix(subject, suffix); ok && t != "" {
			return t
		}
	}
	return subject
}

// requester is one request's identity and the ACLs it is decided by.
type requester struct {
	principal, host string
	set             *ACLSet
}

type requesterKey struct{}

// requesterOf is req's requester; nil when authorization is off.
func requesterOf(req *http.Request) *requester {
	q, _ := req.Context().Value(requesterKey{}).(*requester)
	return q
}

// withRequester reads the ACLs and puts req's requester in its context.
func (r *Registry) withRequester(req *http.Request) (*http.Request, error) {
	if r.cfg.ACLs == nil {
		return req, nil
	}
	set, err := r.cfg.ACLs(req.Context())
	if err != nil {
		return nil, err
	}
	q := &requester{principal: "User:ANONYMOUS", set: set}
	// The user is a principal only when the registry checked its
	// password; otherwise anyone could claim any name.
	if user, _, ok := req.BasicAuth(); ok && r.cfg.Authenticate != nil {
		q.principal = "User:" + user
	}
	q.host = req.RemoteAddr
	if h, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
		q.host = h
	}
	return req.WithContext(context.WithValue(req.Context(), requesterKey{}, q)), nil
}

// may reports whether req may do op on subject ("" for the registry as a
// whole), without a word: for filtering what a listing shows.
func may(req *http.Request, op kmsg.ACLOperation, subject string) bool {
	q := requesterOf(req)
	if q == nil {
		return true
	}
	rt, name := kmsg.ACLResourceTypeTopic, SubjectTopic(subject)
	if subject == "" {
		rt, name = kmsg.ACLResourceTypeCluster, ClusterName
	}
	return q.set.Allowed(q.principal, q.host, op, rt, name)
}

// check is may with the refusal: Confluent's 40301, and a log line.
func (r *Registry) check(req *http.Request, op kmsg.ACLOperation, subject string) error {
	if may(req, op, subject) {
		return nil
	}
	q := requesterOf(req)
	what, resource := "the registry's global settings", "Cluster '"+ClusterName+"'"
	if subject != "" {
		what, resource = fmt.Sprintf("subject '%s'", subject), fmt.Sprintf("Topic '%s'", SubjectTopic(subject))
	}
	r.denials.log(r.log, q, op, resource, req)
	return errorf(codeForbidden, "%s is denied operation %s on %s (decided by the ACLs of %s)", q.principal, opName(op), what, resource)
}

// opName is an operation as Kafka's tools name it ("Write").
func opName(op kmsg.ACLOperation) string {
	switch op {
	case kmsg.ACLOperationDescribeConfigs:
		return "DescribeConfigs"
	case kmsg.ACLOperationAlterConfigs:
		return "AlterConfigs"
	}
	s := strings.ToLower(op.String())
	return strings.ToUpper(s[:1]) + s[1:]
}

// denialLog logs a refusal once a minute per principal, host, operation
// and resource, so a client retrying in a loop does not flood the log.
type denialLog struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (d *denialLog) log(l *slog.Logger, q *requester, op kmsg.ACLOperation, resource string, req *http.Request) {
	key := q.principal + "\x00" + q.host + "\x00" + op.String() + "\x00" + resource
	now := time.Now()
	d.mu.Lock()
	if d.last == nil || len(d.last) >= 1024 {
		d.last = map[string]time.Time{}
	}
	t, seen := d.last[key]
	if seen && now.Sub(t) < time.Minute {
		d.mu.Unlock()
		return
	}
	d.last[key] = now
	d.mu.Unlock()
	l.Info("schema registry: authorization denied", "principal", q.principal, "host", q.host,
		"operation", opName(op), "resource", resource, "method", req.Method, "path", req.URL.Path)
}
