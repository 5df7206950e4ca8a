"""confluent-kafka-python 2.x against minikafka's schema registry.

Usage: python confluent_python.py REGISTRY_URL BOOTSTRAP TOPIC

Registers through the client, evolves a schema compatibly and
incompatibly, produces through AvroSerializer and consumes back through
AvroDeserializer; then the same round trip through ProtobufSerializer (a
message type built at run time; the serializer registers its file as a
base64 FileDescriptorProto) and JSONSerializer (auto-registered, then an
incompatible evolution refused), to TOPIC-proto and TOPIC-json, read back
by deserializers with a fresh client. Prints one JSON object with what it saw; exits non-zero
with the error on stderr when a step fails.
"""
import json
import sys

from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
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

# Protobuf, with a message type made at run time.
fdp = descriptor_pb2.FileDescriptorProto(name="pyshop/ticket.proto", package="pyshop", syntax="proto3")
msg = fdp.message_type.add(name="Ticket")
F = descriptor_pb2.FieldDescriptorProto
msg.field.add(name="code", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL, json_name="code")
msg.field.add(name="seats", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL, json_name="seats")
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
Ticket = message_factory.GetMessageClass(pool.FindMessageTypeByName("pyshop.Ticket"))
ptopic, jtopic = topic + "-proto", topic + "-json"
pser = ProtobufSerializer(Ticket, sr, {"use.deprecated.format": False})
pbytes = pser(Ticket(code="T-9", seats=2), SerializationContext(ptopic, MessageField.VALUE))
out["proto_id"] = int.from_bytes(pbytes[1:5], "big")

# JSON Schema, auto-registered; an incompatible change is refused.
jv1 = json.dumps({"title": "Person", "type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                  "required": ["name"], "additionalProperties": False})
jbad = json.dumps({"title": "Person", "type": "object", "properties": {"name": {"type": "integer"}}, "required": ["name"],
                   "additionalProperties": False})
jser = JSONSerializer(jv1, sr)
jbytes = jser({"name": "ada", "age": 36}, SerializationContext(jtopic, MessageField.VALUE))
out["json_id"] = int.from_bytes(jbytes[1:5], "big")
try:
    JSONSerializer(jbad, sr)({"name": 1}, SerializationContext(jtopic, MessageField.VALUE))
    out["json_bad"] = None
except Exception as e:  # SerializationError wrapping the registry's 409
    out["json_bad"] = str(e)
p.produce(ptopic, value=pbytes)
p.produce(jtopic, value=jbytes)
if p.flush(10) != 0:
    raise SystemExit("produce did not finish")

fresh = SchemaRegistryClient({"url": url})
# 2.6's ProtobufDeserializer reads with the message type it is given.
pdeser = ProtobufDeserializer(Ticket, {"use.deprecated.format": False})
jdeser = JSONDeserializer(None, schema_registry_client=fresh)
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "py-sr-2", "auto.offset.reset": "earliest"})
c.subscribe([ptopic, jtopic])
more = {}
for _ in range(200):
    m = c.poll(0.2)
    if m is None:
        if len(more) == 2:
            break
        continue
    if m.error():
        raise SystemExit(str(m.error()))
    ctx = SerializationContext(m.topic(), MessageField.VALUE)
    if m.topic() == ptopic:
        t = pdeser(m.value(), ctx)
        more["proto"] = {"code": t.code, "seats": t.seats}
    else:
        more["json"] = jdeser(m.value(), ctx)
    if len(more) == 2:
        break
c.close()
out.update(more)
print(json.dumps(out))
