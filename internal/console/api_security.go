package console

// ACLs and client quotas, as DescribeAcls and DescribeClientQuotas tell
// any Kafka client. Read only.

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type aclView struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	ResourceType string `json:"resource_type"`
	Resource     string `json:"resource"`
	Pattern      string `json:"pattern"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

type aclsPage struct {
	// Enabled is false when the broker runs without an authorizer (it
	// answers SECURITY_DISABLED); there are no ACLs then.
	Enabled bool      `json:"enabled"`
	ACLs    []aclView `json:"acls"`
}

// acls lists every ACL with one filter matching all (kadm's builder would
// send one filter per resource type).
func (c *Console) acls(r *http.Request) (any, error) {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType = kmsg.ACLResourceTypeAny
	req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
	req.Operation = kmsg.ACLOperationAny
	req.PermissionType = kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(r.Context(), c.cl)
	if err != nil {
		return nil, err
	}
	out := aclsPage{Enabled: true, ACLs: []aclView{}}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.SecurityDisabled) {
			out.Enabled = false
			return out, nil
		}
		msg := ""
		if resp.ErrorMessage != nil {
			msg = *resp.ErrorMessage
		}
		return nil, withMessage(err, msg)
	}
	for _, res := range resp.Resources {
		for _, a := range res.ACLs {
			out.ACLs = append(out.ACLs, aclView{
				Principal: a.Principal, Host: a.Host,
				ResourceType: strings.ToLower(res.ResourceType.String()), Resource: res.ResourceName,
				Pattern: strings.ToLower(res.ResourcePatternType.String()), Operation: strings.ToLower(a.Operation.String()),
				Permission: strings.ToLower(a.PermissionType.String()),
			})
		}
	}
	sort.Slice(out.ACLs, func(i, j int) bool {
		a, b := out.ACLs[i], out.ACLs[j]
		if a.ResourceType != b.ResourceType {
			return a.ResourceType < b.ResourceType
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		if a.Principal != b.Principal {
			return a.Principal < b.Principal
		}
		return a.Operation < b.Operation
	})
	return out, nil
}

type quotaEntity struct {
	Type string `json:"type"` // user, client-id, ip
	// Name is the entity's name; Default marks the default entity of its
	// type (no name).
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

type quotaView struct {
	Entity []quotaEntity      `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// quotas lists every client quota (a non-strict describe with no filter
// matches all).
func (c *Console) quotas(r *http.Request) (any, error) {
	qs, err := c.adm.DescribeClientQuotas(r.Context(), false, nil)
	if err != nil {
		return nil, err
	}
	out := []quotaView{}
	for _, q := range qs {
		v := quotaView{Entity: []quotaEntity{}, Values: map[string]float64{}}
		for _, e := range q.Entity {
			qe := quotaEntity{Type: e.Type, Default: e.Name == nil}
			if e.Name != nil {
				qe.Name = *e.Name
			}
			v.Entity = append(v.Entity, qe)
		}
		sort.Slice(v.Entity, func(i, j int) bool { return v.Entity[i].Type > v.Entity[j].Type }) // user first, as Kafka's tools print it
		for _, val := range q.Values {
			v.Values[val.Key] = val.Value
		}
		out = append(out, v)
	}
	key := func(v quotaView) string {
		var parts []string
		for _, e := range v.Entity {
			parts = append(parts, e.Type+"="+e.Name)
		}
		return strings.Join(parts, ",")
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out, nil
}
