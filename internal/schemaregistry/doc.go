// Package schemaregistry is minikafka's schema registry: Confluent Schema
// Registry's REST API, the parts that clients and serializers use, served
// by the minikafka package on the listener of WithSchemaRegistry.
//
// # API
//
// Register (POST /subjects/{s}/versions; the same schema in a subject
// gets its ID back, and the same schema in another subject gets the same
// ID), look up (POST /subjects/{s}), schemas by ID (/schemas/ids/{id}
// with /schema, /subjects, /versions), /schemas/types, subjects and their
// versions (a number, "latest" or -1; /schema, /referencedby), soft and
// permanent deletes (?permanent=true after a soft delete; ?deleted=true
// shows soft-deleted subjects and versions), compatibility checks
// (/compatibility/subjects/{s}/versions[/{v}], ?verbose=true for the
// reasons), /config and /mode, globally and per subject, with IMPORT for
// caller-chosen IDs and versions. Errors are Confluent's JSON,
// {"error_code":40401,"message":"..."}, with its codes and statuses.
// Answers are application/vnd.schemaregistry.v1+json (plain JSON to a
// client that asks for only that); requests in either are accepted. A
// request body is bounded (MaxRequestBytes), and so is a schema's text
// (Config.MaxSchemaBytes, 42209 beyond) and the nesting of an Avro or JSON
// Schema schema (MaxSchemaDepth, 42201 beyond: the parsers' work grows
// much faster than the depth). With Config.Authenticate every
// request needs HTTP basic credentials it accepts (401 otherwise);
// minikafka checks them against the broker's SCRAM users.
//
// # Authorization
//
// With Config.ACLs (minikafka: WithAuthorizer and WithSchemaRegistry
// together) every request is decided by the broker's own ACLs, the ones
// CreateAcls makes (minikafka acl, kafka-acls, kadm), read afresh for each
// request so that a change applies to the next one. The model is
// Redpanda's registry ACLs ("registry" and "subject" resources) laid on
// Kafka's resource types, since the broker's ACLs have no others: a
// subject is its topic by Confluent's TopicNameStrategy read backwards
// (orders-value and orders-key are topic orders; any other subject is a
// topic of its own name, which a PREFIXED ACL can cover), and the registry
// as a whole is the cluster (kafka-cluster). So whoever may write a topic
// may register its schemas, and whoever may read it may read them. The
// principal is User:<basic auth user> (with Config.Authenticate; without
// it User:ANONYMOUS, whatever the credentials say), the host the client's
// IP address, and Kafka's rules apply: super users, DENY before ALLOW,
// READ, WRITE, DELETE and ALTER implying DESCRIBE, ALTER_CONFIGS implying
// DESCRIBE_CONFIGS, allow.everyone.if.no.acl.found. What each request
// needs:
//
//   - on the subject's topic: DESCRIBE to list its versions (GET
//     /subjects/{s}/versions); READ to read a version, its schema or
//     referencedby, to look a schema up (POST /subjects/{s}) and to test
//     compatibility; WRITE to register; DELETE to delete a version or the
//     subject; DESCRIBE_CONFIGS to read its /config or /mode,
//     ALTER_CONFIGS to set or delete them.
//   - on the cluster: DESCRIBE_CONFIGS for the global /config and /mode,
//     ALTER_CONFIGS to change them.
//   - GET /schemas/ids/{id}: READ on one of the subjects with that schema
//     (Confluent's rule); a schema no subject has any more needs DESCRIBE
//     on the cluster.
//   - listings (GET /subjects, /schemas, /schemas/ids/{id}/subjects and
//     /versions) show only the subjects the principal may DESCRIBE (READ
//     for /schemas), as Metadata shows only the topics a client may see.
//   - /, /schemas/types and /contexts: nothing.
//
// A refusal is 403 with Confluent's code 40301, naming the principal, the
// operation and the ACL resource that decided, and is logged at INFO
// ("schema registry: authorization denied", once a minute per principal,
// host, operation and resource). Unlike Redpanda, no resource type of its
// own keeps registry rights apart from topic rights.
//
// # Schema types and compatibility
//
// Avro (the default) is parsed by hamba/avro, Protobuf by bufbuild's
// protocompile (imports are the references; protoc's standard imports are
// known; a schema or reference may also be a base64 serialized
// FileDescriptorProto, as the JavaScript and Python serializers send, and
// ?format=serialized answers any Protobuf schema in that form) and JSON Schema by santhosh-tekuri/jsonschema (no file or network
// loading: a $ref must be a reference). A schema that does not parse is
// 42201 with the parser's reason.
//
// The compatibility levels are Confluent's: BACKWARD (the default: the new
// schema reads data written with the latest one), FORWARD (the latest
// reads the new one's), FULL (both), their _TRANSITIVE forms (against every
// live version, not only the latest) and NONE. An incompatible schema is
// 409 with the reasons. The rules per type:
//
//   - Avro: the schema resolution rules of the Avro specification (fields
//     matched by name or alias, a missing field needs a default, int→long→
//     float→double and string↔bytes promotions, enum symbols unless the
//     reader has a default, fixed sizes, unions branch by branch, names
//     and aliases), as Confluent applies them.
//   - Protobuf: Confluent's incompatible differences: package changed,
//     message removed, a field's kind, scalar type (outside the wire-
//     compatible groups) or message/enum type changed, required fields
//     added or removed, fields moved into or out of a oneof.
//   - JSON Schema: the main rules: type narrowing, properties under open
//     and closed content models (additionalProperties false), required
//     properties added, enums narrowed, additionalProperties closed, items,
//     the numeric and length bounds, local $refs ($defs, definitions,
//     recursion included), oneOf/anyOf as unions, allOf. Not checked: the
//     insides of references to other documents, patterns, dependencies.
//
// # Storage
//
// The state is kept in the compacted topic _schemas of the broker, in
// Confluent's records: keys {"keytype":"SCHEMA","subject":...,"version":N,
// "magic":1}, CONFIG and MODE keys (subject null for the global ones),
// values as Confluent writes them (a soft delete rewrites a SCHEMA value
// with "deleted":true, a permanent one is a tombstone). Confluent's
// DELETE_SUBJECT and CLEAR_SUBJECT records are read too. Permanent deletes
// also write the highest ID given so far under the NOOP key
// ({"maxId":N}), so that compaction removing a deleted schema's last
// record cannot let a later start give its ID again.
//
// The registry is a Kafka client of the broker (kgo, through Config.Kafka;
// minikafka gives it an in-process connection). On the first request it
// reads the topic from the start to its end and rebuilds its state: a
// broker whose registry is never used never reads or creates the topic. A
// record that does not decode is logged and skipped, not fatal. Writes
// are serialized in the process: a writer decides from the state, produces
// its record (acks=all), then applies it, so concurrent registrations of
// one schema get one ID. A write that fails may have reached the topic
// all the same (a timeout after the broker took it), so after one the
// next request reads the topic again instead of trusting the state. The
// registry assumes it is the topic's only writer while it runs: records
// others write are seen at the next start (or after a failed write).
package schemaregistry
