package schemaregistry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// callAs is call with HTTP basic credentials (none when user is "").
func callAs(t testing.TB, user, pass, method, url string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: out}
}

// TestACLs: with the broker's authorizer on, the registry decides each
// request by the broker's ACLs, created over Kafka with kadm: a subject is
// its topic (orders-value is topic orders), the global config and mode
// the cluster. Allowed requests pass, refused ones are 403 with 40301 and
// a log line, and a change of the ACLs applies to the next request.
func TestACLs(t *testing.T) {
	logs := &syncBuffer{}
	users := map[string]string{"admin": "adminpw", "alice": "alicepw", "bob": "bobpw", "carol": "carolpw"}
	b, u := start(t,
		minikafka.WithSASL(users, "SCRAM-SHA-256"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}),
		minikafka.WithSchemaRegistryAuth(),
		minikafka.WithTopic("orders", 1),
		minikafka.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := func(user string) *kgo.Client {
		return minikafkatest.Client(t, b, kgo.SASL(scram.Auth{User: user, Pass: users[user]}.AsSha256Mechanism()),
			kgo.DefaultProduceTopic("orders"), kgo.RecordRetries(1), kgo.ProduceRequestTimeout(5*time.Second))
	}
	adm := kadm.NewClient(client("admin"))
	create := func(b *kadm.ACLBuilder) {
		t.Helper()
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("creating %+v: %v", r, r.Err)
			}
		}
	}
	// alice produces to orders, bob consumes it, carol owns every team-
	// topic but may not delete team-prod's subjects.
	create(kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpWrite))
	create(kadm.NewACLs().Allow("User:bob").Topics("orders").Operations(kadm.OpRead))
	create(kadm.NewACLs().Allow("User:carol").Topics("team-").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAll))
	create(kadm.NewACLs().Deny("User:carol").Topics("team-prod").Operations(kadm.OpDelete))

	type step struct {
		user, method, path string
		body               any
		status, code       int
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			a := callAs(t, s.user, users[s.user], s.method, u+s.path, s.body)
			if a.status != s.status || s.code != 0 && a.code() != s.code {
				t.Errorf("%s %s %s: %d %s, want %d (%d)", s.user, s.method, s.path, a.status, a.body, s.status, s.code)
			}
		}
	}
	v1 := schema(recA)
	run([]step{
		{"", "GET", "/subjects", nil, 401, 401},
		// alice may write topic orders: register, and see the versions
		// (WRITE implies DESCRIBE), but not read them.
		{"alice", "POST", "/subjects/orders-value/versions", v1, 200, 0},
		{"alice", "POST", "/subjects/orders-key/versions", schema(`"string"`), 200, 0},
		{"alice", "GET", "/subjects/orders-value/versions", nil, 200, 0},
		{"alice", "GET", "/subjects/orders-value/versions/1", nil, 403, 40301},
		{"alice", "POST", "/subjects/other-value/versions", v1, 403, 40301},
		{"alice", "DELETE", "/subjects/orders-value", nil, 403, 40301},
		{"alice", "PUT", "/config/orders-value", map[string]any{"compatibility": "NONE"}, 403, 40301},
		{"alice", "PUT", "/config", map[string]any{"compatibility": "NONE"}, 403, 40301},
		{"alice", "GET", "/mode", nil, 403, 40301},
		{"alice", "GET", "/schemas/types", nil, 200, 0},
		// bob may read topic orders: the schema by ID (what a
		// deserializer asks), the versions, a lookup, a compatibility
		// check; not register.
		{"bob", "GET", "/schemas/ids/1", nil, 200, 0},
		{"bob", "GET", "/schemas/ids/1/schema", nil, 200, 0},
		{"bob", "GET", "/subjects/orders-value/versions/latest", nil, 200, 0},
		{"bob", "POST", "/subjects/orders-value", v1, 200, 0},
		{"bob", "POST", "/compatibility/subjects/orders-value/versions/latest", v1, 200, 0},
		{"bob", "POST", "/subjects/orders-value/versions", v1, 403, 40301},
		{"bob", "GET", "/config/orders-value", nil, 403, 40301},
		// carol: everything under team-, except deleting team-prod's.
		{"carol", "POST", "/subjects/team-a-value/versions", schema(`"int"`), 200, 0},
		{"carol", "POST", "/subjects/team-prod-value/versions", schema(`"long"`), 200, 0},
		{"carol", "PUT", "/config/team-a-value", map[string]any{"compatibility": "FULL"}, 200, 0},
		{"carol", "GET", "/config/team-a-value", nil, 200, 0},
		{"carol", "DELETE", "/subjects/team-a-value", nil, 200, 0},
		{"carol", "DELETE", "/subjects/team-prod-value", nil, 403, 40301},
		{"carol", "GET", "/schemas/ids/1", nil, 403, 40301},
		{"carol", "GET", "/subjects/orders-value/versions", nil, 403, 40301},
		// The super user may do anything.
		{"admin", "PUT", "/config", map[string]any{"compatibility": "FULL"}, 200, 0},
		{"admin", "GET", "/subjects/orders-value/versions/1", nil, 200, 0},
	})

	// Listings show only what the user may see.
	list := func(user, path string) string {
		t.Helper()
		a := callAs(t, user, users[user], "GET", u+path, nil)
		if a.status != 200 {
			t.Fatalf("%s GET %s: %d %s", user, path, a.status, a.body)
		}
		return strings.TrimSpace(string(a.body))
	}
	if got := list("bob", "/subjects"); got != `["orders-key","orders-value"]` {
		t.Errorf("bob's subjects: %s", got)
	}
	if got := list("carol", "/subjects"); got != `["team-prod-value"]` {
		t.Errorf("carol's subjects: %s", got)
	}
	if got := list("admin", "/subjects"); got != `["orders-key","orders-value","team-prod-value"]` {
		t.Errorf("admin's subjects: %s", got)
	}
	if got := list("carol", "/schemas"); strings.Contains(got, "orders") || !strings.Contains(got, "team-prod-value") {
		t.Errorf("carol's schemas: %s", got)
	}

	// The refusal says who, what and which ACL decides, and is logged.
	a := callAs(t, "alice", users["alice"], "GET", u+"/subjects/orders-value/versions/1", nil)
	for _, want := range []string{"User:alice", "Read", "orders-value", "Topic 'orders'"} {
		if !strings.Contains(string(a.body), want) {
			t.Errorf("refusal %s lacks %q", a.body, want)
		}
	}
	if l := logs.String(); !strings.Contains(l, `msg="schema registry: authorization denied" principal=User:alice`) || !strings.Contains(l, "operation=Read") {
		t.Errorf("no denial logged:\n%s", l)
	}

	// An ACL created now applies to the next request.
	create(kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead))
	run([]step{{"alice", "GET", "/subjects/orders-value/versions/1", nil, 200, 0}})
	// A DENY wins over the ALLOW.
	create(kadm.NewACLs().Deny("User:alice").Topics("orders").Operations(kadm.OpRead))
	run([]step{{"alice", "GET", "/subjects/orders-value/versions/1", nil, 403, 40301}})

	// The registry and the broker decide alike: whoever may register a
	// topic's value schema may produce to the topic, and no one else.
	for _, user := range []string{"alice", "bob", "carol", "admin"} {
		reg := callAs(t, user, users[user], "POST", u+"/subjects/orders-value/versions", v1).status == 200
		err := client(user).ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
		if reg != (err == nil) {
			t.Errorf("%s: registry allows register %v, broker's produce: %v", user, reg, err)
		}
	}
}

// TestACLsAnonymous: with ACLs on but no basic auth, every request is
// User:ANONYMOUS's (a name in the credentials is not believed), decided
// with allow.everyone.if.no.acl.found.
func TestACLsAnonymous(t *testing.T) {
	b, u := start(t, minikafka.WithAuthorizer(minikafka.AuthorizerConfig{AllowEveryoneIfNoACLFound: true}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Without SASL every Kafka client is ANONYMOUS too; no ACL yet, so it
	// may create them.
	adm := kadm.NewClient(minikafkatest.Client(t, b))
	if _, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpAll)); err != nil {
		t.Fatal(err)
	}
	if a := callAs(t, "", "", "POST", u+"/subjects/free-value/versions", schema(`"string"`)); a.status != 200 {
		t.Errorf("a subject no ACL names: %d %s", a.status, a.body)
	}
	if a := callAs(t, "", "", "POST", u+"/subjects/orders-value/versions", schema(`"string"`)); a.status != 403 || a.code() != 40301 || !strings.Contains(string(a.body), "User:ANONYMOUS") {
		t.Errorf("a subject alice's ACL names: %d %s", a.status, a.body)
	}
	if a := callAs(t, "alice", "whatever", "POST", u+"/subjects/orders-value/versions", schema(`"string"`)); a.status != 403 {
		t.Errorf("an unchecked user name was believed: %d %s", a.status, a.body)
	}
}

// TestACLsAgreeWithBroker: the registry reads the broker's ACLs and
// decides by Kafka's rules itself, so it must decide as the broker does.
// For ACLs of every shape (User:*, hosts, PREFIXED and "*" names, DENY
// over ALLOW, ALL, an operation that implies no other) each user's
// registration in each topic's subject is compared with the broker's own
// answer to the same user producing to the topic.
func TestACLsAgreeWithBroker(t *testing.T) {
	users := map[string]string{"admin": "adminpw", "u1": "p1", "u2": "p2", "u3": "p3"}
	topics := []string{"t1", "t2", "t3", "t3x", "t4", "t5", "t6"}
	opts := []minikafka.Option{
		minikafka.WithSASL(users, "SCRAM-SHA-256"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}),
		minikafka.WithSchemaRegistryAuth(),
	}
	for _, tp := range topics {
		opts = append(opts, minikafka.WithTopic(tp, 1))
	}
	b, u := start(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := func(user string) *kgo.Client {
		return minikafkatest.Client(t, b, kgo.SASL(scram.Auth{User: user, Pass: users[user]}.AsSha256Mechanism()),
			kgo.RecordRetries(1), kgo.ProduceRequestTimeout(5*time.Second))
	}
	adm := kadm.NewClient(client("admin"))
	for _, acl := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:*").Topics("t1").Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:u1").AllowHosts("127.0.0.1").Topics("t2").Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:u2").AllowHosts("10.9.9.9").Topics("t2").Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:*").Topics("t3").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAll),
		kadm.NewACLs().Deny("User:u2").Topics("t3x").Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:u3").Topics("*").Operations(kadm.OpWrite),
		kadm.NewACLs().Deny("User:u3").Topics("t4").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:u2").Topics("t5").Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:u1").Topics("t6").Operations(kadm.OpWrite),
		kadm.NewACLs().Deny("User:*").DenyHosts("127.0.0.1").Topics("t6").Operations(kadm.OpWrite),
	} {
		res, err := adm.CreateACLs(ctx, acl)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatalf("%+v: %v", r, r.Err)
			}
		}
	}
	allowed, refused := 0, 0
	for _, user := range []string{"u1", "u2", "u3", "admin"} {
		cl := client(user)
		for _, tp := range topics {
			a := callAs(t, user, users[user], "POST", u+"/subjects/"+tp+"-value/versions", schema(`"string"`))
			reg := a.status == 200
			if !reg && a.code() != 40301 {
				t.Fatalf("%s on %s: %d %s", user, tp, a.status, a.body)
			}
			err := cl.ProduceSync(ctx, &kgo.Record{Topic: tp, Value: []byte("x")}).FirstErr()
			if reg != (err == nil) {
				t.Errorf("%s on %s: registry allows registering %v, broker's produce: %v", user, tp, reg, err)
			}
			if reg {
				allowed++
			} else {
				refused++
			}
		}
	}
	if allowed < 5 || refused < 5 {
		t.Errorf("the table should allow and refuse alike: %d allowed, %d refused", allowed, refused)
	}
}
