'use strict'
// KafkaJS compatibility check for Spool: admin topic lifecycle and configs, an idempotent producer
// per codec KafkaJS can write (none and gzip built in; snappy through kafkajs-snappy; KafkaJS has no
// lz4 or zstd without native codec packages), and reading everything back from assigned partitions.
//
// KafkaJS has no manual-assignment consumer (its consumer always joins a group), so reads go
// through the client's own Fetch path: the cluster/broker objects its consumer uses internally
// (broker.fetch decodes record batches, decompresses and checks them exactly as the consumer does).
//
//   node compat.js --bootstrap HOST:PORT
// Prints PASS/FAIL/SKIP per check and a summary; exits 1 unless every check passed.

const assert = require('assert/strict')
const net = require('net')
const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, Partitioners, logLevel } =
  require('kafkajs')
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')

const args = process.argv.slice(2)
const bootstrap = args[args.indexOf('--bootstrap') + 1]
if (!bootstrap || args.indexOf('--bootstrap') < 0) {
  console.error('usage: node compat.js --bootstrap HOST:PORT')
  process.exit(2)
}

const PARTITIONS = 3
const MESSAGES = 200
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy }
const DYNAMIC_TOPIC_CONFIG = 1 // DescribeConfigs v1+ config_source
const READ_COMMITTED = 1
const prefix = `compat-kafkajs-${Date.now().toString(36)}`

const kafka = new Kafka({
  clientId: 'spool-compat-kafkajs',
  brokers: [bootstrap],
  logLevel: logLevel.WARN,
  retry: { retries: 5, initialRetryTime: 100 },
  requestTimeout: 10000,
})

// ---- check runner ------------------------------------------------------------------------------
const failed = []
const skipped = []
let passed = 0
let brokerDown = false

// After a failure: does the broker still accept connections? If it crashed, the remaining checks
// are skipped rather than each waiting for its timeout.
function brokerReachable () {
  const [host, port] = [bootstrap.slice(0, bootstrap.lastIndexOf(':')), Number(bootstrap.slice(bootstrap.lastIndexOf(':') + 1))]
  return new Promise(resolve => {
    const socket = net.connect({ host, port, timeout: 2000 })
    const done = ok => { socket.destroy(); resolve(ok) }
    socket.on('connect', () => done(true))
    socket.on('error', () => done(false))
    socket.on('timeout', () => done(false))
  })
}

async function check (name, dependsOn, body) {
  if (brokerDown) {
    skipped.push(name)
    console.log(`SKIP ${name} (broker unreachable)`)
    return
  }
  const missing = dependsOn.find(d => failed.includes(d) || skipped.includes(d))
  if (missing) {
    skipped.push(name)
    console.log(`SKIP ${name} (needs ${missing})`)
    return
  }
  const start = Date.now()
  try {
    await body()
    passed++
    console.log(`PASS ${name} (${Date.now() - start} ms)`)
  } catch (e) {
    failed.push(name)
    console.log(`FAIL ${name} (${Date.now() - start} ms): ${e.stack || e}`)
    if (!(await brokerReachable())) {
      brokerDown = true
      console.log(`broker at ${bootstrap} no longer accepts connections: skipping the rest`)
    }
  }
}

// ---- the workload (same shape as the other clients' checks) -------------------------------------
function workload (label) {
  const messages = []
  for (let i = 0; i < MESSAGES; i++) {
    messages.push({
      key: `key-${i % 7}`,
      value: i % 50 === 49 ? null : `${label}-${i}-${'v'.repeat((i % 5) * 150)}`,
      headers: { seq: String(i) },
    })
  }
  return { label, messages, acks: new Map() } // acks: seq -> { partition, offset }
}

// Wraps KafkaJS's default partitioner to learn where each message went: Produce responses carry one
// base offset per partition, and a message's offset is that plus its rank in the partition's batch.
let lastPartitionOf = new Map()
function recordingPartitioner () {
  const inner = Partitioners.DefaultPartitioner()
  return args => {
    const partition = inner(args)
    lastPartitionOf.set(args.message, partition)
    return partition
  }
}

function verifyAcks (w) {
  assert.equal(w.acks.size, w.messages.length, `${w.label}: acknowledged messages`)
  const partitionOfKey = new Map()
  const next = new Map()
  w.messages.forEach((m, seq) => {
    const { partition, offset } = w.acks.get(seq)
    if (partitionOfKey.has(m.key)) {
      assert.equal(partition, partitionOfKey.get(m.key), `${w.label}: key ${m.key} spans partitions`)
    }
    partitionOfKey.set(m.key, partition)
    const expected = next.get(partition) || 0
    assert.equal(offset, expected, `${w.label}: message ${seq} at ${partition}-${offset}, expected dense offsets in send order`)
    next.set(partition, expected + 1)
  })
}

function expectedByPartition (w) {
  const result = new Map()
  w.messages.forEach((m, seq) => {
    const { partition } = w.acks.get(seq)
    if (!result.has(partition)) result.set(partition, [])
    result.get(partition).push({ ...m, seq })
  })
  return result
}

// ---- client helpers ----------------------------------------------------------------------------
const admin = kafka.admin()
let cluster // KafkaJS's internal cluster object, used for assigned-partition fetches

async function internalCluster () {
  const symbol = Object.getOwnPropertySymbols(kafka)
    .find(s => s.toString() === 'Symbol(private:Kafka:createCluster)')
  assert.ok(symbol, 'KafkaJS internals changed: no createCluster symbol')
  const c = kafka[symbol]({ allowAutoTopicCreation: false, isolationLevel: READ_COMMITTED })
  await c.connect()
  return c
}

async function fetchPartition (topic, partition, fromOffset, untilOffset) {
  await cluster.addTargetTopic(topic)
  await cluster.refreshMetadata()
  const leader = Object.keys(cluster.findLeaderForPartitions(topic, [partition]))[0]
  const broker = await cluster.findBroker({ nodeId: leader })
  const out = []
  let offset = fromOffset
  const deadline = Date.now() + 30000
  while (offset < untilOffset && Date.now() < deadline) {
    const response = await broker.fetch({
      isolationLevel: READ_COMMITTED,
      maxWaitTime: 500,
      minBytes: 1,
      topics: [{ topic, partitions: [{ partition, fetchOffset: String(offset), maxBytes: 1048576 }] }],
    })
    const p = response.responses[0].partitions[0]
    assert.equal(p.errorCode, 0, `fetch ${topic}-${partition} error ${p.errorCode}`)
    assert.equal(p.lastStableOffset, p.highWatermark, 'last stable offset != high watermark without transactions')
    for (const m of p.messages) {
      if (Number(m.offset) < offset) continue // a batch may start before the fetch offset
      out.push(m)
      offset = Number(m.offset) + 1
    }
  }
  return out
}

async function topicOffsets (topic) {
  const result = new Map()
  for (const o of await admin.fetchTopicOffsets(topic)) {
    result.set(o.partition, { low: Number(o.low), high: Number(o.high) })
  }
  return result
}

async function describeTopicConfig (topic, names) {
  const r = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: names }],
    includeSynonyms: false,
  })
  assert.equal(r.resources[0].errorCode, 0, 'DescribeConfigs error')
  return new Map(r.resources[0].configEntries.map(e => [e.configName, e]))
}

// ---- checks ------------------------------------------------------------------------------------
async function main () {
  await admin.connect()
  cluster = await internalCluster()
  const adminTopic = `${prefix}-admin`

  await check('admin_describe_cluster', [], async () => {
    const c = await admin.describeCluster()
    assert.equal(c.brokers.length, 1, 'brokers')
    assert.ok(c.clusterId, 'cluster id')
  })
  await check('admin_create_topic', [], async () => {
    const created = await admin.createTopics({
      topics: [{ topic: adminTopic, numPartitions: PARTITIONS, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '86400000' }] }],
      waitForLeaders: true,
    })
    assert.equal(created, true, 'createTopics returned false')
    assert.ok((await admin.listTopics()).includes(adminTopic), 'listTopics lacks the new topic')
  })
  await check('admin_describe_topic', ['admin_create_topic'], async () => {
    const md = await admin.fetchTopicMetadata({ topics: [adminTopic] })
    const partitions = md.topics[0].partitions
    assert.equal(partitions.length, PARTITIONS, 'partitions')
    for (const p of partitions) {
      assert.equal(p.partitionErrorCode, 0, `partition ${p.partitionId} error`)
      assert.ok(p.leader >= 0, `partition ${p.partitionId} has no leader`)
      assert.deepEqual(p.replicas, [p.leader], `partition ${p.partitionId} replicas`)
    }
  })
  await check('admin_describe_configs', ['admin_create_topic'], async () => {
    const c = await describeTopicConfig(adminTopic, ['retention.ms', 'cleanup.policy'])
    assert.equal(c.get('retention.ms').configValue, '86400000', 'retention.ms')
    assert.equal(c.get('retention.ms').configSource, DYNAMIC_TOPIC_CONFIG, 'retention.ms source')
    assert.equal(c.get('cleanup.policy').configValue, 'delete', 'cleanup.policy default')
    assert.equal(c.get('cleanup.policy').isDefault, true, 'cleanup.policy isDefault')
  })
  await check('admin_alter_configs', ['admin_describe_configs'], async () => {
    // AlterConfigs (not incremental) replaces the topic's whole override set.
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: adminTopic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
    })
    const c = await describeTopicConfig(adminTopic, ['retention.ms', 'cleanup.policy'])
    assert.equal(c.get('cleanup.policy').configValue, 'compact', 'cleanup.policy after alter')
    assert.equal(c.get('cleanup.policy').configSource, DYNAMIC_TOPIC_CONFIG, 'cleanup.policy source')
    assert.notEqual(c.get('retention.ms').configSource, DYNAMIC_TOPIC_CONFIG, 'retention.ms override survived a full AlterConfigs')
  })
  await check('admin_create_partitions', ['admin_describe_topic'], async () => {
    await admin.createPartitions({ topicPartitions: [{ topic: adminTopic, count: PARTITIONS + 1 }] })
    const md = await admin.fetchTopicMetadata({ topics: [adminTopic] })
    assert.equal(md.topics[0].partitions.length, PARTITIONS + 1, 'partitions after createPartitions')
  })

  const workloads = {}
  for (const [codec, type] of Object.entries(CODECS)) {
    const topic = `${prefix}-${codec}`
    const w = workload(`kafkajs-${codec}`)
    workloads[codec] = w
    await check(`produce_${codec}`, ['admin_create_topic'], async () => {
      await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true })
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: recordingPartitioner })
      await producer.connect()
      try {
        // Four sends, so that sequence numbers advance across requests.
        for (let start = 0; start < MESSAGES; start += 50) {
          const chunk = w.messages.slice(start, start + 50)
          lastPartitionOf = new Map()
          const results = await producer.send({ topic, acks: -1, compression: type, messages: chunk })
          const base = new Map(results.map(r => [r.partition, Number(r.baseOffset)]))
          const rank = new Map()
          chunk.forEach((m, i) => {
            const partition = lastPartitionOf.get(m)
            assert.ok(base.has(partition), `no produce result for partition ${partition}`)
            const k = rank.get(partition) || 0
            rank.set(partition, k + 1)
            w.acks.set(start + i, { partition, offset: base.get(partition) + k })
          })
        }
      } finally {
        await producer.disconnect()
      }
      verifyAcks(w)
    })
    await check(`consume_${codec}`, [`produce_${codec}`], async () => {
      for (const [partition, want] of expectedByPartition(w)) {
        const got = await fetchPartition(topic, partition, 0, want.length)
        assert.equal(got.length, want.length, `${w.label}: records in partition ${partition}`)
        got.forEach((m, i) => {
          const where = `${w.label} ${partition}-${m.offset}`
          assert.equal(Number(m.offset), i, `${where}: offset`)
          assert.equal(m.key && m.key.toString(), want[i].key, `${where}: key`)
          assert.equal(m.value === null ? null : m.value.toString(), want[i].value, `${where}: value`)
          assert.equal(m.headers.seq && m.headers.seq.toString(), String(want[i].seq), `${where}: seq header`)
        })
      }
    })
    await check(`offsets_${codec}`, [`produce_${codec}`], async () => {
      const want = expectedByPartition(w)
      const offsets = await topicOffsets(topic)
      assert.equal(offsets.size, PARTITIONS, 'partitions in ListOffsets')
      for (const [partition, o] of offsets) {
        assert.equal(o.low, 0, `earliest offset of partition ${partition}`)
        assert.equal(o.high, (want.get(partition) || []).length, `latest offset of partition ${partition}`)
      }
    })
  }

  await check('delete_records', ['consume_none'], async () => {
    const topic = `${prefix}-none`
    const [partition, want] = expectedByPartition(workloads.none).entries().next().value
    await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: '2' }] })
    assert.equal((await topicOffsets(topic)).get(partition).low, 2, 'earliest offset after deleteTopicRecords')
    const got = await fetchPartition(topic, partition, 2, 3)
    assert.equal(Number(got[0].offset), 2, 'first readable offset')
    assert.equal(got[0].value && got[0].value.toString(), want[2].value, 'first readable value')
  })
  await check('admin_delete_topics', ['admin_create_topic'], async () => {
    const existing = new Set(await admin.listTopics())
    const topics = [adminTopic, ...Object.keys(CODECS).map(c => `${prefix}-${c}`)].filter(t => existing.has(t))
    await admin.deleteTopics({ topics })
    const deadline = Date.now() + 10000
    let left
    do {
      const now = new Set(await admin.listTopics())
      left = topics.filter(t => now.has(t))
    } while (left.length && Date.now() < deadline)
    assert.deepEqual(left, [], 'topics still listed after deleteTopics')
  })
}

main()
  .catch(e => {
    failed.push('main')
    console.log(`FAIL main: ${e.stack || e}`)
  })
  .finally(async () => {
    await Promise.allSettled([admin.disconnect(), cluster && cluster.disconnect()])
    console.log(`kafkajs: ${passed} passed, ${failed.length} failed, ${skipped.length} skipped`)
    if (failed.length) console.log(`failed: ${failed.join(', ')}`)
    process.exit(failed.length || skipped.length ? 1 : 0)
  })
