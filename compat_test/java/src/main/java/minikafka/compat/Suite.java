package minikafka.compat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Runs the Java client's scenarios against a minikafka broker.
 *
 * <pre>java minikafka.compat.Suite BOOTSTRAP ACL_BOOTSTRAP [scenario-prefix...]</pre>
 *
 * ACL_BOOTSTRAP is a second broker with SASL/PLAIN and the ACL authorizer on
 * (users admin, the super user, and alice). The first line on stdout is the
 * plan ({"plan":[names]}), then one JSON line per scenario:
 * {"scenario":name,"ok":bool,"ms":n,"error":text,"records":[...]} where
 * records, when present, is what the scenario produced (with offsets) for
 * the Go side to read back with another client. Diagnostics go to stderr.
 */
public final class Suite {
    interface Body {
        void run(Ctx c) throws Exception;
    }

    /** What a scenario gets: the brokers and a place to report records. */
    static final class Ctx {
        final String bootstrap, aclBootstrap;
        final List<Rec> produced = new ArrayList<>();
        String producedTopic;

        Ctx(String bootstrap, String aclBootstrap) {
            this.bootstrap = bootstrap;
            this.aclBootstrap = aclBootstrap;
        }

        Properties props() {
            Properties p = new Properties();
            p.put("bootstrap.servers", bootstrap);
            p.put("client.id", "minikafka-compat-java");
            return p;
        }

        Properties aclProps(String user, String password) {
            Properties p = new Properties();
            p.put("bootstrap.servers", aclBootstrap);
            p.put("security.protocol", "SASL_PLAINTEXT");
            p.put("sasl.mechanism", "PLAIN");
            p.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\""
                    + user + "\" password=\"" + password + "\";");
            return p;
        }
    }

    static final Map<String, Body> SCENARIOS = new LinkedHashMap<>();

    static {
        for (String codec : new String[] {"none", "gzip", "snappy", "lz4", "zstd"}) {
            SCENARIOS.put("produce-consume/" + codec, c -> Clients.produceConsume(c, codec));
        }
        SCENARIOS.put("records/edge-cases", Edges::records);
        SCENARIOS.put("records/log-append-time", Edges::logAppendTime);
        SCENARIOS.put("producer/idempotent", c -> Clients.producerMany(c, true));
        SCENARIOS.put("producer/plain", c -> Clients.producerMany(c, false));
        SCENARIOS.put("txn/commit-abort+isolation", Clients::txnIsolation);
        SCENARIOS.put("txn/v2-epoch-per-transaction", TxnV2::epochPerTransaction);
        SCENARIOS.put("txn/consume-transform-produce/classic", c -> Clients.txnConsumeTransformProduce(c, "classic"));
        SCENARIOS.put("txn/consume-transform-produce/consumer", c -> Clients.txnConsumeTransformProduce(c, "consumer"));
        SCENARIOS.put("group/classic", c -> Clients.groupConsumeCommitResume(c, "classic"));
        SCENARIOS.put("group/consumer", c -> Clients.groupConsumeCommitResume(c, "consumer"));
        SCENARIOS.put("share/consume-acknowledge", Clients::share);
        SCENARIOS.put("admin/topics", Admins::topics);
        SCENARIOS.put("admin/list-offsets+delete-records", Admins::listOffsetsDeleteRecords);
        SCENARIOS.put("admin/configs", Admins::configs);
        SCENARIOS.put("admin/group-configs", Admins::groupConfigs);
        SCENARIOS.put("admin/groups", Admins::groups);
        SCENARIOS.put("admin/acls", Admins::acls);
        SCENARIOS.put("admin/quotas", Admins::quotas);
        SCENARIOS.put("admin/cluster+quorum+features", Admins::cluster);
        SCENARIOS.put("admin/reassignments+log-dirs", Admins::reassignments);
        SCENARIOS.put("admin/transactions+producers", Admins::transactions);
        SCENARIOS.put("group/consumer-static-regex", Extras::consumerStaticRegex);
        SCENARIOS.put("share/implicit+admin", Extras::shareAdmin);
        SCENARIOS.put("admin/fence-producers+remove-members", Extras::adminTools);
        SCENARIOS.put("admin/scram-credentials", Extras::scramAdmin);
        SCENARIOS.put("streams/wordcount-exactly-once-v2", Streams::wordCountExactlyOnce);
    }

    public static void main(String[] args) {
        if (args.length < 2) {
            System.err.println("usage: Suite BOOTSTRAP ACL_BOOTSTRAP [scenario-prefix...]");
            System.exit(2);
        }
        List<String> plan = new ArrayList<>();
        for (String name : SCENARIOS.keySet()) {
            boolean want = args.length == 2;
            for (int i = 2; i < args.length; i++) {
                want |= name.startsWith(args[i]);
            }
            if (want) {
                plan.add(name);
            }
        }
        StringBuilder sb = new StringBuilder("{\"plan\":[");
        for (int i = 0; i < plan.size(); i++) {
            sb.append(i > 0 ? "," : "").append(Json.str(plan.get(i)));
        }
        System.out.println(sb.append("]}"));
        System.out.flush();
        for (String name : plan) {
            Ctx c = new Ctx(args[0], args[1]);
            long start = System.nanoTime();
            String err = null;
            try {
                System.err.println("=== " + name);
                SCENARIOS.get(name).run(c);
            } catch (Throwable t) {
                err = Check.describe(t);
                t.printStackTrace();
            }
            long ms = (System.nanoTime() - start) / 1_000_000;
            StringBuilder out = new StringBuilder("{\"scenario\":").append(Json.str(name))
                    .append(",\"ok\":").append(err == null).append(",\"ms\":").append(ms);
            if (err != null) {
                out.append(",\"error\":").append(Json.str(err));
            }
            if (c.producedTopic != null) {
                out.append(",\"topic\":").append(Json.str(c.producedTopic)).append(",\"records\":[");
                for (int i = 0; i < c.produced.size(); i++) {
                    out.append(i > 0 ? "," : "").append(c.produced.get(i).json());
                }
                out.append("]");
            }
            System.out.println(out.append("}"));
            System.out.flush();
        }
        // Kafka's clients leave non-daemon threads behind on some failures:
        // the answer is complete, so end the JVM now.
        System.exit(0);
    }
}
