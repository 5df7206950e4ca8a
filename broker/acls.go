package broker

// ACL enforcement, as Kafka's StandardAuthorizer: broker/internal/acl
// keeps the bindings and decides, caches a connection's decisions, holds
// the checks that refuse a request whole and splits a request by topic;
// this file wires it to connections and requests.
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
// The host is the client's IP address.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/broker/internal/acl"
	"github.com/minikafka/minikafka/broker/internal/errresp"
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
const aclFile = acl.FileName

// Anonymous is the principal of a connection that did not authenticate.
const Anonymous = "User:ANONYMOUS"

// connAuthz is a connection's identity and cached decisions
// (ConnInfo.Authz).
type connAuthz struct {
	tlsPrincipal string // mapped certificate name, "" when none; computed once
	tlsDone      bool
	host         string // the client's IP address
	hostDone     bool
	acl.Conn
	// serving is the authz of the request being served, set while its
	// whole-request check passed and its handler runs, so the handler's
	// per-resource checks reuse it (one ACL snapshot per request) instead
	// of building another. Serve calls on a connection never overlap.
	serving *authz
}

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
		if st := saslState(req.Conn); st.Principal != "" {
			return st.Principal
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

// authz is one request's view of the authorizer (acl.Request), which
// logs its denials. A nil *authz allows everything: the authorizer is
// off, or the request is the program's own.
type authz struct {
	acl.Request
	b   *Broker
	req *protocol.Request
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
	if !ca.hostDone {
		ca.host, ca.hostDone = remoteIP(req.Conn.Remote), true // Kafka matches ACL hosts against the IP
	}
	az := &authz{b: b, req: req}
	az.Request = ca.Begin(b.acls.Set(), b.principalName(req), ca.host, az)
	return az
}

// Denied logs a denial; Kafka's authorizer logger logs them at INFO too.
func (az *authz) Denied(principal, host string, op acl.Operation, rt acl.ResourceType, name string) {
	az.b.logReqLimited(slog.LevelInfo, az.req, "authorization denied", "principal", principal, "host", host,
		"operation", op.String(), "resource", rt.String()+":"+name)
}

func (az *authz) view() *acl.Request {
	if az == nil {
		return nil
	}
	return &az.Request
}

// allowed decides op on the resource (cached), logging a denial; visible
// does not log (acl.Request.Visible).
func (az *authz) allowed(op acl.Operation, rt acl.ResourceType, name string) bool {
	return az.view().Allowed(op, rt, name)
}

func (az *authz) visible(op acl.Operation, rt acl.ResourceType, name string) bool {
	return az.view().Visible(op, rt, name)
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

func (az *authz) topicVisible(op acl.Operation, name string) bool {
	return az.visible(op, kmsg.ACLResourceTypeTopic, name)
}

func (az *authz) cluster(op acl.Operation) bool {
	return az.allowed(op, kmsg.ACLResourceTypeCluster, acl.ClusterName)
}

func (az *authz) configResource(op acl.Operation, rt kmsg.ConfigResourceType, name string) int16 {
	return az.view().ConfigResource(op, rt, name)
}

func (az *authz) authorizedOps(asked bool, rt acl.ResourceType, name string) int32 {
	return az.view().AuthorizedOps(asked, rt, name)
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
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
)

var (
	errTopicAuth = kerr.TopicAuthorizationFailed.Code
	errGroupAuth = kerr.GroupAuthorizationFailed.Code
	errTxnIDAuth = kerr.TransactionalIDAuthorizationFailed.Code
)

// errAuthorizationFailed is Kafka's message for a refused item.
var errAuthorizationFailed = errors.New("Authorization failed.")

// serveAuthorized runs req's whole-request check (acl.WholeRequestCheck),
// then a's handler.
func (b *Broker) serveAuthorized(ctx context.Context, req *protocol.Request, a *api) protocol.Reply {
	if check := acl.WholeRequestCheck(req.Key); check != nil {
		if az := b.authorizer(req); az != nil {
			if code := check(&az.Request, req.Body); code != 0 {
				return protocol.Reply{Response: errresp.For(req.Body, code)}
			}
			ca := connAuthzOf(req.Conn)
			ca.serving = az
			defer func() { ca.serving = nil }()
		}
	}
	return b.serveRouted(ctx, req, a)
}

// topicsAuthorized wraps an API table handler with the per-topic split
// (acl.Request.SplitTopics); a long-polling answer (Reply.Wait) gets the
// refused topics when it completes.
func topicsAuthorized(op acl.Operation, mode acl.SplitMode, fn handler) handler {
	return func(b *Broker, ctx context.Context, req *protocol.Request) protocol.Reply {
		served, finish := b.authorizer(req).view().SplitTopics(req.Body, op, mode, splitter{b})
		if finish == nil {
			return fn(b, ctx, req)
		}
		if served == nil {
			return protocol.Reply{Response: finish(nil)}
		}
		sub := *req
		sub.Body = served
		reply := fn(b, ctx, &sub)
		switch {
		case reply.Response != nil:
			reply.Response = finish(reply.Response)
		case reply.Wait != nil:
			wait := reply.Wait
			reply.Wait = func() (kmsg.Response, error) {
				resp, err := wait()
				if resp != nil {
					resp = finish(resp)
				}
				return resp, err
			}
		}
		return reply
	}
}

type splitter struct{ b *Broker }

func (s splitter) TopicName(id [16]byte) (string, bool) {
	if tp := s.b.lookupTopic("", id); tp != nil {
		return tp.name, true
	}
	return "", false
}

func (splitter) ErrorResponse(req kmsg.Request, code int16) kmsg.Response {
	return errresp.For(req, code)
}

const (
	serveAllowed = acl.ServeAllowed
	allOrNothing = acl.AllOrNothing
)
