// Package configs is the broker's config resources as DescribeConfigs,
// AlterConfigs, IncrementalAlterConfigs and ListConfigResources see them:
// for each resource type (TOPIC, BROKER, BROKER_LOGGER, GROUP,
// CLIENT_METRICS) what a describe reports — values, sources, synonyms in
// precedence order, types, documentation, sensitive values hidden — and
// how an alteration is validated, in Kafka's words, persisted and applied.
//
// What each config means lives below it: topic configs and their
// validation in topicconfig, which broker configs exist and may change
// dynamically (KIP-226) in brokerconfig, client-metrics subscriptions'
// matching in telemetry, share group configs in the share coordinator.
// This package ties them to the resources:
//
//   - TOPIC: a topic's explicitly set configs, replaced whole
//     (AlterConfigs) or changed op by op (IncrementalAlterConfigs), stored
//     by the broker in the topic's metadata and applied to its partitions.
//   - BROKER: the dynamic broker configs, per broker (named by a node ID)
//     or the cluster default (named ""), kept in DynamicFile in the data
//     dir. Their topic config synonyms are the defaults of every topic
//     without its own value (Rebase). Static settings the broker runs with
//     (Settings) are described read-only.
//   - BROKER_LOGGER: described empty; not alterable here.
//   - GROUP: the share.* configs of KIP-932 and the consumer.* configs of
//     KIP-848, stored by the share coordinator with its state and checked
//     against the group coordinator's bounds (GroupBounds).
//   - CLIENT_METRICS: KIP-714 subscriptions, kept in ClientMetricsFile and
//     handed to the telemetry registry as rules.
//
// It takes decoded kmsg requests' parts and gives answers with Kafka
// error codes; the broker's 32, 33, 44 and 74 files are the adapters that
// authorize, decode and encode. It sees the broker only through the
// Broker and Nodes interfaces it declares, and imports neither broker nor
// protocol (internal/lint checks that).
//
// # Concurrency
//
// Describe, ParseTopic, Dynamic and ClientMetricsNames read atomically
// replaced state and take no lock. Alterations, Load and Rebase must not
// run concurrently with each other: the broker calls them holding its
// adminMu, which also orders them against topic creation and deletion.
// Files are replaced whole (vfs.WriteFileAtomic) before the state in
// memory changes, so a failed write changes nothing.
package configs
