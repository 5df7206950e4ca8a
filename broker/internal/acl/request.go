package acl

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is one connection's authorization state: its principal and the
// decisions made for it, by (operation, resource type, name), valid while
// the Set's version and the principal are unchanged, so a producer
// writing the same topics pays one map lookup per topic and request. A
// connection serves one request at a time, so Conn has no lock.
type Conn struct {
	name, principal string // the principal's name and "User:"+name
	version         uint64
	decisions       map[decisionKey]bool
}

type decisionKey struct {
	op   Operation
	rt   ResourceType
	name string
}

// maxCachedDecisions bounds a connection's cache; a client naming more
// resources than this has it cleared and refilled.
const maxCachedDecisions = 4096

// Denials is told of a denial the first time a connection meets it (per
// resource and ACL version: a retrying client does not repeat it).
type Denials interface {
	Denied(principal, host string, op Operation, rt ResourceType, name string)
}

// Request is one request's view of the authorizer: one Set for the whole
// request. A nil *Request allows everything (the authorizer is off, or
// the request is the program's own).
type Request struct {
	set             *Set
	principal, host string
	conn            *Conn
	log             Denials
}

// Begin returns the view for a request of the user name from host,
// decided by set; log (nil: none) hears of denials.
func (c *Conn) Begin(set *Set, name, host string, log Denials) Request {
	if c.principal == "" || c.name != name {
		c.name, c.principal = name, "User:"+name
		c.decisions = nil
	}
	if c.decisions == nil || c.version != set.Version() || len(c.decisions) >= maxCachedDecisions {
		c.decisions = make(map[decisionKey]bool, 8)
		c.version = set.Version()
	}
	return Request{set: set, principal: c.principal, host: host, conn: c, log: log}
}

// NewRequest is a view with a connection of its own, for tests and
// benchmarks.
func NewRequest(set *Set, name, host string) *Request {
	r := (&Conn{}).Begin(set, name, host, nil)
	return &r
}

// Principal is the request's principal ("User:<name>").
func (r *Request) Principal() string { return r.principal }

// Host is the client's address the request is decided for.
func (r *Request) Host() string { return r.host }

// Allowed decides op on the resource (cached), telling Denials of a
// denial.
func (r *Request) Allowed(op Operation, rt ResourceType, name string) bool {
	return r.decide(op, rt, name, true)
}

// Visible is Allowed without telling, for filtering a listing (every
// topic of Metadata, ListGroups) and for KIP-430's operation bits, where a
// denial is the expected answer (Kafka's logIfDenied false).
func (r *Request) Visible(op Operation, rt ResourceType, name string) bool {
	return r.decide(op, rt, name, false)
}

func (r *Request) decide(op Operation, rt ResourceType, name string, logDenied bool) bool {
	if r == nil {
		return true
	}
	k := decisionKey{op, rt, name}
	if ok, hit := r.conn.decisions[k]; hit {
		return ok
	}
	ok := r.set.Authorize(r.principal, r.host, op, rt, name)
	r.conn.decisions[k] = ok
	if !ok && logDenied && r.log != nil {
		r.log.Denied(r.principal, r.host, op, rt, name)
	}
	return ok
}

// ByResourceType is Set.AuthorizeByResourceType (not cached:
// InitProducerId is rare).
func (r *Request) ByResourceType(op Operation, rt ResourceType) bool {
	return r == nil || r.set.AuthorizeByResourceType(r.principal, r.host, op, rt)
}

// AuthorizedOps is KIP-430's field for a resource: the bits when asked,
// Kafka's "not asked" value (math.MinInt32) otherwise. With the authorizer
// off every supported operation is allowed.
func (r *Request) AuthorizedOps(asked bool, rt ResourceType, name string) int32 {
	if !asked {
		return -2147483648
	}
	var bits int32
	for _, op := range SupportedOperations(rt) {
		if r.Visible(op, rt, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

// ConfigResource checks op on a config resource as Kafka's ConfigHelper
// and ConfigAdminManager do: a topic's configs are the topic's, a group's
// the group's, the broker's and the loggers' the cluster's. It returns
// the code refusing it, 0 when allowed.
func (r *Request) ConfigResource(op Operation, rt kmsg.ConfigResourceType, name string) int16 {
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		if !r.Allowed(op, kmsg.ACLResourceTypeTopic, name) {
			return kerr.TopicAuthorizationFailed.Code
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !r.Allowed(op, kmsg.ACLResourceTypeGroup, name) {
			return kerr.GroupAuthorizationFailed.Code
		}
	default:
		if !r.Allowed(op, kmsg.ACLResourceTypeCluster, ClusterName) {
			return kerr.ClusterAuthorizationFailed.Code
		}
	}
	return 0
}

// BindingOf is a CreateAcls creation's binding.
func BindingOf(c *kmsg.CreateACLsRequestCreation) Binding {
	return Binding{ResourceType: c.ResourceType, Name: c.ResourceName, Pattern: c.ResourcePatternType,
		Principal: c.Principal, Host: c.Host, Operation: c.Operation, Permission: c.PermissionType}
}

// DescribeFilter is a DescribeAcls request's filter.
func DescribeFilter(r *kmsg.DescribeACLsRequest) Filter {
	return Filter{ResourceType: r.ResourceType, Name: r.ResourceName, Pattern: r.ResourcePatternType,
		Principal: r.Principal, Host: r.Host, Operation: r.Operation, Permission: r.PermissionType}
}

// DeleteFilter is one of a DeleteAcls request's filters.
func DeleteFilter(f *kmsg.DeleteACLsRequestFilter) Filter {
	return Filter{ResourceType: f.ResourceType, Name: f.ResourceName, Pattern: f.ResourcePatternType,
		Principal: f.Principal, Host: f.Host, Operation: f.Operation, Permission: f.PermissionType}
}
