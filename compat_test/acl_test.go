package compat_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/minikafka/minikafka"
	"github.com/minikafka/minikafka/minikafkatest"
)

// sarama and librdkafka against the ACL authorizer over SASL/PLAIN: what
// an application sees when an ACL is missing, and the ACL admin APIs.

// aclUsers are the SASL users; admin is the super user, alice gets only
// what each test grants.
var aclUsers = map[string]string{"admin": "admin-Pa55", "alice": "alice-Pa55"}

// aclBroker starts a SASL/PLAIN broker with the authorizer on, admin as
// super user and topics made by the program (so no client needs CREATE).
func aclBroker(t *testing.T, topics ...string) string {
	t.Helper()
	opts := []minikafka.Option{
		minikafka.WithSASL(aclUsers, "PLAIN"),
		minikafka.WithAuthorizer(minikafka.AuthorizerConfig{SuperUsers: []string{"User:admin"}}),
		minikafka.WithAutoCreateTopics(false),
	}
	for _, tp := range topics {
		opts = append(opts, minikafka.WithTopic(tp, 1))
	}
	return minikafkatest.New(t, opts...).Addr()
}

// ---- sarama ----

func aclSaramaConfig(user string) *sarama.Config {
	cfg := saramaConfig()
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	cfg.Net.SASL.User, cfg.Net.SASL.Password = user, aclUsers[user]
	cfg.Net.DialTimeout, cfg.Net.ReadTimeout, cfg.Net.WriteTimeout = 3*time.Second, 3*time.Second, 3*time.Second
	// Authorization errors are not retried by sarama; keep the retries
	// of anything else short so a wrong answer fails fast.
	cfg.Metadata.Retry.Max = 2
	cfg.Producer.Retry.Max = 2
	cfg.Producer.Retry.Backoff = 50 * time.Millisecond
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Admin.Timeout = 3 * time.Second
	cfg.Admin.Retry.Max = 1
	return cfg
}

func saramaAdmin(t *testing.T, addr, user string) sarama.ClusterAdmin {
	t.Helper()
	adm, err := sarama.NewClusterAdmin([]string{addr}, aclSaramaConfig(user))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { adm.Close() })
	return adm
}

// saramaSend sends one record with a fresh SyncProducer as user.
func saramaSend(t *testing.T, addr, user, topic string) (int64, error) {
	t.Helper()
	p, err := sarama.NewSyncProducer([]string{addr}, aclSaramaConfig(user))
	if err != nil {
		t.Fatalf("sarama producer as %s: %v", user, err)
	}
	defer p.Close()
	_, off, err := p.SendMessage(&sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder("v")})
	return off, err
}

func topicACL(name string, pattern sarama.AclResourcePatternType) sarama.Resource {
	return sarama.Resource{ResourceType: sarama.AclResourceTopic, ResourceName: name, ResourcePatternType: pattern}
}

func allow(principal string, op sarama.AclOperation) sarama.Acl {
	return sarama.Acl{Principal: principal, Host: "*", Operation: op, PermissionType: sarama.AclPermissionAllow}
}

// A sarama SyncProducer without WRITE gets ErrTopicAuthorizationFailed,
// both when it may not even see the topic (Metadata) and when it may read
// but not write it (Produce); once the super user grants WRITE it writes,
// and the refused sends left nothing in the log.
func TestACLSaramaProduceNeedsWrite(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := saramaAdmin(t, addr, "admin")

	if _, err := saramaSend(t, addr, "alice", "orders"); !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
		t.Fatalf("send with no ACL: %v, want %v", err, sarama.ErrTopicAuthorizationFailed)
	}
	// READ implies DESCRIBE, so Metadata answers and the refusal comes
	// from Produce itself.
	if err := adm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), allow("User:alice", sarama.AclOperationRead)); err != nil {
		t.Fatal(err)
	}
	if _, err := saramaSend(t, addr, "alice", "orders"); !errors.Is(err, sarama.ErrTopicAuthorizationFailed) {
		t.Fatalf("send with READ only: %v, want %v", err, sarama.ErrTopicAuthorizationFailed)
	}
	if err := adm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), allow("User:alice", sarama.AclOperationWrite)); err != nil {
		t.Fatal(err)
	}
	off, err := saramaSend(t, addr, "alice", "orders")
	if err != nil {
		t.Fatalf("send with WRITE: %v", err)
	}
	if off != 0 {
		t.Fatalf("first permitted record at offset %d, want 0 (a refused send was written)", off)
	}
}

// sarama's ClusterAdmin creates, lists (by filter) and deletes ACLs as the
// super user; a user without cluster permissions is refused, and a bad
// binding is INVALID_REQUEST with a message.
func TestACLSaramaAdminRoundTrip(t *testing.T) {
	addr := aclBroker(t)
	adm := saramaAdmin(t, addr, "admin")

	groupRes := sarama.Resource{ResourceType: sarama.AclResourceGroup, ResourceName: "app-", ResourcePatternType: sarama.AclPatternPrefixed}
	if err := adm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), allow("User:alice", sarama.AclOperationRead)); err != nil {
		t.Fatal(err)
	}
	if err := adm.CreateACL(groupRes, allow("User:alice", sarama.AclOperationRead)); err != nil {
		t.Fatal(err)
	}
	deny := sarama.Acl{Principal: "User:alice", Host: "10.0.0.1", Operation: sarama.AclOperationWrite, PermissionType: sarama.AclPermissionDeny}
	if err := adm.CreateACLs([]*sarama.ResourceAcls{{Resource: topicACL("ord", sarama.AclPatternPrefixed), Acls: []*sarama.Acl{&deny}}}); err != nil {
		t.Fatal(err)
	}

	all := sarama.AclFilter{ResourceType: sarama.AclResourceAny, ResourcePatternTypeFilter: sarama.AclPatternAny,
		Operation: sarama.AclOperationAny, PermissionType: sarama.AclPermissionAny}
	if got := flattenSarama(t, adm, all); strings.Join(got, "\n") != strings.Join([]string{
		"Group app- Prefixed User:alice * Read Allow",
		"Topic ord Prefixed User:alice 10.0.0.1 Write Deny",
		"Topic orders Literal User:alice * Read Allow",
	}, "\n") {
		t.Fatalf("all ACLs:\n%s", strings.Join(got, "\n"))
	}
	// MATCH on "orders" finds the literal binding and the prefix that
	// covers it, not the group's.
	orders := "orders"
	match := all
	match.ResourceType, match.ResourceName, match.ResourcePatternTypeFilter = sarama.AclResourceTopic, &orders, sarama.AclPatternMatch
	if got := flattenSarama(t, adm, match); len(got) != 2 || !strings.HasPrefix(got[0], "Topic ord ") || !strings.HasPrefix(got[1], "Topic orders ") {
		t.Fatalf("MATCH orders: %q", got)
	}

	groupFilter := all
	groupFilter.ResourceType, groupFilter.ResourcePatternTypeFilter = sarama.AclResourceGroup, sarama.AclPatternPrefixed
	deleted, err := adm.DeleteACL(groupFilter, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].Err != sarama.ErrNoError || deleted[0].Resource != groupRes ||
		deleted[0].Acl != allow("User:alice", sarama.AclOperationRead) {
		t.Fatalf("deleted %+v", deleted)
	}
	if got := flattenSarama(t, adm, all); len(got) != 2 || strings.HasPrefix(got[0], "Group") {
		t.Fatalf("after delete: %q", got)
	}

	// Kafka: DescribeAcls needs DESCRIBE on the cluster, CreateAcls ALTER.
	if _, err := saramaAdmin(t, addr, "alice").ListAcls(all); !errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
		t.Fatalf("ListAcls as alice: %v", err)
	}
	// CreateACL surfaces the per-binding error the broker answered.
	aliceAdm := saramaAdmin(t, addr, "alice")
	if err := aliceAdm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), allow("User:alice", sarama.AclOperationWrite)); !errors.Is(err, sarama.ErrClusterAuthorizationFailed) {
		t.Fatalf("CreateACL as alice: %v", err)
	}
	noType := allow("alice", sarama.AclOperationWrite) // Kafka requires "User:"
	if err := adm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), noType); !errors.Is(err, sarama.ErrInvalidRequest) {
		t.Fatalf("principal without a type: %v", err)
	}
	// The broker's reason is in the response, which the admin's error
	// drops; read it from the broker connection.
	b := sarama.NewBroker(addr)
	if err := b.Open(aclSaramaConfig("admin")); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cluster := sarama.Resource{ResourceType: sarama.AclResourceCluster, ResourceName: "not-kafka-cluster", ResourcePatternType: sarama.AclPatternLiteral}
	resp, err := b.CreateAcls(&sarama.CreateAclsRequest{Version: 1, AclCreations: []*sarama.AclCreation{{Resource: cluster, Acl: allow("User:alice", sarama.AclOperationAlter)}}})
	if !errors.Is(err, sarama.ErrInvalidRequest) || resp == nil || len(resp.AclCreationResponses) != 1 {
		t.Fatalf("cluster binding not named kafka-cluster: %v", err)
	}
	if m := resp.AclCreationResponses[0].ErrMsg; m == nil || *m == "" {
		t.Fatal("INVALID_REQUEST without a message")
	}
	if got := flattenSarama(t, adm, all); len(got) != 2 {
		t.Fatalf("refused creations were stored: %q", got)
	}
}

// flattenSarama lists the ACLs matching f, one sorted line per binding.
func flattenSarama(t *testing.T, adm sarama.ClusterAdmin, f sarama.AclFilter) []string {
	t.Helper()
	rs, err := adm.ListAcls(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		for _, a := range r.Acls {
			out = append(out, strings.Join([]string{r.ResourceType.String(), r.ResourceName, r.ResourcePatternType.String(),
				a.Principal, a.Host, a.Operation.String(), a.PermissionType.String()}, " "))
		}
	}
	sort.Strings(out)
	return out
}

// ---- confluent-kafka-go (librdkafka) ----

func aclRdkConf(addr, user string, extra kafka.ConfigMap) *kafka.ConfigMap {
	m := kafka.ConfigMap{
		"bootstrap.servers": addr,
		"security.protocol": "SASL_PLAINTEXT",
		"sasl.mechanisms":   "PLAIN",
		"sasl.username":     user,
		"sasl.password":     aclUsers[user],
		"log_level":         3,
		// librdkafka retries forever by default; these bound the wait
		// for an answer a broker bug might never give.
		"socket.timeout.ms": 5000,
	}
	for k, v := range extra {
		m[k] = v
	}
	return &m
}

func rdkAdmin(t *testing.T, addr, user string) *kafka.AdminClient {
	t.Helper()
	a, err := kafka.NewAdminClient(aclRdkConf(addr, user, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func rdkCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func rdkAllow(rt kafka.ResourceType, name string, pt kafka.ResourcePatternType, principal string, op kafka.ACLOperation) kafka.ACLBinding {
	return kafka.ACLBinding{Type: rt, Name: name, ResourcePatternType: pt, Principal: principal, Host: "*",
		Operation: op, PermissionType: kafka.ACLPermissionTypeAllow}
}

// confluent-kafka-go calls CLUSTER ResourceBroker and has no constant for
// TRANSACTIONAL_ID; the values are the protocol's.
const (
	rdkResourceCluster       = kafka.ResourceBroker // 4, CLUSTER on the wire
	rdkResourceTransactional = kafka.ResourceType(5)
)

func rdkGrant(t *testing.T, a *kafka.AdminClient, bs ...kafka.ACLBinding) {
	t.Helper()
	res, err := a.CreateACLs(rdkCtx(t), bs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Error.Code() != kafka.ErrNoError {
			t.Fatalf("CreateACLs %+v: %v", bs[i], r.Error)
		}
	}
}

// rdkProduceOne produces one record with a fresh producer and returns its
// delivery report.
func rdkProduceOne(t *testing.T, addr, user, topic string) kafka.TopicPartition {
	t.Helper()
	p, err := kafka.NewProducer(aclRdkConf(addr, user, kafka.ConfigMap{"acks": "all", "message.timeout.ms": 8000}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dr := make(chan kafka.Event, 1)
	if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: []byte("v")}, dr); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-dr:
		return ev.(*kafka.Message).TopicPartition
	case <-time.After(12 * time.Second):
		t.Fatal("no delivery report")
	}
	return kafka.TopicPartition{}
}

func rdkCode(err error) kafka.ErrorCode {
	var ke kafka.Error
	if errors.As(err, &ke) {
		return ke.Code()
	}
	return kafka.ErrNoError
}

// A librdkafka producer without WRITE gets a delivery report failed with
// TOPIC_AUTHORIZATION_FAILED (from Metadata with no ACL, from Produce with
// READ only); with WRITE the record is delivered, the first in the log.
func TestACLConfluentProduceNeedsWrite(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := rdkAdmin(t, addr, "admin")

	if tp := rdkProduceOne(t, addr, "alice", "orders"); rdkCode(tp.Error) != kafka.ErrTopicAuthorizationFailed {
		t.Fatalf("delivery with no ACL: %v, want %v", tp.Error, kafka.ErrTopicAuthorizationFailed)
	}
	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationRead))
	if tp := rdkProduceOne(t, addr, "alice", "orders"); rdkCode(tp.Error) != kafka.ErrTopicAuthorizationFailed {
		t.Fatalf("delivery with READ only: %v, want %v", tp.Error, kafka.ErrTopicAuthorizationFailed)
	}
	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationWrite))
	tp := rdkProduceOne(t, addr, "alice", "orders")
	if tp.Error != nil {
		t.Fatalf("delivery with WRITE: %v", tp.Error)
	}
	if tp.Offset != 0 {
		t.Fatalf("delivered at offset %v, want 0 (a refused record was written)", tp.Offset)
	}
}

// KIP-679: an idempotent librdkafka producer with READ only is refused
// its producer ID (CLUSTER_AUTHORIZATION_FAILED, a fatal error for the
// client); WRITE on a topic is enough to get one and deliver.
func TestACLConfluentIdempotentProducer(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := rdkAdmin(t, addr, "admin")
	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationRead))
	topic := "orders"
	produce := func() (*kafka.Producer, chan kafka.Event) {
		p, err := kafka.NewProducer(aclRdkConf(addr, "alice", kafka.ConfigMap{"enable.idempotence": true, "message.timeout.ms": 8000}))
		if err != nil {
			t.Fatal(err)
		}
		dr := make(chan kafka.Event, 1)
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: []byte("v")}, dr); err != nil {
			t.Fatal(err)
		}
		return p, dr
	}

	p, _ := produce()
	var fatal kafka.Error
	for timeout := time.After(10 * time.Second); fatal.Code() == kafka.ErrNoError; {
		select {
		case ev := <-p.Events():
			if ke, ok := ev.(kafka.Error); ok && ke.IsFatal() {
				fatal = ke
			}
		case <-timeout:
			t.Fatal("no fatal error event")
		}
	}
	p.Close()
	if fatal.Code() != kafka.ErrClusterAuthorizationFailed {
		t.Fatalf("idempotent producer with READ only: %v, want %v", fatal, kafka.ErrClusterAuthorizationFailed)
	}

	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationWrite))
	p, dr := produce()
	defer p.Close()
	select {
	case ev := <-dr:
		if tp := ev.(*kafka.Message).TopicPartition; tp.Error != nil || tp.Offset != 0 {
			t.Fatalf("idempotent delivery with WRITE: %v at %v", tp.Error, tp.Offset)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery report")
	}
}

func rdkLine(b kafka.ACLBinding) string {
	return strings.Join([]string{b.Type.String(), b.Name, b.ResourcePatternType.String(), b.Principal, b.Host,
		b.Operation.String(), b.PermissionType.String()}, " ")
}

func rdkLines(bs kafka.ACLBindings) []string {
	var out []string
	for _, b := range bs {
		out = append(out, rdkLine(b))
	}
	sort.Strings(out)
	return out
}

// confluent-kafka-go's AdminClient: CreateACLs answers per binding (the
// broker's INVALID_REQUEST for bindings librdkafka lets through),
// DescribeACLs filters, DeleteACLs returns what each filter deleted.
func TestACLConfluentAdmin(t *testing.T) {
	addr := aclBroker(t)
	adm := rdkAdmin(t, addr, "admin")
	ctx := rdkCtx(t)

	topicRead := rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationRead)
	groupRead := rdkAllow(kafka.ResourceGroup, "app-", kafka.ResourcePatternTypePrefixed, "User:alice", kafka.ACLOperationRead)
	clusterDescribe := rdkAllow(rdkResourceCluster, "kafka-cluster", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationDescribe)
	// librdkafka checks only that the fields are set and the enums
	// concrete; these reach the broker, which refuses them as Kafka does.
	badCluster := rdkAllow(rdkResourceCluster, "not-kafka-cluster", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationAlter)
	badPrincipal := rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "alice", kafka.ACLOperationRead)
	badHost := topicRead
	badHost.Host = ""
	badHost.Principal = "User:bob"
	res, err := adm.CreateACLs(ctx, kafka.ACLBindings{topicRead, badCluster, groupRead, badPrincipal, clusterDescribe})
	if err != nil {
		t.Fatal(err)
	}
	wantCodes := []kafka.ErrorCode{kafka.ErrNoError, kafka.ErrInvalidRequest, kafka.ErrNoError, kafka.ErrInvalidRequest, kafka.ErrNoError}
	if len(res) != len(wantCodes) {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if r.Error.Code() != wantCodes[i] {
			t.Errorf("binding %d: %v, want %v", i, r.Error, wantCodes[i])
		}
		// The broker's message, not only the code's name, reaches the
		// application.
		if wantCodes[i] != kafka.ErrNoError && r.Error.String() == wantCodes[i].String() {
			t.Errorf("binding %d: no message from the broker: %q", i, r.Error.String())
		}
	}
	// What librdkafka does refuse itself (an empty host is a NULL one)
	// never reaches the broker.
	if _, err := adm.CreateACLs(ctx, kafka.ACLBindings{badHost}); rdkCode(err) != kafka.ErrInvalidArg {
		t.Fatalf("binding with no host: %v, want librdkafka's %v", err, kafka.ErrInvalidArg)
	}

	anyFilter := kafka.ACLBindingFilter{Type: kafka.ResourceAny, ResourcePatternType: kafka.ResourcePatternTypeAny,
		Operation: kafka.ACLOperationAny, PermissionType: kafka.ACLPermissionTypeAny}
	describe := func(f kafka.ACLBindingFilter) []string {
		t.Helper()
		d, err := adm.DescribeACLs(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if d.Error.Code() != kafka.ErrNoError {
			t.Fatalf("DescribeACLs %+v: %v", f, d.Error)
		}
		return rdkLines(d.ACLBindings)
	}
	if got, want := describe(anyFilter), rdkLines(kafka.ACLBindings{topicRead, groupRead, clusterDescribe}); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("all ACLs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// MATCH on the group "app-1" finds the prefix that covers it.
	groupMatch := anyFilter
	groupMatch.Type, groupMatch.Name, groupMatch.ResourcePatternType = kafka.ResourceGroup, "app-1", kafka.ResourcePatternTypeMatch
	if got := describe(groupMatch); len(got) != 1 || got[0] != rdkLine(groupRead) {
		t.Fatalf("MATCH group app-1: %q", got)
	}
	topicOnly := anyFilter
	topicOnly.Type = kafka.ResourceTopic
	if got := describe(topicOnly); len(got) != 1 || got[0] != rdkLine(topicRead) {
		t.Fatalf("topic ACLs: %q", got)
	}

	// Two filters: one matches the group binding, one nothing.
	noMatch := anyFilter
	noMatch.Type, noMatch.Name, noMatch.ResourcePatternType = kafka.ResourceTopic, "nothing-here", kafka.ResourcePatternTypeLiteral
	groupFilter := anyFilter
	groupFilter.Type, groupFilter.Principal = kafka.ResourceGroup, "User:alice"
	del, err := adm.DeleteACLs(ctx, kafka.ACLBindingFilters{groupFilter, noMatch})
	if err != nil {
		t.Fatal(err)
	}
	if len(del) != 2 {
		t.Fatalf("%d DeleteACLs results", len(del))
	}
	for i, d := range del {
		if d.Error.Code() != kafka.ErrNoError {
			t.Fatalf("filter %d: %v", i, d.Error)
		}
	}
	if got := rdkLines(del[0].ACLBindings); len(got) != 1 || got[0] != rdkLine(groupRead) {
		t.Fatalf("group filter deleted %q", got)
	}
	if len(del[1].ACLBindings) != 0 {
		t.Fatalf("filter matching nothing deleted %q", rdkLines(del[1].ACLBindings))
	}
	if got := describe(anyFilter); len(got) != 2 {
		t.Fatalf("after delete: %q", got)
	}

	// alice now has DESCRIBE on the cluster, so she may list ACLs, but
	// creating them needs ALTER.
	alice := rdkAdmin(t, addr, "alice")
	if d, err := alice.DescribeACLs(ctx, anyFilter); err != nil || d.Error.Code() != kafka.ErrNoError || len(d.ACLBindings) != 2 {
		t.Fatalf("DescribeACLs as alice with cluster DESCRIBE: %v %+v", err, d)
	}
	ar, err := alice.CreateACLs(ctx, kafka.ACLBindings{groupRead})
	if err != nil {
		t.Fatal(err)
	}
	if len(ar) != 1 || ar[0].Error.Code() != kafka.ErrClusterAuthorizationFailed {
		t.Fatalf("CreateACLs as alice: %+v", ar)
	}
	dr, err := alice.DeleteACLs(ctx, kafka.ACLBindingFilters{anyFilter})
	if err != nil {
		t.Fatal(err)
	}
	if len(dr) != 1 || dr[0].Error.Code() != kafka.ErrClusterAuthorizationFailed || len(dr[0].ACLBindings) != 0 {
		t.Fatalf("DeleteACLs as alice: %+v", dr)
	}
	if got := describe(anyFilter); len(got) != 2 {
		t.Fatalf("after alice's refused delete: %q", got)
	}
}

// A librdkafka group consumer with READ on the topic but not on its group
// is told GROUP_AUTHORIZATION_FAILED; with READ on the group it consumes.
func TestACLConfluentConsumerNeedsGroupRead(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := rdkAdmin(t, addr, "admin")
	if tp := rdkProduceOne(t, addr, "admin", "orders"); tp.Error != nil {
		t.Fatal(tp.Error)
	}
	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationRead))

	consumer := func() *kafka.Consumer {
		c, err := kafka.NewConsumer(aclRdkConf(addr, "alice", kafka.ConfigMap{
			"group.id": "app-1", "auto.offset.reset": "earliest", "enable.auto.commit": false,
			"session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
		}))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe("orders", nil); err != nil {
			t.Fatal(err)
		}
		return c
	}

	c := consumer()
	var got error
	for deadline := time.Now().Add(10 * time.Second); got == nil && time.Now().Before(deadline); {
		m, err := c.ReadMessage(200 * time.Millisecond)
		if m != nil {
			t.Fatalf("consumed %v without READ on the group", m.TopicPartition)
		}
		if err != nil && !err.(kafka.Error).IsTimeout() {
			got = err
		}
	}
	c.Close()
	if rdkCode(got) != kafka.ErrGroupAuthorizationFailed {
		t.Fatalf("consumer without group READ: %v, want %v", got, kafka.ErrGroupAuthorizationFailed)
	}

	rdkGrant(t, adm, rdkAllow(kafka.ResourceGroup, "app-", kafka.ResourcePatternTypePrefixed, "User:alice", kafka.ACLOperationRead))
	c = consumer()
	defer c.Close()
	m, err := c.ReadMessage(10 * time.Second)
	if err != nil {
		t.Fatalf("consumer with group READ: %v", err)
	}
	if string(m.Value) != "v" || m.TopicPartition.Offset != 0 {
		t.Fatalf("consumed %v %q", m.TopicPartition, m.Value)
	}
	if _, err := c.CommitMessage(m); err != nil {
		t.Fatalf("commit with group READ: %v", err)
	}
}

// A librdkafka consumer with READ on its group but not on the topics it
// subscribes to is told TOPIC_AUTHORIZATION_FAILED, the same for a topic
// that exists and one that does not (Kafka does not reveal which exist).
func TestACLConfluentConsumerNeedsTopicRead(t *testing.T) {
	addr := aclBroker(t, "orders")
	rdkGrant(t, rdkAdmin(t, addr, "admin"), rdkAllow(kafka.ResourceGroup, "app-", kafka.ResourcePatternTypePrefixed, "User:alice", kafka.ACLOperationRead))
	for _, topic := range []string{"orders", "no-such-topic"} {
		c, err := kafka.NewConsumer(aclRdkConf(addr, "alice", kafka.ConfigMap{"group.id": "app-" + topic, "auto.offset.reset": "earliest"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Subscribe(topic, nil); err != nil {
			t.Fatal(err)
		}
		var got error
		for deadline := time.Now().Add(8 * time.Second); got == nil && time.Now().Before(deadline); {
			if _, err := c.ReadMessage(200 * time.Millisecond); err != nil && !err.(kafka.Error).IsTimeout() {
				got = err
			}
		}
		c.Close()
		if rdkCode(got) != kafka.ErrTopicAuthorizationFailed {
			t.Fatalf("subscribed to %s without READ: %v, want %v", topic, got, kafka.ErrTopicAuthorizationFailed)
		}
	}
}

// A librdkafka transactional producer whose principal may write the topic
// but not its transactional ID fails InitTransactions with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; with WRITE on the ID it commits.
func TestACLConfluentTransactionalID(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := rdkAdmin(t, addr, "admin")
	rdkGrant(t, adm, rdkAllow(kafka.ResourceTopic, "orders", kafka.ResourcePatternTypeLiteral, "User:alice", kafka.ACLOperationWrite))

	producer := func(id string) *kafka.Producer {
		p, err := kafka.NewProducer(aclRdkConf(addr, "alice", kafka.ConfigMap{
			"transactional.id": id, "transaction.timeout.ms": 10000, "message.timeout.ms": 8000,
		}))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := producer("tx-1")
	err := p.InitTransactions(rdkCtx(t))
	p.Close()
	if rdkCode(err) != kafka.ErrTransactionalIDAuthorizationFailed {
		t.Fatalf("InitTransactions without WRITE on the ID: %v, want %v", err, kafka.ErrTransactionalIDAuthorizationFailed)
	}

	rdkGrant(t, adm, rdkAllow(rdkResourceTransactional, "tx-", kafka.ResourcePatternTypePrefixed, "User:alice", kafka.ACLOperationWrite))
	p = producer("tx-2")
	defer p.Close()
	ctx := rdkCtx(t)
	if err := p.InitTransactions(ctx); err != nil {
		t.Fatalf("InitTransactions with WRITE on the ID: %v", err)
	}
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	topic := "orders"
	if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: []byte("t")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.CommitTransaction(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// sarama's transactional producer: without WRITE on the ID, creating it
// (FindCoordinator, InitProducerId) fails with
// ErrTransactionalIDAuthorizationFailed.
func TestACLSaramaTransactionalID(t *testing.T) {
	addr := aclBroker(t, "orders")
	adm := saramaAdmin(t, addr, "admin")
	if err := adm.CreateACL(topicACL("orders", sarama.AclPatternLiteral), allow("User:alice", sarama.AclOperationWrite)); err != nil {
		t.Fatal(err)
	}
	txnConfig := func(id string) *sarama.Config {
		cfg := aclSaramaConfig("alice")
		cfg.Producer.Idempotent = true
		cfg.Producer.Transaction.ID = id
		cfg.Producer.Transaction.Retry.Max = 2
		cfg.Producer.Transaction.Retry.Backoff = 50 * time.Millisecond
		cfg.Net.MaxOpenRequests = 1
		return cfg
	}
	p, err := sarama.NewSyncProducer([]string{addr}, txnConfig("tx-1"))
	if err == nil {
		p.Close()
	}
	if !errors.Is(err, sarama.ErrTransactionalIDAuthorizationFailed) {
		t.Fatalf("transactional producer without WRITE on the ID: %v, want %v", err, sarama.ErrTransactionalIDAuthorizationFailed)
	}

	tx := sarama.Resource{ResourceType: sarama.AclResourceTransactionalID, ResourceName: "tx-2", ResourcePatternType: sarama.AclPatternLiteral}
	if err := adm.CreateACL(tx, allow("User:alice", sarama.AclOperationWrite)); err != nil {
		t.Fatal(err)
	}
	p, err = sarama.NewSyncProducer([]string{addr}, txnConfig("tx-2"))
	if err != nil {
		t.Fatalf("transactional producer with WRITE on the ID: %v", err)
	}
	defer p.Close()
	if err := p.BeginTxn(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.SendMessage(&sarama.ProducerMessage{Topic: "orders", Value: sarama.StringEncoder("t")}); err != nil {
		t.Fatal(err)
	}
	if err := p.CommitTxn(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}
