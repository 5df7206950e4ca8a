package acl

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/minikafka/minikafka/internal/sealed"
)

const (
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	txnID   = kmsg.ACLResourceTypeTransactionalId

	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed

	allow = kmsg.ACLPermissionTypeAllow
	deny  = kmsg.ACLPermissionTypeDeny

	opAll             = kmsg.ACLOperationAll
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

func bind(rt ResourceType, name string, pt PatternType, principal, host string, op Operation, perm Permission) Binding {
	return Binding{rt, name, pt, principal, host, op, perm}
}

// Each rule of Kafka's StandardAuthorizer, one case per rule.
func TestAuthorize(t *testing.T) {
	type check struct {
		principal, host string
		op              Operation
		rt              ResourceType
		name            string
		want            bool
	}
	cases := []struct {
		name     string
		bindings []Binding
		settings Settings
		checks   []check
	}{
		{"literal allow is exact", []Binding{bind(topic, "orders", literal, "User:alice", "*", opRead, allow)}, Settings{}, []check{
			{"User:alice", "10.0.0.1", opRead, topic, "orders", true},
			{"User:alice", "10.0.0.1", opRead, topic, "orders2", false},
			{"User:alice", "10.0.0.1", opWrite, topic, "orders", false},
			{"User:bob", "10.0.0.1", opRead, topic, "orders", false},
			{"User:alice", "10.0.0.1", opRead, group, "orders", false},
		}},
		{"prefixed allow", []Binding{bind(topic, "app-", prefixed, "User:alice", "*", opWrite, allow)}, Settings{}, []check{
			{"User:alice", "h", opWrite, topic, "app-events", true},
			{"User:alice", "h", opWrite, topic, "app-", true},
			{"User:alice", "h", opWrite, topic, "ap", false},
			{"User:alice", "h", opWrite, topic, "other", false},
		}},
		{"literal wildcard name", []Binding{bind(group, "*", literal, "User:alice", "*", opRead, allow)}, Settings{}, []check{
			{"User:alice", "h", opRead, group, "any-group", true},
			{"User:alice", "h", opRead, topic, "any-topic", false},
		}},
		{"prefixed star is a literal prefix", []Binding{bind(topic, "*", prefixed, "User:alice", "*", opRead, allow)}, Settings{}, []check{
			{"User:alice", "h", opRead, topic, "orders", false},
			{"User:alice", "h", opRead, topic, "*x", true},
		}},
		{"wildcard principal", []Binding{bind(topic, "t", literal, "User:*", "*", opRead, allow)}, Settings{}, []check{
			{"User:alice", "h", opRead, topic, "t", true},
			{"User:ANONYMOUS", "h", opRead, topic, "t", true},
		}},
		{"host matching", []Binding{bind(topic, "t", literal, "User:alice", "10.0.0.1", opRead, allow)}, Settings{}, []check{
			{"User:alice", "10.0.0.1", opRead, topic, "t", true},
			{"User:alice", "10.0.0.2", opRead, topic, "t", false},
		}},
		{"deny wins over allow", []Binding{
			bind(topic, "*", literal, "User:alice", "*", opAll, allow),
			bind(topic, "secret", literal, "User:alice", "*", opRead, deny),
		}, Settings{}, []check{
			{"User:alice", "h", opRead, topic, "secret", false},
			{"User:alice", "h", opWrite, topic, "secret", true},
			{"User:alice", "h", opRead, topic, "public", true},
		}},
		{"deny by prefix and by wildcard principal", []Binding{
			bind(topic, "t", literal, "User:alice", "*", opRead, allow),
			bind(topic, "t", prefixed, "User:*", "10.0.0.9", opAll, deny),
		}, Settings{}, []check{
			{"User:alice", "10.0.0.1", opRead, topic, "t", true},
			{"User:alice", "10.0.0.9", opRead, topic, "t", false},
		}},
		{"deny of DESCRIBE does not deny READ", []Binding{
			bind(topic, "t", literal, "User:alice", "*", opRead, allow),
			bind(topic, "t", literal, "User:alice", "*", opDescribe, deny),
		}, Settings{}, []check{
			{"User:alice", "h", opRead, topic, "t", true},
			{"User:alice", "h", opDescribe, topic, "t", false},
		}},
		{"implied DESCRIBE", []Binding{
			bind(topic, "r", literal, "User:a", "*", opRead, allow),
			bind(topic, "w", literal, "User:a", "*", opWrite, allow),
			bind(topic, "d", literal, "User:a", "*", opDelete, allow),
			bind(topic, "al", literal, "User:a", "*", opAlter, allow),
			bind(topic, "c", literal, "User:a", "*", opCreate, allow),
		}, Settings{}, []check{
			{"User:a", "h", opDescribe, topic, "r", true},
			{"User:a", "h", opDescribe, topic, "w", true},
			{"User:a", "h", opDescribe, topic, "d", true},
			{"User:a", "h", opDescribe, topic, "al", true},
			{"User:a", "h", opDescribe, topic, "c", false}, // CREATE does not imply DESCRIBE
			{"User:a", "h", opRead, topic, "w", false},     // WRITE does not imply READ
		}},
		{"implied DESCRIBE_CONFIGS", []Binding{bind(topic, "t", literal, "User:a", "*", opAlterConfigs, allow)}, Settings{}, []check{
			{"User:a", "h", opDescribeConfigs, topic, "t", true},
			{"User:a", "h", opDescribe, topic, "t", false},
		}},
		{"ALL allows every operation", []Binding{bind(cluster, ClusterName, literal, "User:ops", "*", opAll, allow)}, Settings{}, []check{
			{"User:ops", "h", opAlter, cluster, ClusterName, true},
			{"User:ops", "h", opIdempotentWrite, cluster, ClusterName, true},
		}},
		{"super users pass denies", []Binding{bind(topic, "*", literal, "User:*", "*", opAll, deny)}, Settings{SuperUsers: []string{"User:admin"}}, []check{
			{"User:admin", "h", opWrite, topic, "t", true},
			{"User:alice", "h", opWrite, topic, "t", false},
		}},
		{"no ACLs: denied by default", nil, Settings{}, []check{
			{"User:alice", "h", opRead, topic, "t", false},
		}},
		{"allow.everyone.if.no.acl.found", []Binding{bind(topic, "guarded", literal, "User:bob", "*", opRead, allow)},
			Settings{AllowEveryoneIfNoACLFound: true}, []check{
				{"User:alice", "h", opRead, topic, "open", true},
				{"User:alice", "h", opRead, group, "g", true},
				// an ACL exists on the resource, for someone else: denied.
				{"User:alice", "h", opRead, topic, "guarded", false},
				{"User:bob", "h", opRead, topic, "guarded", true},
			}},
		{"transactional ID", []Binding{bind(txnID, "tx-", prefixed, "User:app", "*", opWrite, allow)}, Settings{}, []check{
			{"User:app", "h", opWrite, txnID, "tx-1", true},
			{"User:app", "h", opDescribe, txnID, "tx-1", true},
			{"User:app", "h", opWrite, txnID, "other", false},
		}},
	}
	for _, c := range cases {
		s := NewSet(c.bindings, 1, c.settings)
		for _, ch := range c.checks {
			if got := s.Authorize(ch.principal, ch.host, ch.op, ch.rt, ch.name); got != ch.want {
				t.Errorf("%s: %s@%s %s %s:%s = %v, want %v", c.name, ch.principal, ch.host, ch.op, ch.rt, ch.name, got, ch.want)
			}
		}
	}
}

// KIP-679: WRITE on any topic grants the idempotent producer; a DENY that
// covers every allowed name takes it away.
func TestAuthorizeByResourceType(t *testing.T) {
	for _, c := range []struct {
		name     string
		bindings []Binding
		settings Settings
		want     bool
	}{
		{"none", nil, Settings{}, false},
		{"literal allow", []Binding{bind(topic, "t", literal, "User:a", "*", opWrite, allow)}, Settings{}, true},
		{"prefixed allow", []Binding{bind(topic, "p-", prefixed, "User:a", "*", opWrite, allow)}, Settings{}, true},
		{"other operation", []Binding{bind(topic, "t", literal, "User:a", "*", opRead, allow)}, Settings{}, false},
		{"other principal", []Binding{bind(topic, "t", literal, "User:b", "*", opWrite, allow)}, Settings{}, false},
		{"literal denied", []Binding{bind(topic, "t", literal, "User:a", "*", opWrite, allow), bind(topic, "t", literal, "User:a", "*", opWrite, deny)}, Settings{}, false},
		{"prefix denies literal", []Binding{bind(topic, "p-t", literal, "User:a", "*", opWrite, allow), bind(topic, "p-", prefixed, "User:a", "*", opWrite, deny)}, Settings{}, false},
		{"prefix denies narrower prefix", []Binding{bind(topic, "p-x", prefixed, "User:a", "*", opWrite, allow), bind(topic, "p-", prefixed, "User:a", "*", opAll, deny)}, Settings{}, false},
		{"wildcard deny", []Binding{bind(topic, "t", literal, "User:a", "*", opWrite, allow), bind(topic, "*", literal, "User:*", "*", opWrite, deny)}, Settings{}, false},
		{"one of two allowed", []Binding{bind(topic, "t", literal, "User:a", "*", opWrite, allow), bind(topic, "u", literal, "User:a", "*", opWrite, allow), bind(topic, "t", literal, "User:a", "*", opWrite, deny)}, Settings{}, true},
		{"super user", nil, Settings{SuperUsers: []string{"User:a"}}, true},
		{"allow everyone", nil, Settings{AllowEveryoneIfNoACLFound: true}, true},
	} {
		s := NewSet(c.bindings, 1, c.settings)
		if got := s.AuthorizeByResourceType("User:a", "h", opWrite, topic); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAuthorizedOperations(t *testing.T) {
	s := NewSet([]Binding{bind(topic, "t", literal, "User:a", "*", opRead, allow), bind(topic, "t", literal, "User:a", "*", opAlterConfigs, allow)}, 1, Settings{})
	want := int32(1<<opRead | 1<<opDescribe | 1<<opAlterConfigs | 1<<opDescribeConfigs)
	if got := s.AuthorizedOperations("User:a", "h", topic, "t"); got != want {
		t.Fatalf("ops %b, want %b", got, want)
	}
}

func TestValidate(t *testing.T) {
	good := bind(topic, "t", literal, "User:a", "*", opRead, allow)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Binding){
		"unknown resource":       func(b *Binding) { b.ResourceType = 0 },
		"any resource":           func(b *Binding) { b.ResourceType = kmsg.ACLResourceTypeAny },
		"match pattern":          func(b *Binding) { b.Pattern = kmsg.ACLResourcePatternTypeMatch },
		"any pattern":            func(b *Binding) { b.Pattern = kmsg.ACLResourcePatternTypeAny },
		"any operation":          func(b *Binding) { b.Operation = kmsg.ACLOperationAny },
		"unknown operation":      func(b *Binding) { b.Operation = 99 },
		"any permission":         func(b *Binding) { b.Permission = kmsg.ACLPermissionTypeAny },
		"empty name":             func(b *Binding) { b.Name = "" },
		"bad cluster name":       func(b *Binding) { b.ResourceType, b.Operation = cluster, opAlter },
		"principal without type": func(b *Binding) { b.Principal = "alice" },
		"empty host":             func(b *Binding) { b.Host = "" },
		"operation for type":     func(b *Binding) { b.Operation = opIdempotentWrite },
	} {
		b := good
		mut(&b)
		var ie *InvalidError
		if err := b.Validate(); !errors.As(err, &ie) {
			t.Errorf("%s: %v, want an InvalidError", name, err)
		}
	}
}

func TestFilter(t *testing.T) {
	bs := []Binding{
		bind(topic, "orders", literal, "User:a", "*", opRead, allow),
		bind(topic, "*", literal, "User:b", "*", opWrite, allow),
		bind(topic, "ord", prefixed, "User:a", "10.0.0.1", opAll, deny),
		bind(group, "orders", literal, "User:a", "*", opRead, allow),
	}
	s := NewSet(bs, 1, Settings{})
	str := func(v string) *string { return &v }
	for _, c := range []struct {
		name string
		f    Filter
		want []int
	}{
		{"everything", Filter{kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{0, 1, 2, 3}},
		{"any pattern by name", Filter{topic, str("orders"), kmsg.ACLResourcePatternTypeAny, nil, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{0}},
		{"match", Filter{topic, str("orders"), kmsg.ACLResourcePatternTypeMatch, nil, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{0, 1, 2}},
		{"prefixed exact", Filter{topic, str("ord"), prefixed, nil, nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{2}},
		{"literal type", Filter{kmsg.ACLResourceTypeAny, nil, literal, str("User:a"), nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{0, 3}},
		{"host", Filter{kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil, str("10.0.0.1"), kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}, []int{2}},
		{"operation and permission", Filter{kmsg.ACLResourceTypeAny, nil, kmsg.ACLResourcePatternTypeAny, nil, nil, opWrite, allow}, []int{1}},
	} {
		got := s.Filter(c.f)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v", c.name, got)
			continue
		}
		for i, w := range c.want {
			if got[i] != bs[w] {
				t.Errorf("%s: %d is %v, want %v", c.name, i, got[i], bs[w])
			}
		}
	}
	if err := (Filter{ResourceType: 0, Pattern: kmsg.ACLResourcePatternTypeAny, Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}).Validate(); err == nil {
		t.Error("UNKNOWN resource type accepted in a filter")
	}
	next, removed := s.Delete([]Filter{{topic, nil, kmsg.ACLResourcePatternTypeAny, str("User:a"), nil, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny}})
	if len(removed[0]) != 2 || next.Len() != 2 || next.Version() != 2 {
		t.Fatalf("delete: removed %v, left %v", removed, next.Bindings())
	}
	if again := next.Create([]Binding{bs[1], bs[0]}); again.Len() != 3 {
		t.Fatalf("create kept a duplicate: %v", again.Bindings())
	}
}

func TestFileRoundTrip(t *testing.T) {
	bs := []Binding{
		bind(topic, "orders", literal, "User:a", "*", opRead, allow),
		bind(cluster, ClusterName, literal, "User:ops", "10.0.0.1", opAll, deny),
		bind(txnID, "tx-", prefixed, "User:app", "*", opWrite, allow),
	}
	data := Encode(NewSet(bs, 7, Settings{}))
	got, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(bs) {
		t.Fatalf("%v", got)
	}
	for i := range bs {
		if got[i] != bs[i] {
			t.Fatalf("%d: %v, want %v", i, got[i], bs[i])
		}
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-2] ^= 0x20
	if _, err := Decode(bad); !errors.Is(err, sealed.ErrChecksum) {
		t.Fatalf("flipped byte: %v", err)
	}
	invalidEntry := sealed.Seal(fileMagic, fileVersion, []byte(`[{"resource_type":"TOPIC","name":"","pattern":"LITERAL","principal":"User:a","host":"*","operation":"READ","permission":"ALLOW"}]`))
	if _, err := Decode(invalidEntry); !errors.Is(err, sealed.ErrContent) {
		t.Fatalf("empty name: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(Encode(NewSet([]Binding{bind(topic, "t", prefixed, "User:a", "*", opRead, allow)}, 1, Settings{})))
	f.Add([]byte("MKACLS\n\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, err := Decode(data)
		if err != nil {
			return
		}
		for _, b := range bs {
			if err := b.Validate(); err != nil {
				t.Fatalf("decoded an invalid binding %v: %v", b, err)
			}
		}
		again, err := Decode(Encode(NewSet(bs, 1, Settings{})))
		if err != nil || len(again) != len(bs) {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func TestMappingRules(t *testing.T) {
	for _, c := range []struct{ rules, dn, want string }{
		{"", "CN=client,OU=eng,O=example", "CN=client,OU=eng,O=example"},
		{"DEFAULT", "CN=client,O=x", "CN=client,O=x"},
		{`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT`, "CN=svc,OU=ServiceUsers,O=x", "svc"},
		{`RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT`, "CN=human,OU=People,O=x", "CN=human,OU=People,O=x"},
		{`RULE:^CN=(.*?),OU=(.*?)$/$1@$2/L`, "CN=Alice,OU=ENG", "alice@eng"},
		{`RULE:^CN=(.*?),OU=(.*?)$/$1@$2/U`, "CN=Alice,OU=eng", "ALICE@ENG"},
		{`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT`, "CN=Kafka-Client.Host,O=x", "kafka"},
		{`RULE:^CN=([^,]*)$/u\/$1/`, "CN=x", "u/x"},
		{`RULE:^CN=nomatch$/x/`, "CN=other", "CN=other"},
	} {
		m, err := ParseMappingRules(c.rules)
		if err != nil {
			t.Fatalf("%q: %v", c.rules, err)
		}
		if got := m.Apply(c.dn); got != c.want {
			t.Errorf("%q on %q: %q, want %q", c.rules, c.dn, got, c.want)
		}
	}
	for _, bad := range []string{"RULE:x", "NOPE", "RULE:(/x/", "RULE:a/b/Q"} {
		if _, err := ParseMappingRules(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzMappingRules(f *testing.F) {
	f.Add(`RULE:^CN=(.*?),OU=(.*?)$/$1@$2/L,DEFAULT`, "CN=a,OU=b")
	f.Fuzz(func(t *testing.T, rules, dn string) {
		m, err := ParseMappingRules(rules)
		if err != nil {
			return
		}
		_ = m.Apply(dn)
	})
}
