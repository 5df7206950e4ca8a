package broker

// ACL enforcement, as Kafka's StandardAuthorizer (broker/internal/acl
// decides; this file wires it to connections and requests).
//
// The authorizer is on when Config.Authorizer is set (Kafka's
// authorizer.class.name): then CreateAcls, DescribeAcls and DeleteAcls work
// and every request from a client connection is checked. Without it the
// ACL APIs answer SECURITY_DISABLED and nothing is checked, as in Kafka.
// Calls a program makes itself (Serve with a ConnInfo it built, the seeding
// and control APIs) are not checked: they are the operator's.
//
// A connection's principal is User:<name> of its SASL authentication;
// without SASL, User:<mapped subject> of its TLS client certificate
// (Config.SSLPrincipalMappingRules); otherwise User:ANONYMOUS.
// The host is the client's IP address. Decisions are cached per connection
// by (operation, resource type, name) and ACL version, so a producer
// writing the same topics pays one map lookup per topic and request.
//
// Checks that refuse a whole request (a group, transactional ID or cluster
// operation) run before the handler (wholeRequestChecks) and answer with the
// request's own error response, as Kafka's sendErrorResponseMaybeThrottle;
// per-topic, per-group and per-transaction checks are in the handlers,
// which answer TOPIC_AUTHORIZATION_FAILED (and so on) per item.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"path"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/internal/vfs"
	"github.com/minikafka/minikafka/protocol"
)

// AuthorizerConfig turns the authorizer on (see the file doc).
type AuthorizerConfig struct {
	// SuperUsers are Kafka's super.users: principals ("User:admin")
	// allowed everything, whatever the ACLs say.
	SuperUsers []string
	// AllowEveryoneIfNoACLFound is Kafka's
	// allow.everyone.if.no.acl.found: a resource no ACL names is open to
	// everyone. Default false: such a resource is closed to all but
	// super users.
	AllowEveryoneIfNoACLFound bool
}

// ValidatePrincipalMappingRules checks rules in Kafka's
// ssl.principal.mapping.rules syntax (Config.SSLPrincipalMappingRules).
func ValidatePrincipalMappingRules(rules string) error {
	_, err := acl.ParseMappingRules(rules)
	return err
}

// aclFile is the ACL file's name in DataDir.
const aclFile = "acls"

// Anonymous is the principal of a connection that did not authenticate.
const Anonymous = "User:ANONYMOUS"

type aclManager struct {
	fs      vfs.FS
	file    string
	set     atomic.Pointer[acl.Set]
	alterMu sync.Mutex // one change (and file write) at a time
}

// openACLs loads DataDir/acls; a damaged file stops the start.
func openACLs(fsys vfs.FS, dir string, cfg AuthorizerConfig) (*aclManager, error) {
	for _, u := range cfg.SuperUsers {
		if err := acl.ValidatePrincipal(u); err != nil {
			return nil, fmt.Errorf("broker: super user %q: %v", u, err)
		}
	}
	m := &aclManager{fs: fsys, file: path.Join(dir, aclFile)}
	st := acl.Settings{SuperUsers: cfg.SuperUsers, AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound}
	data, err := readFile(fsys, m.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m.set.Store(acl.NewSet(nil, 1, st))
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("broker: reading ACLs %s: %w", m.file, err)
	}
	bs, err := acl.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("broker: ACL file %s is damaged: %w", m.file, err)
	}
	m.set.Store(acl.NewSet(bs, 1, st))
	return m, nil
}

// change applies fn to the current set and makes the result durable
// before anyone can be decided by it.
func (m *aclManager) change(fn func(*acl.Set) *acl.Set) error {
	m.alterMu.Lock()
	defer m.alterMu.Unlock()
	next := fn(m.set.Load())
	if err := vfs.WriteFileAtomic(m.fs, m.file, acl.Encode(next), 0o600); err != nil {
		return fmt.Errorf("broker: writing ACLs: %w", err)
	}
	m.set.Store(next)
	return nil
}

// connAuthz is a connection's cached identity and decisions
// (ConnInfo.Authz).
type connAuthz struct {
	tlsPrincipal string // mapped certificate name, "" when none; computed once
	tlsDone      bool

	host     string // the client's IP address
	hostDone bool

	name, principal string // principalName and "User:"+name
	version         uint64
	decisions       map[authzKey]bool

	// serving is the authz of the request being served, set while its
	// whole-request check passed and its handler runs, so the handler's
	// per-resource checks reuse it (one ACL snapshot per request) instead
	// of building another. Serve calls on a connection never overlap.
	serving *authz
}

type authzKey struct {
	op   acl.Operation
	rt   acl.ResourceType
	name string
}

// maxCachedDecisions bounds a connection's cache; a client naming more
// resources than this has it cleared and refilled.
const maxCachedDecisions = 4096

func connAuthzOf(ci *protocol.ConnInfo) *connAuthz {
	ca, _ := ci.Authz.(*connAuthz)
	if ca == nil {
		ca = &connAuthz{}
		ci.Authz = ca
	}
	return ca
}

// principalName is the name part of the connection's principal (quotas
// key users by it): the SASL user, else the mapped TLS subject, else
// ANONYMOUS.
func (b *Broker) principalName(req *protocol.Request) string {
	if req.Conn == nil {
		return "ANONYMOUS"
	}
	if b.saslApplies(req) {
		if st := saslState(req.Conn); st.principal != "" {
			return st.principal
		}
	}
	if req.Conn.TLS != nil && len(req.Conn.TLS.PeerCertificates) > 0 {
		ca := connAuthzOf(req.Conn)
		if !ca.tlsDone {
			ca.tlsPrincipal, ca.tlsDone = b.mapping.Apply(acl.SubjectName(req.Conn.TLS.PeerCertificates[0])), true
		}
		return ca.tlsPrincipal
	}
	return "ANONYMOUS"
}

// authz is one request's view of the authorizer. A nil *authz allows
// everything: the authorizer is off, or the request is the program's own.
type authz struct {
	set             *acl.Set
	principal, host string
	cache           *connAuthz
	b               *Broker
	req             *protocol.Request
}

// authorizer returns req's authz, nil when nothing is to be checked.
func (b *Broker) authorizer(req *protocol.Request) *authz {
	if b.acls == nil || req.Conn == nil || !req.Conn.FromNetwork() {
		return nil
	}
	ca := connAuthzOf(req.Conn)
	if az := ca.serving; az != nil {
		return az
	}
	set := b.acls.set.Load()
	name := b.principalName(req)
	if ca.principal == "" || ca.name != name {
		ca.name, ca.principal = name, "User:"+name
		ca.decisions = nil
	}
	if ca.decisions == nil || ca.version != set.Version() || len(ca.decisions) >= maxCachedDecisions {
		ca.decisions = make(map[authzKey]bool, 8)
		ca.version = set.Version()
	}
	if !ca.hostDone {
		// Kafka matches ACL hosts against the client's IP address.
		if a, ok := req.Conn.Remote.(*net.TCPAddr); ok {
			ca.host = a.IP.String()
		} else if req.Conn.Remote != nil {
			ca.host, _, _ = net.SplitHostPort(req.Conn.Remote.String())
		}
		ca.hostDone = true
	}
	return &authz{set: set, principal: ca.principal, host: ca.host, cache: ca, b: b, req: req}
}

// allowed decides op on the resource (cached), logging a denial.
func (az *authz) allowed(op acl.Operation, rt acl.ResourceType, name string) bool {
	return az.decide(op, rt, name, true)
}

// visible is allowed without the log line, for filtering a listing
// (every topic of Metadata, ListGroups) and for KIP-430's operation bits,
// where a denial is the expected answer (Kafka's logIfDenied false).
func (az *authz) visible(op acl.Operation, rt acl.ResourceType, name string) bool {
	return az.decide(op, rt, name, false)
}

func (az *authz) decide(op acl.Operation, rt acl.ResourceType, name string, logDenied bool) bool {
	if az == nil {
		return true
	}
	k := authzKey{op, rt, name}
	if ok, hit := az.cache.decisions[k]; hit {
		return ok
	}
	ok := az.set.Authorize(az.principal, az.host, op, rt, name)
	az.cache.decisions[k] = ok
	if !ok && logDenied {
		// Once per connection, resource and ACL version (the cache), so
		// a retrying client does not flood the log; Kafka's authorizer
		// logger logs denials at INFO too.
		az.b.logReqLimited(slog.LevelInfo, az.req, "authorization denied", "principal", az.principal, "host", az.host,
			"operation", op.String(), "resource", rt.String()+":"+name)
	}
	return ok
}

func (az *authz) topic(op acl.Operation, name string) bool {
	return az.allowed(op, kmsg.ACLResourceTypeTopic, name)
}

func (az *authz) group(op acl.Operation, name string) bool {
	return az.allowed(op, kmsg.ACLResourceTypeGroup, name)
}

func (az *authz) txnID(op acl.Operation, id string) bool {
	return az.allowed(op, kmsg.ACLResourceTypeTransactionalId, id)
}

// topicVisible is visible for a topic.
func (az *authz) topicVisible(op acl.Operation, name string) bool {
	return az.visible(op, kmsg.ACLResourceTypeTopic, name)
}

func (az *authz) cluster(op acl.Operation) bool {
	return az.allowed(op, kmsg.ACLResourceTypeCluster, acl.ClusterName)
}

// configResource checks op on a config resource as Kafka's ConfigHelper
// and ConfigAdminManager do: a topic's configs are the topic's, a group's
// the group's, the broker's and the loggers' the cluster's. It returns
// the code refusing it, 0 when allowed.
func (az *authz) configResource(op acl.Operation, rt kmsg.ConfigResourceType, name string) int16 {
	switch rt {
	case kmsg.ConfigResourceTypeTopic:
		if !az.topic(op, name) {
			return errTopicAuth
		}
	case kmsg.ConfigResourceTypeGroupConfig:
		if !az.group(op, name) {
			return errGroupAuth
		}
	default:
		if !az.cluster(op) {
			return errClusterAuth
		}
	}
	return 0
}

// byResourceType is AuthorizeByResourceType (not cached: InitProducerId
// is rare).
func (az *authz) byResourceType(op acl.Operation, rt acl.ResourceType) bool {
	return az == nil || az.set.AuthorizeByResourceType(az.principal, az.host, op, rt)
}

// authorizedOps is KIP-430's field for a resource: the bits when asked,
// Kafka's "not asked" value (math.MinInt32) otherwise. With the authorizer
// off every supported operation is allowed.
func (az *authz) authorizedOps(asked bool, rt acl.ResourceType, name string) int32 {
	if !asked {
		return -2147483648
	}
	var bits int32
	for _, op := range acl.SupportedOperations(rt) {
		if az.visible(op, rt, name) {
			bits |= 1 << uint(op)
		}
	}
	return bits
}

const clusterName = acl.ClusterName

// Operations, by Kafka's names.
const (
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

var (
	errTopicAuth   = kerr.TopicAuthorizationFailed.Code
	errGroupAuth   = kerr.GroupAuthorizationFailed.Code
	errClusterAuth = kerr.ClusterAuthorizationFailed.Code
	errTxnIDAuth   = kerr.TransactionalIDAuthorizationFailed.Code
)

// errAuthorizationFailed is Kafka's message for a refused item.
var errAuthorizationFailed = errors.New("Authorization failed.")

// wholeRequestCheck returns the error code that refuses req whole, 0 to
// go on to the handler.
type wholeRequestCheck func(az *authz, req kmsg.Request) int16

func clusterCheck(op acl.Operation) wholeRequestCheck {
	return func(az *authz, _ kmsg.Request) int16 {
		if !az.cluster(op) {
			return errClusterAuth
		}
		return 0
	}
}

func groupCheck(op acl.Operation, group func(kmsg.Request) string) wholeRequestCheck {
	return func(az *authz, req kmsg.Request) int16 {
		if !az.group(op, group(req)) {
			return errGroupAuth
		}
		return 0
	}
}

func txnCheck(id func(kmsg.Request) string, then wholeRequestCheck) wholeRequestCheck {
	return func(az *authz, req kmsg.Request) int16 {
		if !az.txnID(opWrite, id(req)) {
			return errTxnIDAuth
		}
		if then != nil {
			return then(az, req)
		}
		return 0
	}
}

// subscribedTopicsCheck is KIP-848's: a member may subscribe only to
// topic names it may describe (a regex subscription is filtered instead).
func subscribedTopicsCheck(topics func(kmsg.Request) []string) wholeRequestCheck {
	return func(az *authz, req kmsg.Request) int16 {
		for _, t := range topics(req) {
			if !az.topic(opDescribe, t) {
				return errTopicAuth
			}
		}
		return 0
	}
}

func chain(checks ...wholeRequestCheck) wholeRequestCheck {
	return func(az *authz, req kmsg.Request) int16 {
		for _, c := range checks {
			if code := c(az, req); code != 0 {
				return code
			}
		}
		return 0
	}
}

// wholeRequestChecks are the checks that refuse a request whole, by key,
// each as Kafka's KafkaApis makes it.
var wholeRequestChecks = map[int16]wholeRequestCheck{
	0: func(az *authz, req kmsg.Request) int16 { // Produce: a transactional producer's ID
		if id := req.(*kmsg.ProduceRequest).TransactionID; id != nil && !az.txnID(opWrite, *id) {
			return errTxnIDAuth
		}
		return 0
	},
	8:  groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.OffsetCommitRequest).Group }),
	11: groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.JoinGroupRequest).Group }),
	12: groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.HeartbeatRequest).Group }),
	13: groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.LeaveGroupRequest).Group }),
	14: groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.SyncGroupRequest).Group }),
	22: func(az *authz, req kmsg.Request) int16 { // InitProducerId
		r := req.(*kmsg.InitProducerIDRequest)
		if r.TransactionalID != nil {
			if !az.txnID(opWrite, *r.TransactionalID) {
				return errTxnIDAuth
			}
			return 0
		}
		// KIP-679: an idempotent producer needs IDEMPOTENT_WRITE on the
		// cluster or WRITE on some topic.
		if !az.cluster(opIdempotentWrite) && !az.byResourceType(opWrite, kmsg.ACLResourceTypeTopic) {
			return errClusterAuth
		}
		return 0
	},
	24: func(az *authz, req kmsg.Request) int16 { // AddPartitionsToTxn v0-3
		if !az.txnID(opWrite, req.(*kmsg.AddPartitionsToTxnRequest).TransactionalID) {
			return errTxnIDAuth
		}
		return 0
	},
	25: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.AddOffsetsToTxnRequest).TransactionalID },
		groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.AddOffsetsToTxnRequest).Group })),
	26: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.EndTxnRequest).TransactionalID }, nil),
	27: clusterCheck(opClusterAction),
	28: txnCheck(func(r kmsg.Request) string { return r.(*kmsg.TxnOffsetCommitRequest).TransactionalID },
		groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.TxnOffsetCommitRequest).Group })),
	29: clusterCheck(opDescribe),
	30: clusterCheck(opAlter),
	31: clusterCheck(opAlter),
	34: clusterCheck(opAlter),
	35: clusterCheck(opDescribe),
	43: clusterCheck(opAlter),
	45: clusterCheck(opAlter),
	46: clusterCheck(opDescribe),
	47: groupCheck(opDelete, func(r kmsg.Request) string { return r.(*kmsg.OffsetDeleteRequest).Group }),
	48: clusterCheck(opDescribeConfigs),
	49: clusterCheck(opAlterConfigs),
	50: clusterCheck(opDescribe),
	51: clusterCheck(opAlter),
	55: clusterCheck(opDescribe),
	57: clusterCheck(opAlter),
	68: chain(groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.ConsumerGroupHeartbeatRequest).Group }),
		subscribedTopicsCheck(func(r kmsg.Request) []string { return r.(*kmsg.ConsumerGroupHeartbeatRequest).SubscribedTopicNames })),
	74: clusterCheck(opDescribeConfigs),
	76: chain(groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.ShareGroupHeartbeatRequest).GroupID }),
		subscribedTopicsCheck(func(r kmsg.Request) []string { return r.(*kmsg.ShareGroupHeartbeatRequest).SubscribedTopicNames })),
	78: groupCheck(opRead, func(r kmsg.Request) string { return strOrEmpty(r.(*kmsg.ShareFetchRequest).GroupID) }),
	79: groupCheck(opRead, func(r kmsg.Request) string { return strOrEmpty(r.(*kmsg.ShareAcknowledgeRequest).GroupID) }),
	91: groupCheck(opRead, func(r kmsg.Request) string { return r.(*kmsg.AlterShareGroupOffsetsRequest).GroupID }),
	92: groupCheck(opDelete, func(r kmsg.Request) string { return r.(*kmsg.DeleteShareGroupOffsetsRequest).GroupID }),
}

// serveAuthorized runs req's whole-request check, then a's handler.
func (b *Broker) serveAuthorized(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	if check := wholeRequestChecks[req.Key]; check != nil {
		if az := b.authorizer(req); az != nil {
			if code := check(az, req.Body); code != 0 {
				return protocol.Reply{Response: errorResponse(req.Body, code)}
			}
			az.cache.serving = az
			defer func() { az.cache.serving = nil }()
		}
	}
	return b.serveRouted(ctx, req, a)
}

// aclBindingOf converts a CreateAcls creation.
func aclBindingOf(c kmsg.CreateACLsRequestCreation) acl.Binding {
	return acl.Binding{ResourceType: c.ResourceType, Name: c.ResourceName, Pattern: c.ResourcePatternType,
		Principal: c.Principal, Host: c.Host, Operation: c.Operation, Permission: c.PermissionType}
}

func strOrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
