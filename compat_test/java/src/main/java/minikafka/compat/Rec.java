package minikafka.compat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * One record as the scenarios compare it, built like compat_test's
 * testRecords: null keys, null values, no/one empty/two headers, explicit
 * timestamps.
 */
final class Rec {
    final int p;
    final String k, v;
    final List<String[]> h = new ArrayList<>();
    final long ts;
    long o = -1;

    Rec(int p, String k, String v, long ts) {
        this.p = p;
        this.k = k;
        this.v = v;
        this.ts = ts;
    }

    static List<Rec> make(String tag, int parts, int perPart, long base) {
        List<Rec> out = new ArrayList<>();
        for (int i = 0; i < perPart; i++) {
            for (int p = 0; p < parts; p++) {
                int n = i * parts + p;
                String k = n % 4 != 3 ? "key-" + tag + "-" + n : null;
                String v = n % 5 != 4 ? "value-" + tag + "-" + n + "-" + "x".repeat(n % 7 * 10) : null;
                Rec r = new Rec(p, k, v, base + i * 1000L);
                if (n % 3 == 0) {
                    r.h.add(new String[] {"h1", "a"});
                    r.h.add(new String[] {"h2", "b-" + n});
                } else if (n % 3 == 2) {
                    r.h.add(new String[] {"only", ""});
                }
                out.add(r);
            }
        }
        return out;
    }

    ProducerRecord<String, String> toProducer(String topic) {
        List<Header> hs = new ArrayList<>();
        for (String[] kv : h) {
            hs.add(new RecordHeader(kv[0], kv[1].getBytes(StandardCharsets.UTF_8)));
        }
        return new ProducerRecord<>(topic, p, ts, k, v, hs);
    }

    static Rec from(ConsumerRecord<String, String> cr) {
        Rec r = new Rec(cr.partition(), cr.key(), cr.value(), cr.timestamp());
        for (Header hd : cr.headers()) {
            r.h.add(new String[] {hd.key(), new String(hd.value() == null ? new byte[0] : hd.value(), StandardCharsets.UTF_8)});
        }
        r.o = cr.offset();
        return r;
    }

    /** diff names what differs between this (wanted) and got, or "". */
    String diff(Rec got) {
        List<String> d = new ArrayList<>();
        if (p != got.p) d.add("partition");
        if (!Objects.equals(k, got.k)) d.add("key");
        if (!Objects.equals(v, got.v)) d.add("value");
        boolean hs = h.size() == got.h.size();
        for (int i = 0; hs && i < h.size(); i++) {
            hs = h.get(i)[0].equals(got.h.get(i)[0]) && h.get(i)[1].equals(got.h.get(i)[1]);
        }
        if (!hs) d.add("headers");
        if (ts != got.ts) d.add("timestamp");
        if (o != got.o) d.add("offset");
        return String.join(", ", d);
    }

    String json() {
        StringBuilder sb = new StringBuilder("{\"p\":").append(p).append(",\"k\":").append(Json.str(k))
                .append(",\"v\":").append(Json.str(v)).append(",\"h\":[");
        for (int i = 0; i < h.size(); i++) {
            sb.append(i > 0 ? "," : "").append("{\"k\":").append(Json.str(h.get(i)[0])).append(",\"v\":")
                    .append(Json.str(h.get(i)[1])).append("}");
        }
        return sb.append("],\"ts\":").append(ts).append(",\"o\":").append(o).append("}").toString();
    }

    @Override
    public String toString() {
        return json();
    }
}
