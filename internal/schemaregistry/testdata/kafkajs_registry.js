// @kafkajs/confluent-schema-registry (with kafkajs) against minikafka's
// schema registry and broker.
//
// Usage: node kafkajs_registry.js REGISTRY_URL BOOTSTRAP TOPIC
// (NODE_PATH must lead to both packages.) Registers Avro and JSON
// schemas, evolves incompatibly, produces encoded records with kafkajs,
// consumes them back and decodes them. Prints one JSON object; exits
// non-zero with the error on stderr when a step fails.
const { SchemaRegistry, SchemaType } = require("@kafkajs/confluent-schema-registry");
const { Kafka, logLevel } = require("kafkajs");

const [url, bootstrap, topic] = process.argv.slice(2);

async function main() {
  const out = {};
  const registry = new SchemaRegistry({ host: url });
  const v1 = { type: "record", name: "Event", namespace: "js", fields: [{ name: "kind", type: "string" }, { name: "n", type: "int" }] };
  const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v1) }, { subject: topic + "-value" });
  out.id = id;
  out.again = (await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v1) }, { subject: topic + "-value" })).id;
  out.latest = await registry.getLatestSchemaId(topic + "-value");
  const bad = { type: "record", name: "Event", namespace: "js", fields: [{ name: "kind", type: "int" }] };
  try {
    await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(bad) }, { subject: topic + "-value" });
    out.bad = null;
  } catch (e) {
    out.bad = e.message;
  }
  const js = await registry.register({ type: SchemaType.JSON, schema: JSON.stringify({ type: "object", properties: { a: { type: "integer" } } }) }, { subject: topic + "-json" });
  out.json_id = js.id;

  const kafka = new Kafka({ brokers: [bootstrap], clientId: "sr-js", logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const events = [{ kind: "click", n: 1 }, { kind: "view", n: 2 }];
  const messages = [];
  for (const ev of events) messages.push({ value: await registry.encode(id, ev) });
  messages.push({ value: await registry.encode(js.id, { a: 7 }) });
  await producer.send({ topic, messages });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: "sr-js" });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("consumed only " + got.length)), 20000);
    consumer.run({
      eachMessage: async ({ message }) => {
        got.push(await registry.decode(message.value));
        if (got.length === messages.length) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  out.consumed = got;
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
