package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;

/** Admin client scenarios. */
final class Admins {
    private Admins() {}

    static void topics(Ctx c) throws Exception {
        String t = "java-admin-topic";
        try (Admin a = Admin.create(c.props())) {
            NewTopic nt = new NewTopic(t, 2, (short) 1).configs(Map.of("cleanup.policy", "compact", "retention.ms", "3600000"));
            // validateOnly creates nothing.
            Check.get(a.createTopics(List.of(nt), new CreateTopicsOptions().validateOnly(true)).all());
            Check.that(!Check.get(a.listTopics().names()).contains(t), "validateOnly created %s", t);
            Check.get(a.createTopics(List.of(nt)).all());
            Check.fails(a.createTopics(List.of(nt)).all(), TopicExistsException.class, "creating it again");
            Check.fails(a.createTopics(List.of(new NewTopic("java bad name", 1, (short) 1))).all(),
                    org.apache.kafka.common.errors.InvalidTopicException.class, "a name with a space");
            Check.fails(a.createTopics(List.of(new NewTopic("java-admin-bad-config", 1, (short) 1).configs(Map.of("cleanup.policy", "sideways")))).all(),
                    InvalidConfigurationException.class, "a bad cleanup.policy");
            Check.that(Check.get(a.listTopics().names()).contains(t), "listTopics misses %s", t);
            TopicDescription d = Check.get(a.describeTopics(List.of(t)).allTopicNames()).get(t);
            Check.eq(2, d.partitions().size(), "partitions");
            Check.that(d.topicId() != null && !d.topicId().equals(org.apache.kafka.common.Uuid.ZERO_UUID), "no topic id");
            Check.that(d.partitions().get(0).leader() != null, "partition 0 has no leader");
            // By id as well as by name.
            TopicDescription byID = Check.get(a.describeTopics(org.apache.kafka.common.TopicCollection.ofTopicIds(List.of(d.topicId()))).allTopicIds()).get(d.topicId());
            Check.eq(t, byID.name(), "topic described by id");
            Check.get(a.createPartitions(Map.of(t, NewPartitions.increaseTo(5))).all());
            Check.eq(5, Check.get(a.describeTopics(List.of(t)).allTopicNames()).get(t).partitions().size(), "partitions after CreatePartitions");
            Check.fails(a.createPartitions(Map.of(t, NewPartitions.increaseTo(3))).all(), InvalidPartitionsException.class, "shrinking");
            Check.get(a.deleteTopics(List.of(t)).all());
            Check.waitFor("topic deleted", Duration.ofSeconds(10), () -> {
                try {
                    return !Check.get(a.listTopics().names()).contains(t);
                } catch (Exception e) {
                    return false;
                }
            });
            Check.fails(a.deleteTopics(List.of(t)).all(), UnknownTopicOrPartitionException.class, "deleting it again");
        }
    }

    static void listOffsetsDeleteRecords(Ctx c) throws Exception {
        String t = "java-admin-offsets";
        Clients.createTopic(c, t, 1, null);
        long base = System.currentTimeMillis() - 100_000;
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            for (int i = 0; i < 10; i++) {
                // Timestamps base, base+1s, ...; the largest is record 7.
                long ts = i == 7 ? base + 50_000 : base + i * 1000L;
                p.send(new ProducerRecord<>(t, 0, ts, null, "o" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition(t, 0);
        try (Admin a = Admin.create(c.props())) {
            Check.eq(0L, offset(a, tp, OffsetSpec.earliest()).offset(), "earliest");
            Check.eq(10L, offset(a, tp, OffsetSpec.latest()).offset(), "latest");
            Check.eq(3L, offset(a, tp, OffsetSpec.forTimestamp(base + 2500)).offset(), "offset for a timestamp");
            ListOffsetsResultInfo max = offset(a, tp, OffsetSpec.maxTimestamp());
            Check.eq(7L, max.offset(), "offset of the max timestamp");
            Check.eq(base + 50_000, max.timestamp(), "max timestamp");
            Check.eq(-1L, offset(a, tp, OffsetSpec.forTimestamp(base + 1_000_000)).offset(), "offset for a timestamp past all");
            long low = Check.get(a.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4))).lowWatermarks().get(tp)).lowWatermark();
            Check.eq(4L, low, "low watermark after DeleteRecords");
            Check.eq(4L, offset(a, tp, OffsetSpec.earliest()).offset(), "earliest after DeleteRecords");
            Check.fails(a.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(11))).all(),
                    org.apache.kafka.common.errors.OffsetOutOfRangeException.class, "DeleteRecords past the end");
        }
        List<Rec> rest = Clients.readAll(c, t, 1, 6, null);
        Check.eq(4L, rest.get(0).o, "first offset read after DeleteRecords");
    }

    static ListOffsetsResultInfo offset(Admin a, TopicPartition tp, OffsetSpec spec) throws Exception {
        return Check.get(a.listOffsets(Map.of(tp, spec)).partitionResult(tp));
    }

    static void configs(Ctx c) throws Exception {
        String t = "java-admin-configs";
        Clients.createTopic(c, t, 1, Map.of("retention.ms", "7200000"));
        ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, t);
        try (Admin a = Admin.create(c.props())) {
            Config cfg = Check.get(a.describeConfigs(List.of(tr)).all()).get(tr);
            ConfigEntry ret = cfg.get("retention.ms");
            Check.eq("7200000", ret.value(), "retention.ms");
            Check.eq(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, ret.source(), "retention.ms source");
            ConfigEntry seg = cfg.get("segment.bytes");
            Check.that(seg != null && seg.isDefault(), "segment.bytes: %s, want a default", seg);
            Check.get(a.incrementalAlterConfigs(Map.of(tr, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND)))).all());
            cfg = Check.get(a.describeConfigs(List.of(tr)).all()).get(tr);
            Check.that(cfg.get("retention.ms").isDefault(), "retention.ms after DELETE: %s", cfg.get("retention.ms"));
            Check.eq("2000000", cfg.get("max.message.bytes").value(), "max.message.bytes");
            Check.eq("delete,compact", cfg.get("cleanup.policy").value(), "cleanup.policy after APPEND");
            Check.fails(a.incrementalAlterConfigs(Map.of(tr, List.of(
                    new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all(),
                    InvalidConfigurationException.class, "an unknown topic config");
            Check.fails(a.incrementalAlterConfigs(Map.of(tr, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all(),
                    InvalidConfigurationException.class, "a non-numeric retention.ms");
            // The broker's own configs.
            Node n = Check.get(a.describeCluster().nodes()).iterator().next();
            ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(n.id()));
            Config bc = Check.get(a.describeConfigs(List.of(br)).all()).get(br);
            Check.that(bc.get("log.retention.hours") != null || bc.get("log.retention.ms") != null, "broker configs lack log retention");
            Check.that(bc.get("group.consumer.heartbeat.interval.ms") != null, "broker configs lack group.consumer.heartbeat.interval.ms");
            // ListConfigResources names the topic.
            Collection<ConfigResource> rs = Check.get(a.listConfigResources(Set.of(ConfigResource.Type.TOPIC), new org.apache.kafka.clients.admin.ListConfigResourcesOptions()).all());
            Check.that(rs.contains(tr), "listConfigResources(TOPIC) misses %s: %s", t, rs);
        }
    }

    /** KIP-848 and KIP-932 group configs (the GROUP config resource). */
    static void groupConfigs(Ctx c) throws Exception {
        String g = "java-group-configs";
        ConfigResource gr = new ConfigResource(ConfigResource.Type.GROUP, g);
        try (Admin a = Admin.create(c.props())) {
            Config cfg = Check.get(a.describeConfigs(List.of(gr)).all()).get(gr);
            for (String name : List.of("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms", "share.auto.offset.reset", "share.record.lock.duration.ms")) {
                Check.that(cfg.get(name) != null && cfg.get(name).isDefault(), "group config %s: %s, want a default", name, cfg.get(name));
            }
            Check.get(a.incrementalAlterConfigs(Map.of(gr, List.of(
                    new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("consumer.heartbeat.interval.ms", "6000"), AlterConfigOp.OpType.SET)))).all());
            cfg = Check.get(a.describeConfigs(List.of(gr)).all()).get(gr);
            Check.eq("50000", cfg.get("consumer.session.timeout.ms").value(), "consumer.session.timeout.ms");
            Check.eq(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG, cfg.get("consumer.session.timeout.ms").source(), "consumer.session.timeout.ms source");
            Check.eq("6000", cfg.get("consumer.heartbeat.interval.ms").value(), "consumer.heartbeat.interval.ms");
            // Outside the broker's group.consumer.min/max bounds.
            for (String[] bad : new String[][] {{"consumer.session.timeout.ms", "1000"}, {"consumer.session.timeout.ms", "3600000"},
                    {"consumer.heartbeat.interval.ms", "10"}, {"consumer.heartbeat.interval.ms", "3600000"}, {"consumer.heartbeat.interval.ms", "often"}}) {
                Check.fails(a.incrementalAlterConfigs(Map.of(gr, List.of(
                        new AlterConfigOp(new ConfigEntry(bad[0], bad[1]), AlterConfigOp.OpType.SET)))).all(),
                        InvalidConfigurationException.class, bad[0] + "=" + bad[1]);
            }
            Check.fails(a.incrementalAlterConfigs(Map.of(gr, List.of(
                    new AlterConfigOp(new ConfigEntry("consumer.no.such", "1"), AlterConfigOp.OpType.SET)))).all(),
                    InvalidConfigurationException.class, "an unknown group config");
            Check.get(a.incrementalAlterConfigs(Map.of(gr, List.of(
                    new AlterConfigOp(new ConfigEntry("consumer.session.timeout.ms", null), AlterConfigOp.OpType.DELETE)))).all());
            cfg = Check.get(a.describeConfigs(List.of(gr)).all()).get(gr);
            Check.that(cfg.get("consumer.session.timeout.ms").isDefault(), "consumer.session.timeout.ms after DELETE: %s", cfg.get("consumer.session.timeout.ms"));
            Check.eq("6000", cfg.get("consumer.heartbeat.interval.ms").value(), "consumer.heartbeat.interval.ms after deleting the other");
        }
    }

    static void groups(Ctx c) throws Exception {
        String t = "java-admin-groups", g = "java-admin-groups";
        Clients.createTopic(c, t, 2, null);
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(t, i % 2, null, "g" + i));
            }
        }
        TopicPartition p0 = new TopicPartition(t, 0), p1 = new TopicPartition(t, 1);
        try (Admin a = Admin.create(c.props())) {
            try (KafkaConsumer<String, String> cons = Clients.consumer(c, Clients.kv("group.id", g, "group.protocol", "consumer"))) {
                cons.subscribe(List.of(t));
                Clients.pollUntil(cons, 10, Duration.ofSeconds(30));
                cons.commitSync();
                Collection<GroupListing> ls = Check.get(a.listGroups(ListGroupsOptions.forConsumerGroups()).all());
                GroupListing gl = ls.stream().filter(x -> x.groupId().equals(g)).findFirst().orElse(null);
                Check.that(gl != null, "listGroups misses %s: %s", g, ls);
                Check.eq(Optional.of(GroupType.CONSUMER), gl.type(), "listed group type");
                Check.eq(Optional.of(GroupState.STABLE), gl.groupState(), "listed group state");
                ConsumerGroupDescription d = Check.get(a.describeConsumerGroups(List.of(g)).describedGroups().get(g));
                Check.eq(1, d.members().size(), "members");
                Check.eq(Set.of(p0, p1), d.members().iterator().next().assignment().topicPartitions(), "member's assignment");
                // Offsets cannot be altered while the group has members.
                Check.fails(a.alterConsumerGroupOffsets(g, Map.of(p0, new OffsetAndMetadata(1))).all(),
                        org.apache.kafka.common.errors.UnknownMemberIdException.class, "altering offsets of an active group");
            }
            Map<TopicPartition, OffsetAndMetadata> offs = Check.get(a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata());
            Check.eq(5L, offs.get(p0).offset(), "committed offset p0");
            Check.eq(5L, offs.get(p1).offset(), "committed offset p1");
            Check.get(a.alterConsumerGroupOffsets(g, Map.of(p0, new OffsetAndMetadata(2, "meta"))).all());
            offs = Check.get(a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata());
            Check.eq(2L, offs.get(p0).offset(), "offset after alterConsumerGroupOffsets");
            Check.eq("meta", offs.get(p0).metadata(), "offset metadata");
            Check.get(a.deleteConsumerGroupOffsets(g, Set.of(p1)).all());
            offs = Check.get(a.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata());
            Check.that(offs.get(p1) == null, "p1's offset after deleteConsumerGroupOffsets: %s", offs.get(p1));
            try (KafkaConsumer<String, String> cons = Clients.consumer(c, Clients.kv("group.id", g))) {
                cons.subscribe(List.of(t));
                List<Rec> rs = Clients.pollUntil(cons, 3 + 5, Duration.ofSeconds(30));
                long fromP0 = rs.stream().filter(r -> r.p == 0).count();
                Check.eq(3L, fromP0, "records from p0 after resuming at 2");
            }
            Check.get(a.deleteConsumerGroups(List.of(g)).all());
            Collection<GroupListing> ls = Check.get(a.listGroups().all());
            Check.that(ls.stream().noneMatch(x -> x.groupId().equals(g)), "deleted group still listed: %s", ls);
            Check.fails(a.deleteConsumerGroups(List.of(g)).all(), org.apache.kafka.common.errors.GroupIdNotFoundException.class, "deleting it again");
            // Kafka names the group in the error (the client shows the broker's text).
            try {
                Check.get(a.describeConsumerGroups(List.of(g)).describedGroups().get(g));
                throw new AssertionError("a deleted group described");
            } catch (org.apache.kafka.common.errors.GroupIdNotFoundException e) {
                Check.eq("Group " + g + " not found.", e.getMessage(), "describing a deleted group");
            }
        }
    }

    /** ACLs on the broker with the authorizer on, as its super user; alice gets what is granted. */
    static void acls(Ctx c) throws Exception {
        String t = "java-acl-topic";
        try (Admin a = Admin.create(c.aclProps("admin", "admin-Pa55"))) {
            Check.get(a.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all());
            Properties alice = c.aclProps("alice", "alice-Pa55");
            alice.put("max.block.ms", "5000");
            alice.put("delivery.timeout.ms", "5000");
            alice.put("request.timeout.ms", "4000");
            alice.put("linger.ms", "0");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(alice, new StringSerializer(), new StringSerializer())) {
                try {
                    p.send(new ProducerRecord<>(t, "denied")).get();
                    throw new AssertionError("alice produced without WRITE");
                } catch (java.util.concurrent.ExecutionException e) {
                    Check.that(e.getCause() instanceof TopicAuthorizationException, "alice's produce failed with %s, want TopicAuthorizationException", e.getCause());
                }
            }
            ResourcePattern rp = new ResourcePattern(ResourceType.TOPIC, "java-acl-", PatternType.PREFIXED);
            AclBinding write = new AclBinding(rp, new AccessControlEntry("User:alice", "*", AclOperation.WRITE, AclPermissionType.ALLOW));
            AclBinding describe = new AclBinding(rp, new AccessControlEntry("User:alice", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW));
            Check.get(a.createAcls(List.of(write, describe)).all());
            Check.fails(a.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.TOPIC, "x", PatternType.LITERAL),
                    new AccessControlEntry("alice", "*", AclOperation.READ, AclPermissionType.ALLOW)))).all(),
                    InvalidRequestException.class, "a principal without a type");
            Collection<AclBinding> got = Check.get(a.describeAcls(new AclBindingFilter(
                    new ResourcePatternFilter(ResourceType.TOPIC, null, PatternType.ANY), AccessControlEntryFilter.ANY)).values());
            Check.eq(new HashSet<>(List.of(write, describe)), new HashSet<>(got), "described ACLs");
            try (KafkaProducer<String, String> p = new KafkaProducer<>(alice, new StringSerializer(), new StringSerializer())) {
                p.send(new ProducerRecord<>(t, "granted")).get();
            }
            Collection<AclBinding> deleted = Check.get(a.deleteAcls(List.of(write.toFilter())).all());
            Check.eq(List.of(write), List.copyOf(deleted), "deleted ACLs");
            got = Check.get(a.describeAcls(AclBindingFilter.ANY).values());
            Check.eq(List.of(describe), List.copyOf(got), "ACLs after the delete");
            Check.get(a.deleteAcls(List.of(AclBindingFilter.ANY)).all());
        }
    }

    static void quotas(Ctx c) throws Exception {
        ClientQuotaEntity user = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "java-quota-user"));
        ClientQuotaEntity client = new ClientQuotaEntity(Map.of(ClientQuotaEntity.CLIENT_ID, "java-quota-client"));
        try (Admin a = Admin.create(c.props())) {
            Check.get(a.alterClientQuotas(List.of(
                    new ClientQuotaAlteration(user, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0),
                            new ClientQuotaAlteration.Op("consumer_byte_rate", 2097152.0))),
                    new ClientQuotaAlteration(client, List.of(new ClientQuotaAlteration.Op("request_percentage", 50.0))))).all());
            Map<ClientQuotaEntity, Map<String, Double>> all = Check.get(a.describeClientQuotas(ClientQuotaFilter.all()).entities());
            Check.eq(Map.of("producer_byte_rate", 1048576.0, "consumer_byte_rate", 2097152.0), all.get(user), "user quotas");
            Check.eq(Map.of("request_percentage", 50.0), all.get(client), "client quotas");
            Map<ClientQuotaEntity, Map<String, Double>> one = Check.get(a.describeClientQuotas(ClientQuotaFilter.containsOnly(
                    List.of(ClientQuotaFilterComponent.ofEntity(ClientQuotaEntity.USER, "java-quota-user")))).entities());
            Check.eq(Set.of(user), one.keySet(), "quotas filtered by user");
            Check.fails(a.alterClientQuotas(List.of(new ClientQuotaAlteration(user, List.of(new ClientQuotaAlteration.Op("no_such_quota", 1.0))))).all(),
                    InvalidRequestException.class, "an unknown quota key");
            Check.get(a.alterClientQuotas(List.of(new ClientQuotaAlteration(user, List.of(new ClientQuotaAlteration.Op("producer_byte_rate", null))))).all());
            all = Check.get(a.describeClientQuotas(ClientQuotaFilter.all()).entities());
            Check.eq(Map.of("consumer_byte_rate", 2097152.0), all.get(user), "user quotas after removing one");
        }
    }

    static void cluster(Ctx c) throws Exception {
        try (Admin a = Admin.create(c.props())) {
            DescribeClusterResult dc = a.describeCluster();
            Collection<Node> nodes = Check.get(dc.nodes());
            Check.eq(1, nodes.size(), "nodes");
            Node n = nodes.iterator().next();
            Check.that(Check.get(dc.clusterId()) != null && !Check.get(dc.clusterId()).isEmpty(), "no cluster id");
            Check.eq(n.id(), Check.get(dc.controller()).id(), "controller");
            QuorumInfo q = Check.get(a.describeMetadataQuorum().quorumInfo());
            Check.that(q.voters().size() >= 1, "quorum voters: %s", q.voters());
            Check.that(q.leaderId() >= 0, "quorum leader %d", q.leaderId());
            FeatureMetadata f = Check.get(a.describeFeatures().featureMetadata());
            Check.that(f.finalizedFeatures().containsKey("group.version"), "group.version not finalized: %s", f.finalizedFeatures());
            Check.that(f.finalizedFeatures().containsKey("share.version"), "share.version not finalized: %s", f.finalizedFeatures());
            Check.that(f.supportedFeatures().containsKey("transaction.version"), "transaction.version not supported: %s", f.supportedFeatures());
            // An update to a level the broker does not support is refused.
            Check.fails(a.updateFeatures(Map.of("group.version", new org.apache.kafka.clients.admin.FeatureUpdate((short) 9,
                    org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType.UPGRADE)), new org.apache.kafka.clients.admin.UpdateFeaturesOptions()).all(),
                    org.apache.kafka.common.errors.InvalidUpdateVersionException.class, "group.version 9");
        }
    }

    static void reassignments(Ctx c) throws Exception {
        String t = "java-admin-reassign";
        Clients.createTopic(c, t, 2, null);
        TopicPartition tp = new TopicPartition(t, 0);
        try (Admin a = Admin.create(c.props())) {
            int id = Check.get(a.describeCluster().nodes()).iterator().next().id();
            // Reassigning to the replica set it has is accepted and done at once.
            Check.get(a.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(id))))).all());
            Map<TopicPartition, PartitionReassignment> ongoing = Check.get(a.listPartitionReassignments().reassignments());
            Check.that(ongoing.isEmpty(), "ongoing reassignments: %s", ongoing);
            Check.fails(a.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(id + 100))))).all(),
                    org.apache.kafka.common.errors.InvalidReplicaAssignmentException.class, "a reassignment to a broker that does not exist");
            Map<Integer, Map<String, LogDirDescription>> dirs = Check.get(a.describeLogDirs(List.of(id)).allDescriptions());
            boolean found = false;
            for (LogDirDescription d : dirs.get(id).values()) {
                found |= d.replicaInfos().containsKey(tp);
            }
            Check.that(found, "describeLogDirs misses %s: %s", tp, dirs);
        }
    }

    static void transactions(Ctx c) throws Exception {
        String t = "java-admin-txn", tid = "java-admin-txn";
        Clients.createTopic(c, t, 1, null);
        TopicPartition tp = new TopicPartition(t, 0);
        try (Admin a = Admin.create(c.props());
             KafkaProducer<String, String> p = Clients.producer(c, Clients.kv("transactional.id", tid))) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(t, 0, null, "open")).get();
            Collection<TransactionListing> ls = Check.get(a.listTransactions().all());
            TransactionListing l = ls.stream().filter(x -> x.transactionalId().equals(tid)).findFirst().orElse(null);
            Check.that(l != null, "listTransactions misses %s: %s", tid, ls);
            Check.eq(TransactionState.ONGOING, l.state(), "listed state");
            TransactionDescription d = Check.get(a.describeTransactions(List.of(tid)).description(tid));
            Check.eq(TransactionState.ONGOING, d.state(), "described state");
            Check.eq(Set.of(tp), d.topicPartitions(), "transaction's partitions");
            List<ProducerState> ps = Check.get(a.describeProducers(List.of(tp)).partitionResult(tp)).activeProducers();
            Check.eq(1, ps.size(), "active producers");
            Check.eq(d.producerId(), ps.get(0).producerId(), "producer id");
            Check.eq(0L, ps.get(0).currentTransactionStartOffset().orElse(-1), "transaction start offset");
            p.commitTransaction();
            d = Check.get(a.describeTransactions(List.of(tid)).description(tid));
            Check.eq(TransactionState.COMPLETE_COMMIT, d.state(), "state after the commit");
            Check.fails(a.describeTransactions(List.of("java-no-such-txn")).all(),
                    org.apache.kafka.common.errors.TransactionalIdNotFoundException.class, "describing an unknown transactional id");
        }
    }
}
