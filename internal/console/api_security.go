package console

// ACLs and client quotas, as DescribeAcls and DescribeClientQuotas tell
// any Kafka client (read only), and SCRAM users created, changed and
// deleted through AlterUserScramCredentials.

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
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

// scramSet is the body of PUT /api/scram/{user}: the user's password
// under one mechanism (created, or replaced if the user has one).
type scramSet struct {
	Password   string `json:"password"`
	Mechanism  string `json:"mechanism"`  // SCRAM-SHA-256 (default) or SCRAM-SHA-512
	Iterations int32  `json:"iterations"` // 4096 to 16384; 0 means 8192, as minikafka user create
}

func scramMechanism(s string) (kadm.ScramMechanism, error) {
	switch strings.ToUpper(s) {
	case "", "SCRAM-SHA-256":
		return kadm.ScramSha256, nil
	case "SCRAM-SHA-512":
		return kadm.ScramSha512, nil
	}
	return 0, errorf(http.StatusBadRequest, "mechanism %q: want SCRAM-SHA-256 or SCRAM-SHA-512", s)
}

// setScramUser creates a SCRAM user or changes its password, through
// AlterUserScramCredentials as any Kafka admin client would (kadm salts
// and hashes the password here; it never reaches the broker in clear).
func (c *Console) setScramUser(r *http.Request) (any, error) {
	user := r.PathValue("user")
	var body scramSet
	if err := readJSON(r, &body); err != nil {
		return nil, err
	}
	m, err := scramMechanism(body.Mechanism)
	if err != nil {
		return nil, err
	}
	if body.Password == "" {
		return nil, errorf(http.StatusBadRequest, "password: required")
	}
	if body.Iterations == 0 {
		body.Iterations = 8192
	}
	// The broker checks the range too; checking here names the field.
	if body.Iterations < 4096 || body.Iterations > 16384 {
		return nil, errorf(http.StatusBadRequest, "iterations %d: want 4096 to 16384", body.Iterations)
	}
	res, err := c.adm.AlterUserSCRAMs(r.Context(), nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: body.Iterations, Password: body.Password}})
	if err != nil {
		return nil, err
	}
	if a, ok := res[user]; !ok {
		return nil, errorf(http.StatusBadGateway, "the broker did not answer for user %q", user)
	} else if a.Err != nil {
		return nil, scramErr(user, a.Err, a.ErrMessage)
	}
	return c.describeScram(r, user)
}

// deleteScramUser deletes the user's credential for ?mechanism=, or all
// of them. Kafka refuses a request that names one user twice, so each
// mechanism goes in its own request.
func (c *Console) deleteScramUser(r *http.Request) (any, error) {
	user := r.PathValue("user")
	var mechs []kadm.ScramMechanism
	if q := r.URL.Query().Get("mechanism"); q != "" {
		m, err := scramMechanism(q)
		if err != nil {
			return nil, err
		}
		mechs = append(mechs, m)
	} else {
		d, err := c.describeScram(r, user)
		if err != nil {
			return nil, err
		}
		for _, ci := range d.Credentials {
			m, _ := scramMechanism(ci.Mechanism)
			mechs = append(mechs, m)
		}
	}
	for _, m := range mechs {
		res, err := c.adm.AlterUserSCRAMs(r.Context(), []kadm.DeleteSCRAM{{User: user, Mechanism: m}}, nil)
		if err != nil {
			return nil, err
		}
		if a := res[user]; a.Err != nil {
			return nil, scramErr(user, a.Err, a.ErrMessage)
		}
	}
	return map[string]any{"user": user, "deleted": len(mechs)}, nil
}

// describeScram describes one user; an unknown user is a 404.
func (c *Console) describeScram(r *http.Request, user string) (scramUser, error) {
	ds, err := c.adm.DescribeUserSCRAMs(r.Context(), user)
	if err != nil {
		return scramUser{}, err
	}
	d, ok := ds[user]
	if !ok {
		return scramUser{}, errorf(http.StatusBadGateway, "the broker did not answer for user %q", user)
	}
	if d.Err != nil {
		return scramUser{}, scramErr(user, d.Err, d.ErrMessage)
	}
	u := scramUser{User: user, Credentials: []scramCred{}}
	for _, ci := range d.CredInfos {
		u.Credentials = append(u.Credentials, scramCred{Mechanism: ci.Mechanism.String(), Iterations: ci.Iterations})
	}
	return u, nil
}

// scramErr names the user and keeps the broker's reason; the user's
// mistakes are 4xx.
func scramErr(user string, err error, msg string) error {
	switch {
	case errors.Is(err, kerr.ResourceNotFound):
		return errorf(http.StatusNotFound, "user %s has no such SCRAM credential", user)
	case errors.Is(err, kerr.UnacceptableCredential), errors.Is(err, kerr.UnsupportedSaslMechanism), errors.Is(err, kerr.DuplicateResource):
		if msg != "" {
			return errorf(http.StatusBadRequest, "user %s: %v: %s", user, err, msg)
		}
		return errorf(http.StatusBadRequest, "user %s: %v", user, err)
	}
	return withMessage(fmt.Errorf("user %s: %w", user, err), msg)
}
