'use strict'
// KafkaJS for security_clients.py: runs each case of a cases file over TLS (node's tls, with the
// case's CA, client certificate) and SASL (plain, scram-sha-256, scram-sha-512, oauthbearer with a
// token provider): produce N records (acks=-1), consume them back with a consumer group (KafkaJS
// has no assignment-only consumer; the groups are sec-<case>). Prints one line per case:
//   RESULT {"name", "outcome", "detail", "ms"}
// outcome: ok, auth_failed, topic_authz, handshake_failed, connection_closed or error.
//
//   NODE_PATH=<kafkajs peer>/node_modules node kafkajs_client.js --cases FILE

const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

const TIMEOUT_MS = 20000

function kafkaFor (c) {
  const ssl = { ca: [fs.readFileSync(c.ca)] }
  if (c.cert) {
    ssl.cert = fs.readFileSync(c.cert)
    ssl.key = fs.readFileSync(c.key)
  }
  const config = {
    clientId: 'spool-security-kafkajs',
    brokers: [c.bootstrap],
    ssl,
    logLevel: logLevel.NOTHING,
    retry: { retries: 1, initialRetryTime: 100 },
    connectionTimeout: 5000,
    requestTimeout: 10000,
  }
  if (c.sasl) {
    const mechanism = c.sasl.mechanism.toLowerCase()
    config.sasl = mechanism === 'oauthbearer'
      ? { mechanism, oauthBearerProvider: async () => ({ value: c.sasl.token }) }
      : { mechanism, username: c.sasl.username, password: c.sasl.password }
  }
  return new Kafka(config)
}

// The outcome of an error KafkaJS threw (retry errors wrap the original as .originalError).
function classify (e) {
  const chain = []
  for (let x = e; x; x = x.originalError || x.cause) chain.push(x)
  const text = chain.map(x => `${x.name}: ${x.message}${x.type ? ` (${x.type})` : ''}`).join(' <- ')
  if (chain.some(x => x.type === 'TOPIC_AUTHORIZATION_FAILED')) return ['topic_authz', text]
  if (chain.some(x => x.name === 'KafkaJSSASLAuthenticationError')) return ['auth_failed', text]
  if (chain.some(x => /certificate|SSL|TLS|tls|alert/.test(x.message) || (x.code && /CERT|SSL|TLS/.test(x.code)))) {
    return ['handshake_failed', text]
  }
  if (chain.some(x => x.name === 'KafkaJSConnectionClosedError')) return ['connection_closed', text]
  return ['error', text]
}

function withTimeout (promise, what) {
  let timer
  return Promise.race([promise, new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${TIMEOUT_MS} ms`)), TIMEOUT_MS)
  })]).finally(() => clearTimeout(timer))
}

async function produce (kafka, c) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  try {
    await producer.connect()
    const messages = []
    for (let i = 0; i < c.count; i++) messages.push({ key: String(i), value: `${c.name}-${i}`, partition: 0 })
    await producer.send({ topic: c.topic, acks: -1, messages })
  } finally {
    await producer.disconnect().catch(() => {})
  }
}

async function consume (kafka, c) {
  const consumer = kafka.consumer({ groupId: `sec-${c.name}`, retry: { retries: 1 } })
  const got = []
  try {
    await consumer.connect()
    await consumer.subscribe({ topic: c.topic, fromBeginning: true })
    await new Promise((resolve, reject) => {
      consumer.on(consumer.events.CRASH, ev => reject(ev.payload.error))
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ message }) => {
          got.push([message.key.toString(), message.value.toString(), Number(message.offset)])
          if (got.length >= c.count) resolve()
        },
      }).catch(reject)
    })
  } finally {
    await consumer.disconnect().catch(() => {})
  }
  return got
}

async function run (c) {
  const kafka = kafkaFor(c)
  try {
    await withTimeout(produce(kafka, c), 'produce')
  } catch (e) {
    return classify(e)
  }
  let got
  try {
    got = await withTimeout(consume(kafka, c), 'consume')
  } catch (e) {
    return classify(e)
  }
  for (let i = 0; i < c.count; i++) {
    const want = [String(i), `${c.name}-${i}`, i]
    if (JSON.stringify(got[i]) !== JSON.stringify(want)) {
      return ['error', `record ${i}: ${JSON.stringify(got[i])}, want ${JSON.stringify(want)}`]
    }
  }
  if (got.length !== c.count) return ['error', `consumed ${got.length} records, produced ${c.count}`]
  return ['ok', `${c.count} produced and consumed back`]
}

async function main () {
  const args = process.argv.slice(2)
  const cases = JSON.parse(fs.readFileSync(args[args.indexOf('--cases') + 1]))
  for (const c of cases) {
    const start = Date.now()
    let outcome, detail
    try {
      [outcome, detail] = await run(c)
    } catch (e) {
      [outcome, detail] = ['error', String(e && e.stack)]
    }
    console.log('RESULT ' + JSON.stringify({ name: c.name, outcome, detail, ms: Date.now() - start }))
  }
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
