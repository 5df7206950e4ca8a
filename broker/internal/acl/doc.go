// Package acl is minikafka's authorizer: ACL bindings, the decision Kafka's
// StandardAuthorizer makes for a principal, a host, an operation and a
// resource, the filters of DescribeAcls and DeleteAcls, the file that keeps
// the bindings, and the mapping of TLS certificate names to principals.
//
// # Model
//
// A Binding allows or denies one principal ("User:alice", or "User:*" for
// every principal) from one host ("*" for every host) one operation on the
// resources one pattern names: a literal name (the literal "*" is every
// resource of the type) or a prefix. A Set is an immutable snapshot of the
// bindings, indexed by resource type and name; a change builds a new Set
// with a higher version, so a cache keyed by the version is never stale.
//
// # Deciding
//
// Authorize follows StandardAuthorizer:
//
//  1. a super user is allowed everything;
//  2. the bindings that apply are those whose pattern matches the resource
//     (literal name, literal "*", or a prefix of the name), whose principal
//     is the principal or "User:*", and whose host is the host or "*";
//  3. a DENY for the operation (or ALL) wins over everything;
//  4. an ALLOW for the operation, for ALL, or for an operation that implies
//     it (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS
//     implies DESCRIBE_CONFIGS) allows;
//  5. otherwise the request is denied, unless no binding at all (of any
//     principal) matches the resource and allow.everyone.if.no.acl.found is
//     set.
//
// AuthorizeByResourceType answers "may the principal do op on some
// resource of this type" (KIP-679's idempotent producer check), as Kafka's
// Authorizer.authorizeByResourceType does.
//
// # Requests
//
// Store keeps the Set in force behind an atomic pointer and makes each
// change (Create, Delete: CreateAcls and DeleteAcls with their
// validation) durable in the file before it decides anything; alterMu
// serializes changes and is held only across the write. Describe is
// DescribeAcls' filter and grouping.
//
// A connection's decisions are cached in its Conn by (operation, resource
// type, name), valid for one principal and one Set version and cleared
// past 4096 entries. Each request gets a Request from Conn.Begin: one Set
// for the whole request, so a handler's checks agree with the check that
// let it in. A nil *Request allows everything (the authorizer is off or
// the request is the embedding program's own). Denials are reported once
// per cached decision to the broker's Denials, which logs them.
//
// Kafka's KafkaApis refuses some requests whole before their handler (a
// group, transactional ID or cluster operation; KIP-679's idempotent
// producer; KIP-848's subscribed topics): WholeRequestCheck holds these
// by API key and returns the request's error code. Requests a coordinator
// answers whole but Kafka authorizes per topic (OffsetCommit,
// TxnOffsetCommit, AddPartitionsToTxn, ...) are split by
// Request.SplitTopics into the allowed topics, which the handler serves,
// and the refused ones, merged back into its answer as
// TOPIC_AUTHORIZATION_FAILED; the broker supplies topic IDs' names and
// error responses (Splitter). The package imports neither broker nor
// protocol (internal/lint checks that).
//
// # File format
//
// The bindings live in DataDir/acls, rewritten whole with
// vfs.WriteFileAtomic on every change, framed by internal/sealed (magic
// "MKACLS\n\x00", version 1): the payload is a JSON array of
// {"resource_type","name","pattern","principal","host","operation",
// "permission"} objects, the enums by Kafka's names (TOPIC, PREFIXED,
// ALLOW, ...). Decode checks the frame, then that every binding would pass
// CreateAcls' validation; anything else is an error naming the entry, and
// the broker refuses to start on it.
package acl
