package compat_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka"
)

// dtokenDiffRows are TestKafkaDiff's rows for delegation tokens (keys
// 38-41). Both brokers serve PLAINTEXT here, so every one of them is
// Kafka's allowTokenRequests refusal: the code, the -1 timestamps and the
// principals a refused CreateDelegationToken echoes.
func dtokenDiffRows() []diffRow {
	createOut := func(_ *diffSide, r kmsg.Response) any {
		c := r.(*kmsg.CreateDelegationTokenResponse)
		return map[string]any{"err": errName(c.ErrorCode), "owner": c.PrincipalType + ":" + c.PrincipalName,
			"requester": c.TokenRequesterPrincipalType + ":" + c.TokenRequesterPrincipalName,
			"issue":     c.IssueTimestamp, "expiry": c.ExpiryTimestamp, "max": c.MaxTimestamp, "id": c.TokenID, "hmac": len(c.HMAC)}
	}
	describeOut := func(_ *diffSide, r kmsg.Response) any {
		d := r.(*kmsg.DescribeDelegationTokenResponse)
		return map[string]any{"err": errName(d.ErrorCode), "tokens": len(d.TokenDetails)}
	}
	return []diffRow{
		{name: "CreateDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version = 3
			return r
		}, out: createOut},
		{name: "CreateDelegationToken/plaintext for another owner", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version = 3
			r.OwnerPrincipalType, r.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("kd-owner")
			return r
		}, out: createOut},
		{name: "CreateDelegationToken/v1", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrCreateDelegationTokenRequest()
			r.Version, r.MaxLifetimeMillis = 1, 60_000
			return r
		}, out: createOut},
		{name: "RenewDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrRenewDelegationTokenRequest()
			r.Version, r.HMAC, r.RenewTimeMillis = 2, []byte("kd-hmac"), -1
			return r
		}, out: func(_ *diffSide, r kmsg.Response) any {
			x := r.(*kmsg.RenewDelegationTokenResponse)
			return map[string]any{"err": errName(x.ErrorCode), "expiry": x.ExpiryTimestamp}
		}},
		{name: "ExpireDelegationToken/plaintext", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrExpireDelegationTokenRequest()
			r.Version, r.HMAC, r.ExpiryPeriodMillis = 2, []byte("kd-hmac"), -1
			return r
		}, out: func(_ *diffSide, r kmsg.Response) any {
			x := r.(*kmsg.ExpireDelegationTokenResponse)
			return map[string]any{"err": errName(x.ErrorCode), "expiry": x.ExpiryTimestamp}
		}},
		{name: "DescribeDelegationToken/plaintext all", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrDescribeDelegationTokenRequest()
			r.Version = 3
			return r
		}, out: describeOut},
		{name: "DescribeDelegationToken/plaintext empty owners", req: func(*diffSide) kmsg.Request {
			r := kmsg.NewPtrDescribeDelegationTokenRequest()
			r.Version, r.Owners = 3, []kmsg.DescribeDelegationTokenRequestOwner{}
			return r
		}, out: describeOut},
	}
}

// TestKafkaDiffDelegationTokens asks a SASL Kafka 4.4 node (PLAIN for the
// users, SCRAM-SHA-512 for tokens, delegation.token.secret.key set) and
// minikafka with the same users and secret the same delegation-token
// questions: creation (the HMAC must be HmacSHA512 of the ID under the
// secret on both), description, renewal by a stranger and of an unknown
// HMAC, a group renewer, a SCRAM login with the token (tokenauth=true)
// and a token request over it, expiry, and an expired token's renewal.
// Answers are reduced to what does not depend on the clock or the random
// token ID, and compared.
func TestKafkaDiffDelegationTokens(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not on PATH: Apache Kafka cannot run here; " + installHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	kafkaAddr := startSASLKafka(t, ctx)
	mini := startSASLMini(t, ctx)
	var got [2][]string
	for i, addr := range []string{kafkaAddr, mini} {
		got[i] = dtokenScript(t, ctx, addr, dtokenUsers, dtokenSecret)
	}
	compareSteps(t, got)
}

const dtokenSecret = "kd-delegation-secret"

var dtokenUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

// startSASLKafka starts a Kafka 4.4 node on SASL_PLAINTEXT with
// dtokenUsers (PLAIN; the broker itself logs in as admin), SCRAM-SHA-512
// for token logins and dtokenSecret; extra are more server properties.
func startSASLKafka(t *testing.T, ctx context.Context, extra ...string) string {
	script, err := filepath.Abs(filepath.Join("..", "scripts", "kafka-broker.sh"))
	if err != nil {
		t.Fatal(err)
	}
	l1, _ := net.Listen("tcp", "127.0.0.1:0")
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	port, cport := l1.Addr().(*net.TCPAddr).Port, l2.Addr().(*net.TCPAddr).Port
	l1.Close()
	l2.Close()
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret"`
	for _, u := range slices.Sorted(maps.Keys(dtokenUsers)) {
		jaas += fmt.Sprintf(` user_%s="%s"`, u, dtokenUsers[u])
	}
	args := append([]string{script, strconv.Itoa(port), t.TempDir(), strconv.Itoa(cport),
		fmt.Sprintf("listeners=SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, cport),
		fmt.Sprintf("advertised.listeners=SASL_PLAINTEXT://127.0.0.1:%d", port),
		"listener.security.protocol.map=SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name=SASL_PLAINTEXT",
		"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512",
		"sasl.mechanism.inter.broker.protocol=PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config=" + jaas + ";",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"delegation.token.secret.key=" + dtokenSecret}, extra...)
	return startKafkaCmd(t, ctx, exec.Command("bash", args...), port)
}

// startSASLMini is startSASLKafka's minikafka.
func startSASLMini(t *testing.T, ctx context.Context, extra ...minikafka.Option) string {
	mini, err := minikafka.Start(ctx, append([]minikafka.Option{minikafka.WithListenAddr("127.0.0.1:0"), minikafka.WithDataDir(t.TempDir()),
		minikafka.WithSASL(dtokenUsers, "PLAIN", "SCRAM-SHA-512"),
		minikafka.WithDelegationTokens(minikafka.DelegationTokenConfig{Secret: dtokenSecret})}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mini.Close() })
	return mini.Addr()
}

// compareSteps reports each step whose answers differ.
func compareSteps(t *testing.T, got [2][]string) {
	t.Helper()
	for i := range max(len(got[0]), len(got[1])) {
		var k, m string
		if i < len(got[0]) {
			k = got[0][i]
		}
		if i < len(got[1]) {
			m = got[1][i]
		}
		if k != m {
			t.Errorf("step %d differs\n  kafka:     %s\n  minikafka: %s", i, k, m)
		} else {
			t.Logf("same: %s", k)
		}
	}
}

// TestKafkaDiffDelegationTokenACLs is the same comparison with the
// authorizer on (admin the super user): a token for another owner needs
// CreateTokens on the USER resource User:<owner>; others' tokens are
// listed with DescribeTokens on their owner's USER resource.
func TestKafkaDiffDelegationTokenACLs(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not on PATH: Apache Kafka cannot run here; " + installHint)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The controller listener is PLAINTEXT: its ANONYMOUS peer (the node
	// itself) must be a super user too.
	kafkaAddr := startSASLKafka(t, ctx, "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin;User:ANONYMOUS")
	mini := startSASLMini(t, ctx, minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}))
	var got [2][]string
	for i, addr := range []string{kafkaAddr, mini} {
		got[i] = dtokenACLScript(t, ctx, addr)
	}
	compareSteps(t, got)
}

func dtokenACLScript(t *testing.T, ctx context.Context, addr string) []string {
	var out []string
	note := func(step string, v any) {
		b, _ := json.Marshal(v)
		out = append(out, step+": "+string(b))
	}
	login := func(u string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: u, Pass: dtokenUsers[u]}.AsMechanism()),
			kgo.RequestRetries(2), kgo.RetryTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	admin, alice, bob := login("admin"), login("alice"), login("bob")
	for try := 0; ; try++ {
		if err := admin.Ping(ctx); err == nil || try == 50 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	create := func(cl *kgo.Client, owner string) any {
		r := kmsg.NewPtrCreateDelegationTokenRequest()
		r.Version = 3
		if owner != "" {
			r.OwnerPrincipalType, r.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr(owner)
		}
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: create: %v", addr, err)
		}
		return map[string]any{"err": errName(resp.ErrorCode), "owner": resp.PrincipalName, "requester": resp.TokenRequesterPrincipalName,
			"timestamps": [3]bool{resp.IssueTimestamp > 0, resp.ExpiryTimestamp > 0, resp.MaxTimestamp > 0}}
	}
	count := func(cl *kgo.Client) int {
		r := kmsg.NewPtrDescribeDelegationTokenRequest()
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: describe: %v", addr, err)
		}
		return len(resp.TokenDetails)
	}
	settle := func(n int) {
		for try := 0; try < 100 && count(admin) != n; try++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	grant := func(op kmsg.ACLOperation, user string) any {
		req := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeUser, "User:"+user, kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
		resp, err := req.RequestWith(ctx, admin)
		if err != nil {
			t.Fatalf("%s: create ACL: %v", addr, err)
		}
		// Kafka's authorizer learns the ACL from the metadata log, later
		// than CreateAcls answers: wait until DescribeAcls (answered from
		// that same authorizer) lists it. A fixed sleep was too short
		// under CI load.
		for try := 0; try < 100; try++ {
			d := kmsg.NewPtrDescribeACLsRequest()
			d.ResourceType, d.ResourceName, d.ResourcePatternType = kmsg.ACLResourceTypeUser, kmsg.StringPtr("User:"+user), kmsg.ACLResourcePatternTypeLiteral
			d.Principal, d.Host, d.Operation, d.PermissionType = kmsg.StringPtr("User:alice"), kmsg.StringPtr("*"), op, kmsg.ACLPermissionTypeAllow
			if dr, err := d.RequestWith(ctx, admin); err == nil && len(dr.Resources) > 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		return errName(resp.Results[0].ErrorCode)
	}
	note("alice creates for bob without CreateTokens", create(alice, "bob"))
	note("alice creates her own", create(alice, ""))
	note("grant CreateTokens on User:bob", grant(kmsg.ACLOperationCreateTokens, "bob"))
	note("alice creates for bob", create(alice, "bob"))
	note("bob creates his own", create(bob, ""))
	settle(3)
	note("admin sees", count(admin))
	note("alice sees", count(alice))
	note("bob sees", count(bob))
	note("grant DescribeTokens on User:bob", grant(kmsg.ACLOperationDescribeTokens, "bob"))
	note("alice sees with DescribeTokens on bob", count(alice))
	return out
}

// dtokenScript runs the token questions against one broker and returns
// one line per answer.
func dtokenScript(t *testing.T, ctx context.Context, addr string, users map[string]string, secret string) []string {
	var out []string
	note := func(step string, v any) {
		b, _ := json.Marshal(v)
		out = append(out, step+": "+string(b))
	}
	client := func(mech sasl.Mechanism) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(mech), kgo.RequestRetries(2), kgo.RetryTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	// Kafka's SASL listener may need a moment after the port opens.
	alice := client(plain.Auth{User: "alice", Pass: users["alice"]}.AsMechanism())
	for try := 0; ; try++ {
		if err := alice.Ping(ctx); err == nil || try == 50 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	bob := client(plain.Auth{User: "bob", Pass: users["bob"]}.AsMechanism())

	create := func(cl *kgo.Client, version int16, renewers ...string) *kmsg.CreateDelegationTokenResponse {
		r := kmsg.NewPtrCreateDelegationTokenRequest()
		r.Version = version
		for _, rn := range renewers {
			typ, name, _ := strings.Cut(rn, ":")
			x := kmsg.NewCreateDelegationTokenRequestRenewer()
			x.PrincipalType, x.PrincipalName = typ, name
			r.Renewers = append(r.Renewers, x)
		}
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: create: %v", addr, err)
		}
		return resp
	}
	createOut := func(c *kmsg.CreateDelegationTokenResponse) map[string]any {
		mac := hmac.New(sha512.New, []byte(secret))
		mac.Write([]byte(c.TokenID))
		return map[string]any{"err": errName(c.ErrorCode), "owner": c.PrincipalType + ":" + c.PrincipalName,
			"requester":    c.TokenRequesterPrincipalType + ":" + c.TokenRequesterPrincipalName,
			"expiry-issue": c.ExpiryTimestamp - c.IssueTimestamp, "max-issue": c.MaxTimestamp - c.IssueTimestamp,
			"hmac is HmacSHA512(secret, id)": c.TokenID != "" && hmac.Equal(mac.Sum(nil), c.HMAC),
			"issue>0":                        c.IssueTimestamp > 0}
	}
	tok := create(alice, 3, "User:bob")
	note("create v3 with renewer bob", createOut(tok))
	note("create v1", createOut(create(alice, 1)))
	note("create with a group renewer", createOut(create(alice, 3, "Group:g")))

	describe := func(cl *kgo.Client, owners ...string) any {
		r := kmsg.NewPtrDescribeDelegationTokenRequest()
		r.Version = 3
		for _, o := range owners {
			typ, name, _ := strings.Cut(o, ":")
			x := kmsg.NewDescribeDelegationTokenRequestOwner()
			x.PrincipalType, x.PrincipalName = typ, name
			r.Owners = append(r.Owners, x)
		}
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: describe: %v", addr, err)
		}
		var ds []any
		for _, d := range resp.TokenDetails {
			var rn []string
			for _, x := range d.Renewers {
				rn = append(rn, x.PrincipalType+":"+x.PrincipalName)
			}
			ds = append(ds, map[string]any{"owner": d.PrincipalType + ":" + d.PrincipalName,
				"requester": d.TokenRequesterPrincipalType + ":" + d.TokenRequesterPrincipalName,
				"renewers":  rn, "hmac": len(d.HMAC), "max-issue": d.MaxTimestamp - d.IssueTimestamp})
		}
		slices.SortFunc(ds, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		return map[string]any{"err": errName(resp.ErrorCode), "tokens": ds}
	}
	// Kafka's brokers learn of a token from the metadata log a moment
	// after CreateDelegationToken answers; wait until it shows.
	settle := func(n int) {
		for try := 0; try < 100; try++ {
			r := kmsg.NewPtrDescribeDelegationTokenRequest()
			if resp, err := r.RequestWith(ctx, alice); err == nil && len(resp.TokenDetails) == n {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: alice never sees %d tokens", addr, n)
	}
	settle(2)
	note("alice describes", describe(alice))
	note("bob describes", describe(bob))
	note("describe owners bob", describe(alice, "User:bob"))

	renew := func(cl *kgo.Client, h []byte, period int64) any {
		r := kmsg.NewPtrRenewDelegationTokenRequest()
		r.Version, r.HMAC, r.RenewTimeMillis = 2, h, period
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: renew: %v", addr, err)
		}
		return map[string]any{"err": errName(resp.ErrorCode), "expiry set": resp.ExpiryTimestamp > 0}
	}
	expire := func(cl *kgo.Client, h []byte, period int64) *kmsg.ExpireDelegationTokenResponse {
		r := kmsg.NewPtrExpireDelegationTokenRequest()
		r.Version, r.HMAC, r.ExpiryPeriodMillis = 2, h, period
		resp, err := r.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("%s: expire: %v", addr, err)
		}
		return resp
	}
	note("bob (renewer) renews", renew(bob, tok.HMAC, 3_600_000))
	note("renew an unknown HMAC", renew(alice, []byte("kd-unknown"), -1))
	other := create(bob, 3)
	settle(3)
	note("alice renews bob's token", renew(alice, other.HMAC, -1))

	// The token's own SCRAM login, then a token request over it.
	tokCl := client(scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}.AsSha512Mechanism())
	note("token login", errString(tokCl.Ping(ctx)))
	note("create over the token's connection", createOut(create(tokCl, 3)))
	badCl := client(scram.Auth{User: tok.TokenID, Pass: "wrong", IsToken: true}.AsSha512Mechanism())
	note("token login with a wrong HMAC", errString(badCl.Ping(ctx)))

	// Expire at once (-1), then renew it; expire the other with period 0.
	x := expire(alice, tok.HMAC, -1)
	// Kafka 4.4 answers the time of the removal (its controller source
	// once answered the period itself).
	note("expire -1", map[string]any{"err": errName(x.ErrorCode), "expiry is now": time.Since(time.UnixMilli(x.ExpiryTimestamp)).Abs() < time.Minute})
	settle(2)
	note("renew the removed token", renew(alice, tok.HMAC, -1))
	x = expire(bob, other.HMAC, 0)
	note("expire 0", map[string]any{"err": errName(x.ErrorCode), "expiry>0": x.ExpiryTimestamp > 0})
	time.Sleep(20 * time.Millisecond)
	note("renew the expired token", renew(bob, other.HMAC, -1))
	return out
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, kerr.SaslAuthenticationFailed) {
		return "SASL_AUTHENTICATION_FAILED"
	}
	return err.Error()
}
