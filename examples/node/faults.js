// kafkajs against an injected fault: start minikafka with its control API,
// make the first two produce answers NOT_LEADER_OR_FOLLOWER, and check the
// producer retried through them and wrote the message once.
//
//   MINIKAFKA_BIN=/path/to/minikafka NODE_PATH=compat_test/node_modules node examples/node/faults.js
//
// Exits 0 when all holds, 1 with a message otherwise.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');
const { Kafka, logLevel } = require('kafkajs');

function startBroker() {
  const bin = process.env.MINIKAFKA_BIN;
  if (!bin) throw new Error('set MINIKAFKA_BIN to a minikafka binary');
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'minikafka-'));
  const proc = spawn(bin, ['-listen', '127.0.0.1:0', '-data', data, '-fsync', 'never', '-admin-addr', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let bootstrap;
    const timer = setTimeout(() => reject(new Error('minikafka did not print its addresses')), 20000);
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      let m = /advertised as (\S+);/.exec(line);
      if (m) bootstrap = m[1];
      m = /control API at http:\/\/(\S+)\/v1\//.exec(line);
      if (m && bootstrap) {
        clearTimeout(timer);
        resolve({ bootstrap, admin: m[1], stop: () => new Promise((done) => {
          // Remove the data dir only once the broker has exited: its clean
          // shutdown still writes there (index files, the clean-shutdown marker).
          proc.once('exit', () => { fs.rmSync(data, { recursive: true, force: true }); done(); });
          proc.kill();
        }) });
      }
    });
    proc.on('exit', (code) => reject(new Error(`minikafka exited with ${code}`)));
  });
}

async function api(broker, method, p, body) {
  const resp = await fetch(`http://${broker.admin}${p}`, {
    method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body),
  });
  const text = await resp.text();
  if (resp.status >= 400) throw new Error(`${method} ${p}: ${resp.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

function check(ok, msg) { if (!ok) throw new Error(msg); }

async function main() {
  const broker = await startBroker();
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'faults-example', logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 20, retries: 8 } });
  const admin = kafka.admin();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const consumer = kafka.consumer({ groupId: 'faults-example' });
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }], waitForLeaders: true });
    const fault = await api(broker, 'POST', '/v1/faults',
      { api_keys: [0], topic: 'orders', error: 'NOT_LEADER_OR_FOLLOWER', times: 2 });
    await producer.connect();
    await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'a' }] });
    const after = await api(broker, 'GET', `/v1/faults/${fault.id}`);
    check(after.fired === 2, `fault fired ${after.fired} times, want 2`);
    const offsets = await admin.fetchTopicOffsets('orders');
    check(offsets[0].high === '1', `high watermark ${offsets[0].high}, want 1 (the refused batches were not written)`);
    await api(broker, 'POST', '/v1/broker/down');
    const down = await api(broker, 'GET', '/v1/broker');
    check(down.down === true, 'broker not down');
    await api(broker, 'POST', '/v1/broker/up');
    await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'b' }] }); // reconnects after down/up
    const got = [];
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    await new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`consumed ${got}`)), 30000);
      consumer.run({ eachMessage: async ({ message }) => {
        got.push(message.value.toString());
        if (got.length === 2) { clearTimeout(t); resolve(); }
      } });
    });
    check(got.join(',') === 'a,b', `consumed ${got}, want a,b`);
    console.log('ok: kafkajs retried through 2 injected NOT_LEADER_OR_FOLLOWER and a broker down/up');
  } finally {
    await Promise.allSettled([consumer.disconnect(), producer.disconnect(), admin.disconnect()]);
    await broker.stop();
  }
}

main().catch((err) => { console.error('FAIL:', err.message); process.exit(1); });
