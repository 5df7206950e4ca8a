package minikafka.compat;

import minikafka.compat.Suite.Ctx;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Transaction version 2 (KIP-890 part 2), as the Java client negotiates it
 * when the broker finalizes transaction.version 2: no AddPartitionsToTxn,
 * EndTxn v5 bumping the epoch at every commit and abort, the markers
 * carrying the bumped epoch.
 */
final class TxnV2 {
    private TxnV2() {}

    static void epochPerTransaction(Ctx c) throws Exception {
        String topic = "java-txn-v2", tid = "java-txn-v2";
        Clients.createTopic(c, topic, 2, null);
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        try (Admin a = Admin.create(c.props());
             KafkaProducer<String, String> p = Clients.producer(c, Clients.kv("transactional.id", tid))) {
            FeatureMetadata f = Check.get(a.describeFeatures().featureMetadata());
            FinalizedVersionRange tv = f.finalizedFeatures().get("transaction.version");
            Check.that(tv != null && tv.maxVersionLevel() == 2, "transaction.version not finalized at 2: %s", f.finalizedFeatures());

            p.initTransactions();
            TransactionDescription d = Check.get(a.describeTransactions(List.of(tid)).description(tid));
            long pid = d.producerId();
            int epoch = d.producerEpoch();
            String[] outcomes = {"commit", "abort", "commit", "abort", "commit"};
            List<String> committed = new ArrayList<>(), all = new ArrayList<>();
            for (int i = 0; i < outcomes.length; i++) {
                p.beginTransaction();
                List<String> vs = Clients.seq("t" + i + "-", 6);
                for (int j = 0; j < vs.size(); j++) {
                    p.send(new ProducerRecord<>(topic, j % 2, null, vs.get(j)));
                }
                // Sent before the end, so an aborted transaction's records
                // are in the log for read_committed to skip.
                p.flush();
                if (outcomes[i].equals("commit")) {
                    p.commitTransaction();
                    committed.addAll(vs);
                } else {
                    p.abortTransaction();
                }
                all.addAll(vs);
                epoch++;
                d = Check.get(a.describeTransactions(List.of(tid)).description(tid));
                Check.eq(pid, d.producerId(), "producer id after transaction " + i);
                Check.eq(epoch, d.producerEpoch(), "epoch after transaction " + i + " (TV2 bumps it at every end)");
                Check.eq(outcomes[i].equals("commit") ? TransactionState.COMPLETE_COMMIT : TransactionState.COMPLETE_ABORT,
                        d.state(), "state after transaction " + i);
                for (TopicPartition tp : tps) {
                    List<ProducerState> ps = Check.get(a.describeProducers(List.of(tp)).partitionResult(tp)).activeProducers();
                    ProducerState st = ps.stream().filter(x -> x.producerId() == pid).findFirst().orElse(null);
                    Check.that(st != null, "no state for producer %d on %s: %s", pid, tp, ps);
                    Check.eq(epoch, st.producerEpoch(), "the marker's epoch on " + tp + " after transaction " + i);
                    Check.eq(0, st.coordinatorEpoch().orElse(-1), "the marker's coordinator epoch on " + tp);
                    Check.that(st.currentTransactionStartOffset().isEmpty(), "%s still open on %s", tid, tp);
                }
            }
            List<String> got = Clients.values(Clients.readAll(c, topic, 2, committed.size(), Clients.kv("isolation.level", "read_committed")));
            Collections.sort(got);
            Collections.sort(committed);
            Check.eq(committed, got, "read_committed sees exactly the committed transactions");
            List<String> raw = Clients.values(Clients.readAll(c, topic, 2, all.size(), Clients.kv("isolation.level", "read_uncommitted")));
            Collections.sort(raw);
            Collections.sort(all);
            Check.eq(all, raw, "read_uncommitted sees every record");
        }
    }
}
