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
// A topic's config is a topicconfig.Config (broker/internal/topicconfig:
// the topic configs Kafka defines, their validation, the effective values
// over the dynamic broker defaults and what the log, produce validation
// and the cleaner derive from them). Which broker configs exist and may
// change dynamically (KIP-226), at which level, and the validation of a
// new set are broker/internal/brokerconfig. The config resources are
// broker/internal/configs (a configs.Manager, opened with the rest of
// storage): describing every resource type with sources, synonyms and
// defaults, validating and applying alterations of topics, the dynamic
// broker configs (broker_configs.json, their topic synonyms rebased onto
// every topic), group configs (stored by the share coordinator) and
// client-metrics subscriptions (client_metrics.json, handed to the
// telemetry registry as rules). It sees the broker through configsView
// (configs.go): topic configs read, written to topic.json and applied to
// the partitions, the static settings, the share coordinator's group
// configs. The API files 32, 33, 44 and 74 authorize, hold adminMu while
// altering (so alterations are ordered with topic creation and deletion)
// and encode; the manager takes no lock of its own, its state is in
// atomic pointers replaced after the file is written.
//
// A partition's records are in its store (partitionStore,
// partition_store.go): its logstore.Log (its own writer lock, immutable
// segment snapshots for readers, a Changed channel for long polls; all
// logs share one FileCache bounding open segment files) or, for a
// forwarded topic, its uplink.Forwarder's spool (Forwarding, below). The store is
// chosen once per partition (the log when it is opened, the spool the first
// time a forwarded partition is used; never back), and Produce, Fetch,
// ListOffsets, OffsetForLeaderEpoch, the cleaner and the producer-state
// rebuild go through it without asking which one it is. At that interface
// offsets are Kafka offsets and ends are exclusive (log end, high
// watermark, the end a produce waits to be durable), as logstore's; the
// forwarder converts the spool's inclusive sequence numbers. Who owns what:
// the partition (topics.go) owns its store and its idempotent-producer
// state (a producers.State, below); the store owns the records and their offsets; the
// transaction coordinator (txn.go) owns the partition's open and aborted
// transactions, from which a log's last stable offset is computed. What
// manages the log as such (retention, DeleteRecords, DescribeLogDirs
// sizes, AlterConfigs' log settings, transaction markers, close and
// delete) still addresses partition.log, which a forwarded partition no
// longer writes: DeleteRecords on a forwarded topic acts on that log, not
// on the spool, whose records go only once the upstream has them.
//
// Topic metadata lives in DataDir/topics/<topic-id-hex>/topic.json
// (name, ID, partition count, explicitly set configs), replaced atomically;
// see topics.go for the layout and how interrupted creates and deletes are
// swept on start. Producer IDs are reserved in persisted blocks
// (producer_ids). SCRAM credentials changed through
// AlterUserScramCredentials are in scram_credentials.json (its format is
// in broker/internal/sasl's doc). Delegation tokens and, when
// SASLConfig.DelegationTokenSecret is empty, the generated secret are in
// delegation_tokens.json (broker/internal/dtoken's doc).
// DataDir/clean_shutdown is written after a Close without errors and
// removed at the next start: it says the logs are durable as they are, and
// carries each partition directory's listing so the start need not read
// 10 000 directories (broker/internal/cleanstop has its format).
// Idempotent-producer state is broker/internal/producers: a
// producers.State per partition, held by value in the partition and used
// under partition.mu (the last five batches of each producer, as Kafka
// keeps; the sequence check and record, expiry, a forwarded partition's
// snapshot beside its spool), one implementation whatever the store, and
// producers.IDs, the producer_ids reservation. It knows nothing of
// partitions: after a restart, State.Rebuild reads the batch headers of
// the store's last few thousand offsets through the store's
// eachBatchHeader, lazily at a partition's first idempotent produce from a
// log, when the spool is opened for a forwarded partition. A producer not
// seen there has no state and its next sequence is accepted, as Kafka does
// when it has no state for a producer.
//
// # A simulated cluster
//
// With Config.Nodes the broker answers as several nodes (cluster.go): each
// node's listeners carry its ID (Listener.Node, protocol.Config.Node), and
// requests are routed as Kafka's brokers route them: partition requests
// to the partition's leader (NOT_LEADER_OR_FOLLOWER elsewhere, with
// KIP-951's new leader), group and transaction requests to their
// coordinator (NOT_COORDINATOR). The state — nodes, coordinator slots,
// each partition's replicas, ISR, leader and leader epochs — is
// broker/internal/cluster; a partition's placement is kept in
// partition.place and in its topic's topic.json. The data is stored once.
// The changes of placements — a node stopped or started, a leader moved,
// an ISR set, ElectLeaders and auto.leader.rebalance.enable, reassignments
// — and DescribeQuorum's answer are broker/internal/cluster's too: they
// see the broker's partitions through cluster.Partitions (clusterView in
// cluster.go, used under adminMu), whose Set stores a placement under
// partition.mu with the epoch Placement.Follow gives it. The broker keeps
// the routing (reqNode, leaderCode, routeCoordinated) and the control
// API's methods.
//
// # Group coordinator
//
// The group coordinator is broker/internal/groups: the classic and KIP-848
// protocols, assignors, committed offsets, the group answers (their
// validation, their shape, the group APIs' behaviour documented on its
// methods) and its settings (groups.Settings, which broker.GroupConfig
// aliases). The broker opens it with the rest of storage (groups.go:
// newGroupCoordinator) and shows it itself only through groupsView. The
// group API files (08–16, 42, 47, 68, 69) are adapters: they decode,
// refuse a share group's ID, route in a cluster (FindCoordinator's
// locate, ListGroups' keep), and hand the coordinator the request with
// the authorizer's word on the principal (groups.Access, groupAccess: nil
// when nothing is checked), which it uses to refuse or hide groups and
// topics in its answers. The transaction coordinator hands it a committed
// transaction's offsets (CommitTransactionalOffsets) and answers its
// require_stable question (TxnOffsetPending). Its locks are its own (see
// its doc); none of the broker's locks is held while it runs, except that
// a transaction's commit holds txnState.mu across CommitTransactionalOffsets.
//
// # Share groups
//
// The share-group coordinator (KIP-932) is broker/internal/share:
// membership, share sessions, every share-partition's record state and its
// file, and the reading of a ShareFetch's records: ReadRecords reads the
// batches holding the acquired offsets, Fetch.Read cuts them to MaxBytes
// and archives aborted transactions under read_committed, and FetchBody
// writes the answer with one writev from pooled buffers. It sees the
// broker through share.Broker and share.Records (shareView in share.go:
// topic lookups, store reads, the aborted index, Changed channels, error
// codes); the 76–79 and 90–92 files decode, check authorization and hand
// it the request. Its lock order is under Concurrency.
//
// # Log cleaner
//
// The log cleaner is broker/internal/cleaner: its loop, the choice of the
// partition to clean, and AbortedNeeded (whether an aborted transaction's
// index entry must stay once compaction may have removed its marker).
// cleaner.go hands it the compacted topics' partitions with the store each
// uses now (a spool is never opened for it) and the transaction
// coordinator's ForgetAborted.
//
// # Transaction coordinator
//
// The transaction coordinator is broker/internal/txn: transactional IDs
// and their state machine, the transaction log, commit and abort markers,
// timeouts, and per partition the LSO and the aborted-transactions index.
// The broker opens its log with the rest of storage and starts it after
// the topics (txn.go: openTxnLog, newTxnCoordinator). It sees the broker
// only through interfaces it declares, implemented in txn.go: a partition
// (*partition: offsets, batch headers, appending a marker under
// partition.mu against the producer state, durability), partition lookup,
// producer IDs, the group coordinator and the uplink. The transactional
// API files (22, 24–28, 65, 66) decode, check authorization and log; the
// produce and fetch paths ask it through txnCoordinator (BeginProduce,
// Producing/Produced, LastStable, AbortedIn).
//
// # Listeners
//
// The broker serves any number of protocol servers (one per listener). With
// Config.Listeners, each protocol.ConnInfo.Listener name selects the
// advertised host:port that Metadata, FindCoordinator and DescribeCluster
// hand out (AdvertisedFor), as Kafka answers with the endpoint of the
// listener a request came in on, and whether the connection must pass SASL
// first (Listener.SASL; a connection of an unknown listener must, failing
// closed). Without Config.Listeners there is one listener at
// AdvertisedHost:AdvertisedPort and Config.SASL applies to every
// connection. TLS is the protocol server's, per listener. The advertised
// address, the listeners and the choice of a node's address are
// broker/internal/listeners (a listeners.Set, atomic pointers replaced
// whole; Listener is its type); the broker hands it the listener name and
// node of a request's connection and whether the cluster has several nodes.
//
// # SASL
//
// The mechanisms, the credentials derived at start and the SCRAM store are
// broker/internal/sasl; the OAUTHBEARER token validator is
// broker/internal/oauth. Neither imports broker or protocol. The broker
// keeps what depends on connections and requests: the per-connection
// state machine (sasl.go, run by saslGate before dispatch, its state in
// protocol.ConnInfo.Auth), which opens a sasl.Exchange per authentication
// and feeds it the client's tokens, and enforces the sasl.Session it keeps
// beside (the session's end, re-authentication at most once a second, the
// same principal), and the handlers (17, 36, 50, 51), which turn the
// package's errors into Kafka codes. The store's RWMutex is its own and is
// never held while anything else runs; a Session has no lock (one request
// of a connection at a time).
//
// # Authorization
//
// The authorizer is broker/internal/acl: the bindings (acl.Store: the
// immutable acl.Set in force behind an atomic pointer, replaced whole once
// DataDir/acls holds the change), Kafka's StandardAuthorizer decision, the
// per-connection decision cache (acl.Conn, kept in ConnInfo.Authz), the
// checks that refuse a request whole before its handler
// (acl.WholeRequestCheck) and the per-topic split of the requests a
// coordinator answers whole (acl.Request.SplitTopics). It imports neither
// broker nor protocol. The broker (acls.go) derives a connection's
// principal (SASL user, mapped TLS subject or ANONYMOUS) and host, opens
// one acl.Request per request (authz, which logs the denials acl reports
// through acl.Denials), and hands SplitTopics the topic IDs and error
// responses it needs (acl.Splitter); handlers 29–31 convert the requests
// and answer. A decision takes no lock; acl.Store's alterMu is held only
// across a change's file write, under no broker lock.
//
// # Delegation tokens
//
// Delegation tokens (KIP-48) are broker/internal/dtoken: the tokens, their
// file, the SCRAM credentials a token logs in with (the SCRAM store asks
// it as its sasl.TokenSource), who owns and may see or renew a token
// (OwnerOf, Describe) and the Kafka code of each refusal (dtoken.Code). It
// imports neither broker nor protocol. The broker keeps whether a
// connection may ask for tokens at all (tokenRefusal: not over a token's
// session or without an authenticated principal) and the authorizer's
// checks, which it hands Describe as a function. dtoken.Manager.mu is a
// leaf, held across the file write.
//
// # Client quotas
//
// Client quotas are broker/internal/quota: the quotas by entity, their
// precedence, the windowed rates and token buckets, the file, the
// AlterClientQuotas validation (Manager.AlterEntries) and a connection's
// resolved quotas with what each request records against them
// (quota.Conn, kept in ConnInfo.Quota; Manager.Mutation for
// controller_mutation_rate, Manager.ConnectionThrottle for
// connection_creation_rate). It imports neither broker nor protocol. The
// broker (quotas.go) measures each request in serveQuota, puts the
// throttle into the answer, holds the answer back for clients that do not
// throttle themselves, mutes the connection and answers a throttled Fetch
// empty. Lock order is under Concurrency.
//
// # Faults and the request log
//
// Fault injection is broker/internal/faults (the faults, their matching
// and firing, holds, the shape of an injected error in each response);
// the request log's ring is broker/internal/reqlog. Neither imports
// broker or protocol. Serve asks each for its state with one atomic load
// (nil when off) and keeps what needs dispatch and the connection:
// serveFaults (faults.go) picks the fault that fires and lets it act
// (Armed.Serve, in faults: it drops the connection, answers with its
// error, splits a produce, hands Fetch, ListOffsets and
// OffsetForLeaderEpoch a partition-scoped error through the context
// (partitionFault), calls its callback, or wraps the answer), handing the
// broker's dispatch what it leaves to the handler;
// serveLogged (reqlog.go) fills a reqlog.Entry and adds it when the
// answer is ready. Their mutexes are leaves. Record inspection
// (ReadRecords, for the control API) decodes a partition as a consumer
// would in broker/internal/inspect, which reads the store and the aborted
// transactions through inspectPartition (inspect_records.go).
//
// # Topic administration, features, the shutdown marker, error answers
//
// Topic administration apart from the table is broker/internal/topics:
// the files of a topic (Scan reads every topic.json and sweeps the debris
// of interrupted creates and deletes, WriteMeta, RemoveDir with its
// full-disk fallback and topics.ErrNotDeleted), new IDs, a partition's
// placement after a restart (Restore), the parallel open of partition
// logs (Parallel), and the rules of CreateTopics and CreatePartitions
// (ValidateCreate, CheckGrow). It asks the broker back through
// topics.Admin (topicsAdmin: whether a topic exists, configs over the
// dynamic defaults, creating __consumer_offsets) and is called under
// adminMu; it takes no lock of its own. The broker keeps the topic table,
// the partitions and their logs, the authorizer's checks, quotas and the
// answers (topics.go and handlers 19, 20, 21, 37); topic lookups on the
// produce and fetch path never reach the package.
//
// The features table (what ApiVersions v3+ lists, what UpdateFeatures may
// change and its answers) is broker/internal/features; the levels that
// change are the transaction coordinator's, which it reaches through
// features.Levels (txn.Coordinator implements it and persists
// transaction.version in its log; the coordinator's own locks apply).
// The clean-shutdown marker (its file, format and the listings' keys) is
// broker/internal/cleanstop: broker.go takes it before the logs open,
// drops it once they are, and marks it after a Close without errors; it
// holds no state. A request's own error answer built from kmsg alone
// (ILLEGAL_SASL_STATE mid-exchange, a group refused whole, a node that is
// not the coordinator) is broker/internal/errresp's For. None of the four
// imports broker or protocol (internal/lint's rule "admin").
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
// written or dropped (protocol's Releaser). Fetch sessions (KIP-227) are
// broker/internal/fetchsession's cache: handleFetch asks it which
// partitions an incremental request reads (Cache.Begin) and tells it what
// the answer says of each (Cache.Finish, fetchState.sent), which decides
// the partitions an incremental answer leaves out.
//
// Lock order (take left before right, never the reverse):
//
//	Broker.adminMu → partition.mu → logstore.Log internals
//	uplink.Uplink.mu → partition.mu → spool internals (opening a forwarded
//	partition's store: fwdPartition.UseSpool); uplink.Forwarder.commitMu →
//	partition.mu (fwdPartition.Producers)
//	txnState.mu → partition.mu → partTxn.mu (transactions, broker/internal/txn)
//	txn.Log.mu → partTxn.mu (keepAborted, while the transaction log compacts)
//	txnState.mu → the group coordinator's locks (CommitTransactionalOffsets)
//	Broker.adminMu → share.Coordinator.mu (group configs, deleted topics)
//	share.Coordinator.mu → the group coordinator's locks (OtherGroup, under
//	ShareGroupDescribe); partition stores are read under it lock-free
//	Broker.hookMu and producers.IDs.mu are leaves (nothing is taken under them);
//	so is txn.Coordinator.mu, which the group coordinator may take under its
//	group.mu (TxnOffsetPending), and txnShipper.mu, which a commit takes
//	under txnState.mu (noteCommit, broker/uplink)
//	Broker.adminMu → quota Bucket.mu (controller_mutation_rate,
//	quota.Manager.Mutation);
//	quota.Manager.alterMu → the quota file write; quota.Manager.sensorMu,
//	quota Rate.mu and Bucket.mu are otherwise leaves
//	acl.Store.alterMu → the ACL file write; dtoken.Manager.mu → the token
//	file write; both are taken under no other lock
//
// adminMu serializes topic creation, deletion, partition growth and config
// changes (and their metadata writes). partition.mu serializes an
// idempotent batch's sequence check, its append and the producer state
// update, so the sequence is judged against the store it lands in; batches
// without a producer ID append without it. Retention runs on a ticker
// goroutine calling logstore's EnforceRetention for each partition.
//
// # Compressed produce
//
// A compressed batch is stored as the producer sent it, after every record
// inside has been checked by streaming through the codec (Kafka's
// LogValidator rules); broker/internal/recordcheck's doc has the model,
// the bounds, the compression.type rebuild and the
// -validate-compressed-records=false opt-out.
//
// # Forwarding (package broker/uplink; uplink_adapter.go)
//
// With Config.Uplink, partitions of topics matching an uplink.ForwardRule
// keep their records in a spool instead of their log and are shipped to an
// upstream cluster by package uplink, which owns the spools, the
// forwarders, the upstream transactions, the group offset sync and their
// state files; its doc.go describes the model. The broker's side is
// uplink_adapter.go. The uplink sees the broker through uplink.Env and
// uplink.Partition (fwdPartition: names, partition count, the transaction
// coordinator's state of the partition, its producer state); the broker
// sees the uplink through uplinkLink (start, close, open, noteCommit from
// txn.go, ForwardStats and ForwardGroupOffsets for forward-status, the
// console and /metrics). A forwarded partition's store is forwarder, a
// partitionStore over uplink.Forwarder, so Produce, Fetch, ListOffsets,
// idempotence checks and the producer-state rebuild are the same code as
// for logs; a produced batch is validated as usual (fully, since the
// forwarder may decode it) and appended as one spool record spanning its
// NumRecords offsets; acks=all under fsync=always waits for the spool's
// durability.
//
// Backpressure: from spool pressure 0.9 produce responses carry
// throttle_time_ms (100 ms rising to 1 s at 1.0); a full spool answers
// KAFKA_STORAGE_ERROR, retriable for kgo, librdkafka and the Java client,
// so producers back off and retry; nothing is dropped. ForwardStats and
// DescribeConfigs on a forwarded topic (read-only minikafka.forward.*
// entries; minikafka.forward.partitions, per partition as JSON, and
// minikafka.forward.group.offsets, the group offset sync rows as JSON, only
// when named, which `minikafka forward-status` asks for) show lag, spool bytes,
// pressure, state and the last upstream error; the root package's metrics
// endpoint exports the same per partition.
//
// Transactions: a transactional producer writes to a forwarded topic as to
// any other. Its batches and the coordinator's markers go into the spool;
// the coordinator keeps the partition's open and aborted transactions as
// for a log (it reaches records only through partitionStore, by txn.go's
// txn.Partition), so local read_committed consumers see the last stable
// offset and the aborted index. Before writing the markers of a commit,
// the coordinator tells the uplink which forwarded partitions hold its
// data (txn.Uplink, txnUplink in txn.go, then noteCommit); the uplink
// ships committed transactions whole inside upstream transactions, and
// never aborted data or markers. Not shipped in the transaction: a group
// offset committed in it (TxnOffsetCommit); once committed it is the
// group's offset here, which -forward-group-offsets syncs on its own
// schedule.
//
// Not forwarded: records a topic held in its log before it became
// forwarded (its offsets continue from the log end, but the old records
// are no longer served).
package broker
