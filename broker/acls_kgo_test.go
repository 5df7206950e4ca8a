package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/minikafka/minikafka/internal/vfs"
)

var aclTestUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}

// aclBroker serves a SASL/PLAIN broker with the authorizer on and admin as
// super user; mod may change the config (a data dir on disk).
func aclBroker(t *testing.T, mod ...func(*Config)) (*Broker, string) {
	t.Helper()
	b, addr, _ := secureBroker(t, &SASLConfig{Users: aclTestUsers, Mechanisms: []string{SASLPlain}}, nil, append([]func(*Config){func(c *Config) {
		c.Authorizer = &AuthorizerConfig{SuperUsers: []string{"User:admin"}}
		c.AutoCreateTopics = false
	}}, mod...)...)
	return b, addr
}

func userClient(t *testing.T, addr, user string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, addr, append([]kgo.Opt{kgo.SASL(plain.Auth{User: user, Pass: aclTestUsers[user]}.AsMechanism()),
		kgo.RequestRetries(2), kgo.RetryTimeout(3 * time.Second)}, opts...)...)
}

func mustCreateACLs(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(testCtx(t), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create ACL %+v: %v %s", r, r.Err, r.ErrMessage)
		}
	}
}

// kadm manages ACLs: creation (with Kafka's INVALID_REQUEST for bad
// bindings), description by filter, deletion; the ACLs outlive a restart
// and a damaged file stops the start naming it.
func TestACLsManagedByKadm(t *testing.T) {
	dir := t.TempDir()
	onDisk := func(c *Config) { c.DataDir, c.FS = dir, vfs.OS{} }
	_, addr := aclBroker(t, onDisk)
	adminCl := userClient(t, addr, "admin")
	adm := kadm.NewClient(adminCl)
	ctx := testCtx(t)

	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpRead, kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Groups("app-").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternPrefixed))
	mustCreateACLs(t, adm, kadm.NewACLs().Deny("User:bob").DenyHosts("10.1.1.1").Topics("orders").Operations(kadm.OpAll).ResourcePatternType(kadm.ACLPatternLiteral))

	// Bad bindings, on the wire as a client could send them.
	raw := kmsg.NewPtrCreateACLsRequest()
	for _, c := range []struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
		p    string
		op   kmsg.ACLOperation
	}{
		{kmsg.ACLResourceTypeCluster, "not-the-cluster", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationAlter},
		{kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeMatch, "User:alice", kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "alice", kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationAny},
		{kmsg.ACLResourceTypeAny, "t", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeTopic, "", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead},
	} {
		cr := kmsg.NewCreateACLsRequestCreation()
		cr.ResourceType, cr.ResourceName, cr.ResourcePatternType, cr.Principal, cr.Host = c.rt, c.name, c.pt, c.p, "*"
		cr.Operation, cr.PermissionType = c.op, kmsg.ACLPermissionTypeAllow
		raw.Creations = append(raw.Creations, cr)
	}
	resp, err := raw.RequestWith(ctx, adminCl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != len(raw.Creations) {
		t.Fatalf("%d results", len(resp.Results))
	}
	for i, r := range resp.Results {
		if r.ErrorCode != kerr.InvalidRequest.Code || deref(r.ErrorMessage) == "" {
			t.Errorf("bad binding %d: %v %q", i, kerr.ErrorForCode(r.ErrorCode), deref(r.ErrorMessage))
		}
	}

	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if n := countDescribed(described); n != 4 {
		t.Fatalf("described %d ACLs, want 4: %+v", n, described)
	}
	match, err := adm.DescribeACLs(ctx, kadm.NewACLs().Topics("orders").Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternMatch))
	if err != nil {
		t.Fatal(err)
	}
	if n := countDescribed(match); n != 3 {
		t.Fatalf("MATCH orders: %d ACLs, want 3", n)
	}

	// Restart on the same dir: the ACLs are still there.
	_, addr2 := aclBroker(t, onDisk)
	adm2 := kadm.NewClient(userClient(t, addr2, "admin"))
	again, err := adm2.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	if n := countDescribed(again); n != 4 {
		t.Fatalf("after restart %d ACLs, want 4", n)
	}
	deleted, err := adm2.DeleteACLs(ctx, kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil {
		t.Fatal(err)
	}
	nDel := 0
	for _, d := range deleted {
		if d.Err != nil {
			t.Fatal(d.Err)
		}
		nDel += len(d.Deleted)
	}
	if nDel != 2 {
		t.Fatalf("deleted %d, want 2", nDel)
	}

	// A damaged file stops the start, naming it.
	file := filepath.Join(dir, aclFile)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 0x01
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{DataDir: dir, NodeID: 1, DefaultPartitions: 1, Authorizer: &AuthorizerConfig{}})
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("start on a damaged ACL file: %v", err)
	}
}

func countDescribed(rs kadm.DescribeACLsResults) int {
	n := 0
	for _, r := range rs {
		n += len(r.Described)
	}
	return n
}

// A producer without WRITE is refused with TOPIC_AUTHORIZATION_FAILED and
// succeeds once granted, on the same connection (the cached decision is
// dropped with the ACL change); a super user writes anything.
func TestACLProduceNeedsWrite(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "orders", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)

	alice := userClient(t, addr, "alice", kgo.DefaultProduceTopic("orders"), kgo.DisableIdempotentWrite())
	err := alice.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce without WRITE: %v", err)
	}
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	if err := alice.ProduceSync(ctx, &kgo.Record{Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatalf("produce with WRITE: %v", err)
	}
	// Deny wins over the allow.
	mustCreateACLs(t, adm, kadm.NewACLs().Deny("User:alice").DenyHosts().Topics("ord").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternPrefixed))
	if err := alice.ProduceSync(ctx, &kgo.Record{Value: []byte("z")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce under a prefixed DENY: %v", err)
	}
	if err := userClient(t, addr, "admin", kgo.DefaultProduceTopic("orders")).ProduceSync(ctx, &kgo.Record{Value: []byte("s")}).FirstErr(); err != nil {
		t.Fatalf("super user: %v", err)
	}
	// Exactly the two permitted records are in the log.
	if hw := b.lookupTopic("orders", [16]byte{}).partition(0).log.HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d, want 2", hw)
	}
}

// KIP-679: an idempotent producer needs IDEMPOTENT_WRITE on the cluster
// or WRITE on some topic; with only READ, InitProducerId is
// CLUSTER_AUTHORIZATION_FAILED.
func TestACLIdempotentProducer(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "events", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:bob").AllowHosts().Topics("events").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	ipid := kmsg.NewPtrInitProducerIDRequest()
	ipid.TransactionTimeoutMillis = 60000
	resp, err := ipid.RequestWith(ctx, userClient(t, addr, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("InitProducerId with READ only: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:bob").AllowHosts().Topics("events").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	bob := userClient(t, addr, "bob", kgo.DefaultProduceTopic("events"))
	if err := bob.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("idempotent produce with WRITE on the topic: %v", err)
	}
}

// A consumer needs READ on the topic and READ on its group.
func TestACLConsumerNeedsGroupRead(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "orders", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	if err := userClient(t, addr, "admin", kgo.DefaultProduceTopic("orders")).ProduceSync(ctx, &kgo.Record{Value: []byte("r1")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))

	// The group coordinator refuses JoinGroup, OffsetFetch and OffsetCommit.
	alice := userClient(t, addr, "alice")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "app-1", "consumer", 10000, 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	// kgo first asks FindCoordinator, which needs DESCRIBE on the group.
	if _, err := join.RequestWith(ctx, alice); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("JoinGroup without group READ: %v", err)
	}
	jr, err := join.RequestWith(ctx, alice.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if jr.ErrorCode != kerr.GroupAuthorizationFailed.Code {
		t.Fatalf("JoinGroup without group READ, sent to the broker: %v", kerr.ErrorForCode(jr.ErrorCode))
	}
	if _, err := kadm.NewClient(alice).FetchOffsets(ctx, "app-1"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Fatalf("OffsetFetch without group DESCRIBE: %v", err)
	}
	// A kgo group consumer reports the refusal.
	cons := userClient(t, addr, "alice", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("app-1"))
	pollCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var sawErr error
	for sawErr == nil && pollCtx.Err() == nil {
		f := cons.PollFetches(pollCtx)
		f.EachError(func(_ string, _ int32, err error) {
			if errors.Is(err, kerr.GroupAuthorizationFailed) {
				sawErr = err
			}
		})
		if len(f.Records()) > 0 {
			t.Fatal("consumed without group READ")
		}
	}
	if sawErr == nil {
		t.Fatal("kgo consumer saw no GROUP_AUTHORIZATION_FAILED")
	}
	cons.Close()

	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Groups("app-").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternPrefixed))
	ok := userClient(t, addr, "alice", kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("app-1"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	f := ok.PollFetches(ctx)
	if errs := f.Errors(); len(errs) > 0 || len(f.Records()) != 1 {
		t.Fatalf("with group READ: %v, %d records", errs, len(f.Records()))
	}
	if err := ok.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit with READ on group and topic: %v", err)
	}
}

// A transactional producer without WRITE on its transactional ID fails
// with TRANSACTIONAL_ID_AUTHORIZATION_FAILED; with it, it commits.
func TestACLTransactionalID(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "orders", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral))

	tx := userClient(t, addr, "alice", kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("orders"))
	err := tx.BeginTransaction()
	if err == nil {
		err = tx.ProduceSync(ctx, &kgo.Record{Value: []byte("t")}).FirstErr()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("transactional produce without the ID's WRITE: %v", err)
	}
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().TransactionalIDs("tx-").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternPrefixed))
	tx2 := userClient(t, addr, "alice", kgo.TransactionalID("tx-2"), kgo.DefaultProduceTopic("orders"))
	if err := tx2.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx2.ProduceSync(ctx, &kgo.Record{Value: []byte("t")}).FirstErr(); err != nil {
		t.Fatalf("transactional produce with the ID's WRITE: %v", err)
	}
	if err := tx2.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
}

// Metadata lists only the topics the principal may describe, a named one
// it may not is TOPIC_AUTHORIZATION_FAILED, and the authorized operations
// (KIP-430) are the principal's.
func TestACLMetadataHidesTopics(t *testing.T) {
	b, addr := aclBroker(t)
	for _, n := range []string{"public-a", "public-b", "secret"} {
		createTopic(t, b, n, 1)
	}
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("public-").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternPrefixed))
	alice := userClient(t, addr, "alice")
	topics, err := kadm.NewClient(alice).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); !reflect.DeepEqual(names, []string{"public-a", "public-b"}) {
		t.Fatalf("alice sees %v", names)
	}
	md := kmsg.NewPtrMetadataRequest()
	for _, n := range []string{"public-a", "secret", "missing"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(n)
		md.Topics = append(md.Topics, rt)
	}
	md.IncludeTopicAuthorizedOperations = true
	resp, err := md.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int16{"public-a": 0, "secret": kerr.TopicAuthorizationFailed.Code, "missing": kerr.TopicAuthorizationFailed.Code}
	for _, tp := range resp.Topics {
		if tp.ErrorCode != want[*tp.Topic] {
			t.Errorf("%s: %v", *tp.Topic, kerr.ErrorForCode(tp.ErrorCode))
		}
		if *tp.Topic == "public-a" && tp.AuthorizedOperations != 1<<3|1<<8 { // READ and the DESCRIBE it implies
			t.Errorf("public-a authorized operations %b", tp.AuthorizedOperations)
		}
	}
}

// Every API a client without any ACL sends is refused with an
// authorization error (or answers with nothing it may not see), so no API
// is left unchecked; ApiVersions, the SASL exchange, telemetry and
// DescribeCluster need no permission, as in Kafka.
func TestACLEveryAPIChecks(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "t", 1)
	ctx := testCtx(t)
	if err := userClient(t, addr, "admin", kgo.DefaultProduceTopic("t")).ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// A group "g" with an offset and a transaction "x", so that the
	// listings have something to hide.
	adminAdm := kadm.NewClient(userClient(t, addr, "admin"))
	if _, err := adminAdm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0})); err != nil {
		t.Fatal(err)
	}
	tx := userClient(t, addr, "admin", kgo.TransactionalID("x"), kgo.DefaultProduceTopic("t"))
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Value: []byte("in txn")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if groups, err := adminAdm.ListGroups(ctx); err != nil || len(groups) != 1 {
		t.Fatalf("the admin lists %v (%v)", groups, err)
	}
	if txns, err := adminAdm.ListTransactions(ctx, nil, nil); err != nil || len(txns) != 1 {
		t.Fatalf("the admin lists transactions %v (%v)", txns, err)
	}
	bob := userClient(t, addr, "bob")
	free := map[int16]bool{17: true, 18: true, 36: true, 60: true, 71: true, 72: true,
		// A principal manages its own delegation tokens without ACLs;
		// others' need CreateTokens/DescribeTokens (TestDelegationTokensACLs).
		38: true, 39: true, 40: true, 41: true}
	const (
		topicAuth   = 29 // TOPIC_AUTHORIZATION_FAILED
		groupAuth   = 30 // GROUP_AUTHORIZATION_FAILED
		clusterAuth = 31 // CLUSTER_AUTHORIZATION_FAILED
		txnAuth     = 53 // TRANSACTIONAL_ID_AUTHORIZATION_FAILED
		listing     = -1 // answers an empty list
	)
	// What Kafka answers each API here (KafkaApis): the first check that
	// fails for a request naming topic t, group g and transactional ID x.
	want := map[int16]int16{
		0: topicAuth, 1: topicAuth, 2: topicAuth, 3: topicAuth, 8: groupAuth, 9: groupAuth, 10: groupAuth,
		11: groupAuth, 12: groupAuth, 13: groupAuth, 14: groupAuth, 15: groupAuth, 16: listing,
		19: topicAuth, 20: topicAuth, 21: topicAuth, 22: clusterAuth, 23: topicAuth, 24: clusterAuth /* v4+: CLUSTER_ACTION */, 25: txnAuth,
		26: txnAuth, 27: clusterAuth, 28: txnAuth, 29: clusterAuth, 30: clusterAuth, 31: clusterAuth,
		32: topicAuth, 33: topicAuth, 34: clusterAuth, 35: clusterAuth, 37: topicAuth, 42: groupAuth,
		43: clusterAuth, 44: topicAuth, 45: clusterAuth, 46: clusterAuth, 47: groupAuth, 48: clusterAuth,
		49: clusterAuth, 50: clusterAuth, 51: clusterAuth, 55: clusterAuth, 57: clusterAuth, 61: topicAuth,
		65: txnAuth, 66: listing, 68: groupAuth, 69: groupAuth, 74: clusterAuth, 75: topicAuth,
		76: groupAuth, 77: groupAuth, 78: groupAuth, 79: groupAuth, 90: groupAuth, 91: groupAuth, 92: groupAuth,
	}
	for _, a := range apis {
		if free[a.key] {
			continue
		}
		code, ok := want[a.key]
		if !ok {
			t.Errorf("key %d: no expected authorization answer; add it to this test", a.key)
			continue
		}
		req := aclProbeRequest(a.key, a.max, b.lookupTopic("t", [16]byte{}).id)
		resp, err := bob.Broker(1).Request(ctx, req)
		if err != nil {
			t.Errorf("key %d: %v", a.key, err)
			continue
		}
		if code == listing {
			if !emptyListing(resp) {
				t.Errorf("key %d: listed %+v", a.key, resp)
			}
			continue
		}
		if !hasCode(reflect.ValueOf(resp), code) {
			t.Errorf("key %d (%T) v%d: no %s in %+v", a.key, req, req.GetVersion(), kerr.ErrorForCode(code), resp)
		}
	}
}

// aclProbeRequest is a request of key naming topic "t", group "g" and
// transactional ID "x".
func aclProbeRequest(key, version int16, topicID [16]byte) kmsg.Request {
	req := kmsg.RequestForKey(key)
	if req == nil {
		return nil
	}
	req.SetVersion(version)
	v := reflect.ValueOf(req).Elem()
	setString := func(name, val string) {
		if f := v.FieldByName(name); f.IsValid() {
			switch {
			case f.Kind() == reflect.String:
				f.SetString(val)
			case f.Kind() == reflect.Ptr && f.Type().Elem().Kind() == reflect.String:
				f.Set(reflect.ValueOf(&val))
			}
		}
	}
	for _, n := range []string{"Group", "GroupID"} {
		setString(n, "g")
	}
	for _, n := range []string{"TransactionalID", "TransactionID"} {
		setString(n, "x")
	}
	setString("CoordinatorKey", "g")
	if f := v.FieldByName("CoordinatorKeys"); f.IsValid() {
		f.Set(reflect.ValueOf([]string{"g"}))
	}
	if f := v.FieldByName("Groups"); f.IsValid() && f.Type() == reflect.TypeOf([]string{}) {
		f.Set(reflect.ValueOf([]string{"g"}))
	}
	// One topic "t", partition 0, wherever the request has a topic list.
	if f := v.FieldByName("Topics"); f.IsValid() && f.Kind() == reflect.Slice {
		el := reflect.New(f.Type().Elem()).Elem()
		if df := el.Addr().MethodByName("Default"); df.IsValid() {
			df.Call(nil)
		}
		if tf := el.FieldByName("TopicID"); tf.IsValid() {
			tf.Set(reflect.ValueOf(topicID))
		}
		if tf := el.FieldByName("Topic"); tf.IsValid() {
			switch tf.Kind() {
			case reflect.String:
				tf.SetString("t")
			case reflect.Ptr:
				s := "t"
				tf.Set(reflect.ValueOf(&s))
			}
		}
		if pf := el.FieldByName("Partitions"); pf.IsValid() && pf.Kind() == reflect.Slice {
			pe := reflect.New(pf.Type().Elem()).Elem()
			if pe.Kind() == reflect.Struct {
				if df := pe.Addr().MethodByName("Default"); df.IsValid() {
					df.Call(nil)
				}
			}
			pf.Set(reflect.Append(pf, pe))
		}
		f.Set(reflect.Append(f, el))
	}
	if f := v.FieldByName("Resources"); f.IsValid() && f.Kind() == reflect.Slice {
		el := reflect.New(f.Type().Elem()).Elem()
		if rt := el.FieldByName("ResourceType"); rt.IsValid() {
			rt.Set(reflect.ValueOf(kmsg.ConfigResourceTypeTopic).Convert(rt.Type()))
		}
		if rn := el.FieldByName("ResourceName"); rn.IsValid() {
			rn.SetString("t")
		}
		f.Set(reflect.Append(f, el))
	}
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		r.Acks = -1
		r.TransactionID = nil
	case *kmsg.FetchRequest:
		r.MaxWaitMillis = 0
		r.SessionEpoch = -1
	case *kmsg.CreateTopicsRequest:
		r.Topics[0].NumPartitions, r.Topics[0].ReplicationFactor = 1, 1
	case *kmsg.OffsetFetchRequest:
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = "g"
		r.Groups = []kmsg.OffsetFetchRequestGroup{g}
	case *kmsg.DescribeTransactionsRequest:
		r.TransactionalIDs = []string{"x"}
	case *kmsg.DescribeShareGroupOffsetsRequest:
		g := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		g.GroupID = "g"
		r.Groups = []kmsg.DescribeShareGroupOffsetsRequestGroup{g}
	case *kmsg.ShareGroupDescribeRequest:
		r.GroupIDs = []string{"g"}
	case *kmsg.ConsumerGroupHeartbeatRequest:
		r.MemberEpoch, r.RebalanceTimeoutMillis = 0, 10000
		r.SubscribedTopicNames = []string{"t"}
	case *kmsg.ShareGroupHeartbeatRequest:
		r.MemberEpoch = 0
		r.MemberID = "m"
		r.SubscribedTopicNames = []string{"t"}
	case *kmsg.DeleteTopicsRequest:
		r.TopicNames = []string{"t"}
		if version >= 6 {
			tp := kmsg.NewDeleteTopicsRequestTopic()
			tp.Topic = kmsg.StringPtr("t")
			r.Topics = []kmsg.DeleteTopicsRequestTopic{tp}
		}
	case *kmsg.CreatePartitionsRequest:
		r.Topics[0].Count = 2
	case *kmsg.CreateACLsRequest:
		r.Creations = make([]kmsg.CreateACLsRequestCreation, 1)
	case *kmsg.DeleteACLsRequest:
		r.Filters = make([]kmsg.DeleteACLsRequestFilter, 1)
	case *kmsg.WriteTxnMarkersRequest:
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.Topics = 1, []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t", Partitions: []int32{0}}}
		r.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	case *kmsg.AlterReplicaLogDirsRequest:
		r.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: "/data", Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: "t", Partitions: []int32{0}}}}}
	case *kmsg.AlterClientQuotasRequest:
		e := kmsg.NewAlterClientQuotasRequestEntry()
		e.Entity = []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("x")}}
		e.Ops = []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1}}
		r.Entries = []kmsg.AlterClientQuotasRequestEntry{e}
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		r.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "x", Mechanism: 1}}
	case *kmsg.InitProducerIDRequest:
		r.TransactionalID = nil
		r.TransactionTimeoutMillis = 60000
	}
	return req
}

// emptyListing: the listing APIs answer with nothing the principal may
// not see rather than an error.
func emptyListing(resp kmsg.Response) bool {
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		return false
	case *kmsg.ListGroupsResponse:
		return len(r.Groups) == 0
	case *kmsg.ListTransactionsResponse:
		return len(r.TransactionStates) == 0
	}
	return false
}

// With mutual TLS and no SASL, the principal is the client certificate's
// subject after ssl.principal.mapping.rules; ACLs name that principal.
func TestACLTLSPrincipalMapping(t *testing.T) {
	cs := mustCerts(t)
	b, addr, logs := secureBroker(t, nil, cs.ServerConfig(true), func(c *Config) {
		c.Authorizer = &AuthorizerConfig{SuperUsers: []string{"User:admin"}}
		c.SSLPrincipalMappingRules = `RULE:^CN=minikafka (.*?)$/$1/U,DEFAULT`
		c.AutoCreateTopics = false
	})
	createTopic(t, b, "certs", 1)
	ctx := testCtx(t)
	cl := newClient(t, addr, kgo.DialTLSConfig(cs.ClientConfig(true)), kgo.DefaultProduceTopic("certs"), kgo.DisableIdempotentWrite(),
		kgo.RequestRetries(1), kgo.RetryTimeout(2*time.Second))
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce before the ACL: %v", err)
	}
	if !strings.Contains(logs.String(), `principal="User:TEST CLIENT"`) {
		t.Fatalf("the refusal does not name the mapped principal:\n%s", lastLogLines(logs.String(), 5))
	}
	// The program's own call is not checked: it grants the ACL directly.
	grant := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "certs", kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:TEST CLIENT", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	grant.Creations = []kmsg.CreateACLsRequestCreation{c}
	if r := serve(t, b, grant).(*kmsg.CreateACLsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("grant: %v", kerr.ErrorForCode(r.Results[0].ErrorCode))
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("y")}).FirstErr(); err != nil {
		t.Fatalf("produce with WRITE for the mapped principal: %v", err)
	}
	// A bad rule stops the start.
	if _, err := New(Config{DataDir: "/d", FS: vfs.NewMem(), SSLPrincipalMappingRules: "RULE:nope"}); err == nil {
		t.Fatal("a malformed mapping rule was accepted")
	}
}

func lastLogLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// KIP-430: the authorized operations of DescribeGroups, DescribeCluster and
// Metadata are the principal's when asked.
func TestACLAuthorizedOperations(t *testing.T) {
	b, addr := aclBroker(t)
	createTopic(t, b, "t", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	if _, err := adm.CommitOffsets(ctx, "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0})); err != nil {
		t.Fatal(err)
	}
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Groups("g").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Clusters().Operations(kadm.OpDescribe, kadm.OpIdempotentWrite).ResourcePatternType(kadm.ACLPatternLiteral))
	alice := userClient(t, addr, "alice")

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{"g", "h"}, true
	gr, err := dg.RequestWith(ctx, alice.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gr.Groups {
		switch g.Group {
		case "g":
			if g.ErrorCode != 0 || g.AuthorizedOperations != 1<<3|1<<8 {
				t.Errorf("group g: %v, operations %b", kerr.ErrorForCode(g.ErrorCode), g.AuthorizedOperations)
			}
		case "h":
			if g.ErrorCode != kerr.GroupAuthorizationFailed.Code {
				t.Errorf("group h: %v", kerr.ErrorForCode(g.ErrorCode))
			}
		}
	}
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	cr, err := dc.RequestWith(ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	if cr.ClusterAuthorizedOperations != 1<<8|1<<12 {
		t.Errorf("cluster operations %b", cr.ClusterAuthorizedOperations)
	}
	dc.IncludeClusterAuthorizedOperations = false
	if cr, err = dc.RequestWith(ctx, alice); err != nil || cr.ClusterAuthorizedOperations != -2147483648 {
		t.Errorf("not asked: %b, %v", cr.ClusterAuthorizedOperations, err)
	}
}

// A KIP-848 consumer subscribed by regex is assigned only the matching
// topics its principal may describe.
func TestACLRegexSubscriptionFiltered(t *testing.T) {
	b, addr := aclBroker(t)
	for _, n := range []string{"logs-public", "logs-secret"} {
		createTopic(t, b, n, 1)
	}
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("logs-public").Groups("rx").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	alice := userClient(t, addr, "alice")
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.RebalanceTimeoutMillis = "rx", "m-1", 0, 10000
	hb.SubscribedTopicRegex = kmsg.StringPtr("logs-.*")
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	var assigned []string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := hb.RequestWith(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v %s", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
		}
		hb.MemberEpoch = resp.MemberEpoch
		if resp.Assignment != nil {
			assigned = assigned[:0]
			for _, tp := range resp.Assignment.Topics {
				name, _ := b.TopicName(tp.TopicID)
				assigned = append(assigned, name)
			}
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !reflect.DeepEqual(assigned, []string{"logs-public"}) {
		t.Fatalf("assigned %v, want only logs-public", assigned)
	}
}

// A whole-checked request (OffsetCommit: READ on the group, then READ on
// each topic) is decided on one ACL snapshot, and an ACL change applies to
// the very next request on the same connection: the snapshot the handler
// reused is not kept past its request.
func TestACLChangeAppliesToNextRequestOnConnection(t *testing.T) {
	b, addr := aclBroker(t)
	id := createTopic(t, b, "orders", 1)
	adm := kadm.NewClient(userClient(t, addr, "admin"))
	ctx := testCtx(t)
	topicRead := kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	mustCreateACLs(t, adm, topicRead)
	mustCreateACLs(t, adm, kadm.NewACLs().Allow("User:alice").AllowHosts().Groups("app").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	// One connection: every request goes to broker 1 directly.
	alice := userClient(t, addr, "alice").Broker(1)
	commit := func() int16 {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = 8, "app", -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = "orders", id // kgo sends its newest version (v10 names topics by ID)
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	for i := 0; i < 3; i++ {
		if c := commit(); c != 0 {
			t.Fatalf("commit with READ on group and topic: %v", kerr.ErrorForCode(c))
		}
	}
	del, err := adm.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("orders").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || len(del) != 1 || del[0].Err != nil {
		t.Fatalf("delete the topic ACL: %v %+v", err, del)
	}
	if c := commit(); c != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("commit on the same connection after the topic ACL went: %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(c))
	}
	mustCreateACLs(t, adm, topicRead)
	if c := commit(); c != 0 {
		t.Fatalf("commit after the topic ACL came back: %v", kerr.ErrorForCode(c))
	}
}
