// @confluentinc/schemaregistry (Confluent's JavaScript client and its
// Avro, JSON Schema and Protobuf serdes), with kafkajs carrying the bytes,
// against minikafka's schema registry and broker.
//
// Usage: node confluent_schemaregistry.js REGISTRY_URL BOOTSTRAP TOPIC
// (NODE_PATH must lead to both packages.) Avro: registers v1, evolves
// compatibly (a field with a default) and incompatibly (a type change,
// refused), serializes with the latest version. JSON Schema: registered,
// then serialized with the latest version. Protobuf: a message type built
// at run time, auto-registered by the serializer (which sends the file as
// a base64 FileDescriptorProto). Records go to TOPIC, TOPIC-json and
// TOPIC-proto, are consumed back and deserialized with a fresh client
// (writer schemas fetched by ID). Prints one JSON object; exits non-zero
// with the error on stderr when a step fails.
const {
  SchemaRegistryClient, SerdeType,
  AvroSerializer, AvroDeserializer,
  JsonSerializer, JsonDeserializer,
  ProtobufSerializer, ProtobufDeserializer,
} = require("@confluentinc/schemaregistry");
const { create, createFileRegistry, createMutableRegistry } = require("@bufbuild/protobuf");
const { FileDescriptorProtoSchema } = require("@bufbuild/protobuf/wkt");
const { Kafka, logLevel } = require("kafkajs");

const [url, bootstrap, topic] = process.argv.slice(2);

async function main() {
  const out = {};
  const client = new SchemaRegistryClient({ baseURLs: [url] });

  // Avro.
  const v1 = { type: "record", name: "Order", namespace: "shop", fields: [{ name: "id", type: "string" }, { name: "qty", type: "int" }] };
  const v2 = { ...v1, fields: [...v1.fields, { name: "note", type: "string", default: "" }] };
  const bad = { ...v1, fields: [{ name: "id", type: "int" }, { name: "qty", type: "int" }] };
  const subject = topic + "-value";
  out.avro_v1 = await client.register(subject, { schemaType: "AVRO", schema: JSON.stringify(v1) });
  out.avro_v1_again = await client.register(subject, { schemaType: "AVRO", schema: JSON.stringify(v1) });
  const avroSer = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const first = await avroSer.serialize(topic, { id: "o-1", qty: 3 });
  out.avro_compatible = await client.testSubjectCompatibility(subject, { schemaType: "AVRO", schema: JSON.stringify(v2) });
  out.avro_v2 = await client.register(subject, { schemaType: "AVRO", schema: JSON.stringify(v2) });
  try {
    await client.register(subject, { schemaType: "AVRO", schema: JSON.stringify(bad) });
    out.avro_bad = null;
  } catch (e) {
    out.avro_bad = [e.status, e.errorCode];
  }
  // The client keeps "latest" until told otherwise.
  client.clearLatestCaches();
  const avroSer2 = new AvroSerializer(client, SerdeType.VALUE, { useLatestVersion: true });
  const second = await avroSer2.serialize(topic, { id: "o-2", qty: 5, note: "gift" });
  out.avro_versions = await client.getAllVersions(subject);

  // JSON Schema.
  const js = { $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { sku: { type: "string" }, price: { type: "number" } }, required: ["sku"] };
  out.json_id = await client.register(topic + "-json-value", { schemaType: "JSON", schema: JSON.stringify(js) });
  const jsonSer = new JsonSerializer(client, SerdeType.VALUE, { useLatestVersion: true, validate: true });
  const jsonBytes = await jsonSer.serialize(topic + "-json", { sku: "A-1", price: 9.5 });
  try {
    await jsonSer.serialize(topic + "-json", { price: 1 });
    out.json_invalid = null;
  } catch (e) {
    out.json_invalid = e.constructor.name;
  }

  // Protobuf: the serializer registers the message's file itself.
  const file = createFileRegistry(create(FileDescriptorProtoSchema, {
    name: "shop/item.proto", package: "shop", syntax: "proto3",
    messageType: [{ name: "Item", field: [
      { name: "sku", number: 1, type: 9, label: 1, jsonName: "sku" },
      { name: "count", number: 2, type: 5, label: 1, jsonName: "count" },
    ] }],
  }), () => undefined);
  const Item = file.getMessage("shop.Item");
  const protoSer = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: true, registry: createMutableRegistry(Item) });
  const protoBytes = await protoSer.serialize(topic + "-proto", create(Item, { sku: "B-2", count: 4 }));
  out.proto_id = protoBytes.readInt32BE(1);
  out.proto_subjects = (await client.getAllSubjects()).filter((s) => s.includes("proto"));

  const kafka = new Kafka({ brokers: [bootstrap], clientId: "confluent-sr-js", logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages: [{ value: first }, { value: second }] });
  await producer.send({ topic: topic + "-json", messages: [{ value: jsonBytes }] });
  await producer.send({ topic: topic + "-proto", messages: [{ value: protoBytes }] });
  await producer.disconnect();

  // A fresh client: every writer schema comes from the registry.
  const reader = new SchemaRegistryClient({ baseURLs: [url] });
  const des = {
    [topic]: new AvroDeserializer(reader, SerdeType.VALUE, {}),
    [topic + "-json"]: new JsonDeserializer(reader, SerdeType.VALUE, {}),
    [topic + "-proto"]: new ProtobufDeserializer(reader, SerdeType.VALUE, {}),
  };
  const consumer = kafka.consumer({ groupId: "confluent-sr-js" });
  await consumer.connect();
  await consumer.subscribe({ topics: Object.keys(des), fromBeginning: true });
  const got = {};
  let n = 0;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("consumed only " + n)), 30000);
    consumer.run({
      eachMessage: async ({ topic: t, message }) => {
        const v = await des[t].deserialize(t, message.value);
        (got[t] = got[t] || []).push(t.endsWith("-proto") ? { sku: v.sku, count: v.count } : v);
        if (++n === 4) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  out.avro = got[topic];
  out.json = got[topic + "-json"];
  out.proto = got[topic + "-proto"];
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
