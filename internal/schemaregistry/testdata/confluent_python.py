"""confluent-kafka-python 2.x against minikafka's schema registry.

Usage: python confluent_python.py REGISTRY_URL BOOTSTRAP TOPIC

Registers through the client, evolves a schema compatibly and
incompatibly, produces through AvroSerializer and consumes back through
AvroDeserializer. Prints one JSON object with what it saw; exits non-zero
with the error on stderr when a step fails.
"""
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

url, bootstrap, topic = sys.argv[1:4]
subject = topic + "-value"
v1 = json.dumps({"type": "record", "name": "Payment", "namespace": "py",
                 "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]})
v2 = json.dumps({"type": "record", "name": "Payment", "namespace": "py",
                 "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"},
                            {"name": "currency", "type": "string", "default": "EUR"}]})
bad = json.dumps({"type": "record", "name": "Payment", "namespace": "py",
                  "fields": [{"name": "id", "type": "int"}]})

out = {}
sr = SchemaRegistryClient({"url": url})
out["subjects_at_start"] = sr.get_subjects()
id1 = sr.register_schema(subject, Schema(v1, "AVRO"))
out["id1_again"] = sr.register_schema(subject, Schema(v1, "AVRO")) == id1
out["id1"] = id1
out["compatible_v2"] = sr.test_compatibility(subject, Schema(v2, "AVRO"))
out["compatible_bad"] = sr.test_compatibility(subject, Schema(bad, "AVRO"))
try:
    sr.register_schema(subject, Schema(bad, "AVRO"))
    out["bad_error"] = None
except SchemaRegistryError as e:
    out["bad_error"] = [e.http_status_code, e.error_code]
id2 = sr.register_schema(subject, Schema(v2, "AVRO"))
out["id2"] = id2
latest = sr.get_latest_version(subject)
out["latest"] = [latest.version, latest.schema_id]
out["versions"] = sr.get_versions(subject)
out["lookup_version"] = sr.lookup_schema(subject, Schema(v1, "AVRO")).version
try:
    sr.get_version(subject, 99)
    out["missing_version"] = None
except SchemaRegistryError as e:
    out["missing_version"] = [e.http_status_code, e.error_code]

ser = AvroSerializer(sr, v2, conf={"auto.register.schemas": False, "use.latest.version": True})
p = Producer({"bootstrap.servers": bootstrap})
payments = [{"id": "p-1", "amount": 12.5, "currency": "EUR"}, {"id": "p-2", "amount": 7.0, "currency": "USD"}]
for pay in payments:
    p.produce(topic, value=ser(pay, SerializationContext(topic, MessageField.VALUE)))
if p.flush(10) != 0:
    raise SystemExit("produce did not finish")

deser = AvroDeserializer(SchemaRegistryClient({"url": url}))
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "py-sr", "auto.offset.reset": "earliest"})
c.subscribe([topic])
got = []
for _ in range(200):
    m = c.poll(0.2)
    if m is None:
        if len(got) == len(payments):
            break
        continue
    if m.error():
        raise SystemExit(str(m.error()))
    got.append(deser(m.value(), SerializationContext(topic, MessageField.VALUE)))
    if len(got) == len(payments):
        break
c.close()
out["consumed"] = got
print(json.dumps(out))
