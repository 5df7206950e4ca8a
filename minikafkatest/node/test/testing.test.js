// @minikafka/testing against a real minikafka binary, with kafkajs as the
// client. Run: node --test test/*.test.js (the binary from MINIKAFKA_BIN or PATH,
// kafkajs from node_modules or NODE_PATH).
'use strict';
const { test, before, after, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const { Kafka, logLevel } = require('kafkajs');
const { start, findBinary, MinikafkaError, MinikafkaTimeoutError } = require('..');

let broker;
let kafka;
before(async () => {
  broker = await start();
  kafka = new Kafka({ brokers: [broker.bootstrapServers], clientId: 'minikafka-testing', logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 20, retries: 8 } });
});
after(() => broker.stop());
afterEach(() => broker.reset());

function connect(addr) {
  const i = addr.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(addr.slice(i + 1)), addr.slice(0, i));
    s.once('connect', () => { s.destroy(); resolve(); });
    s.once('error', reject);
  });
}

async function consume(topic, n) {
  const consumer = kafka.consumer({ groupId: `g-${topic}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const got = [];
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`consumed ${got.length} of ${n} records`)), 20000);
      consumer.run({
        eachMessage: async ({ partition, message }) => {
          got.push([partition, message.offset, message.key && message.key.toString(), message.value.toString()]);
          if (got.length === n) { clearTimeout(timer); resolve(); }
        },
      }).catch(reject);
    });
    return got;
  } finally {
    await consumer.disconnect();
  }
}

test('produce and consume through the broker', async () => {
  await broker.createTopic('orders', { partitions: 2 });
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (let i = 0; i < 3; i++) {
      const [md] = await producer.send({ topic: 'orders', messages: [{ key: `k${i}`, value: `v${i}`, partition: 1 }] });
      assert.deepEqual([md.partition, md.baseOffset], [1, String(i)]);
    }
  } finally {
    await producer.disconnect();
  }
  await broker.waitHighWatermark('orders', 1, 3, { timeoutMs: 5000 });
  assert.equal(await broker.highWatermark('orders', 0), 0);
  assert.deepEqual(await consume('orders', 3), [[1, '0', 'k0', 'v0'], [1, '1', 'k1', 'v1'], [1, '2', 'k2', 'v2']]);
});

test('injected errors are retried and write nothing', async () => {
  await broker.createTopic('retried', { partitions: 1 });
  const fault = await broker.fault({ api_keys: [0], topic: 'retried', error: 'NOT_LEADER_OR_FOLLOWER', times: 2 });
  const producer = kafka.producer();
  await producer.connect();
  try {
    const [md] = await producer.send({ topic: 'retried', messages: [{ value: 'once' }] });
    assert.equal(md.baseOffset, '0');
  } finally {
    await producer.disconnect();
  }
  const got = await broker.getFault(fault.id);
  assert.deepEqual([got.fired, got.done], [2, true]);
  assert.equal(await broker.highWatermark('retried'), 1);
});

test('an injected error reaches a client that does not retry', async () => {
  await broker.createTopic('refused', { partitions: 1 });
  await broker.fault({ api_keys: [0], topic: 'refused', error: 'NOT_LEADER_OR_FOLLOWER' });
  const producer = new Kafka({ brokers: [broker.bootstrapServers], logLevel: logLevel.NOTHING, retry: { retries: 0 } }).producer();
  await producer.connect();
  try {
    await assert.rejects(producer.send({ topic: 'refused', messages: [{ value: 'x' }] }),
      (err) => /leader/i.test(err.message));
  } finally {
    await producer.disconnect();
  }
  assert.equal(await broker.highWatermark('refused'), 0);
});

test('down refuses connections until up', async () => {
  await broker.down();
  assert.equal(await broker.isDown(), true);
  await assert.rejects(connect(broker.bootstrapServers), { code: 'ECONNREFUSED' });
  await broker.up();
  assert.equal(await broker.isDown(), false);
  await connect(broker.bootstrapServers);
});

test('waits are bounded and say what they saw', async () => {
  await broker.createTopic('never', { partitions: 1 });
  await assert.rejects(broker.waitHighWatermark('never', 0, 5, { timeoutMs: 200 }), (err) => {
    assert.ok(err instanceof MinikafkaTimeoutError);
    assert.equal(err.status, 408);
    assert.match(err.message, /high watermark 0/);
    return true;
  });
});

test('refused calls reject with the status and the reason', async () => {
  await broker.createTopic('twice');
  await assert.rejects(broker.createTopic('twice'), (err) => err instanceof MinikafkaError && err.status === 409);
  await assert.rejects(broker.fault({ api_keys: [0], error: 'NOT_LEADER_OR_FOLLOWER', misspelt: 1 }),
    (err) => err.status === 400 && /misspelt/.test(err.message));
});

test('seeded records are consumed', async () => {
  await broker.createTopic('seeded', { partitions: 1 });
  await broker.waitTopic('seeded');
  const offsets = await broker.seed('seeded', [{ key: 'a', value: '1' }, { key: 'b', value: '2' }]);
  assert.deepEqual(offsets, [{ partition: 0, offset: 0 }, { partition: 0, offset: 1 }]);
  assert.deepEqual(await consume('seeded', 2), [[0, '0', 'a', '1'], [0, '1', 'b', '2']]);
});

test('reset removes faults left by a test', async () => {
  await broker.fault({ api_keys: [0], error: 'NOT_LEADER_OR_FOLLOWER' });
  await broker.down();
  await broker.reset();
  assert.deepEqual(await broker.faults(), []);
  assert.equal(await broker.isDown(), false);
});

test('a broker of its own with flags; stop removes its data', async () => {
  const own = await start({ args: ['-default-partitions', '3'] });
  const dir = own.dataDir;
  try {
    assert.notEqual(own.bootstrapServers, broker.bootstrapServers);
    const admin = new Kafka({ brokers: [own.bootstrapServers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const producer = new Kafka({ brokers: [own.bootstrapServers], logLevel: logLevel.NOTHING }).producer();
      await producer.connect();
      await producer.send({ topic: 'auto', messages: [{ value: 'x' }] }); // auto-created with 3 partitions
      await producer.disconnect();
      const md = await admin.fetchTopicMetadata({ topics: ['auto'] });
      assert.equal(md.topics[0].partitions.length, 3);
    } finally {
      await admin.disconnect();
    }
  } finally {
    await own.stop();
  }
  assert.equal(fs.existsSync(dir), false);
  await assert.rejects(connect(own.bootstrapServers), { code: 'ECONNREFUSED' });
});

test('the binary comes from the bin option, MINIKAFKA_BIN or PATH', async () => {
  assert.equal(findBinary(broker.bin), broker.bin);
  assert.throws(() => findBinary('/nonexistent/minikafka'), (err) =>
    err instanceof MinikafkaError && /\/nonexistent\/minikafka/.test(err.message) && /go install/.test(err.message));
  await assert.rejects(start({ bin: '/nonexistent/minikafka' }), MinikafkaError);
});
