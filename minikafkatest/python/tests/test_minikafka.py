"""The fixtures against a real minikafka binary, with kafka-python as the client."""
import importlib.metadata
import os
import socket
import textwrap

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import NotLeaderForPartitionError

import pytest_minikafka
from pytest_minikafka import MinikafkaError, MinikafkaTimeout, start


def consume(bootstrap, topic, n):
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=15000)
    try:
        got = []
        for msg in consumer:
            got.append((msg.partition, msg.offset, msg.key, msg.value))
            if len(got) == n:
                break
        return got
    finally:
        consumer.close()


def test_produce_and_consume(minikafka):
    minikafka.create_topic("orders", partitions=2)
    producer = KafkaProducer(bootstrap_servers=minikafka.bootstrap_servers)
    try:
        for i in range(3):
            md = producer.send("orders", key=b"k%d" % i, value=b"v%d" % i, partition=1).get(timeout=15)
            assert (md.partition, md.offset) == (1, i)
    finally:
        producer.close()
    minikafka.wait_high_watermark("orders", 1, 3, timeout=5)
    assert minikafka.partition("orders", 0)["high_watermark"] == 0
    assert consume(minikafka.bootstrap_servers, "orders", 3) == [
        (1, 0, b"k0", b"v0"), (1, 1, b"k1", b"v1"), (1, 2, b"k2", b"v2")]


def test_injected_errors_are_retried(minikafka):
    minikafka.create_topic("retried", partitions=1)
    fault = minikafka.fault(api_keys=[0], topic="retried", error="NOT_LEADER_OR_FOLLOWER", times=2)
    producer = KafkaProducer(bootstrap_servers=minikafka.bootstrap_servers, retries=5, retry_backoff_ms=20)
    try:
        assert producer.send("retried", value=b"once").get(timeout=15).offset == 0
    finally:
        producer.close()
    after = minikafka.get_fault(fault["id"])
    assert (after["fired"], after["done"]) == (2, True)
    # The refused attempts wrote nothing: one record, not three.
    assert minikafka.high_watermark("retried") == 1


def test_injected_error_reaches_the_client(minikafka):
    minikafka.create_topic("refused", partitions=1)
    minikafka.fault(api_keys=[0], topic="refused", error="NOT_LEADER_OR_FOLLOWER")
    producer = KafkaProducer(bootstrap_servers=minikafka.bootstrap_servers, retries=0)
    try:
        with pytest.raises(NotLeaderForPartitionError):
            producer.send("refused", value=b"x").get(timeout=15)
    finally:
        producer.close()
    assert minikafka.high_watermark("refused") == 0


def test_down_refuses_connections_until_up(minikafka):
    host, port = minikafka.bootstrap_servers.rsplit(":", 1)
    minikafka.down()
    assert minikafka.is_down()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5).close()
    minikafka.up()
    assert not minikafka.is_down()
    socket.create_connection((host, int(port)), timeout=5).close()


def test_waits_are_bounded_and_say_what_they_saw(minikafka):
    minikafka.create_topic("never", partitions=1)
    with pytest.raises(MinikafkaTimeout) as e:
        minikafka.wait_high_watermark("never", 0, 5, timeout=0.2)
    assert e.value.status == 408
    assert "high watermark 0" in str(e.value)


def test_refused_calls_raise_with_the_reason(minikafka):
    minikafka.create_topic("twice")
    with pytest.raises(MinikafkaError) as e:
        minikafka.create_topic("twice")
    assert e.value.status == 409
    with pytest.raises(MinikafkaError) as e:
        minikafka.fault(api_keys=[0], error="NOT_LEADER_OR_FOLLOWER", misspelt=1)
    assert e.value.status == 400 and "misspelt" in str(e.value)


def test_seed_and_wait_topic(minikafka):
    minikafka.create_topic("seeded", partitions=1)
    minikafka.wait_topic("seeded", timeout=5)
    out = minikafka.seed("seeded", [{"key": "a", "value": "1"}, {"key": "b", "value": "2"}])
    assert out == [{"partition": 0, "offset": 0}, {"partition": 0, "offset": 1}]
    assert consume(minikafka.bootstrap_servers, "seeded", 2) == [(0, 0, b"a", b"1"), (0, 1, b"b", b"2")]


def test_per_test_broker_is_fresh_and_separate(minikafka, minikafka_per_test):
    assert minikafka_per_test.bootstrap_servers != minikafka.bootstrap_servers
    minikafka_per_test.create_topic("orders")  # exists on the shared broker, not here
    minikafka_per_test.down()  # the shared broker is not affected
    assert not minikafka.is_down()


def test_factory_passes_flags(minikafka_factory):
    broker = minikafka_factory(args=["-default-partitions", "3"])
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers)
    try:
        producer.send("auto", value=b"x").get(timeout=15)  # auto-created with 3 partitions
        assert producer.partitions_for("auto") == {0, 1, 2}
    finally:
        producer.close()


def test_start_and_stop_without_pytest(tmp_path):
    with start(data_dir=str(tmp_path)) as broker:
        addr = broker.bootstrap_servers
        assert broker.create_topic("x")["ok"]
    host, port = addr.rsplit(":", 1)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5).close()
    assert tmp_path.exists()  # a directory passed in is the caller's to remove


def test_missing_binary_names_it():
    with pytest.raises(MinikafkaError) as e:
        start(binary="/nonexistent/minikafka")
    assert "/nonexistent/minikafka" in str(e.value) and "go install" in str(e.value)


def test_shared_broker_is_reset_between_tests(pytester, monkeypatch, minikafka):
    # A suite of its own: the shared broker is one per run, and a fault or a
    # down broker left by one test is gone in the next; the binary comes
    # from the ini option.
    pytester.makeini(textwrap.dedent("""
        [pytest]
        minikafka_bin = %s
    """ % minikafka.binary))
    pytester.makepyfile(textwrap.dedent("""
        seen = []

        def test_leaves_a_mess(minikafka):
            seen.append(minikafka.bootstrap_servers)
            minikafka.fault(api_keys=[0], error="NOT_LEADER_OR_FOLLOWER")
            minikafka.down()

        def test_finds_it_clean(minikafka):
            assert minikafka.bootstrap_servers == seen[0]
            assert minikafka.faults() == []
            assert not minikafka.is_down()
    """))
    args = ["-p", "no:cacheprovider"]
    try:
        importlib.metadata.distribution("pytest-minikafka")
    except importlib.metadata.PackageNotFoundError:
        # Not installed: the inner run loads it from this checkout's src/.
        src = os.path.dirname(os.path.dirname(os.path.abspath(pytest_minikafka.__file__)))
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])))
        args += ["-p", "pytest_minikafka.plugin"]
    result = pytester.runpytest_subprocess(*args)
    result.assert_outcomes(passed=2)
