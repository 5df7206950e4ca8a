package minikafka.compat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client's part in compat_test's TestClusterClients: an idempotent
 * producer and a group consumer on a simulated cluster while the test moves
 * leaders and coordinators and stops a node.
 *
 * <pre>
 * java minikafka.compat.ClusterRun run BOOTSTRAP TOPIC GROUP
 * java minikafka.compat.ClusterRun group BOOTSTRAP TOPIC GROUP COUNT
 * </pre>
 *
 * run: reads one record per stdin line ("partition TAB key TAB value") and
 * produces it (acks=all, idempotent) as it comes, while a group member reads
 * the topic, committing as it goes. At the end of its input it flushes,
 * reads until it has as many records as were acknowledged, commits, leaves,
 * and prints {"acked":[...],"consumed":[...],"replayed":[...]}: the
 * acknowledged records in input order with their offsets, the read ones in
 * the order they were first read, and those read again after a rebalance
 * (at-least-once: the test checks each is a record read before, as it was).
 *
 * group: a new member of GROUP reads COUNT records from where the group
 * committed, commits, leaves, and prints them as a JSON array.
 */
public final class ClusterRun {
    public static void main(String[] args) throws Exception {
        String mode = args[0], bootstrap = args[1], topic = args[2], group = args[3];
        if (mode.equals("group")) {
            List<Rec> got = new ArrayList<>();
            try (KafkaConsumer<String, String> cons = consumer(bootstrap, group)) {
                cons.subscribe(List.of(topic));
                readUntil(cons, got, Integer.parseInt(args[4]), Duration.ofSeconds(45));
                cons.commitSync();
            }
            System.out.println(array(got));
            System.out.flush();
            System.exit(0);
        }
        run(bootstrap, topic, group);
    }

    static void run(String bootstrap, String topic, String group) throws Exception {
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("acks", "all");
        pp.put("enable.idempotence", "true");
        pp.put("linger.ms", "5");
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        ConcurrentSkipListMap<Integer, Rec> acked = new ConcurrentSkipListMap<>();
        List<String> failures = new CopyOnWriteArrayList<>();
        List<Rec> consumed = new CopyOnWriteArrayList<>();
        List<Rec> replayed = new CopyOnWriteArrayList<>();
        AtomicInteger target = new AtomicInteger(-1);
        List<Throwable> consumerFailed = new CopyOnWriteArrayList<>();

        // The consumer is not thread-safe: it lives on its own thread, which
        // reads until the producer's acknowledged count is known and reached.
        Thread reader = new Thread(() -> {
            Set<Long> seen = new HashSet<>();
            try (KafkaConsumer<String, String> cons = consumer(bootstrap, group)) {
                cons.subscribe(List.of(topic));
                long deadline = Long.MAX_VALUE;
                while (true) {
                    int want = target.get();
                    if (want >= 0) {
                        if (consumed.size() >= want) {
                            break;
                        }
                        if (deadline == Long.MAX_VALUE) {
                            deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
                        } else if (System.nanoTime() > deadline) {
                            throw new IllegalStateException("read " + consumed.size() + " of " + want + " acknowledged records");
                        }
                    }
                    ConsumerRecords<String, String> rs = cons.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> cr : rs) {
                        (seen.add(((long) cr.partition() << 40) | cr.offset()) ? consumed : replayed).add(Rec.from(cr));
                    }
                    if (!rs.isEmpty()) {
                        cons.commitAsync();
                    }
                }
                cons.commitSync();
            } catch (Throwable e) {
                consumerFailed.add(e);
            }
        });
        reader.start();

        try (KafkaProducer<String, String> prod = new KafkaProducer<>(pp)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int i = 0;
            for (String line; (line = in.readLine()) != null; i++) {
                String[] f = line.split("\t", 3);
                int idx = i;
                Rec r = new Rec(Integer.parseInt(f[0]), f[1], f[2], -1);
                prod.send(new ProducerRecord<>(topic, r.p, r.k, r.v), (md, err) -> {
                    if (err != null) {
                        failures.add("record " + idx + ": " + err);
                        return;
                    }
                    r.o = md.offset();
                    acked.put(idx, r);
                });
            }
            prod.flush();
        }
        if (!failures.isEmpty()) {
            System.err.println(failures.size() + " records failed, first: " + failures.get(0));
            System.exit(1);
        }
        target.set(acked.size());
        reader.join();
        if (!consumerFailed.isEmpty()) {
            consumerFailed.get(0).printStackTrace();
            System.exit(1);
        }
        System.out.println("{\"acked\":" + array(new ArrayList<>(acked.values())) + ",\"consumed\":" + array(consumed)
                + ",\"replayed\":" + array(replayed) + "}");
        System.out.flush();
        System.exit(0);
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group) {
        return new KafkaConsumer<>(consumerProps(bootstrap, group));
    }

    /** A group member that commits by hand and notices a moved coordinator within a second. */
    static Properties consumerProps(String bootstrap, String group) {
        Properties cp = new Properties();
        cp.put("bootstrap.servers", bootstrap);
        cp.put("group.id", group);
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        cp.put("heartbeat.interval.ms", "500");
        cp.put("session.timeout.ms", "10000");
        cp.put("fetch.max.wait.ms", "100");
        cp.put("key.deserializer", StringDeserializer.class.getName());
        cp.put("value.deserializer", StringDeserializer.class.getName());
        return cp;
    }

    static void readUntil(KafkaConsumer<String, String> cons, List<Rec> got, int count, Duration limit) {
        long end = System.nanoTime() + limit.toNanos();
        while (got.size() < count) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("read " + got.size() + " of " + count + " records in " + limit);
            }
            for (ConsumerRecord<String, String> cr : cons.poll(Duration.ofMillis(100))) {
                got.add(Rec.from(cr));
            }
        }
    }

    static String array(List<Rec> rs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < rs.size(); i++) {
            sb.append(i > 0 ? "," : "").append(rs.get(i).json());
        }
        return sb.append("]").toString();
    }
}
