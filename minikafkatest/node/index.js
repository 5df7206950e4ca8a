// @minikafka/testing: start a minikafka broker from a Node test suite (Jest,
// Vitest, node:test) and drive its control API (faults, down/up, waits,
// topics, seeding) as async functions. The control API itself is documented
// in docs/control-api.md of the minikafka repository.
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const INSTALL_HINT = 'install it with `go install github.com/minikafka/minikafka/cmd/minikafka@latest`, ' +
  'or set MINIKAFKA_BIN (or the bin option) to its path';

// The binary's startup lines on stdout; the bound ports are read from them.
const LISTEN_RE = /advertised as ([^;,\s]+)/;
const ADMIN_RE = /control API at http:\/\/(\S+)\/v1\//;

class MinikafkaError extends Error {
  // status: the HTTP status of a refused control API call, 0 when there was none.
  constructor(message, status = 0) {
    super(message);
    this.name = 'MinikafkaError';
    this.status = status;
  }
}

// A wait whose timeout passed first; the message says what was last seen.
class MinikafkaTimeoutError extends MinikafkaError {
  constructor(message, status) {
    super(message, status);
    this.name = 'MinikafkaTimeoutError';
  }
}

function isExecutable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function which(name) {
  const exts = process.platform === 'win32' ? ['.exe', ''] : [''];
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = path.join(dir, name + ext);
      if (isExecutable(p)) return p;
    }
  }
  return null;
}

// findBinary: the bin argument, else $MINIKAFKA_BIN, else minikafka on PATH.
function findBinary(bin) {
  const from = bin ? 'the bin option' : 'MINIKAFKA_BIN';
  bin = bin || process.env.MINIKAFKA_BIN;
  if (!bin) {
    const found = which('minikafka');
    if (!found) throw new MinikafkaError(`minikafka is not on PATH: ${INSTALL_HINT}`);
    return found;
  }
  if (isExecutable(bin)) return bin;
  const found = !bin.includes(path.sep) && which(bin);
  if (!found) throw new MinikafkaError(`minikafka binary ${JSON.stringify(bin)} (from ${from}) is not an executable file: ${INSTALL_HINT}`);
  return found;
}

// Brokers still running when the process exits are killed, so a suite that
// crashes or forgets stop() leaves no broker behind.
const running = new Set();
process.on('exit', () => {
  for (const proc of running) proc.kill('SIGKILL');
});

const seg = encodeURIComponent;

class Broker {
  constructor(bin, proc, dataDir, ownDir) {
    this.bin = bin;
    this.bootstrapServers = null; // "127.0.0.1:PORT": what every Kafka client takes
    this.adminUrl = null; // the control API's base URL
    this.dataDir = dataDir;
    this._proc = proc;
    this._ownDir = ownDir;
    this._lines = [];
    this._exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  }

  // The broker's last lines of output (stdout and log), for failure messages.
  output() {
    return this._lines.join('\n');
  }

  // Stops the broker (SIGTERM, SIGKILL after 10 s) and removes its data
  // directory if start made it. Safe to call twice.
  async stop() {
    const proc = this._proc;
    if (proc) {
      this._proc = null;
      // No pid: spawn itself failed and there is no process to wait for.
      if (proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
        await this._exited;
        clearTimeout(timer);
      }
      running.delete(proc);
    }
    // Only after exit: a clean shutdown still writes to the data directory.
    if (this._ownDir && this.dataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }

  // One control API request; resolves to the decoded JSON answer (null for 204).
  async call(method, p, body, { timeoutMs = 30000 } = {}) {
    if (!this.adminUrl) throw new MinikafkaError('broker not started');
    const resp = await fetch(this.adminUrl + p, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await resp.text();
    if (resp.status >= 400) {
      let msg = text.trim();
      try { msg = JSON.parse(text).error || msg; } catch { /* not JSON: keep the text */ }
      const Err = resp.status === 408 ? MinikafkaTimeoutError : MinikafkaError;
      throw new Err(`${method} ${p}: ${resp.status} ${msg}`, resp.status);
    }
    return text ? JSON.parse(text) : null;
  }

  // Faults. spec as in the control API: match (api_keys, topic, partition,
  // group, transactional_id, client_id, min_version, max_version, listener,
  // connection), firing (times, probability, seed), action (error, drop,
  // delay_ms, delay_max_ms, hold, swallow, throttle_ms). Resolves to the
  // fault with its id.
  fault(spec) { return this.call('POST', '/v1/faults', spec); }
  async faults() { return (await this.call('GET', '/v1/faults')).faults; }
  getFault(id) { return this.call('GET', `/v1/faults/${id}`); }
  async removeFault(id) { await this.call('DELETE', `/v1/faults/${id}`); }
  async clearFaults() { await this.call('DELETE', '/v1/faults'); }
  release(id) { return this.call('POST', `/v1/faults/${id}/release`); }
  pausePartition(topic, partition) {
    return this.call('POST', '/v1/faults/pause-partition', partition === undefined ? { topic } : { topic, partition });
  }
  coordinatorUnavailable(group, loading = false) {
    return this.call('POST', '/v1/faults/coordinator', { group, loading });
  }

  // down closes every client connection and unbinds the listeners: clients
  // see a stopped broker until up(), which binds the same addresses again.
  async down() { await this.call('POST', '/v1/broker/down'); }
  async up() { await this.call('POST', '/v1/broker/up'); }
  async isDown() { return (await this.call('GET', '/v1/broker')).down; }

  async requests({ limit, apiKey } = {}) {
    const q = new URLSearchParams();
    if (limit !== undefined) q.set('limit', String(limit));
    if (apiKey !== undefined) q.set('api_key', String(apiKey));
    const qs = q.toString();
    return (await this.call('GET', '/v1/requests' + (qs ? '?' + qs : ''))).requests;
  }

  // Inspection.
  partition(topic, partition = 0) { return this.call('GET', `/v1/topics/${seg(topic)}/partitions/${partition}`); }
  async highWatermark(topic, partition = 0) { return (await this.partition(topic, partition)).high_watermark; }
  group(group) { return this.call('GET', `/v1/groups/${seg(group)}`); }
  lag(group, topic) { return this.call('GET', `/v1/groups/${seg(group)}/lag/${seg(topic)}`); }

  // Seeding. createTopic rejects with status 409 when the topic exists.
  createTopic(topic, { partitions = 0, configs } = {}) {
    return this.call('POST', '/v1/topics', configs ? { topic, partitions, configs } : { topic, partitions });
  }
  // records: [{partition, key, value, key_base64, value_base64, headers, timestamp_ms}];
  // resolves to [{partition, offset}] in order.
  async seed(topic, records, { transaction } = {}) {
    const body = transaction ? { records, transaction } : { records };
    return (await this.call('POST', `/v1/topics/${seg(topic)}/records`, body)).offsets;
  }

  // Waits resolve when the condition holds and reject with a
  // MinikafkaTimeoutError naming the last state seen when timeoutMs passes.
  async _wait(what, body, timeoutMs) {
    await this.call('POST', `/v1/wait/${what}`, { ...body, timeout_ms: timeoutMs }, { timeoutMs: timeoutMs + 10000 });
  }
  waitHighWatermark(topic, partition, offset, { timeoutMs = 10000 } = {}) {
    return this._wait('high-watermark', { topic, partition, offset }, timeoutMs);
  }
  waitTopic(topic, { timeoutMs = 10000 } = {}) { return this._wait('topic', { topic }, timeoutMs); }
  waitGroupStable(group, members, { timeoutMs = 10000 } = {}) {
    return this._wait('group-stable', { group, members }, timeoutMs);
  }
  waitLagZero(group, topic, { timeoutMs = 10000 } = {}) { return this._wait('lag-zero', { group, topic }, timeoutMs); }
  waitTransaction(transactionalId, { timeoutMs = 10000 } = {}) {
    return this._wait('transaction', { transactional_id: transactionalId }, timeoutMs);
  }

  // reset removes every fault and brings the broker up if it is down, for a
  // broker shared by several tests. Topics and records stay.
  async reset() {
    await this.clearFaults();
    if (await this.isDown()) await this.up();
  }
}

// start({bin, args, dataDir, startTimeoutMs, env}) resolves to a running
// Broker once it answers: free loopback ports, data in a temporary directory
// (removed by stop) unless dataDir is given, extra flags in args.
async function start(opts = {}) {
  const bin = findBinary(opts.bin);
  const ownDir = !opts.dataDir;
  const dataDir = opts.dataDir || fs.mkdtempSync(path.join(os.tmpdir(), 'minikafka-'));
  const args = ['-listen', '127.0.0.1:0', '-data', dataDir, '-fsync', 'never', '-admin-addr', '127.0.0.1:0',
    ...(opts.args || [])];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env || process.env });
  running.add(proc);
  const broker = new Broker(bin, proc, dataDir, ownDir);
  const timeoutMs = opts.startTimeoutMs || 30000;
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`minikafka did not print its addresses within ${timeoutMs} ms`)), timeoutMs);
      const done = (err) => { clearTimeout(timer); if (err) reject(err); else resolve(); };
      proc.once('error', done); // e.g. not executable after all
      proc.once('exit', (code, signal) => done(new Error(`minikafka exited (${signal || 'status ' + code}) before it was ready`)));
      // Both streams are read for the whole life of the broker: an undrained
      // pipe would block it once its log fills the pipe buffer.
      for (const stream of [proc.stdout, proc.stderr]) {
        readline.createInterface({ input: stream }).on('line', (line) => {
          broker._lines.push(line);
          if (broker._lines.length > 200) broker._lines.shift();
          if (broker.adminUrl) return;
          let m = LISTEN_RE.exec(line);
          if (m && !broker.bootstrapServers) broker.bootstrapServers = m[1];
          m = ADMIN_RE.exec(line);
          if (m && broker.bootstrapServers) {
            broker.adminUrl = 'http://' + m[1];
            done();
          }
        });
      }
    });
    // The addresses are printed once the listeners are bound; /healthz
    // answering proves the control API serves too.
    const resp = await fetch(broker.adminUrl + '/healthz', { signal: AbortSignal.timeout(timeoutMs) });
    if (resp.status !== 200) throw new Error(`minikafka's /healthz answered ${resp.status}`);
  } catch (err) {
    await broker.stop();
    throw new MinikafkaError(`${err.message}: ${bin}\n${broker.output()}`);
  }
  return broker;
}

module.exports = { start, findBinary, Broker, MinikafkaError, MinikafkaTimeoutError };
