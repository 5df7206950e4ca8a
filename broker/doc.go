// Package broker is minikafka's Kafka broker: one table of API keys
// (apis.go) drives dispatch, version checks and the ApiVersions answer, and
// one file per API key (00_produce.go, 01_fetch.go, ...) implements each
// request, starting with a comment on its versions and behaviour. Storage
// errors become Kafka error codes in exactly one place, errors.go.
//
// # State
//
// The topic table is copy-on-write: an atomic pointer to immutable maps by
// name and by ID, replaced whole under adminMu by CreateTopics,
// DeleteTopics and auto-creation. A topic's partition list and its config
// are atomic pointers too (CreatePartitions, AlterConfigs). So the hot
// paths — Produce, Fetch, ListOffsets, Metadata — take no broker-wide lock.
// Each partition is a logstore.Log (its own writer lock, immutable segment
// snapshots for readers, a Changed channel for long polls); all logs share
// one FileCache bounding open segment files.
//
// Topic metadata lives in DataDir/topics/<topic-id-hex>/topic.json
// (name, ID, partition count, explicitly set configs), replaced atomically;
// see topics.go for the layout and how interrupted creates and deletes are
// swept on start. Producer IDs are reserved in persisted blocks
// (producer_ids). Idempotent-producer sequence state is in memory per
// partition (the last five batches of each producer, as Kafka keeps). After
// a restart it is rebuilt lazily, at a partition's first idempotent
// produce, from the batch headers of the log's last few thousand offsets;
// a producer not seen there has no state and its next sequence is
// accepted, as Kafka does when it has no state for a producer.
//
// # Concurrency
//
// protocol calls Serve on each connection's reader goroutine, in request
// order; handlers that must wait (acks=all under fsync-always, long-poll
// Fetch) return a Reply.Wait that the connection's writer goroutine runs,
// so the reader keeps decoding pipelined requests meanwhile. Long polls
// block on the partitions' Changed channels, the max-wait timer, the
// connection's context and broker shutdown; nothing polls.
//
// Fetch responses with more than 32 KiB of records are fetchBody values:
// the connection's writer asks them to write themselves (protocol's
// BodyWriter), and they send each partition's segment-file ranges with
// sendfile(2) at explicit offsets, so record bytes never enter user space
// and readers sharing a cached descriptor never race on its position.
// The ranges stay pinned (logstore.ReadResult) until the response is
// written or dropped (protocol's Releaser).
//
// Lock order (take left before right, never the reverse):
//
//	Broker.adminMu → partition.mu → logstore.Log internals
//	Broker.hookMu and producerIDs.mu are leaves (nothing is taken under them)
//
// adminMu serializes topic creation, deletion, partition growth and config
// changes (and their metadata writes). partition.mu serializes an
// idempotent batch's sequence check, its append and the producer state
// update, so the sequence is judged against the log it lands in; batches
// without a producer ID append without it. Retention runs on a ticker
// goroutine calling logstore's EnforceRetention for each partition.
package broker
