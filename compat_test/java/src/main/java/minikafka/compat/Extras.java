package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ClassicGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;

/** More of the client: static members, regex subscriptions, share admin, transaction tools, SCRAM admin. */
final class Extras {
    private Extras() {}

    /** A KIP-848 static member subscribed by regex leaves and comes back under its instance id. */
    static void consumerStaticRegex(Ctx c) throws Exception {
        String g = "java-static-regex";
        Clients.createTopic(c, "java-regex-a", 2, null);
        Clients.createTopic(c, "java-regex-b", 1, null);
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            for (int i = 0; i < 9; i++) {
                p.send(new ProducerRecord<>(i % 3 == 2 ? "java-regex-b" : "java-regex-a", i % 3 == 2 ? 0 : i % 2, null, "x" + i));
            }
        }
        Properties cp = Clients.kv("group.id", g, "group.protocol", "consumer", "group.instance.id", "java-static-1");
        try (KafkaConsumer<String, String> k = Clients.consumer(c, cp)) {
            k.subscribe(Pattern.compile("java-regex-.*"));
            Clients.pollUntil(k, 9, Duration.ofSeconds(30));
            k.commitSync();
            try (Admin a = Admin.create(c.props())) {
                ConsumerGroupDescription d = Check.get(a.describeConsumerGroups(List.of(g)).describedGroups().get(g));
                Check.eq(1, d.members().size(), "members");
                MemberDescription m = d.members().iterator().next();
                Check.eq(java.util.Optional.of("java-static-1"), m.groupInstanceId(), "instance id");
                Check.eq(3, m.assignment().topicPartitions().size(), "partitions assigned by the regex");
            }
        }
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            p.send(new ProducerRecord<>("java-regex-b", 0, null, "after")).get();
        }
        try (KafkaConsumer<String, String> k = Clients.consumer(c, cp)) {
            k.subscribe(Pattern.compile("java-regex-.*"));
            List<Rec> rs = Clients.pollUntil(k, 1, Duration.ofSeconds(30));
            Check.eq("after", rs.get(0).v, "record read after rejoining");
        }
    }

    /** Implicit acknowledgement, then the share-group admin calls. */
    static void shareAdmin(Ctx c) throws Exception {
        String t = "java-share-admin", g = "java-share-admin";
        Clients.createTopic(c, t, 1, null);
        try (Admin a = Admin.create(c.props())) {
            var gr = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.GROUP, g);
            Check.get(a.incrementalAlterConfigs(Map.of(gr, List.of(new org.apache.kafka.clients.admin.AlterConfigOp(
                    new org.apache.kafka.clients.admin.ConfigEntry("share.auto.offset.reset", "earliest"),
                    org.apache.kafka.clients.admin.AlterConfigOp.OpType.SET)))).all());
        }
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(t, 0, null, "s" + i));
            }
        }
        Properties sp = c.props();
        sp.put("group.id", g);
        List<String> got = readShare(sp, t, 10);
        Check.eq(10, got.size(), "records read implicitly acknowledged");
        TopicPartition tp = new TopicPartition(t, 0);
        try (Admin a = Admin.create(c.props())) {
            Check.waitFor("share group empty", Duration.ofSeconds(20), () -> {
                try {
                    return Check.get(a.describeShareGroups(List.of(g)).describedGroups().get(g)).groupState() == GroupState.EMPTY;
                } catch (Exception e) {
                    return false;
                }
            });
            var offs = Check.get(a.listShareGroupOffsets(Map.of(g, new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).all()).get(g);
            Check.eq(10L, offs.get(tp).startOffset(), "start offset after all were acknowledged");
            Check.get(a.alterShareGroupOffsets(g, Map.of(tp, 4L)).all());
            offs = Check.get(a.listShareGroupOffsets(Map.of(g, new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).all()).get(g);
            Check.eq(4L, offs.get(tp).startOffset(), "start offset after alterShareGroupOffsets");
        }
        Check.eq(6, readShare(sp, t, 6).size(), "records read again from offset 4");
        try (Admin a = Admin.create(c.props())) {
            Check.waitFor("share group empty", Duration.ofSeconds(20), () -> {
                try {
                    return Check.get(a.describeShareGroups(List.of(g)).describedGroups().get(g)).groupState() == GroupState.EMPTY;
                } catch (Exception e) {
                    return false;
                }
            });
            Check.get(a.deleteShareGroupOffsets(g, Set.of(t)).all());
            Check.get(a.deleteShareGroups(List.of(g)).all());
            var gs = Check.get(a.listGroups(org.apache.kafka.clients.admin.ListGroupsOptions.forShareGroups()).all());
            Check.that(gs.stream().noneMatch(x -> x.groupId().equals(g)), "deleted share group still listed: %s", gs);
        }
    }

    static List<String> readShare(Properties sp, String topic, int want) {
        List<String> out = new ArrayList<>();
        try (KafkaShareConsumer<String, String> s = new KafkaShareConsumer<>(sp, new StringDeserializer(), new StringDeserializer())) {
            s.subscribe(List.of(topic));
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (out.size() < want && System.nanoTime() < end) {
                for (ConsumerRecord<String, String> r : s.poll(Duration.ofMillis(100))) {
                    out.add(r.value());
                }
            }
            s.commitSync();
        }
        return out;
    }

    /** fenceProducers ends an open transaction's producer; removeMembersFromConsumerGroup drops a static classic member. */
    static void adminTools(Ctx c) throws Exception {
        String t = "java-admin-tools", tid = "java-admin-tools";
        Clients.createTopic(c, t, 1, null);
        try (Admin a = Admin.create(c.props());
             KafkaProducer<String, String> p = Clients.producer(c, Clients.kv("transactional.id", tid))) {
            p.initTransactions();
            p.beginTransaction();
            p.send(new ProducerRecord<>(t, 0, null, "doomed")).get();
            Check.get(a.fenceProducers(List.of(tid)).all());
            boolean fenced = false;
            try {
                p.commitTransaction();
            } catch (ProducerFencedException | org.apache.kafka.common.errors.InvalidProducerEpochException e) {
                fenced = true;
            }
            Check.that(fenced, "the producer committed after fenceProducers");
        }
        List<Rec> committed = Clients.readAll(c, t, 1, 0, Clients.kv("isolation.level", "read_committed"));
        Check.eq(0, committed.size(), "committed records after the fence");

        String g = "java-classic-static";
        Properties cp = Clients.kv("group.id", g, "group.protocol", "classic", "group.instance.id", "java-classic-1",
                "heartbeat.interval.ms", "300", "session.timeout.ms", "30000");
        try (KafkaConsumer<String, String> k = Clients.consumer(c, cp)) {
            k.subscribe(List.of(t));
            Check.waitFor("an assignment", Duration.ofSeconds(20), () -> {
                k.poll(Duration.ofMillis(100));
                return !k.assignment().isEmpty();
            });
            try (Admin a = Admin.create(c.props())) {
                ClassicGroupDescription d = Check.get(a.describeClassicGroups(List.of(g)).describedGroups().get(g));
                Check.eq(1, d.members().size(), "classic members");
                Check.get(a.removeMembersFromConsumerGroup(g, new RemoveMembersFromConsumerGroupOptions(
                        List.of(new MemberToRemove("java-classic-1")))).all());
                d = Check.get(a.describeClassicGroups(List.of(g)).describedGroups().get(g));
                Check.eq(0, d.members().size(), "classic members after removeMembersFromConsumerGroup");
            }
        }
    }

    static void scramAdmin(Ctx c) throws Exception {
        try (Admin a = Admin.create(c.props())) {
            // Kafka's controller refuses a user named twice in one request,
            // even for two mechanisms (DUPLICATE_RESOURCE): one at a time.
            var both = List.<org.apache.kafka.clients.admin.UserScramCredentialAlteration>of(
                    new UserScramCredentialUpsertion("java-scram", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), "pw-256"),
                    new UserScramCredentialUpsertion("java-scram", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), "pw-512"));
            Check.fails(a.alterUserScramCredentials(both).all(), org.apache.kafka.common.errors.DuplicateResourceException.class, "one user twice in a request");
            for (var alt : both) {
                Check.get(a.alterUserScramCredentials(List.of(alt)).all());
            }
            UserScramCredentialsDescription d = Check.get(a.describeUserScramCredentials(List.of("java-scram")).description("java-scram"));
            Check.eq(2, d.credentialInfos().size(), "credentials");
            Check.get(a.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("java-scram", ScramMechanism.SCRAM_SHA_512))).all());
            d = Check.get(a.describeUserScramCredentials(List.of("java-scram")).description("java-scram"));
            Check.eq(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192)), d.credentialInfos(), "credentials after a deletion");
            Check.fails(a.describeUserScramCredentials(List.of("java-nobody")).description("java-nobody"),
                    org.apache.kafka.common.errors.ResourceNotFoundException.class, "an unknown user");
        }
    }
}
