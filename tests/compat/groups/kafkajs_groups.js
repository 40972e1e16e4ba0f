'use strict'
// Classic consumer groups with KafkaJS 2.2.4 (JoinGroup/SyncGroup v5, Heartbeat v3, OffsetCommit
// v5, OffsetFetch v4): three consumers of one group split a 6-partition topic and consume every
// message exactly once; one leaves (LeaveGroup) and the other two take over; a new consumer of the
// group resumes from the committed offsets.
//
//   NODE_PATH=<kafkajs node_modules> node kafkajs_groups.js --bootstrap HOST:PORT
// Prints PASS/FAIL per check and a summary; exits 1 unless every check passed.

const assert = require('assert/strict')
const { Kafka, logLevel } = require('kafkajs')

const args = process.argv.slice(2)
const bootstrap = args[args.indexOf('--bootstrap') + 1]
const PARTITIONS = 6
const PER_PARTITION = 50
const stamp = Date.now().toString(16)
const topic = `kafkajs-groups-${stamp}`
const groupId = `kafkajs-group-${stamp}`
const kafka = new Kafka({ clientId: 'groups-compat', brokers: [bootstrap], logLevel: logLevel.NOTHING })

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor (condition, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (condition()) return
    await sleep(100)
  }
  throw new Error(`timed out waiting for ${what}`)
}

async function produce (from, count) {
  const producer = kafka.producer()
  await producer.connect()
  const messages = []
  for (let p = 0; p < PARTITIONS; p++) {
    for (let n = from; n < from + count; n++) messages.push({ partition: p, value: `${p}:${n}` })
  }
  await producer.send({ topic, messages })
  await producer.disconnect()
}

function member (name, seen) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 })
  const state = { name, consumer, assigned: [] }
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    state.assigned = (e.payload.memberAssignment[topic] || []).slice().sort()
  })
  state.start = async () => {
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({
      autoCommitInterval: 200,
      eachMessage: async ({ partition, message }) => { seen.push([partition, message.value.toString(), name]) }
    })
  }
  return state
}

function exactlyOnce (seen, from, count) {
  const expected = new Set()
  for (let p = 0; p < PARTITIONS; p++) for (let n = from; n < from + count; n++) expected.add(`${p}:${n}`)
  const counts = new Map()
  for (const [, v] of seen) counts.set(v, (counts.get(v) || 0) + 1)
  const dups = [...counts].filter(([, c]) => c > 1)
  assert.equal(dups.length, 0, `consumed more than once: ${dups.slice(0, 5)}`)
  const missing = [...expected].filter((v) => !counts.has(v))
  assert.equal(missing.length, 0, `never consumed: ${missing.slice(0, 5)}`)
}

async function main () {
  let passed = 0
  let failed = 0
  const check = async (name, fn) => {
    try {
      await fn()
      console.log(`PASS ${name}`)
      passed++
    } catch (e) {
      console.log(`FAIL ${name}: ${e.message}`)
      failed++
      throw e
    }
  }
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] })
  const seen = []
  const members = [member('a', seen), member('b', seen), member('c', seen)]
  try {
    await check('group_shares_partitions', async () => {
      await Promise.all(members.map((m) => m.start()))
      await waitFor(() => members.every((m) => m.assigned.length === 2) &&
        new Set(members.flatMap((m) => m.assigned)).size === PARTITIONS, 60000, '3-way split')
      await produce(0, PER_PARTITION)
      await waitFor(() => seen.length >= PARTITIONS * PER_PARTITION, 60000, 'every message')
      await sleep(1000)
      exactlyOnce(seen, 0, PER_PARTITION)
    })
    await check('member_leave_rebalances', async () => {
      const leaver = members.pop()
      await leaver.consumer.disconnect()
      await waitFor(() => members.every((m) => m.assigned.length === 3) &&
        new Set(members.flatMap((m) => m.assigned)).size === PARTITIONS, 60000, '2-way split')
      const before = seen.length
      await produce(PER_PARTITION, 10)
      await waitFor(() => seen.length - before >= PARTITIONS * 10, 60000, 'messages after leave')
      await sleep(1000)
      exactlyOnce(seen.slice(before), PER_PARTITION, 10)
    })
    await Promise.all(members.map((m) => m.consumer.disconnect()))
    members.length = 0
    await check('resume_from_committed', async () => {
      const fresh = []
      const m = member('d', fresh)
      members.push(m)
      await produce(PER_PARTITION + 10, 5)
      await m.start()
      await waitFor(() => fresh.length >= PARTITIONS * 5, 60000, 'messages after resume')
      await sleep(1500)
      exactlyOnce(fresh, PER_PARTITION + 10, 5)
      assert.equal(fresh.length, PARTITIONS * 5, 'messages before the commit came again')
    })
    const offsets = await admin.fetchOffsets({ groupId, topics: [topic] })
    await check('admin_fetch_offsets', async () => {
      for (const p of offsets[0].partitions) assert.equal(p.offset, String(PER_PARTITION + 15))
    })
  } catch (e) {
    // reported by check()
  } finally {
    await Promise.all(members.map((m) => m.consumer.disconnect().catch(() => {})))
    await admin.disconnect()
  }
  console.log(`kafkajs-groups: ${passed} passed, ${failed} failed`)
  process.exit(failed === 0 && passed === 4 ? 0 : 1)
}

main().catch((e) => {
  console.log(`FAIL kafkajs-groups: ${e.message}`)
  process.exit(1)
})
