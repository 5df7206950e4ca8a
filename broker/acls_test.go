package broker

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// With no authorizer, ACL requests from kadm over TCP get Kafka's
// SECURITY_DISABLED answer for every filter and creation, and the
// connection stays usable.
func TestACLsSecurityDisabled(t *testing.T) {
	b := newTestBroker(t)
	adm := newAdmin(t, listen(t, b))
	ctx := testCtx(t)

	acl := kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("t").Groups("g").
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	created, err := adm.CreateACLs(ctx, acl)
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 2 {
		t.Fatalf("%d creation results, want 2", len(created))
	}
	for _, c := range created {
		if !errors.Is(c.Err, kerr.SecurityDisabled) || c.ErrMessage != noAuthorizer {
			t.Fatalf("create %v: err %v %q", c.Type, c.Err, c.ErrMessage)
		}
	}

	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow("User:alice").AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if len(described) == 0 {
		t.Fatal("no describe results")
	}
	for _, d := range described {
		if !errors.Is(d.Err, kerr.SecurityDisabled) || len(d.Described) != 0 {
			t.Fatalf("describe: err %v, %d described", d.Err, len(d.Described))
		}
	}

	deleted, err := adm.DeleteACLs(ctx, kadm.NewACLs().AnyResource().Allow("User:alice").AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) == 0 {
		t.Fatal("no delete results")
	}
	for _, d := range deleted {
		if !errors.Is(d.Err, kerr.SecurityDisabled) || len(d.Deleted) != 0 {
			t.Fatalf("delete: err %v, %d deleted", d.Err, len(d.Deleted))
		}
	}
	// Still serving on the same client.
	if _, err := adm.ListTopics(ctx); err != nil {
		t.Fatalf("after ACL requests: %v", err)
	}
}

// Every version of the three ACL APIs, on the wire: the message at v1+
// (v0 of DescribeAcls has one too) and one result per creation or filter.
func TestACLVersions(t *testing.T) {
	b := newTestBroker(t)
	for v := int16(0); v <= 3; v++ {
		d := kmsg.NewPtrDescribeACLsRequest()
		d.Version = v
		dr := serve(t, b, d).(*kmsg.DescribeACLsResponse)
		if dr.ErrorCode != kerr.SecurityDisabled.Code || deref(dr.ErrorMessage) != noAuthorizer {
			t.Fatalf("DescribeAcls v%d: %v %q", v, kerr.ErrorForCode(dr.ErrorCode), deref(dr.ErrorMessage))
		}
		c := kmsg.NewPtrCreateACLsRequest()
		c.Version = v
		c.Creations = make([]kmsg.CreateACLsRequestCreation, 3)
		if cr := serve(t, b, c).(*kmsg.CreateACLsResponse); len(cr.Results) != 3 || cr.Results[2].ErrorCode != kerr.SecurityDisabled.Code {
			t.Fatalf("CreateAcls v%d: %+v", v, cr.Results)
		}
		del := kmsg.NewPtrDeleteACLsRequest()
		del.Version = v
		del.Filters = make([]kmsg.DeleteACLsRequestFilter, 2)
		if dr := serve(t, b, del).(*kmsg.DeleteACLsResponse); len(dr.Results) != 2 || dr.Results[1].ErrorCode != kerr.SecurityDisabled.Code {
			t.Fatalf("DeleteAcls v%d: %+v", v, dr.Results)
		}
	}
}
