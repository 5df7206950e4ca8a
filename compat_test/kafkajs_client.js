#!/usr/bin/env node
// kafkajs driven by compat_test.
//
// Usage: node kafkajs_client.js OP BOOTSTRAP TOPIC, with OP's parameters as
// JSON on stdin; prints one JSON answer on stdout. Records are
// {p,k,v,h,ts,o} with null k/v for a null key/value and h a list of {k,v}.
'use strict'

const fs = require('fs')

function load () {
  const kafkajs = require('kafkajs')
  const { CompressionTypes, CompressionCodecs } = kafkajs
  const SnappyCodec = require('kafkajs-snappy')
  const LZ4Codec = require('kafkajs-lz4')
  const zstd = require('@mongodb-js/zstd')
  CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec
  CompressionCodecs[CompressionTypes.LZ4] = new LZ4Codec().codec
  // @kafkajs/zstd does not build on Node 20 (its cppzst addon needs C++17
  // headers it does not ask for), so this is the same few lines on top of
  // @mongodb-js/zstd.
  CompressionCodecs[CompressionTypes.ZSTD] = () => ({
    compress: async (encoder) => zstd.compress(encoder.buffer, 3),
    decompress: async (buffer) => zstd.decompress(buffer)
  })
  return kafkajs
}

function kafka (bootstrap) {
  const { Kafka, logLevel } = load()
  return new Kafka({ clientId: 'compat-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.ERROR, retry: { retries: 5 } })
}

const codecs = () => {
  const { CompressionTypes } = load()
  return { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD }
}

const str = (b) => (b === null || b === undefined) ? null : b.toString()

async function withAdmin (bootstrap, fn) {
  const admin = kafka(bootstrap).admin()
  await admin.connect()
  try {
    return await fn(admin)
  } finally {
    await admin.disconnect()
  }
}

const ops = {
  async check () { load(); return {} },

  async version () { return { version: require('kafkajs/package.json').version } },

  async produce (bootstrap, topic, args) {
    const producer = kafka(bootstrap).producer({
      idempotent: args.idempotent,
      maxInFlightRequests: args.idempotent ? 1 : undefined,
      allowAutoTopicCreation: false
    })
    await producer.connect()
    const recs = args.records
    const messages = recs.map((r) => {
      const m = { partition: r.p, key: r.k, value: r.v }
      if (r.h && r.h.length) {
        m.headers = {}
        for (const h of r.h) m.headers[h.k] = h.v
      }
      if (r.ts >= 0) m.timestamp = String(r.ts)
      return m
    })
    // One send: kafkajs answers with each partition's base offset; records
    // follow in the order given.
    const meta = await producer.send({ topic, acks: -1, compression: codecs()[args.codec], messages })
    await producer.disconnect()
    const next = {}
    for (const m of meta) {
      if (m.errorCode !== 0) throw new Error(`partition ${m.partition}: error code ${m.errorCode}`)
      next[m.partition] = Number(m.baseOffset)
    }
    return {
      records: recs.map((r) => Object.assign({}, r, { o: next[r.p]++ }))
    }
  },

  async produce_txns (bootstrap, topic, args) {
    const producer = kafka(bootstrap).producer({ transactionalId: topic + '-txid', idempotent: true, maxInFlightRequests: 1 })
    await producer.connect()
    for (let i = 0; i < args.txns.length; i++) {
      const txn = await producer.transaction()
      const messages = args.txns[i].map((r) => {
        const m = { partition: r.p, key: r.k, value: r.v }
        if (r.h && r.h.length) {
          m.headers = {}
          for (const h of r.h) m.headers[h.k] = h.v
        }
        return m
      })
      await txn.send({ topic, messages })
      if (args.commit[i]) await txn.commit()
      else await txn.abort()
    }
    await producer.disconnect()
    return {}
  },

  async group_consume (bootstrap, topic, args) {
    const consumer = kafka(bootstrap).consumer({ groupId: args.group, sessionTimeout: 10000, heartbeatInterval: 500 })
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    const out = []
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve(), 30000)
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (out.length >= args.count) return
          const h = Object.entries(message.headers || {}).map(([k, v]) => ({ k, v: str(v) || '' }))
          out.push({ p: partition, o: Number(message.offset), k: str(message.key), v: str(message.value), h, ts: Number(message.timestamp) })
          if (out.length >= args.count) { clearTimeout(timer); resolve() }
        }
      }).catch(reject)
    })
    // Commit the next offset of every partition read, then leave.
    const next = {}
    for (const r of out) next[r.p] = Math.max(next[r.p] || 0, r.o + 1)
    const offsets = Object.entries(next).map(([p, o]) => ({ topic, partition: Number(p), offset: String(o) }))
    if (offsets.length) await consumer.commitOffsets(offsets)
    await consumer.disconnect()
    return { records: out }
  },

  async list_offset (bootstrap, topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      let res
      if (args.spec >= 0) {
        res = await admin.fetchTopicOffsetsByTimestamp(topic, args.spec)
        const p = res.find((x) => x.partition === args.partition)
        return { offset: Number(p.offset) }
      }
      res = await admin.fetchTopicOffsets(topic)
      const p = res.find((x) => x.partition === args.partition)
      return { offset: Number(args.spec === -2 ? p.low : p.high) }
    })
  },

  async create_topic (bootstrap, topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      const configEntries = Object.entries(args.configs || {}).map(([name, value]) => ({ name, value }))
      const created = await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: args.partitions, replicationFactor: 1, configEntries }] })
      // kafkajs resolves false instead of failing when the topic exists.
      if (!created) throw new Error(`topic ${topic} already exists`)
      return {}
    })
  },

  async delete_topic (bootstrap, topic) {
    return withAdmin(bootstrap, async (admin) => { await admin.deleteTopics({ topics: [topic] }); return {} })
  },

  async create_partitions (bootstrap, topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      await admin.createPartitions({ topicPartitions: [{ topic, count: args.total }] })
      return {}
    })
  },

  async metadata (bootstrap, _topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      const names = args.topics && args.topics.length ? args.topics : await admin.listTopics()
      const md = await admin.fetchTopicMetadata({ topics: names })
      const out = {}
      for (const t of md.topics) out[t.name] = t.partitions.length
      return { topics: out }
    })
  },

  async describe_config (bootstrap, topic, args) {
    const { ConfigResourceTypes } = load()
    return withAdmin(bootstrap, async (admin) => {
      const res = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [args.key] }] })
      for (const r of res.resources) {
        if (r.errorCode !== 0) throw new Error(`describe configs: error code ${r.errorCode} ${r.errorMessage}`)
        for (const e of r.configEntries) if (e.configName === args.key) return { value: e.configValue }
      }
      return { value: null }
    })
  },

  async alter_config (bootstrap, topic, args) {
    const { ConfigResourceTypes } = load()
    return withAdmin(bootstrap, async (admin) => {
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: args.key, value: args.value }] }] })
      return {}
    })
  },

  async delete_records (bootstrap, topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      // deleteTopicRecords needs the topic's metadata already in kafkajs' cache.
      await admin.fetchTopicMetadata({ topics: [topic] })
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: args.partition, offset: String(args.before) }] })
      // deleteTopicRecords returns nothing; the low watermark is the earliest offset.
      const res = await admin.fetchTopicOffsets(topic)
      return { low: Number(res.find((x) => x.partition === args.partition).low) }
    })
  },

  // An idempotent producer fed one record per stdin line (feed) and a
  // group consumer meanwhile; at the end of the input: flush, read until
  // every acknowledged record arrived, commit, leave.
  async cluster_run (bootstrap, topic, args, feed) {
    const k = kafka(bootstrap)
    const producer = k.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
    const consumer = k.consumer({ groupId: args.group, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100 })
    await producer.connect()
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    // On stderr, for a failure's story: when the member (re)joined.
    consumer.on(consumer.events.GROUP_JOIN, (e) => console.error(`${new Date().toISOString()} joined generation ${e.payload.groupId} ${e.payload.memberId} after ${consumed.length} records`))
    consumer.on(consumer.events.CRASH, (e) => console.error(`${new Date().toISOString()} consumer crash: ${e.payload.error}`))
    const consumed = []
    // kafkajs' default auto commit (after each batch). When the group's
    // coordinator moves, kafkajs joins again and resumes at the committed
    // offsets, so the uncommitted tail it had read comes again
    // (at-least-once). Such a replay, after a rejoin, identical to the
    // first read and not below what the group had committed when it
    // rejoined, is reported apart; any other repeat counts as a read.
    const first = {}
    const last = {}
    let joins = 0
    const replayed = []
    const committed = {}
    let atJoin = {}
    consumer.on(consumer.events.COMMIT_OFFSETS, (e) => {
      for (const t of e.payload.topics) {
        for (const x of t.partitions) committed[x.partition] = Math.max(committed[x.partition] || 0, Number(x.offset))
      }
    })
    consumer.on(consumer.events.GROUP_JOIN, () => { joins++; atJoin = { ...committed } })
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const r = { p: partition, o: Number(message.offset), k: str(message.key), v: str(message.value), h: [], ts: Number(message.timestamp) }
        const id = `${r.p}@${r.o}`
        const f = first[id]
        if (f && r.o <= last[r.p] && joins > f.joins && r.o >= (atJoin[r.p] || 0) && f.r.k === r.k && f.r.v === r.v) {
          replayed.push(r)
          return
        }
        first[id] = { r, joins }
        last[r.p] = r.o
        consumed.push(r)
      }
    })
    // Records go out in sends of whatever has queued, one partition per
    // send, one send at a time (the idempotent producer's one request in
    // flight keeps the order). One partition per send: kafkajs 2.2.4 keeps
    // a send's answers per broker across its retries, so when a partition
    // whose first attempt failed NOT_LEADER moves to a broker that already
    // answered for another partition of the same send, the send resolves
    // without that partition's records ever being written (tulios/kafkajs
    // #1303, #1798). A send's answer must name every partition it carried.
    const acked = []
    while (!feed.ended || feed.queue.length) {
      if (!feed.queue.length) {
        await new Promise((resolve) => { feed.wake = resolve })
        continue
      }
      const batch = feed.queue
      feed.queue = []
      const parts = [...new Set(batch.map((r) => r.p))]
      for (const p of parts) {
        const recs = batch.filter((r) => r.p === p)
        const res = await producer.send({ topic, acks: -1, messages: recs.map((r) => ({ partition: r.p, key: r.k, value: r.v })) })
        const m = res.find((x) => x.partition === p)
        if (!m || m.errorCode !== 0) throw new Error(`send to partition ${p} answered ${JSON.stringify(res)}`)
        let o = Number(m.baseOffset)
        for (const r of recs) acked.push({ p: r.p, o: o++, k: r.k, v: r.v, h: [], ts: -1 })
      }
    }
    await producer.disconnect()
    const deadline = Date.now() + 30000
    while (consumed.length < acked.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    await consumer.disconnect()
    return { acked, consumed, replayed }
  },

  async list_groups (bootstrap) {
    return withAdmin(bootstrap, async (admin) => ({ groups: (await admin.listGroups()).groups.map((g) => g.groupId) }))
  },

  async describe_group (bootstrap, _topic, args) {
    return withAdmin(bootstrap, async (admin) => {
      const res = await admin.describeGroups([args.group])
      const g = res.groups.find((x) => x.groupId === args.group)
      if (!g) throw new Error(`group ${args.group} not described`)
      if (g.errorCode) throw new Error(`describe group: error code ${g.errorCode}`)
      return { state: g.state }
    })
  }
}

async function main () {
  const [op, bootstrap, topic] = process.argv.slice(2)
  if (!ops[op]) throw new Error(`unknown op ${op}`)
  let out
  if (op === 'cluster_run') {
    // It streams: its parameters are the first line, records follow.
    // Lines are queued from the start: readline does not wait for a
    // listener.
    const lines = require('readline').createInterface({ input: process.stdin })
    const feed = { queue: [], ended: false, wake: null }
    const poke = () => { if (feed.wake) { const w = feed.wake; feed.wake = null; w() } }
    let first = null
    const params = new Promise((resolve) => { first = resolve })
    let gotFirst = false
    lines.on('line', (line) => {
      if (!gotFirst) { gotFirst = true; first(line); return }
      if (line.trim()) { feed.queue.push(JSON.parse(line)); poke() }
    })
    lines.on('close', () => { feed.ended = true; poke() })
    out = await ops[op](bootstrap, topic, JSON.parse(await params), feed)
  } else {
    const args = JSON.parse(fs.readFileSync(0, 'utf8') || 'null') || {}
    out = await ops[op](bootstrap, topic, args)
  }
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().then(() => process.exit(0), (err) => {
  console.error(err && err.stack ? err.stack : String(err))
  process.exit(1)
})
