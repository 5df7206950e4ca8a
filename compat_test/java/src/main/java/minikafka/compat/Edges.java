package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Record edge cases: null header values, empty keys and values, big records, LogAppendTime, the consumer's lookups. */
final class Edges {
    private Edges() {}

    static void records(Ctx c) throws Exception {
        String t = "java-edges";
        Clients.createTopic(c, t, 1, Map.of("max.message.bytes", "3000000"));
        byte[] big = new byte[2_000_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31 + i / 7);
        }
        List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>();
        sent.add(new ProducerRecord<>(t, 0, 1000L, new byte[0], new byte[0],
                List.<Header>of(new RecordHeader("null-value", (byte[]) null), new RecordHeader("", new byte[] {1}))));
        sent.add(new ProducerRecord<>(t, 0, 2000L, (byte[]) null, (byte[]) null));
        sent.add(new ProducerRecord<>(t, 0, 3000L, "k".getBytes(), big));
        sent.add(new ProducerRecord<>(t, 0, 4000L, "dup".getBytes(), "a".getBytes(),
                List.<Header>of(new RecordHeader("h", "1".getBytes()), new RecordHeader("h", "2".getBytes()))));
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(Clients.kv("bootstrap.servers", c.bootstrap,
                "max.request.size", "3000000", "compression.type", "zstd", "linger.ms", "20"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (var r : sent) {
                p.send(r);
            }
            p.flush();
        }
        try (KafkaConsumer<byte[], byte[]> k = new KafkaConsumer<>(Clients.kv("bootstrap.servers", c.bootstrap, "max.partition.fetch.bytes", "100000"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(t, 0);
            k.assign(List.of(tp));
            k.seekToBeginning(List.of(tp));
            List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (got.size() < sent.size() && System.nanoTime() < end) {
                k.poll(Duration.ofMillis(100)).forEach(got::add);
            }
            Check.eq(sent.size(), got.size(), "records read (a 2 MB record past max.partition.fetch.bytes included)");
            for (int i = 0; i < sent.size(); i++) {
                var w = sent.get(i);
                var g = got.get(i);
                Check.that(Arrays.equals(w.key(), g.key()) && (w.key() == null) == (g.key() == null), "record %d key", i);
                Check.that(Arrays.equals(w.value(), g.value()) && (w.value() == null) == (g.value() == null), "record %d value", i);
                Check.eq((long) w.timestamp(), g.timestamp(), "record " + i + " timestamp");
                Header[] wh = w.headers().toArray(), gh = g.headers().toArray();
                Check.eq(wh.length, gh.length, "record " + i + " headers");
                for (int j = 0; j < wh.length; j++) {
                    Check.eq(wh[j].key(), gh[j].key(), "record " + i + " header " + j + " key");
                    Check.that(Arrays.equals(wh[j].value(), gh[j].value()) && (wh[j].value() == null) == (gh[j].value() == null),
                            "record %d header %d value: %s, want %s", i, j, Arrays.toString(gh[j].value()), Arrays.toString(wh[j].value()));
                }
            }
            // The consumer's own lookups.
            Map<TopicPartition, OffsetAndTimestamp> byTime = k.offsetsForTimes(Map.of(tp, 2500L));
            Check.eq(2L, byTime.get(tp).offset(), "offsetsForTimes(2500)");
            Check.that(k.offsetsForTimes(Map.of(tp, 9000L)).get(tp) == null, "offsetsForTimes past the last record is not null");
            Check.eq(4L, k.endOffsets(List.of(tp)).get(tp), "endOffsets");
            Check.eq(0L, k.beginningOffsets(List.of(tp)).get(tp), "beginningOffsets");
            Check.eq(1, k.partitionsFor(t).size(), "partitionsFor");
        }
    }

    /** A LogAppendTime topic: the broker's clock stamps records, and the producer is told the time. */
    static void logAppendTime(Ctx c) throws Exception {
        String t = "java-log-append-time";
        Clients.createTopic(c, t, 1, Map.of("message.timestamp.type", "LogAppendTime"));
        long before = System.currentTimeMillis();
        RecordMetadata md;
        try (KafkaProducer<String, String> p = Clients.producer(c, Clients.kv("compression.type", "gzip"))) {
            md = p.send(new ProducerRecord<>(t, 0, 42L, "k", "v")).get();
        }
        long after = System.currentTimeMillis();
        Check.that(md.timestamp() >= before - 1000 && md.timestamp() <= after + 1000, "acknowledged timestamp %d, want the broker's time in [%d, %d]", md.timestamp(), before, after);
        try (KafkaConsumer<String, String> k = Clients.consumer(c, null)) {
            TopicPartition tp = new TopicPartition(t, 0);
            k.assign(List.of(tp));
            k.seekToBeginning(List.of(tp));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (got.isEmpty() && System.nanoTime() < end) {
                k.poll(Duration.ofMillis(100)).forEach(got::add);
            }
            Check.eq(1, got.size(), "records");
            Check.eq(TimestampType.LOG_APPEND_TIME, got.get(0).timestampType(), "timestamp type");
            Check.eq(md.timestamp(), got.get(0).timestamp(), "timestamp read");
        }
    }
}
