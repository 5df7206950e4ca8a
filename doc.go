// Package minikafka embeds a Kafka-wire-compatible broker in
// a Go program or test.
//
//	b, err := minikafka.Start(ctx,
//		minikafka.WithDataDir("./data"),
//		minikafka.WithListenAddr("127.0.0.1:0"),
//		minikafka.WithTopic("orders", 3))
//	if err != nil {
//		return err
//	}
//	defer b.Close()
//	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...))
//
// Start returns once the data dir is recovered (every partition log
// checked, torn tails truncated) and the listener is bound; clients may
// connect as soon as it returns. With port 0 the broker advertises the port
// it actually bound. Close stops accepting, answers the requests already
// read, then flushes and closes the storage; it is idempotent.
//
// WithListeners serves several named listeners instead of the one of
// WithListenAddr (Kafka's listeners, advertised.listeners and
// listener.security.protocol.map; ParseListeners reads that syntax): each
// has a bind address, an advertised host:port and a security protocol
// (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) using the one WithTLS config
// and WithSASL user set. A client is always handed the advertised address
// of the listener it came in on, so a docker-compose network and the host
// can each reach the broker under their own name:
//
//	minikafka.WithListeners(
//		minikafka.ListenerSpec{Name: "INTERNAL", Addr: ":9092", Advertised: "minikafka:9092", Security: minikafka.Plaintext},
//		minikafka.ListenerSpec{Name: "EXTERNAL", Addr: ":29092", Advertised: "localhost:29092", Security: minikafka.SASLSSL})
//
// A data dir is locked (flock on its .lock file) while a broker uses it;
// a second Start on it fails with ErrDataDirLocked. The kernel drops the
// lock when the process dies, so a crash leaves nothing to clean up.
//
// Without WithDataDir the broker keeps everything in memory. With a data dir
// the durability policy defaults to "always": a produce with acks=all is
// answered only once its bytes are fsynced.
//
// The pieces: package protocol is the wire server (frames, headers,
// pipelining), package broker implements the Kafka APIs on top of logstore
// (partition logs) and groupstore (committed offsets). For tests, package
// minikafkatest starts a broker per test and hands out ready clients, and
// WithFS puts the broker's files on a filesystem the test supplies (a
// wrapper of OSFS that fails or delays what the test chooses); the
// minikafka command (cmd/minikafka) runs one from the shell.
//
// # Options
//
// Every option Start takes, by what it configures. Options apply in order;
// a later one overrides an earlier one that sets the same thing.
//
// Listeners and connections:
//   - [WithListenAddr]: the host:port to listen on; port 0 picks one (default 127.0.0.1:0).
//   - [WithListeners]: several named listeners, each with its own advertised address and security.
//   - [WithAdvertisedAddr]: the host:port Metadata hands to clients.
//   - [WithListener]: serve on a net.Listener the caller made (custom transports in tests).
//   - [WithNodeID]: node.id.
//   - [WithClusterID]: a fixed cluster ID instead of one generated and kept in the data dir.
//   - [WithMaxRequestBytes]: socket.request.max.bytes, the largest request frame.
//   - [WithQueuedMaxRequestBytes]: queued.max.request.bytes, request memory across all connections.
//   - [WithRequestReadTimeout]: how long a request may take to arrive once its length has.
//   - [WithSocketSendBufferBytes]: socket.send.buffer.bytes of each client connection.
//   - [WithIdleTimeout]: connections.max.idle.ms.
//   - [WithLogger]: the slog.Logger (default: nothing is logged).
//
// Storage and topics:
//   - [WithDataDir]: keep topics and state under a directory.
//   - [WithInMemory]: keep everything in memory (the default without a data dir).
//   - [WithFS]: keep the data dir on a filesystem the caller supplies (failure tests).
//   - [WithDurability]: the fsync policy by name: "always", "never" or "interval=D".
//   - [WithSyncPolicy]: WithDurability with a parsed logstore.SyncPolicy.
//   - [WithTopic]: create a topic at Start.
//   - [WithDefaultPartitions]: num.partitions, for auto-created topics.
//   - [WithAutoCreateTopics]: auto.create.topics.enable.
//   - [WithCompressedRecordValidation]: check the records inside compressed batches (default on).
//   - [WithLogCleanerBackoff]: log.cleaner.backoff.ms.
//   - [WithLogCleanerDedupeBufferSize]: log.cleaner.dedupe.buffer.size.
//
// Security:
//   - [WithTLS]: serve clients over TLS (SSL; SASL_SSL with WithSASL); mutual TLS through the tls.Config.
//   - [WithSASL]: require SASL PLAIN or SCRAM, with its users.
//   - [WithSASLOAuthBearer]: enable SASL/OAUTHBEARER, with unsecured or JWKS-verified tokens.
//   - [WithSASLMaxReauth]: connections.max.reauth.ms.
//   - [WithDelegationTokens]: delegation.token.secret.key, .max.lifetime.ms, .expiry.time.ms (tokens are on with SASL).
//   - [WithAuthorizer]: enforce ACLs (super.users, allow.everyone.if.no.acl.found).
//   - [WithSSLPrincipalMappingRules]: ssl.principal.mapping.rules.
//
// Consumer and share groups:
//   - [WithGroupInitialRebalanceDelay]: group.initial.rebalance.delay.ms (tests want 0).
//   - [WithGroupMinSessionTimeout]: group.min.session.timeout.ms (classic groups).
//   - [WithGroupMaxSessionTimeout]: group.max.session.timeout.ms (classic groups).
//   - [WithGroupConsumerSessionTimeout]: group.consumer.session.timeout.ms (KIP-848 groups).
//   - [WithGroupConsumerSessionTimeoutBounds]: group.consumer.min/max.session.timeout.ms.
//   - [WithGroupConsumerHeartbeatInterval]: group.consumer.heartbeat.interval.ms.
//   - [WithGroupConsumerHeartbeatIntervalBounds]: group.consumer.min/max.heartbeat.interval.ms.
//   - [WithGroupConsumerMaxSize]: group.consumer.max.size (GROUP_MAX_SIZE_REACHED past it).
//   - [WithOffsetsRetention]: offsets.retention.minutes.
//   - [WithOffsetsRetentionCheckInterval]: offsets.retention.check.interval.ms.
//   - [WithGroupShareMinRecordLockDuration]: group.share.min.record.lock.duration.ms.
//
// Quotas and client telemetry:
//   - [WithQuotaWindow]: quota.window.num and quota.window.size.seconds.
//   - [WithClientMetrics]: the KIP-714 metrics subscription clients are given.
//
// Uplink (forwarding topics to an upstream cluster):
//   - [WithUpstream]: the upstream cluster's bootstrap brokers.
//   - [WithForward]: the topic patterns to forward, with an optional upstream prefix.
//   - [WithUpstreamTLS]: TLS to the upstream.
//   - [WithUpstreamSASL]: SASL PLAIN or SCRAM to the upstream.
//   - [WithUpstreamClientOpts]: extra kgo options for the upstream client.
//   - [WithSpoolMaxBytes]: the bound of each forwarded partition's spool.
//   - [WithSpoolEncryptionKey]: encrypt the spool at rest, with older keys still readable.
//   - [WithForwardGroupOffsets]: sync consumer group offsets upstream (MirrorMaker 2's sync.group.offsets).
//   - [WithForwardCheckpoints]: write MirrorMaker 2 checkpoints upstream.
//
// HTTP endpoints:
//   - [WithHTTPAddr]: the web console, /metrics, /healthz and /readyz.
//   - [WithHTTPAddrAny]: let WithHTTPAddr listen on every interface.
//   - [WithMetricsAddr]: Prometheus /metrics alone.
//   - [WithAdminAddr]: the control API (the control surface below, as JSON over HTTP).
//   - [WithAdminToken]: the bearer token the control API requires.
//   - [WithSchemaRegistry]: a Confluent-compatible schema registry.
//   - [WithSchemaRegistryAny]: let WithSchemaRegistry listen on every interface.
//   - [WithSchemaRegistryAuth]: HTTP basic auth against the broker's SCRAM users.
//
// A simulated cluster (several nodes in this process, for tests):
//   - [WithNodes]: how many nodes, each with its own node ID and listeners.
//   - [WithRacks]: each node's broker.rack.
//   - [WithDefaultReplicationFactor]: default.replication.factor.
//   - [WithRackAwareReplicaSelector]: replica.selector.class RackAwareReplicaSelector (fetch from follower).
//   - [WithAutoLeaderRebalance]: auto.leader.rebalance.enable with its check interval.
//
// Tests:
//   - [WithStorageFaults]: put the data dir behind the switches of Broker.StorageFaults.
//   - [WithWaitTimeout]: bound the Wait methods called without a deadline.
//
// # Control surface
//
// A running Broker is steered and inspected from the program that embeds
// it, without a Kafka client; WithAdminAddr serves the same operations as
// JSON over HTTP (docs/control-api.md).
//
// Lifecycle and addresses:
//   - [Start]: recover the data dir, bind the listeners, serve.
//   - [Broker.Close]: drain and stop; idempotent.
//   - [Broker.Addr]: the advertised address of the first listener.
//   - [Broker.Addrs]: Addr as seed brokers for a client.
//   - [Broker.ListenAddr]: the bound address, with the real port.
//   - [Broker.Listeners]: every listener, bound and advertised.
//   - [Broker.Listener]: one listener by name.
//   - [Broker.DataDir]: the data directory ("" in memory).
//   - [Broker.HTTPAddr]: where WithHTTPAddr bound.
//   - [Broker.MetricsAddr]: where WithMetricsAddr bound.
//   - [Broker.AdminAddr]: where WithAdminAddr bound.
//   - [Broker.SchemaRegistryAddr]: where WithSchemaRegistry bound.
//   - [Broker.SchemaRegistryURL]: the schema registry's URL for a serializer.
//
// Seeding and reading records:
//   - [Broker.CreateTopic]: create a topic with configs.
//   - [Broker.Seed]: write records to existing topics, one batch per partition.
//   - [Broker.SeedTransaction]: produce records in one transaction, committed or aborted.
//   - [Broker.Records]: read a partition's records, all or committed only.
//
// Inspection:
//   - [Broker.PartitionOffsets]: log start, high watermark, last stable offset.
//   - [Broker.GroupOffsets]: a group's committed offsets.
//   - [Broker.GroupState]: a group's state and member count.
//   - [Broker.GroupLag]: a group's lag per partition of a topic.
//   - [Broker.GroupMembers]: a group's members and their assignments.
//   - [Broker.Transaction]: one transactional ID's state.
//   - [Broker.Transactions]: every transactional ID's state.
//   - [Broker.Producers]: the producers a partition holds state for.
//   - [Broker.ForwardStats]: each forwarded partition's lag, spool and last error.
//   - [Broker.ForwardGroupOffsets]: the last pass of the group offset sync.
//
// Waits (bounded by the context, or WithWaitTimeout):
//   - [Broker.WaitTopic]: until a topic exists.
//   - [Broker.WaitHighWatermark]: until a partition reaches an offset.
//   - [Broker.WaitGroupStable]: until a group is Stable with n members.
//   - [Broker.WaitLagZero]: until a group has consumed a topic to its end.
//   - [Broker.WaitTransaction]: until a transactional ID has no transaction open.
//
// Faults:
//   - [Broker.AddFault]: install a Fault on matching requests (error, delay, hold, drop, throttle).
//   - [Broker.RemoveFault]: remove one.
//   - [Broker.ReleaseFault]: let the answers a Hold fault keeps go out.
//   - [Broker.Faults]: the installed faults and how often each fired.
//   - [Broker.ClearFaults]: remove them all.
//   - [Broker.PausePartition]: answer NOT_LEADER_OR_FOLLOWER for a partition, as in a leader change.
//   - [Broker.CoordinatorUnavailable]: a group's coordinator answers not available, or loading.
//   - [Broker.Throttle]: set throttle_time_ms on answers.
//   - [Broker.SetRTT]: delay every answer on a connection.
//   - [Broker.Down]: close every connection and unbind the listeners, state kept.
//   - [Broker.Up]: end Down, on the same addresses.
//   - [Broker.IsDown]: whether Down is in force.
//   - [Broker.StorageFaults]: fail or slow fsyncs, fill the disk (WithStorageFaults).
//   - [Broker.EnableRequestLog]: keep the last n requests.
//   - [Broker.RequestLog]: the kept requests.
//
// The simulated cluster (WithNodes):
//   - [Broker.Nodes]: the nodes, which are up, which is the controller.
//   - [Broker.StopNode]: a node dies: leaders, ISRs and coordinators move.
//   - [Broker.StartNode]: it comes back and rejoins the ISRs.
//   - [Broker.MoveLeader]: move a partition's leader (a new leader epoch).
//   - [Broker.SetISR]: shrink or grow a partition's in-sync replicas.
//   - [Broker.MoveCoordinator]: move a group's or transactional ID's coordinator.
//   - [Broker.Coordinator]: the node coordinating a group or transactional ID.
//   - [Broker.Placement]: a partition's replicas, ISR, leader and epoch.
package minikafka

// The files of this package, from the top; a file uses only files on its
// own line or below:
//   - start.go: Start's steps, the only file that knows every part.
//   - admin.go and admin_*.go: the control API, the methods below as JSON.
//   - seed.go, faults.go, inspect.go, console.go, cluster.go, lock_*.go: the Broker's
//     methods, each over package broker's own, and the data dir's lock.
//   - minikafka.go: the Broker, its addresses and Close.
//   - schemaregistry.go, http.go, metrics.go: what is served beside the
//     Kafka listeners; each is handed what it serves and knows no Broker.
//   - config.go: the checks across options, and the settings Start uses.
//   - options.go: every option, the value it takes and the field it sets.
//   - inprocess.go, httpserve.go, storagefaults.go, listeners.go: the parts
//     the others share.
