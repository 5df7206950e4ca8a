package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzACLRequests feeds arbitrary CreateAcls, DescribeAcls and DeleteAcls
// bodies to a broker with the authorizer on: every answer is a result per
// item with success, INVALID_REQUEST or nothing else, and no stored
// binding fails validation.
func FuzzACLRequests(f *testing.F) {
	c := kmsg.NewPtrCreateACLsRequest()
	c.Version = 3
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.Principal, cr.Host = kmsg.ACLResourceTypeTopic, "t", "User:a", "*"
	cr.Operation, cr.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	c.Creations = []kmsg.CreateACLsRequestCreation{cr}
	f.Add(int16(30), int16(3), c.AppendTo(nil))
	d := kmsg.NewPtrDescribeACLsRequest()
	d.Version = 3
	d.ResourceType, d.Operation, d.PermissionType, d.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny, kmsg.ACLResourcePatternTypeMatch
	f.Add(int16(29), int16(3), d.AppendTo(nil))
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 3
	del.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: 1, ResourcePatternType: 1, Operation: 1, PermissionType: 1}}
	f.Add(int16(31), int16(3), del.AppendTo(nil))
	b := newTestBroker(f, func(c *Config) { c.Authorizer = &AuthorizerConfig{} })
	f.Fuzz(func(t *testing.T, key, version int16, body []byte) {
		if key < 29 || key > 31 || version < 0 || version > 3 {
			return
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(version)
		if err := req.ReadFrom(body); err != nil {
			return
		}
		switch r := serve(t, b, req).(type) {
		case *kmsg.CreateACLsResponse:
			if len(r.Results) != len(req.(*kmsg.CreateACLsRequest).Creations) {
				t.Fatalf("%d results for %d creations", len(r.Results), len(req.(*kmsg.CreateACLsRequest).Creations))
			}
			for _, res := range r.Results {
				if res.ErrorCode != 0 && res.ErrorCode != kerr.InvalidRequest.Code {
					t.Fatalf("create answered %v", kerr.ErrorForCode(res.ErrorCode))
				}
			}
		case *kmsg.DescribeACLsResponse:
			if r.ErrorCode != 0 && r.ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("describe answered %v", kerr.ErrorForCode(r.ErrorCode))
			}
		case *kmsg.DeleteACLsResponse:
			if len(r.Results) != len(req.(*kmsg.DeleteACLsRequest).Filters) {
				t.Fatalf("%d results for %d filters", len(r.Results), len(req.(*kmsg.DeleteACLsRequest).Filters))
			}
		}
		for _, bd := range b.acls.Set().Bindings() {
			if err := bd.Validate(); err != nil {
				t.Fatalf("stored an invalid binding %v: %v", bd, err)
			}
		}
	})
}
