#!/usr/bin/python3
"""kafka-python (pure Python) driven by compat_test.

Usage: kafkapython_client.py OP BOOTSTRAP TOPIC, with OP's parameters as JSON
on stdin; prints one JSON answer on stdout. Records are {"p","k","v","h","ts","o"}
with null k/v for null key/value and h a list of {"k","v"} headers.
"""
import json
import logging
import sys
import time

logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
CLIENT_ID = "compat-kafka-python"


def rec_of(m):
    return {
        "p": m.partition,
        "o": m.offset,
        "k": None if m.key is None else m.key.decode(),
        "v": None if m.value is None else m.value.decode(),
        "h": [{"k": k, "v": (v or b"").decode()} for k, v in (m.headers or [])],
        "ts": m.timestamp,
    }


def produce(bootstrap, topic, args):
    from kafka import KafkaProducer

    # kafka-python 2.0 has no idempotent producer; the test never asks it for one.
    p = KafkaProducer(bootstrap_servers=bootstrap, client_id=CLIENT_ID, acks="all",
                      compression_type=None if args["codec"] == "none" else args["codec"],
                      linger_ms=10, retries=0)
    recs = args["records"]
    futures = []
    for r in recs:
        futures.append(p.send(topic,
                              value=None if r["v"] is None else r["v"].encode(),
                              key=None if r["k"] is None else r["k"].encode(),
                              headers=[(h["k"], h["v"].encode()) for h in r["h"] or []],
                              partition=r["p"],
                              timestamp_ms=r["ts"] if r["ts"] >= 0 else None))
    out = []
    for r, f in zip(recs, futures):
        md = f.get(timeout=30)
        r = dict(r)
        r["p"], r["o"] = md.partition, md.offset
        out.append(r)
    p.close()
    return {"records": out}


def consumer(bootstrap, **kw):
    from kafka import KafkaConsumer

    return KafkaConsumer(bootstrap_servers=bootstrap, client_id=CLIENT_ID, enable_auto_commit=False, **kw)


def poll_until(c, count, seconds):
    out = []
    deadline = time.time() + seconds
    while len(out) < count and time.time() < deadline:
        for _, msgs in c.poll(timeout_ms=500).items():
            out.extend(rec_of(m) for m in msgs)
    return out


def consume(bootstrap, topic, args):
    from kafka import TopicPartition

    c = consumer(bootstrap, group_id=None)
    tps = [TopicPartition(topic, p) for p in range(args["partitions"])]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    out = poll_until(c, args["count"], 30)
    c.close()
    return {"records": out}


def group_consume(bootstrap, topic, args):
    c = consumer(bootstrap, group_id=args["group"], auto_offset_reset="earliest")
    c.subscribe([topic])
    out = poll_until(c, args["count"], 30)
    if out:
        c.commit()
    c.close()
    return {"records": out}


def list_offset(bootstrap, topic, args):
    from kafka import TopicPartition

    c = consumer(bootstrap, group_id=None)
    tp = TopicPartition(topic, args["partition"])
    spec = args["spec"]
    if spec == -2:
        off = c.beginning_offsets([tp])[tp]
    elif spec == -1:
        off = c.end_offsets([tp])[tp]
    else:
        res = c.offsets_for_times({tp: spec})[tp]
        off = -1 if res is None else res.offset  # None: no record at or after spec
    c.close()
    return {"offset": off}


_admin = None


def admin(bootstrap):
    global _admin
    from kafka import KafkaAdminClient

    if _admin is None:
        _admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id=CLIENT_ID)
    return _admin


def check_errors(resp, attr):
    for item in getattr(resp, attr):
        code = item[1]
        if code != 0:
            raise RuntimeError("%s: error code %d (%s)" % (attr, code, item))


def create_topic(bootstrap, topic, args):
    from kafka.admin import NewTopic

    resp = admin(bootstrap).create_topics([NewTopic(topic, args["partitions"], 1, topic_configs=args["configs"] or {})])
    check_errors(resp, "topic_errors")
    return {}


def delete_topic(bootstrap, topic, args):
    check_errors(admin(bootstrap).delete_topics([topic]), "topic_error_codes")
    return {}


def create_partitions(bootstrap, topic, args):
    from kafka.admin import NewPartitions

    check_errors(admin(bootstrap).create_partitions({topic: NewPartitions(args["total"])}), "topic_errors")
    return {}


def metadata(bootstrap, topic, args):
    c = consumer(bootstrap, group_id=None)
    out = {}
    names = args["topics"] or list(c.topics())
    for name in names:
        # partitions_for_topic refreshes metadata for a topic it has not seen.
        parts = c.partitions_for_topic(name)
        if parts:
            out[name] = len(parts)
    c.close()
    return {"topics": out}


def describe_config(bootstrap, topic, args):
    from kafka.admin import ConfigResource, ConfigResourceType

    for resp in admin(bootstrap).describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)]):
        for res in resp.resources:
            if res[0] != 0:
                raise RuntimeError("describe configs: error %d %s" % (res[0], res[1]))
            for entry in res[4]:
                if entry[0] == args["key"]:
                    return {"value": entry[1]}
    return {"value": None}


def alter_config(bootstrap, topic, args):
    from kafka.admin import ConfigResource, ConfigResourceType

    resp = admin(bootstrap).alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={args["key"]: args["value"]})])
    for res in resp.resources:
        if res[0] != 0:
            raise RuntimeError("alter configs: error %d %s" % (res[0], res[1]))
    return {}


def list_groups(bootstrap, topic, args):
    return {"groups": [g for g, _ in admin(bootstrap).list_consumer_groups()]}


def describe_group(bootstrap, topic, args):
    for g in admin(bootstrap).describe_consumer_groups([args["group"]]):
        if g.group == args["group"]:
            return {"state": g.state}
    raise RuntimeError("group %s not described" % args["group"])


def version(bootstrap, topic, args):
    import kafka

    return {"version": kafka.__version__}


def check(bootstrap, topic, args):
    import kafka  # noqa: F401
    import lz4  # noqa: F401
    import snappy  # noqa: F401
    import zstandard  # noqa: F401

    return {}


def main():
    op, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    args = json.load(sys.stdin)
    print(json.dumps(globals()[op](bootstrap, topic, args or {})))


if __name__ == "__main__":
    main()
