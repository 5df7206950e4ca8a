package minikafka.compat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A transactional consume-transform-produce loop on a simulated cluster
 * (compat_test/cluster_java_test.go moves the coordinators while it runs).
 *
 * <pre>java minikafka.compat.ClusterTxn BOOTSTRAP IN OUT GROUP TXID TOTAL</pre>
 *
 * Reads IN read_committed as GROUP, writes each record's value prefixed
 * "out-" to the same partition of OUT and commits the input offsets in the
 * same transaction, until TOTAL input records are committed. Prints one JSON
 * line {"commits":n,"transformed":n}; diagnostics go to stderr.
 */
public final class ClusterTxn {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], in = args[1], out = args[2], group = args[3], txid = args[4];
        int total = Integer.parseInt(args[5]);
        Properties cp = ClusterRun.consumerProps(bootstrap, group);
        cp.put("isolation.level", "read_committed");
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("transactional.id", txid);
        pp.put("linger.ms", "5");
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        int commits = 0, done = 0;
        try (KafkaConsumer<String, String> cons = new KafkaConsumer<>(cp);
             KafkaProducer<String, String> prod = new KafkaProducer<>(pp)) {
            prod.initTransactions();
            cons.subscribe(List.of(in));
            long end = System.nanoTime() + Duration.ofSeconds(45).toNanos();
            while (done < total) {
                if (System.nanoTime() > end) {
                    throw new IllegalStateException("committed " + done + " of " + total + " input records in 45 s");
                }
                ConsumerRecords<String, String> rs = cons.poll(Duration.ofMillis(100));
                if (rs.isEmpty()) {
                    continue;
                }
                // Any failure here ends the run: a transaction the client
                // could not finish across a coordinator move is the finding.
                prod.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offs = new HashMap<>();
                for (ConsumerRecord<String, String> r : rs) {
                    prod.send(new ProducerRecord<>(out, r.partition(), r.key(), "out-" + r.value()));
                    offs.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                prod.sendOffsetsToTransaction(offs, cons.groupMetadata());
                prod.commitTransaction();
                commits++;
                done += rs.count();
            }
        }
        System.out.println("{\"commits\":" + commits + ",\"transformed\":" + done + "}");
        System.out.flush();
        System.exit(0);
    }
}
