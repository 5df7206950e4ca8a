package broker

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/minikafka/minikafka/internal/vfs"
)

var tokenTestUsers = map[string]string{"alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret"}

func scramUser(user string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: user, Pass: tokenTestUsers[user]}.AsSha512Mechanism())
}

// tokenLogin authenticates with a delegation token, as Kafka's clients do:
// the token ID as the user, the HMAC in base64 as the password,
// tokenauth=true.
func tokenLogin(tok kadm.DelegationToken, sha256 bool) kgo.Opt {
	a := scram.Auth{User: tok.TokenID, Pass: base64.StdEncoding.EncodeToString(tok.HMAC), IsToken: true}
	if sha256 {
		return kgo.SASL(a.AsSha256Mechanism())
	}
	return kgo.SASL(a.AsSha512Mechanism())
}

func wantKerr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// kadm creates, renews, expires and describes tokens over SASL/SCRAM; a
// kgo client logging in with a token (tokenauth=true, both SCRAM
// mechanisms) produces and consumes as the owner; a token connection may
// not manage tokens; an expired token is refused at login; the tokens and
// their HMACs outlive a restart.
func TestDelegationTokensKgo(t *testing.T) {
	dir := t.TempDir()
	onDisk := func(c *Config) { c.DataDir, c.FS = dir, vfs.OS{} }
	b, addr, logs := secureBroker(t, &SASLConfig{Users: tokenTestUsers}, nil, onDisk)
	ctx := testCtx(t)
	aliceAdm := kadm.NewClient(newClient(t, addr, scramUser("alice")))

	before := time.Now().Truncate(time.Millisecond)
	tok, err := aliceAdm.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "User", Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Owner.Name != "alice" || tok.TokenRequesterPrincipal.Name != "alice" || len(tok.HMAC) != 64 || tok.TokenID == "" {
		t.Fatalf("token %+v", tok)
	}
	if got := tok.ExpiryTimestamp.Sub(tok.IssueTimestamp); got != 24*time.Hour {
		t.Fatalf("expiry %v after issue, want Kafka's 1 day", got)
	}
	if got := tok.MaxTimestamp.Sub(tok.IssueTimestamp); got != 7*24*time.Hour {
		t.Fatalf("max %v after issue, want Kafka's 7 days", got)
	}
	if tok.IssueTimestamp.Before(before) {
		t.Fatalf("issued %v before the request %v", tok.IssueTimestamp, before)
	}

	// The token's client produces and consumes as alice.
	roundTrip(t, addr, "dt-orders", 5, tokenLogin(tok, false))
	roundTrip(t, addr, "dt-orders-256", 3, tokenLogin(tok, true))
	if !strings.Contains(logs.String(), "user=alice") {
		t.Fatal("no log line names the token's owner as the user")
	}

	// A token connection may not manage tokens (Kafka's allowTokenRequests).
	tokAdm := kadm.NewClient(newClient(t, addr, tokenLogin(tok, false)))
	_, err = tokAdm.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	wantKerr(t, "create over a token connection", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = tokAdm.RenewDelegationToken(ctx, tok.HMAC, 0)
	wantKerr(t, "renew over a token connection", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = tokAdm.DescribeDelegationTokens(ctx)
	wantKerr(t, "describe over a token connection", err, kerr.DelegationTokenRequestNotAllowed)

	// Renew: the renewer may, another user may not; a made-up HMAC is not found.
	bobAdm := kadm.NewClient(newClient(t, addr, scramUser("bob")))
	carolAdm := kadm.NewClient(newClient(t, addr, scramUser("carol")))
	exp, err := bobAdm.RenewDelegationToken(ctx, tok.HMAC, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(exp); d < 59*time.Minute || d > time.Hour {
		t.Fatalf("renewed for an hour, expires in %v", d)
	}
	_, err = carolAdm.RenewDelegationToken(ctx, tok.HMAC, time.Hour)
	wantKerr(t, "carol renews", err, kerr.DelegationTokenOwnerMismatch)
	_, err = bobAdm.ExpireDelegationToken(ctx, []byte("not a token"), 0)
	wantKerr(t, "expire unknown", err, kerr.DelegationTokenNotFound)

	// Describe: owners, requesters and renewers see a token; carol, with
	// no authorizer on, sees every token, as Kafka does without one.
	for name, adm := range map[string]*kadm.Client{"alice": aliceAdm, "bob": bobAdm, "carol": carolAdm} {
		ds, err := adm.DescribeDelegationTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].TokenID != tok.TokenID || string(ds[0].HMAC) != string(tok.HMAC) ||
			len(ds[0].Renewers) != 1 || ds[0].Renewers[0].Name != "bob" {
			t.Fatalf("%s describes %+v", name, ds)
		}
	}
	if ds, err := aliceAdm.DescribeDelegationTokens(ctx, kadm.Principal{Type: "User", Name: "carol"}); err != nil || len(ds) != 0 {
		t.Fatalf("tokens of carol: %+v %v", ds, err)
	}

	// A second token, expired at once (period 0), no longer logs in nor renews.
	tok2, err := aliceAdm.CreateDelegationToken(ctx, kadm.CreateDelegationToken{MaxLifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if got := tok2.MaxTimestamp.Sub(tok2.IssueTimestamp); got != time.Hour || !tok2.ExpiryTimestamp.Equal(tok2.MaxTimestamp) {
		t.Fatalf("max lifetime 1h: max %v, expiry %v", got, tok2.ExpiryTimestamp.Sub(tok2.IssueTimestamp))
	}
	if _, err := aliceAdm.ExpireDelegationToken(ctx, tok2.HMAC, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	_, err = aliceAdm.RenewDelegationToken(ctx, tok2.HMAC, 0)
	wantKerr(t, "renew expired", err, kerr.DelegationTokenExpired)
	expiredCl := newClient(t, addr, tokenLogin(tok2, false), kgo.RequestRetries(0))
	err = expiredCl.Ping(ctx)
	wantKerr(t, "login with an expired token", err, kerr.SaslAuthenticationFailed)

	// Restart: the first token is still there, with the same HMAC, and logs in.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, addr2, _ := secureBroker(t, &SASLConfig{Users: tokenTestUsers}, nil, onDisk)
	ds, err := kadm.NewClient(newClient(t, addr2, scramUser("alice"))).DescribeDelegationTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 {
		t.Fatalf("after restart %d tokens, want 2 (the expired one until the sweep)", len(ds))
	}
	roundTrip(t, addr2, "dt-after-restart", 2, tokenLogin(tok, false))
}

// Without SASL a PLAINTEXT connection has no principal to give a token:
// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (Kafka's allowTokenRequests comes
// first); the program's own request reaches the check that tokens are off,
// DELEGATION_TOKEN_AUTH_DISABLED.
func TestDelegationTokensWithoutSASL(t *testing.T) {
	b := newTestBroker(t)
	addr := listen(t, b)
	ctx := testCtx(t)
	adm := newAdmin(t, addr)
	_, err := adm.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	wantKerr(t, "create over PLAINTEXT", err, kerr.DelegationTokenRequestNotAllowed)
	_, err = adm.DescribeDelegationTokens(ctx)
	wantKerr(t, "describe over PLAINTEXT", err, kerr.DelegationTokenRequestNotAllowed)

	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	cr := serve(t, b, create).(*kmsg.CreateDelegationTokenResponse)
	if cr.ErrorCode != kerr.DelegationTokenAuthDisabled.Code || cr.PrincipalName != "ANONYMOUS" {
		t.Fatalf("create: %v %+v", kerr.ErrorForCode(cr.ErrorCode), cr)
	}
	renew := kmsg.NewPtrRenewDelegationTokenRequest()
	renew.Version = 2
	if r := serve(t, b, renew).(*kmsg.RenewDelegationTokenResponse); r.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Fatalf("renew: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	expire := kmsg.NewPtrExpireDelegationTokenRequest()
	expire.Version = 2
	if r := serve(t, b, expire).(*kmsg.ExpireDelegationTokenResponse); r.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Fatalf("expire: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	describe := kmsg.NewPtrDescribeDelegationTokenRequest()
	describe.Version = 3
	if r := serve(t, b, describe).(*kmsg.DescribeDelegationTokenResponse); r.ErrorCode != kerr.DelegationTokenAuthDisabled.Code {
		t.Fatalf("describe: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// With the authorizer on: a token for another owner needs CreateTokens on
// User:<owner> (the denial is logged); Describe shows others' tokens only
// with DescribeTokens on their owner; a token's connection has its
// owner's ACLs. Renewers must be User principals.
func TestDelegationTokensACLs(t *testing.T) {
	users := map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
	b, addr, logs := secureBroker(t, &SASLConfig{Users: users}, nil, func(c *Config) {
		c.Authorizer = &AuthorizerConfig{SuperUsers: []string{"User:admin"}}
		c.AutoCreateTopics = false
	})
	_ = b
	ctx := testCtx(t)
	login := func(u string) *kadm.Client {
		return kadm.NewClient(newClient(t, addr, kgo.SASL(plain.Auth{User: u, Pass: users[u]}.AsMechanism()),
			kgo.RequestRetries(1), kgo.RetryTimeout(2*time.Second)))
	}
	adminCl := newClient(t, addr, kgo.SASL(plain.Auth{User: "admin", Pass: users["admin"]}.AsMechanism()))
	admin, alice, bob := kadm.NewClient(adminCl), login("alice"), login("bob")

	_, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "bob"}})
	wantKerr(t, "alice creates for bob", err, kerr.DelegationTokenAuthorizationFailed)
	if l := logs.String(); !strings.Contains(l, "authorization denied") || !strings.Contains(l, "resource=USER:User:bob") {
		t.Fatalf("no denial logged for USER:User:bob:\n%s", l)
	}
	_, err = alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Renewers: []kadm.Principal{{Type: "Group", Name: "g"}}})
	wantKerr(t, "group renewer", err, kerr.InvalidPrincipalType)

	// kadm's builder has no USER resource: grant it on the wire.
	grant := func(principal string, op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) {
		req := kmsg.NewPtrCreateACLsRequest()
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
		resp, err := req.RequestWith(ctx, adminCl)
		if err != nil || resp.Results[0].ErrorCode != 0 {
			t.Fatalf("grant %s %v on %v %s: %v %+v", principal, op, rt, name, err, resp)
		}
	}
	grant("User:alice", kmsg.ACLOperationCreateTokens, kmsg.ACLResourceTypeUser, "User:bob")
	bobsTok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{Owner: &kadm.Principal{Type: "User", Name: "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if bobsTok.Owner.Name != "bob" || bobsTok.TokenRequesterPrincipal.Name != "alice" {
		t.Fatalf("token for bob: %+v", bobsTok)
	}
	bobOwn, err := bob.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}

	count := func(adm *kadm.Client) int {
		ds, err := adm.DescribeDelegationTokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	if n := count(alice); n != 1 { // the one she requested
		t.Fatalf("alice sees %d tokens, want 1", n)
	}
	if n := count(bob); n != 2 {
		t.Fatalf("bob sees %d tokens, want 2", n)
	}
	if n := count(admin); n != 2 {
		t.Fatalf("admin sees %d tokens, want 2", n)
	}
	grant("User:alice", kmsg.ACLOperationDescribeTokens, kmsg.ACLResourceTypeUser, "User:bob")
	if n := count(alice); n != 2 {
		t.Fatalf("alice with DescribeTokens on bob sees %d tokens, want 2", n)
	}

	// bob may write "bobs"; his token's connection is bob's.
	mustCreate(t, admin, "bobs", 1, nil)
	mustCreateACLs(t, admin, kadm.NewACLs().Allow("User:bob").AllowHosts().Topics("bobs").
		Operations(kadm.OpWrite, kadm.OpDescribe, kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	mustCreateACLs(t, admin, kadm.NewACLs().Allow("User:bob").AllowHosts().Groups("*").
		Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	tokCl := newClient(t, addr, tokenLogin(bobOwn, false), kgo.DefaultProduceTopic("bobs"))
	if err := tokCl.ProduceSync(ctx, &kgo.Record{Value: []byte("by token")}).FirstErr(); err != nil {
		t.Fatalf("bob's token produces to bobs: %v", err)
	}
	aliceTok, err := alice.CreateDelegationToken(ctx, kadm.CreateDelegationToken{})
	if err != nil {
		t.Fatal(err)
	}
	aliceTokCl := newClient(t, addr, tokenLogin(aliceTok, false), kgo.DefaultProduceTopic("bobs"),
		kgo.RequestRetries(1), kgo.RecordDeliveryTimeout(2*time.Second))
	err = aliceTokCl.ProduceSync(ctx, &kgo.Record{Value: []byte("by alice's token")}).FirstErr()
	wantKerr(t, "alice's token produces to bobs", err, kerr.TopicAuthorizationFailed)
}

// The exact answers, on the wire: the refusals' timestamps (-1 from the
// broker's checks, zero from the controller's), the principals echoed,
// an empty owners list listing nothing, and a negative expiry period
// answered with the time of removal.
func TestDelegationTokenWireAnswers(t *testing.T) {
	_, addr, _ := secureBroker(t, &SASLConfig{Users: tokenTestUsers}, nil)
	ctx := testCtx(t)
	alice := newClient(t, addr, scramUser("alice"))

	create := kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	rn := kmsg.NewCreateDelegationTokenRequestRenewer()
	rn.PrincipalType, rn.PrincipalName = "Group", "g"
	create.Renewers = append(create.Renewers, rn)
	cr, err := create.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if cr.ErrorCode != kerr.InvalidPrincipalType.Code || cr.IssueTimestamp != 0 || cr.ExpiryTimestamp != 0 || cr.MaxTimestamp != 0 ||
		cr.PrincipalType != "User" || cr.PrincipalName != "alice" || cr.TokenRequesterPrincipalName != "alice" || cr.TokenID != "" {
		t.Fatalf("group renewer: %v %+v", kerr.ErrorForCode(cr.ErrorCode), cr)
	}

	create = kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 1
	create.MaxLifetimeMillis = 60_000
	cr, err = create.RequestWith(ctx, alice)
	if err != nil || cr.ErrorCode != 0 {
		t.Fatalf("create v1: %v %v", err, cr)
	}
	if cr.MaxTimestamp-cr.IssueTimestamp != 60_000 || cr.ExpiryTimestamp != cr.MaxTimestamp || len(cr.HMAC) != 64 {
		t.Fatalf("create v1: %+v", cr)
	}
	tok := kadm.DelegationToken{TokenID: cr.TokenID, HMAC: cr.HMAC}

	describe := kmsg.NewPtrDescribeDelegationTokenRequest()
	describe.Version = 3
	describe.Owners = []kmsg.DescribeDelegationTokenRequestOwner{}
	if dr, err := describe.RequestWith(ctx, alice); err != nil || dr.ErrorCode != 0 || len(dr.TokenDetails) != 0 {
		t.Fatalf("describe with an empty owners list: %v %+v", err, dr)
	}
	describe.Owners = nil
	dr, err := describe.RequestWith(ctx, alice)
	if err != nil || dr.ErrorCode != 0 || len(dr.TokenDetails) != 1 {
		t.Fatalf("describe all: %v %+v", err, dr)
	}
	if d := dr.TokenDetails[0]; d.TokenID != tok.TokenID || d.TokenRequesterPrincipalName != "alice" || d.MaxTimestamp != cr.MaxTimestamp {
		t.Fatalf("described %+v", d)
	}

	// Over the token's own connection: the broker's refusal, -1.
	tokCl := newClient(t, addr, tokenLogin(tok, false))
	create = kmsg.NewPtrCreateDelegationTokenRequest()
	create.Version = 3
	if cr, err := create.RequestWith(ctx, tokCl); err != nil || cr.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code ||
		cr.IssueTimestamp != -1 || cr.ExpiryTimestamp != -1 || cr.MaxTimestamp != -1 || cr.PrincipalName != "alice" {
		t.Fatalf("create over a token connection: %v %+v", err, cr)
	}
	renew := kmsg.NewPtrRenewDelegationTokenRequest()
	renew.Version, renew.HMAC = 2, tok.HMAC
	if rr, err := renew.RequestWith(ctx, tokCl); err != nil || rr.ErrorCode != kerr.DelegationTokenRequestNotAllowed.Code || rr.ExpiryTimestamp != -1 {
		t.Fatalf("renew over a token connection: %v %+v", err, rr)
	}

	expire := kmsg.NewPtrExpireDelegationTokenRequest()
	expire.Version, expire.HMAC, expire.ExpiryPeriodMillis = 2, tok.HMAC, -1
	before := time.Now().UnixMilli()
	if er, err := expire.RequestWith(ctx, alice); err != nil || er.ErrorCode != 0 || er.ExpiryTimestamp < before || er.ExpiryTimestamp > time.Now().UnixMilli() {
		t.Fatalf("expire now: %v %+v", err, er)
	}
	if er, err := expire.RequestWith(ctx, alice); err != nil || er.ErrorCode != kerr.DelegationTokenNotFound.Code || er.ExpiryTimestamp != 0 {
		t.Fatalf("expire again: %v %+v", err, er)
	}
	// The removed token no longer logs in.
	err = newClient(t, addr, tokenLogin(tok, true), kgo.RequestRetries(0)).Ping(ctx)
	wantKerr(t, "login with a removed token", err, kerr.SaslAuthenticationFailed)
}
