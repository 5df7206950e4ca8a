// Package quota holds minikafka's client quotas: the configured quotas by
// entity (user, client ID, their defaults, IP), the precedence that picks
// the quota a connection is held to, the windowed rates and token buckets
// that measure use against it, and the file that keeps the quotas.
//
// # Model
//
// An Entity is a set of at most one name per entity type ("user",
// "client-id", "ip"); a nil name is the type's default. A Set maps entities
// to their quota values (Kafka's keys: producer_byte_rate,
// consumer_byte_rate, request_percentage, controller_mutation_rate,
// connection_creation_rate). A Set is immutable: an alter builds a new one.
//
// Resolve picks, for a (user, client ID) pair and one key, the first entity
// that has the key in Kafka's order (ClientQuotaManager):
//
//  1. user=<user>,    client-id=<client>
//  2. user=<user>,    client-id=<default>
//  3. user=<user>
//  4. user=<default>, client-id=<client>
//  5. user=<default>, client-id=<default>
//  6. user=<default>
//  7. client-id=<client>
//  8. client-id=<default>
//
// and the tags of the sensor that measures use against it, which decide who
// shares the quota: a quota set for a user alone (3, 6) is shared by all of
// that user's clients; every other level is per (user, client ID) for the
// user levels and per client ID for the client-only ones, as Kafka's
// DefaultQuotaCallback tags its metrics.
//
// # Measuring
//
// Rate is Kafka's SampledStat Rate: Samples windows of Window each; the rate
// is the sum of the samples not older than Samples×Window divided by the
// time since the oldest sample began, counted as at least (Samples-1)
// windows. After recording, a rate above the bound gives a throttle time of
// (rate-bound)/bound × window-size (ClientQuotaManager.throttleTime).
// Bucket is Kafka's TokenBucket for controller_mutation_rate: a burst of
// rate × Samples × Window tokens that refills at rate per second.
//
// # Manager
//
// Manager is one broker's quotas: the Set in force (an atomic pointer,
// replaced whole by Alter after the file is written), whether any quota
// is set (On, the one load a request pays when none is), and the sensors:
// one per quota kind and tag pair (Sensor), one per IP for
// connection_creation_rate (ConnRate), made at first use and swept when
// idle for an hour, as Kafka expires them. Stats is their view for
// /metrics. AlterEntries is AlterClientQuotas: each entry validated
// alone, the valid ones applied together through Alter.
//
// # Enforcement
//
// A Conn is one connection's quotas (KIP-13, KIP-124, KIP-599), resolved
// once per connection and Set version (Manager.Conn resolves it anew
// after a change) for its user (the principal's name, ANONYMOUS without
// one) and client ID: the limit of each kind and the sensor shared by
// whoever the quota's entity covers. For each request the broker records
// against it:
//
//   - the time its handler took, as a percent of one thread, against
//     request_percentage (RecordRequest; the throttle is capped at one
//     window, as Kafka's ClientRequestQuotaManager caps it); SASL and
//     ApiVersions requests are exempt;
//   - a Produce's size against producer_byte_rate, a Fetch's response
//     size against consumer_byte_rate (Record); a throttled Fetch is
//     answered with no records and its bytes are taken back out
//     (Unrecord), as Kafka's handleFetchRequest does; a fetch's max_bytes
//     is cut to what the quota allows over the window (FetchMaxBytes,
//     Kafka's getMaxValueInQuotaWindow);
//   - CreateTopics, DeleteTopics and CreatePartitions take one token per
//     partition from the controller_mutation_rate bucket
//     (Manager.Mutation): the versions that know THROTTLING_QUOTA_EXCEEDED
//     are refused when the bucket is empty (strict), older ones only
//     throttled (permissive).
//
// connection_creation_rate (ip entities, KIP-612) is measured as a
// connection is accepted (Manager.ConnectionThrottle): one that takes its
// IP's rate over the quota is refused and taken back out of the rate.
// What a throttle does to the answer and the connection is the broker's
// (quotas.go). The package imports neither broker nor protocol
// (internal/lint checks that).
//
// # File format
//
// The quotas live in one file (DataDir/client_quotas), rewritten whole with
// vfs.WriteFileAtomic on every change:
//
//	magic "MKQUOTA\n" (8 bytes) | version u8 (1) | length u32 | crc32c u32 | payload
//
// Integers are big-endian; the CRC (Castagnoli) covers the payload, a JSON
// array of {"entity":[{"type":..,"name":..|null}],"values":{key:value}}
// objects. Decode checks magic, version, length and CRC, then that every
// entity and value would pass AlterClientQuotas' validation; anything else
// is an error naming what is wrong, and the broker refuses to start on it.
package quota
