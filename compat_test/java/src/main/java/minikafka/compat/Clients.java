package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** Producer, consumer and share consumer scenarios. */
final class Clients {
    private Clients() {}

    static final Duration POLL = Duration.ofMillis(100);

    static void createTopic(Ctx c, String name, int parts, Map<String, String> configs) throws Exception {
        try (Admin a = Admin.create(c.props())) {
            NewTopic t = new NewTopic(name, Optional.of(parts), Optional.empty());
            if (configs != null) {
                t.configs(configs);
            }
            Check.get(a.createTopics(List.of(t)).all());
        }
    }

    static KafkaProducer<String, String> producer(Ctx c, Properties extra) {
        Properties p = c.props();
        p.put("acks", "all");
        p.put("linger.ms", "5");
        if (extra != null) {
            p.putAll(extra);
        }
        return new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> consumer(Ctx c, Properties extra) {
        Properties p = c.props();
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        if (extra != null) {
            p.putAll(extra);
        }
        return new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    }

    static Properties kv(String... kvs) {
        Properties p = new Properties();
        for (int i = 0; i < kvs.length; i += 2) {
            p.put(kvs[i], kvs[i + 1]);
        }
        return p;
    }

    /** readAll reads partitions [0,parts) of topic from the start, without a group. */
    static List<Rec> readAll(Ctx c, String topic, int parts, int want, Properties extra) throws Exception {
        try (KafkaConsumer<String, String> cons = consumer(c, extra)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < parts; p++) {
                tps.add(new TopicPartition(topic, p));
            }
            cons.assign(tps);
            cons.seekToBeginning(tps);
            return pollUntil(cons, want, Duration.ofSeconds(30));
        }
    }

    /**
     * pollUntil polls until want records arrived, then half a second more
     * so that a record too many shows.
     */
    static List<Rec> pollUntil(KafkaConsumer<String, String> cons, int want, Duration max) {
        List<Rec> out = new ArrayList<>();
        long end = System.nanoTime() + max.toNanos();
        while (out.size() < want && System.nanoTime() < end) {
            for (ConsumerRecord<String, String> r : cons.poll(POLL)) {
                out.add(Rec.from(r));
            }
        }
        long extra = System.nanoTime() + Duration.ofMillis(500).toNanos();
        while (System.nanoTime() < extra) {
            for (ConsumerRecord<String, String> r : cons.poll(POLL)) {
                out.add(Rec.from(r));
            }
        }
        Check.that(out.size() == want, "consumer read %d records, want %d", out.size(), want);
        return out;
    }

    /** verify compares what was read with what was produced, per partition in order. */
    static void verify(List<Rec> want, List<Rec> got) {
        Map<Integer, List<Rec>> w = byPart(want), g = byPart(got);
        Check.eq(w.keySet(), g.keySet(), "partitions read");
        for (int p : w.keySet()) {
            List<Rec> wp = w.get(p), gp = g.get(p);
            Check.that(wp.size() == gp.size(), "partition %d: read %d records, want %d", p, gp.size(), wp.size());
            for (int i = 0; i < wp.size(); i++) {
                String d = wp.get(i).diff(gp.get(i));
                Check.that(d.isEmpty(), "partition %d record %d differs (%s):\n want %s\n got  %s", p, i, d, wp.get(i), gp.get(i));
            }
        }
    }

    static Map<Integer, List<Rec>> byPart(List<Rec> rs) {
        Map<Integer, List<Rec>> m = new TreeMap<>();
        for (Rec r : rs) {
            m.computeIfAbsent(r.p, k -> new ArrayList<>()).add(r);
        }
        return m;
    }

    /** send sends recs in order and sets each one's offset from the acknowledgement. */
    static void send(KafkaProducer<String, String> prod, String topic, List<Rec> recs) throws Exception {
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        for (Rec r : recs) {
            fs.add(prod.send(r.toProducer(topic)));
        }
        prod.flush();
        Map<Integer, Long> next = new HashMap<>();
        for (int i = 0; i < recs.size(); i++) {
            RecordMetadata md = fs.get(i).get();
            Rec r = recs.get(i);
            long want = next.getOrDefault(r.p, 0L);
            Check.that(md.partition() == r.p && md.offset() == want, "record %d acknowledged at p%d@%d, want p%d@%d", i, md.partition(), md.offset(), r.p, want);
            Check.that(md.timestamp() == r.ts, "record %d acknowledged with timestamp %d, want %d (CreateTime)", i, md.timestamp(), r.ts);
            next.put(r.p, want + 1);
            r.o = md.offset();
        }
    }

    static void produceConsume(Ctx c, String codec) throws Exception {
        String topic = "java-codec-" + codec;
        createTopic(c, topic, 3, null);
        long base = System.currentTimeMillis() - 3_600_000L;
        List<Rec> recs = Rec.make(codec, 3, 40, base);
        // A large linger and batch so that records share compressed batches.
        try (KafkaProducer<String, String> prod = producer(c, kv("compression.type", codec, "linger.ms", "50", "batch.size", "65536"))) {
            send(prod, topic, recs);
        }
        List<Rec> got = readAll(c, topic, 3, recs.size(), null);
        for (Rec r : got) {
            Check.that(r.ts > 0, "record p%d@%d has no timestamp", r.p, r.o);
        }
        verify(recs, got);
        // The timestamp type the consumer sees is the topic's (CreateTime).
        try (KafkaConsumer<String, String> cons = consumer(c, null)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            cons.assign(List.of(tp));
            cons.seekToBeginning(List.of(tp));
            ConsumerRecords<String, String> rs = ConsumerRecords.empty();
            for (int i = 0; i < 100 && rs.isEmpty(); i++) {
                rs = cons.poll(POLL);
            }
            Check.that(!rs.isEmpty(), "no record on re-read");
            Check.eq(TimestampType.CREATE_TIME, rs.iterator().next().timestampType(), "timestamp type");
        }
        c.producedTopic = topic;
        c.produced.addAll(recs);
    }

    /** producerMany sends many small batches with five in flight and checks nothing is lost, duplicated or reordered. */
    static void producerMany(Ctx c, boolean idempotent) throws Exception {
        String topic = "java-producer-" + (idempotent ? "idempotent" : "plain");
        createTopic(c, topic, 2, null);
        int n = 3000;
        Properties extra = kv("enable.idempotence", String.valueOf(idempotent), "acks", idempotent ? "all" : "1",
                "batch.size", "512", "linger.ms", "0", "max.in.flight.requests.per.connection", "5", "compression.type", "lz4");
        List<Rec> recs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            recs.add(new Rec(i % 2, "k" + i, "v" + i, System.currentTimeMillis()));
        }
        try (KafkaProducer<String, String> prod = producer(c, extra)) {
            send(prod, topic, recs);
        }
        List<Rec> got = readAll(c, topic, 2, n, null);
        Map<Integer, List<Rec>> w = byPart(recs), g = byPart(got);
        for (int p : w.keySet()) {
            for (int i = 0; i < w.get(p).size(); i++) {
                Rec wr = w.get(p).get(i), gr = g.get(p).get(i);
                Check.that(wr.v.equals(gr.v) && gr.o == i, "partition %d position %d: got %s@%d, want %s@%d", p, i, gr.v, gr.o, wr.v, i);
            }
        }
    }

    static List<String> values(List<Rec> rs) {
        List<String> out = new ArrayList<>();
        for (Rec r : rs) {
            out.add(r.v);
        }
        return out;
    }

    static List<String> seq(String prefix, int n) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(prefix + i);
        }
        return out;
    }

    /**
     * Committed, aborted, committed and an open transaction: read_committed
     * sees the committed ones only, and nothing past the open one until it
     * commits; read_uncommitted sees everything.
     */
    static void txnIsolation(Ctx c) throws Exception {
        String topic = "java-txn-isolation";
        createTopic(c, topic, 1, null);
        try (KafkaProducer<String, String> prod = producer(c, kv("transactional.id", "java-txn-isolation"))) {
            prod.initTransactions();
            String[] batches = {"a", "b", "c"};
            for (String b : batches) {
                prod.beginTransaction();
                for (String v : seq(b, 10)) {
                    prod.send(new ProducerRecord<>(topic, 0, null, v));
                }
                if (b.equals("b")) {
                    // abortTransaction drops what is not sent yet: send it
                    // first, so the aborted records are in the log.
                    prod.flush();
                    prod.abortTransaction();
                } else {
                    prod.commitTransaction();
                }
            }
            prod.beginTransaction();
            for (String v : seq("d", 5)) {
                prod.send(new ProducerRecord<>(topic, 0, null, v));
            }
            prod.flush();
            // A plain producer's record after the open transaction: not
            // readable committed until the transaction ends.
            try (KafkaProducer<String, String> plain = producer(c, null)) {
                plain.send(new ProducerRecord<>(topic, 0, null, "e0")).get();
            }
            List<String> want = new ArrayList<>(seq("a", 10));
            want.addAll(seq("c", 10));
            List<Rec> committed = readAll(c, topic, 1, 20, kv("isolation.level", "read_committed"));
            Check.eq(want, values(committed), "read_committed with a transaction open");
            List<String> all = new ArrayList<>(seq("a", 10));
            all.addAll(seq("b", 10));
            all.addAll(seq("c", 10));
            all.addAll(seq("d", 5));
            all.add("e0");
            Check.eq(all, values(readAll(c, topic, 1, 36, kv("isolation.level", "read_uncommitted"))), "read_uncommitted");
            prod.commitTransaction();
            want.addAll(seq("d", 5));
            want.add("e0");
            Check.eq(want, values(readAll(c, topic, 1, 26, kv("isolation.level", "read_committed"))), "read_committed after the commit");
        }
        // A second producer with the same transactional.id fences the first.
        try (KafkaProducer<String, String> p1 = producer(c, kv("transactional.id", "java-txn-fence"))) {
            p1.initTransactions();
            p1.beginTransaction();
            p1.send(new ProducerRecord<>(topic, 0, null, "fenced")).get();
            try (KafkaProducer<String, String> p2 = producer(c, kv("transactional.id", "java-txn-fence"))) {
                p2.initTransactions();
                boolean fenced = false;
                try {
                    p1.commitTransaction();
                } catch (org.apache.kafka.common.errors.ProducerFencedException
                        | org.apache.kafka.common.errors.InvalidProducerEpochException e) {
                    fenced = true;
                }
                Check.that(fenced, "the first producer committed after a second one with its transactional.id started");
            }
        }
        List<Rec> after = readAll(c, topic, 1, 26, kv("isolation.level", "read_committed"));
        Check.that(!values(after).contains("fenced"), "a fenced producer's record is readable committed");
    }

    /** Reads a topic in a group and writes it on transactionally, committing offsets with the transaction. */
    static void txnConsumeTransformProduce(Ctx c, String protocol) throws Exception {
        String in = "java-ctp-in-" + protocol, out = "java-ctp-out-" + protocol, group = "java-ctp-" + protocol;
        createTopic(c, in, 2, null);
        createTopic(c, out, 2, null);
        int n = 40;
        try (KafkaProducer<String, String> prod = producer(c, null)) {
            for (int i = 0; i < n; i++) {
                prod.send(new ProducerRecord<>(in, i % 2, null, "m" + i));
            }
        }
        Properties cp = kv("group.id", group, "group.protocol", protocol, "isolation.level", "read_committed");
        if (protocol.equals("classic")) {
            cp.putAll(kv("heartbeat.interval.ms", "500", "session.timeout.ms", "10000"));
        }
        int done = 0;
        try (KafkaConsumer<String, String> cons = consumer(c, cp);
             KafkaProducer<String, String> prod = producer(c, kv("transactional.id", "java-ctp-" + protocol))) {
            prod.initTransactions();
            cons.subscribe(List.of(in));
            long end = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            int round = 0;
            while (done < n && System.nanoTime() < end) {
                ConsumerRecords<String, String> rs = cons.poll(POLL);
                if (rs.isEmpty()) {
                    continue;
                }
                prod.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
                for (ConsumerRecord<String, String> r : rs) {
                    prod.send(new ProducerRecord<>(out, r.partition(), r.key(), r.value().toUpperCase()));
                    offs.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                prod.sendOffsetsToTransaction(offs, cons.groupMetadata());
                // Every third round is aborted and re-read from the committed offsets.
                if (++round % 3 == 0) {
                    prod.abortTransaction();
                    for (TopicPartition tp : rs.partitions()) {
                        OffsetAndMetadata om = cons.committed(Set.of(tp)).get(tp);
                        cons.seek(tp, om == null ? 0 : om.offset());
                    }
                    continue;
                }
                prod.commitTransaction();
                done += rs.count();
            }
        }
        Check.that(done == n, "transformed %d records, want %d", done, n);
        try (Admin a = Admin.create(c.props())) {
            Map<TopicPartition, OffsetAndMetadata> offs = Check.get(a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            Check.eq(Long.valueOf(n / 2), offs.get(new TopicPartition(in, 0)) == null ? null : offs.get(new TopicPartition(in, 0)).offset(), "committed offset of partition 0");
            Check.eq(Long.valueOf(n / 2), offs.get(new TopicPartition(in, 1)) == null ? null : offs.get(new TopicPartition(in, 1)).offset(), "committed offset of partition 1");
        }
        List<Rec> got = readAll(c, out, 2, n, kv("isolation.level", "read_committed"));
        List<String> vs = values(got);
        for (int i = 0; i < n; i++) {
            Check.that(vs.contains("M" + i), "output misses M%d", i);
        }
    }

    /**
     * Two members share a topic's partitions, commit and leave; a third
     * member resumes from the committed offsets.
     */
    static void groupConsumeCommitResume(Ctx c, String protocol) throws Exception {
        String topic = "java-group-" + protocol, group = "java-group-" + protocol;
        createTopic(c, topic, 4, null);
        try (KafkaProducer<String, String> prod = producer(c, null)) {
            for (int i = 0; i < 40; i++) {
                prod.send(new ProducerRecord<>(topic, i % 4, null, "r" + i));
            }
        }
        Properties cp = kv("group.id", group, "group.protocol", protocol);
        if (protocol.equals("classic")) {
            cp.putAll(kv("heartbeat.interval.ms", "300", "session.timeout.ms", "10000"));
        }
        KafkaConsumer<String, String> c1 = consumer(c, cp), c2 = consumer(c, cp);
        try {
            c1.subscribe(List.of(topic));
            c2.subscribe(List.of(topic));
            List<String> seen = new ArrayList<>();
            boolean bothAssigned = false;
            long end = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while ((seen.size() < 40 || !bothAssigned) && System.nanoTime() < end) {
                for (KafkaConsumer<String, String> k : List.of(c1, c2)) {
                    for (ConsumerRecord<String, String> r : k.poll(Duration.ofMillis(50))) {
                        seen.add(r.value());
                    }
                }
                bothAssigned = c1.assignment().size() == 2 && c2.assignment().size() == 2 && caughtUp(c1, 10) && caughtUp(c2, 10);
            }
            Check.that(bothAssigned, "assignments after 40s: %s and %s, want two partitions each, read to the end", c1.assignment(), c2.assignment());
            // A partition that moved may be read twice (no commit before
            // the move); none may be missed.
            for (int i = 0; i < 40; i++) {
                Check.that(seen.contains("r" + i), "no member read r%d", i);
            }
            c1.commitSync();
            c2.commitSync();
            try (Admin a = Admin.create(c.props())) {
                ConsumerGroupDescription d = Check.get(a.describeConsumerGroups(List.of(group)).describedGroups().get(group));
                Check.eq(protocol.equals("classic") ? GroupType.CLASSIC : GroupType.CONSUMER, d.type(), "group type");
                Check.eq(GroupState.STABLE, d.groupState(), "group state");
                Check.eq(2, d.members().size(), "members");
            }
        } finally {
            c1.close();
            c2.close();
        }
        try (KafkaProducer<String, String> prod = producer(c, null)) {
            for (int i = 40; i < 48; i++) {
                prod.send(new ProducerRecord<>(topic, i % 4, null, "r" + i));
            }
        }
        try (KafkaConsumer<String, String> c3 = consumer(c, cp)) {
            c3.subscribe(List.of(topic));
            List<String> vs = values(pollUntil(c3, 8, Duration.ofSeconds(30)));
            vs.sort(null);
            List<String> want = new ArrayList<>(List.of("r40", "r41", "r42", "r43", "r44", "r45", "r46", "r47"));
            Check.eq(want, vs, "records read after resuming from the committed offsets");
            c3.commitSync();
        }
        try (Admin a = Admin.create(c.props())) {
            Check.waitFor("group " + group + " empty", Duration.ofSeconds(20), () -> {
                try {
                    return Check.get(a.describeConsumerGroups(List.of(group)).describedGroups().get(group)).groupState() == GroupState.EMPTY;
                } catch (Exception e) {
                    return false;
                }
            });
            Map<TopicPartition, OffsetAndMetadata> offs = Check.get(a.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata());
            for (int p = 0; p < 4; p++) {
                OffsetAndMetadata om = offs.get(new TopicPartition(topic, p));
                Check.that(om != null && om.offset() == 12, "committed offset of partition %d: %s, want 12", p, om);
            }
        }
    }

    /**
     * caughtUp tells whether the consumer's position on each partition it
     * is assigned is end: commitSync commits only partitions with a
     * position, so a member must have read a partition it was just given.
     */
    static boolean caughtUp(KafkaConsumer<String, String> k, long end) {
        for (TopicPartition tp : k.assignment()) {
            try {
                if (k.position(tp, Duration.ofMillis(200)) != end) {
                    return false;
                }
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                return false;
            }
        }
        return true;
    }

    /**
     * A share group: two share consumers divide the records; released
     * records come back with a higher delivery count, rejected ones do not.
     */
    static void share(Ctx c) throws Exception {
        String topic = "java-share", group = "java-share";
        createTopic(c, topic, 2, null);
        try (Admin a = Admin.create(c.props())) {
            ConfigResource gr = new ConfigResource(ConfigResource.Type.GROUP, group);
            Check.get(a.incrementalAlterConfigs(Map.of(gr, List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all());
        }
        int n = 30;
        try (KafkaProducer<String, String> prod = producer(c, null)) {
            for (int i = 0; i < n; i++) {
                prod.send(new ProducerRecord<>(topic, i % 2, null, "s" + i));
            }
        }
        Properties sp = c.props();
        sp.put("group.id", group);
        sp.put("share.acknowledgement.mode", "explicit");
        Map<String, Integer> accepted = new TreeMap<>();
        Map<String, Short> released = new HashMap<>();
        String rejected = null;
        try (KafkaShareConsumer<String, String> s1 = new KafkaShareConsumer<>(sp, new StringDeserializer(), new StringDeserializer());
             KafkaShareConsumer<String, String> s2 = new KafkaShareConsumer<>(sp, new StringDeserializer(), new StringDeserializer())) {
            s1.subscribe(List.of(topic));
            s2.subscribe(List.of(topic));
            long end = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            while (accepted.size() + (rejected == null ? 0 : 1) < n && System.nanoTime() < end) {
                for (KafkaShareConsumer<String, String> s : List.of(s1, s2)) {
                    for (ConsumerRecord<String, String> r : s.poll(Duration.ofMillis(100))) {
                        short dc = r.deliveryCount().orElse((short) 0);
                        // s3 is released once, then accepted; s4 rejected.
                        if (r.value().equals("s3") && dc == 1) {
                            s.acknowledge(r, AcknowledgeType.RELEASE);
                            released.put(r.value(), dc);
                        } else if (r.value().equals("s4")) {
                            Check.that(rejected == null, "rejected record s4 delivered again");
                            s.acknowledge(r, AcknowledgeType.REJECT);
                            rejected = r.value();
                        } else {
                            Check.that(!accepted.containsKey(r.value()), "%s delivered again after it was accepted", r.value());
                            if (r.value().equals("s3")) {
                                Check.eq((short) 2, dc, "delivery count of s3 after a release");
                            }
                            s.acknowledge(r, AcknowledgeType.ACCEPT);
                            accepted.put(r.value(), (int) dc);
                        }
                    }
                    s.commitSync();
                }
            }
            try (Admin a = Admin.create(c.props())) {
                ShareGroupDescription d = Check.get(a.describeShareGroups(List.of(group)).describedGroups().get(group));
                Check.eq(GroupState.STABLE, d.groupState(), "share group state");
                Check.eq(2, d.members().size(), "share group members");
            }
        }
        Check.eq("s4", rejected, "rejected record");
        Check.that(released.containsKey("s3"), "s3 was never released");
        Check.eq(n - 1, accepted.size(), "records accepted");
        try (Admin a = Admin.create(c.props())) {
            var offs = Check.get(a.listShareGroupOffsets(Map.of(group, new org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec())).all()).get(group);
            Check.that(offs != null && offs.size() == 2, "share group offsets: %s", offs);
            for (var e : offs.entrySet()) {
                Check.that(e.getValue() != null && e.getValue().startOffset() == n / 2, "share-partition start offset of %s: %s, want %d", e.getKey(), e.getValue(), n / 2);
            }
            Collection<org.apache.kafka.clients.admin.GroupListing> gs = Check.get(a.listGroups(org.apache.kafka.clients.admin.ListGroupsOptions.forShareGroups()).all());
            Check.that(gs.stream().anyMatch(g -> g.groupId().equals(group)), "listGroups(share) misses %s: %s", group, gs);
        }
    }
}
