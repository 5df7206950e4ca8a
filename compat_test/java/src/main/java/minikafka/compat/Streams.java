package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.Stores;

/** Kafka Streams on minikafka. */
final class Streams {
    private Streams() {}

    static final String IN = "java-streams-lines", OUT = "java-streams-counts", APP = "java-wordcount";

    /**
     * A word count with exactly_once_v2: lines in, (word, count) out through
     * a repartition topic and a changelog-backed store. The application
     * stops halfway and starts again with an empty state dir (no standby),
     * so the counts go on from the changelog. Read committed, every word's
     * counts are exactly 1, 2, ..., n: nothing lost, nothing counted twice.
     */
    static void wordCountExactlyOnce(Ctx c) throws Exception {
        Clients.createTopic(c, IN, 2, null);
        Clients.createTopic(c, OUT, 2, null);
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            lines.add("w" + (i % 7) + " w" + (i % 5) + " x" + (i % 3) + (i % 11 == 0 ? " rare" : ""));
        }
        Map<String, Long> total = new TreeMap<>();
        for (String l : lines) {
            for (String w : l.split(" ")) {
                total.merge(w, 1L, Long::sum);
            }
        }
        long words = total.values().stream().mapToLong(Long::longValue).sum();

        produceLines(c, lines.subList(0, 150));
        long firstHalf = countWords(lines.subList(0, 150));
        try (KafkaStreams ks = start(c)) {
            waitForOutput(c, firstHalf);
            ks.close(Duration.ofSeconds(30));
        }
        produceLines(c, lines.subList(150, lines.size()));
        try (KafkaStreams ks = start(c)) {
            waitForOutput(c, words);
            ks.close(Duration.ofSeconds(30));
        }

        // The internal topics Streams made, and its transactions.
        try (org.apache.kafka.clients.admin.Admin a = org.apache.kafka.clients.admin.Admin.create(c.props())) {
            var names = Check.get(a.listTopics().names());
            Check.that(names.contains(APP + "-words-repartition") && names.contains(APP + "-counts-changelog"),
                    "internal topics missing: %s", names);
            var cr = new org.apache.kafka.common.config.ConfigResource(org.apache.kafka.common.config.ConfigResource.Type.TOPIC, APP + "-counts-changelog");
            Check.eq("compact", Check.get(a.describeConfigs(List.of(cr)).all()).get(cr).get("cleanup.policy").value(), "changelog cleanup.policy");
            var txns = Check.get(a.listTransactions().all());
            Check.that(txns.stream().anyMatch(t -> t.transactionalId().startsWith(APP + "-")), "no transactional id of %s: %s", APP, txns);
        }
        Map<String, List<Long>> seen = new TreeMap<>();
        for (ConsumerRecord<String, Long> r : readCounts(c, words)) {
            seen.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value());
        }
        Check.eq(total.keySet(), seen.keySet(), "words counted");
        for (Map.Entry<String, Long> e : total.entrySet()) {
            List<Long> want = new ArrayList<>();
            for (long n = 1; n <= e.getValue(); n++) {
                want.add(n);
            }
            Check.eq(want, seen.get(e.getKey()), "counts of " + e.getKey());
        }
    }

    static long countWords(List<String> lines) {
        return lines.stream().mapToLong(l -> l.split(" ").length).sum();
    }

    static void produceLines(Ctx c, List<String> lines) throws Exception {
        try (KafkaProducer<String, String> p = Clients.producer(c, null)) {
            for (int i = 0; i < lines.size(); i++) {
                p.send(new ProducerRecord<>(IN, "line-" + i, lines.get(i)));
            }
            p.flush();
        }
    }

    static KafkaStreams start(Ctx c) throws Exception {
        StreamsBuilder b = new StreamsBuilder();
        b.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(l -> Arrays.asList(l.split(" ")))
                .groupBy((k, w) -> w, Grouped.with("words", Serdes.String(), Serdes.String()))
                .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("counts"))
                        .withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
                .toStream()
                .to(OUT, Produced.with(Serdes.String(), Serdes.Long()));
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "100");
        // No cache: every count is sent on, so the output is exact.
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, "0");
        p.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, "0");
        // An empty state dir each time: the store comes back from its changelog.
        Path dir = Files.createTempDirectory("minikafka-streams");
        dir.toFile().deleteOnExit();
        p.put(StreamsConfig.STATE_DIR_CONFIG, dir.toString());
        p.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), "300");
        p.put(StreamsConfig.consumerPrefix("session.timeout.ms"), "10000");
        KafkaStreams ks = new KafkaStreams(b.build(), p);
        ks.setUncaughtExceptionHandler(e -> {
            e.printStackTrace();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        ks.start();
        Check.waitFor("the streams application running", Duration.ofSeconds(60), () -> {
            KafkaStreams.State s = ks.state();
            Check.that(s != KafkaStreams.State.ERROR && s != KafkaStreams.State.NOT_RUNNING && s != KafkaStreams.State.PENDING_ERROR,
                    "streams application in state %s", s);
            return s == KafkaStreams.State.RUNNING;
        });
        return ks;
    }

    static void waitForOutput(Ctx c, long want) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long got = 0;
        while (System.nanoTime() < end) {
            got = endOffsets(c);
            if (got >= want) {
                break;
            }
            Thread.sleep(200);
        }
        // The end offsets count the commit markers too: read committed.
        long records = readCounts(c, -1).size();
        long wait = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (records < want && System.nanoTime() < wait) {
            Thread.sleep(300);
            records = readCounts(c, -1).size();
        }
        Check.that(records == want, "output has %d committed counts, want %d", records, want);
    }

    static long endOffsets(Ctx c) {
        try (KafkaConsumer<String, Long> k = new KafkaConsumer<>(c.props(), new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> tps = List.of(new TopicPartition(OUT, 0), new TopicPartition(OUT, 1));
            return k.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** readCounts reads the output committed, until want records (or what there is when want < 0). */
    static List<ConsumerRecord<String, Long>> readCounts(Ctx c, long want) {
        Properties p = c.props();
        p.put("isolation.level", "read_committed");
        try (KafkaConsumer<String, Long> k = new KafkaConsumer<>(p, new StringDeserializer(), new LongDeserializer())) {
            List<TopicPartition> tps = List.of(new TopicPartition(OUT, 0), new TopicPartition(OUT, 1));
            k.assign(tps);
            k.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = k.endOffsets(tps);
            List<ConsumerRecord<String, Long>> out = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<String, Long> r : k.poll(Duration.ofMillis(100))) {
                    out.add(r);
                }
                boolean atEnd = true;
                for (TopicPartition tp : tps) {
                    atEnd &= k.position(tp) >= ends.get(tp);
                }
                if (want < 0 ? atEnd : out.size() >= want && atEnd) {
                    break;
                }
            }
            out.sort(Comparator.comparingInt((ConsumerRecord<String, Long> r) -> r.partition()).thenComparingLong(ConsumerRecord::offset));
            return out;
        }
    }
}
