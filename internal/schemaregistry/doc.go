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
// (Config.MaxSchemaBytes, 42209 beyond). With Config.Authenticate every
// request needs HTTP basic credentials it accepts (401 otherwise);
// minikafka checks them against the broker's SCRAM users.
//
// # Schema types and compatibility
//
// Avro (the default) is parsed by hamba/avro, Protobuf by bufbuild's
// protocompile (imports are the references; protoc's standard imports are
// known) and JSON Schema by santhosh-tekuri/jsonschema (no file or network
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
