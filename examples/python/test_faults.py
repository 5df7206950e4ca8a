"""confluent-kafka-python (librdkafka) against injected faults."""
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(broker, name):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})  # kept alive until the answer
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(timeout=30)


def produce(broker, topic, values, **conf):
    results = []
    p = Producer(dict({"bootstrap.servers": broker.bootstrap, "acks": "all", "linger.ms": 0}, **conf))
    for v in values:
        p.produce(topic, v.encode(), on_delivery=lambda err, msg: results.append(err))
        p.flush(30)
    return results


def consume(broker, topic, n):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "example", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
    got = []
    for _ in range(100):
        if len(got) >= n:
            break
        m = c.poll(0.3)
        if m is not None and m.error() is None:
            got.append(m.value().decode())
    c.close()
    return got


def test_retriable_error_recovers(broker):
    """librdkafka retries NOT_LEADER_OR_FOLLOWER; the refused batches were
    not written, so the record is there once."""
    create_topic(broker, "orders")
    f = broker.fault({"api_keys": [0], "topic": "orders", "error": "NOT_LEADER_OR_FOLLOWER", "times": 2})
    assert produce(broker, "orders", ["a"]) == [None]
    assert broker.get_fault(f["id"])["fired"] == 2
    errors = [r["error"] for r in broker.requests(api_key=0) if r.get("error")]
    assert errors == ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER"]
    assert consume(broker, "orders", 1) == ["a"]


def test_fatal_error_surfaces_then_recovers(broker):
    """A non-retriable error reaches the delivery report; once the fault is
    used up the next message goes through."""
    create_topic(broker, "audit")
    f = broker.fault({"api_keys": [0], "topic": "audit", "error": "MESSAGE_TOO_LARGE", "times": 1})
    results = produce(broker, "audit", ["x", "y"])
    assert results[0] is not None and results[0].code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert results[1] is None
    assert broker.get_fault(f["id"])["done"] is True
    assert consume(broker, "audit", 1) == ["y"]
