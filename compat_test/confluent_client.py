#!/usr/bin/python3
"""confluent-kafka-python (librdkafka) driven by compat_test.

Usage: confluent_client.py OP BOOTSTRAP TOPIC, with OP's parameters as JSON on
stdin; prints one JSON answer on stdout. Records are {"p","k","v","h","ts","o"}
with null k/v for null key/value and h a list of {"k","v"} headers.
"""
import json
import sys
import time


def rec_of(msg):
    ts_type, ts = msg.timestamp()
    key, value = msg.key(), msg.value()
    return {
        "p": msg.partition(),
        "o": msg.offset(),
        "k": None if key is None else key.decode(),
        "v": None if value is None else value.decode(),
        "h": [{"k": k, "v": (v or b"").decode()} for k, v in (msg.headers() or [])],
        "ts": ts,
    }


def base_conf(bootstrap):
    return {"bootstrap.servers": bootstrap, "client.id": "compat-confluent-python", "log_level": 3}


def produce(bootstrap, topic, args):
    from confluent_kafka import Producer

    conf = base_conf(bootstrap)
    conf.update({
        "enable.idempotence": args["idempotent"],
        "compression.type": args["codec"],
        "acks": "all",
        "linger.ms": 10,
    })
    p = Producer(conf)
    recs = args["records"]
    out = [None] * len(recs)
    errors = []

    def report(i):
        def cb(err, msg):
            if err is not None:
                errors.append(str(err))
                return
            r = dict(recs[i])
            r["p"], r["o"] = msg.partition(), msg.offset()
            out[i] = r
        return cb

    for i, r in enumerate(recs):
        kw = {}
        if r["ts"] >= 0:
            kw["timestamp"] = r["ts"]
        if r["h"]:
            kw["headers"] = [(h["k"], h["v"].encode()) for h in r["h"]]
        p.produce(topic,
                  value=None if r["v"] is None else r["v"].encode(),
                  key=None if r["k"] is None else r["k"].encode(),
                  partition=r["p"], on_delivery=report(i), **kw)
    left = p.flush(30)
    if errors:
        raise RuntimeError("delivery failed: %s" % errors[:3])
    if left:
        raise RuntimeError("%d records not delivered within 30 s" % left)
    return {"records": out}


def produce_txns(bootstrap, topic, args):
    from confluent_kafka import Producer

    conf = base_conf(bootstrap)
    conf.update({"transactional.id": topic + "-txid"})
    p = Producer(conf)
    p.init_transactions(30)
    for recs, commit in zip(args["txns"], args["commit"]):
        p.begin_transaction()
        for r in recs:
            p.produce(topic,
                      value=None if r["v"] is None else r["v"].encode(),
                      key=None if r["k"] is None else r["k"].encode(),
                      headers=[(h["k"], h["v"].encode()) for h in r["h"] or []],
                      partition=r["p"])
        # abort_transaction purges records not yet sent; flush so the
        # aborted records reach the log (read_uncommitted must see them).
        if p.flush(30):
            raise RuntimeError("records not delivered within 30 s")
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    return {}


def consumer(bootstrap):
    from confluent_kafka import Consumer

    conf = base_conf(bootstrap)
    # librdkafka wants a group.id even for a consumer that only assigns.
    conf.update({"group.id": "compat-confluent-python-assign", "enable.auto.commit": False})
    return Consumer(conf)


def consume(bootstrap, topic, args):
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    c = consumer(bootstrap)
    c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(args["partitions"])])
    out = []
    deadline = time.time() + 30
    while len(out) < args["count"] and time.time() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise RuntimeError(str(msg.error()))
        out.append(rec_of(msg))
    c.close()
    return {"records": out}


def group_consume(bootstrap, topic, args):
    from confluent_kafka import Consumer

    conf = base_conf(bootstrap)
    conf.update({"group.id": args["group"], "enable.auto.commit": False,
                 "auto.offset.reset": "earliest", "session.timeout.ms": 10000})
    c = Consumer(conf)
    c.subscribe([topic])
    out = []
    deadline = time.time() + 30
    while len(out) < args["count"] and time.time() < deadline:
        msg = c.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise RuntimeError(str(msg.error()))
        out.append(rec_of(msg))
    if out:
        c.commit(asynchronous=False)
    c.close()
    return {"records": out}


def cluster_run(bootstrap, topic, args):
    """An idempotent producer fed one record per stdin line, and a group
    consumer meanwhile; at the end of the input, flush, read until every
    acknowledged record arrived, commit, leave."""
    import threading
    from confluent_kafka import Consumer, Producer

    pconf = base_conf(bootstrap)
    pconf.update({"enable.idempotence": True, "acks": "all", "linger.ms": 5})
    p = Producer(pconf)
    cconf = base_conf(bootstrap)
    cconf.update({"group.id": args["group"], "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "session.timeout.ms": 10000, "fetch.wait.max.ms": 100})
    c = Consumer(cconf)
    c.subscribe([topic])
    acked, errors, consumed = [], [], []
    target = [None]
    fatal = []

    def consume():
        deadline = None
        while True:
            if target[0] is not None:
                if len(consumed) >= target[0]:
                    return
                deadline = deadline or time.time() + 30
                if time.time() > deadline:
                    return
            msg = c.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                # librdkafka reports what it recovers from (a node going
                # away) as errors too; only a fatal one ends the run.
                if msg.error().fatal():
                    fatal.append(str(msg.error()))
                    return
                continue
            consumed.append(rec_of(msg))

    th = threading.Thread(target=consume)
    th.start()

    def report(err, msg):
        if err is not None:
            errors.append(str(err))
            return
        acked.append({"p": msg.partition(), "o": msg.offset(), "k": msg.key().decode(), "v": msg.value().decode(),
                      "h": [], "ts": -1})

    while True:
        line = sys.stdin.readline()
        if not line:
            break
        r = json.loads(line)
        p.produce(topic, value=r["v"].encode(), key=r["k"].encode(), partition=r["p"], on_delivery=report)
        p.poll(0)
    left = p.flush(30)
    target[0] = len(acked)
    th.join()
    if fatal:
        raise RuntimeError("consumer: %s" % fatal)
    if errors:
        raise RuntimeError("delivery failed: %s" % errors[:3])
    if left:
        raise RuntimeError("%d records not delivered within 30 s" % left)
    if consumed:
        c.commit(asynchronous=False)
    c.close()
    return {"acked": acked, "consumed": consumed}


def list_offset(bootstrap, topic, args):
    from confluent_kafka import TopicPartition

    c = consumer(bootstrap)
    part, spec = args["partition"], args["spec"]
    if spec in (-1, -2):
        low, high = c.get_watermark_offsets(TopicPartition(topic, part), timeout=10)
        off = low if spec == -2 else high
    else:
        res = c.offsets_for_times([TopicPartition(topic, part, spec)], timeout=10)
        if res[0].error:
            raise RuntimeError(str(res[0].error))
        off = res[0].offset
    c.close()
    return {"offset": off}


_admin = None


def admin(bootstrap):
    # Kept in a global: the futures fail with _DESTROY if the client is
    # garbage-collected before they resolve.
    global _admin
    from confluent_kafka.admin import AdminClient

    if _admin is None:
        _admin = AdminClient(base_conf(bootstrap))
    return _admin


def wait_all(futures):
    for f in futures.values():
        f.result(timeout=30)


def create_topic(bootstrap, topic, args):
    from confluent_kafka.admin import NewTopic

    wait_all(admin(bootstrap).create_topics(
        [NewTopic(topic, num_partitions=args["partitions"], replication_factor=1, config=args["configs"] or {})]))
    return {}


def delete_topic(bootstrap, topic, args):
    wait_all(admin(bootstrap).delete_topics([topic]))
    return {}


def create_partitions(bootstrap, topic, args):
    from confluent_kafka.admin import NewPartitions

    wait_all(admin(bootstrap).create_partitions([NewPartitions(topic, args["total"])]))
    return {}


def metadata(bootstrap, topic, args):
    a = admin(bootstrap)
    out = {}
    mds = [a.list_topics(timeout=10)] if not args["topics"] else [a.list_topics(topic=t, timeout=10) for t in args["topics"]]
    for md in mds:
        for name, tm in md.topics.items():
            if tm.error is None:
                out[name] = len(tm.partitions)
    return {"topics": out}


def describe_config(bootstrap, topic, args):
    from confluent_kafka.admin import ConfigResource

    fs = admin(bootstrap).describe_configs([ConfigResource("topic", topic)])
    for f in fs.values():
        entries = f.result(timeout=30)
        if args["key"] in entries:
            return {"value": entries[args["key"]].value}
    return {"value": None}


def alter_config(bootstrap, topic, args):
    from confluent_kafka.admin import ConfigResource

    # confluent-kafka-python 1.7 has only the non-incremental AlterConfigs.
    wait_all(admin(bootstrap).alter_configs([ConfigResource("topic", topic, set_config={args["key"]: args["value"]})]))
    return {}


def list_groups(bootstrap, topic, args):
    return {"groups": [g.id for g in admin(bootstrap).list_groups(timeout=10)]}


def describe_group(bootstrap, topic, args):
    gs = admin(bootstrap).list_groups(group=args["group"], timeout=10)
    for g in gs:
        if g.id == args["group"]:
            if g.error is not None and g.error.code() != 0:
                raise RuntimeError(str(g.error))
            return {"state": g.state}
    raise RuntimeError("group %s not described" % args["group"])


def version(bootstrap, topic, args):
    import confluent_kafka

    return {"version": "%s (librdkafka %s)" % (confluent_kafka.version()[0], confluent_kafka.libversion()[0])}


def check(bootstrap, topic, args):
    import confluent_kafka  # noqa: F401

    return {}


def main():
    op, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    # cluster_run streams: its parameters are the first line, records follow.
    args = json.loads(sys.stdin.readline()) if op == "cluster_run" else json.load(sys.stdin)
    print(json.dumps(globals()[op](bootstrap, topic, args or {})))


if __name__ == "__main__":
    main()
