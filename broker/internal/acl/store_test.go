package acl

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/vfs"
)

// TestStoreCreateDeleteReopen: invalid bindings and filters are refused
// one by one, the valid ones change the set together and durably (a
// reopened store has them), and a request's cached decision follows the
// new version.
func TestStoreCreateDeleteReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(vfs.Default, dir, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	good := bind(topic, "orders", literal, "User:app", "*", opWrite, allow)
	bad := bind(topic, "", literal, "User:app", "*", opWrite, allow)
	errs, stored := s.Create([]Binding{bad, good, good})
	var inv *InvalidError
	if stored != nil || !errors.As(errs[0], &inv) || errs[1] != nil || errs[2] != nil {
		t.Fatalf("create: %v, stored %v", errs, stored)
	}
	if s.Set().Len() != 1 {
		t.Fatalf("%d bindings, want the duplicate kept once", s.Set().Len())
	}
	var c Conn
	r := c.Begin(s.Set(), "app", "10.0.0.1", nil)
	if !r.Allowed(opWrite, topic, "orders") || r.Allowed(opRead, topic, "orders") {
		t.Fatal("decisions do not follow the binding")
	}
	groups, err := s.Describe(Filter{ResourceType: kmsg.ACLResourceTypeAny, Pattern: kmsg.ACLResourcePatternTypeAny,
		Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny})
	if err != nil || len(groups) != 1 || len(groups[0]) != 1 || groups[0][0] != good {
		t.Fatalf("describe: %v, %v", groups, err)
	}

	re, err := Open(vfs.Default, dir, Settings{})
	if err != nil || re.Set().Len() != 1 {
		t.Fatalf("reopened: %v, err %v", re.Set().Bindings(), err)
	}

	name := "orders"
	removed, errs, stored := s.Delete([]Filter{
		{ResourceType: 99, Pattern: kmsg.ACLResourcePatternTypeAny, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny},
		{ResourceType: topic, Name: &name, Pattern: kmsg.ACLResourcePatternTypeMatch, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny},
	})
	if stored != nil || !errors.As(errs[0], &inv) || errs[1] != nil || len(removed[0]) != 0 || len(removed[1]) != 1 {
		t.Fatalf("delete: removed %v, errs %v, stored %v", removed, errs, stored)
	}
	r = c.Begin(s.Set(), "app", "10.0.0.1", nil)
	if r.Allowed(opWrite, topic, "orders") {
		t.Fatal("a cached decision outlived the binding's deletion")
	}
}

// TestWholeRequestChecks: a cluster operation needs the cluster, a group
// request its group, and a key without a check has none.
func TestWholeRequestChecks(t *testing.T) {
	set := NewSet([]Binding{bind(group, "g", literal, "User:app", "*", opRead, allow)}, 1, Settings{})
	r := NewRequest(set, "app", "h")
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group = "g"
	if code := WholeRequestCheck(12)(r, hb); code != 0 {
		t.Fatalf("heartbeat to an allowed group: %d", code)
	}
	hb.Group = "other"
	if code := WholeRequestCheck(12)(r, hb); code != errGroupAuth {
		t.Fatalf("heartbeat to another group: %d", code)
	}
	if code := WholeRequestCheck(29)(r, kmsg.NewPtrDescribeACLsRequest()); code != errClusterAuth {
		t.Fatalf("DescribeAcls without the cluster: %d", code)
	}
	if WholeRequestCheck(3) != nil {
		t.Fatal("Metadata is checked per topic, not whole")
	}
}
