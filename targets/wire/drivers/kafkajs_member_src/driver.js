'use strict'
/*
 * groupcheck's member driver for KafkaJS (README, "Driving your own client"): commands as
 * JSON lines on stdin, acks and events as JSON lines on stdout, any number of consumers in
 * this one Node process.
 *
 * KafkaJS has no rebalance listener. What it tells an application about the group is the
 * GROUP_JOIN instrumentation event (the member id and the whole new assignment, after every
 * join and sync) and the batches its eachBatch handler receives; it has no revoke or lost
 * callback, no unsubscribe, no subscription change while running, and no poll loop (it
 * fetches on its own and calls the handler). So this driver reports exactly that: a
 * GROUP_JOIN as an "assigned" callback that starts and ends at once with the whole
 * assignment (generation null: KafkaJS does not expose it) and the partitions
 * consumer.paused() reports, every batch as "records", a
 * CRASH as "error". Commands KafkaJS has no call for are answered with an error naming what
 * is missing. A stall is the application's handler not returning: while polling is
 * stopped, the next batch the handler gets waits until polling starts again.
 *
 * A create's `assignors` (else its one `assignor`) become KafkaJS's partitionAssigners list,
 * in that order. The driver runs on whichever KafkaJS release NODE_PATH leads to: the lockfile's
 * (2.x) or a release's own install (kafkajs@1.16.0), so it keeps to what both have (a topic
 * subscribed one at a time: 1.x has no `topics` list).
 *
 * A create's `commit_style` (COMMIT_STYLES; default none) is how the application commits:
 * auto is KafkaJS's autoCommit with `autoCommitInterval`, each commit it made reported from
 * its COMMIT_OFFSETS instrumentation event (it emits none for a commit that failed); sync
 * awaits consumer.commitOffsets (the next offset of the batch's partition) after every batch
 * with records, autoCommit off. KafkaJS has no asynchronous commit of its own and no revoke
 * callback: it offers neither async nor revoke. Its records carry generation null (neither
 * GROUP_JOIN nor a batch tells the application its generation); a commit carries the
 * generation its COMMIT_OFFSETS payload names.
 */

const readline = require('readline')
const { Kafka, logLevel, PartitionAssigners } = require('kafkajs')
const version = require('kafkajs/package.json').version

const ASSIGNERS = { roundrobin: PartitionAssigners.roundRobin }
const COMMIT_STYLES = ['none', 'auto', 'sync']
let seq = 0

function write(message, ts) {
  const text = JSON.stringify(message)
  process.stdout.write(ts === undefined ? text + '\n' : `${text.slice(0, -1)},"ts":${ts}}\n`)
}

function event(name, member, fields = {}) {
  write({ event: name, member, seq: seq++, ...fields }, process.hrtime.bigint().toString())
}

function ack(id, error, fields = {}) {
  write({ ack: id, ...fields, ...(error ? { error } : {}) })
}

function describe(error) {
  return `${error && error.name ? error.name : 'Error'}: ${String(error && error.message)}`
    .replace(/\n/g, ' ')
}

function parts(assignment) {
  const out = []
  for (const [topic, partitions] of Object.entries(assignment || {})) {
    for (const p of partitions) out.push([topic, p])
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
}

function grouped(pairs) {
  const byTopic = new Map()
  for (const [topic, p] of pairs) {
    if (!byTopic.has(topic)) byTopic.set(topic, [])
    byTopic.get(topic).push(p)
  }
  return [...byTopic].map(([topic, partitions]) => ({ topic, partitions }))
}

const logCreator = () => ({ namespace, label, log }) =>
  process.stderr.write(`${label} [${namespace}] ${log.message}\n`)

class Member {
  constructor(command) {
    this.name = String(command.member)
    this.create = command
    this.owned = []  // the last assignment GROUP_JOIN reported
    this.stalled = null  // while polling is stopped: { promise, release }
    this.queue = Promise.resolve()  // one command at a time per consumer
    this.style = String((command.config || {}).commit_style || 'none')
    this.committed = null  // the last COMMIT_OFFSETS payload
  }

  commit(style, topics, outcome, generation) {
    const offsets = []
    for (const { topic, partitions } of topics) {
      for (const { partition, offset } of partitions) offsets.push([topic, partition, Number(offset)])
    }
    offsets.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]))
    event('commit', this.name, { style, offsets, outcome, generation })
  }

  /** sync: the application awaits its commit of the batch's next offset. */
  async commitBatch(batch) {
    const next = String(Number(batch.messages[batch.messages.length - 1].offset) + 1)
    const topics = [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }]
    this.committed = null
    try {
      await this.consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
    } catch (e) {
      this.commit('sync', topics, describe(e), null)
      return
    }
    const done = this.committed
    this.commit('sync', topics, done ? 'ok' : 'KafkaJS did not commit (the consumer is not running)',
      done ? done.groupGenerationId : null)
  }

  async start() {
    const c = this.create
    const config = c.config || {}
    const names = (c.assignors && c.assignors.length) ? c.assignors : [c.assignor]
    if (!COMMIT_STYLES.includes(this.style)) {
      throw new Error(`the kafkajs driver offers commit styles ${COMMIT_STYLES.join(', ')}, not ${this.style}`)
    }
    const assigners = names.map(name => {
      if (!ASSIGNERS[name]) throw new Error(`KafkaJS has no assignor ${name}`)
      return ASSIGNERS[name]
    })
    this.kafka = new Kafka({
      clientId: String(config.client_id || this.name),
      brokers: String(c.bootstrap).split(','),
      logLevel: logLevel.ERROR,
      logCreator,
      // absent: KafkaJS's own default (30 s; 1.x enforces none unless told to)
      ...(config.request_timeout_ms ? { requestTimeout: config.request_timeout_ms } : {}),
    })
    this.consumer = this.kafka.consumer({
      groupId: String(c.group),
      partitionAssigners: assigners,
      sessionTimeout: config.session_timeout_ms || 6000,
      rebalanceTimeout: config.max_poll_interval_ms || 6000,
      heartbeatInterval: config.heartbeat_interval_ms || 500,
      metadataMaxAge: config.metadata_max_age_ms || 300000,
      allowAutoTopicCreation: false,
    })
    const { GROUP_JOIN, CRASH, COMMIT_OFFSETS } = this.consumer.events
    this.consumer.on(COMMIT_OFFSETS, ({ payload }) => {
      this.committed = payload
      if (this.style === 'auto') this.commit('auto', payload.topics, 'ok', payload.groupGenerationId)
    })
    this.consumer.on(GROUP_JOIN, ({ payload }) => {
      this.owned = parts(payload.memberAssignment)
      const fields = { kind: 'assigned', partitions: this.owned, generation: null,
        memberId: payload.memberId }
      event('callback_start', this.name, fields)
      event('callback_end', this.name, { ...fields, paused: this.paused() })
    })
    this.consumer.on(CRASH, ({ payload }) => event('error', this.name,
      { message: `crash: ${describe(payload.error)}` }))
    await this.consumer.connect()
    const fromBeginning = (config.auto_offset_reset || 'earliest') === 'earliest'
    for (const topic of c.topics.map(String)) {
      await this.consumer.subscribe({ topic, fromBeginning })
    }
    const auto = config.enable_auto_commit === undefined ? this.style === 'auto'
      : Boolean(config.enable_auto_commit)
    await this.consumer.run({
      autoCommit: auto,
      ...(config.auto_commit_interval_ms ? { autoCommitInterval: config.auto_commit_interval_ms } : {}),
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        if (this.stalled) await this.stalled.promise
        if (!batch.messages.length) return
        event('records', this.name, { records: batch.messages.map(
          m => [batch.topic, batch.partition, Number(m.offset)]), generation: null })
        if (this.style === 'sync') await this.commitBatch(batch)
      },
    })
  }

  paused() {
    return parts(Object.fromEntries(this.consumer.paused().map(g => [g.topic, g.partitions])))
  }

  async run(command) {
    switch (command.cmd) {
      case 'subscribe': {
        const topics = command.topics.map(String)
        const before = this.owned
        for (const topic of topics) {
          await this.consumer.subscribe({ topic })  // KafkaJS refuses while running
        }
        event('subscribed', this.name, { topics, before, after: this.owned })
        return
      }
      case 'unsubscribe':
        throw new Error('KafkaJS has no unsubscribe')
      case 'pause': {
        const owned = new Set(this.owned.map(p => JSON.stringify(p)))
        const mine = command.partitions.filter(p => owned.has(JSON.stringify([p[0], p[1]])))
        this.consumer.pause(grouped(mine))
        event('paused', this.name, { partitions: parts(Object.fromEntries(
          grouped(mine).map(g => [g.topic, g.partitions]))) })
        return
      }
      case 'resume': {
        this.consumer.resume(grouped(command.partitions))
        event('resumed', this.name, { partitions: parts(Object.fromEntries(
          grouped(command.partitions).map(g => [g.topic, g.partitions]))) })
        return
      }
      case 'stop_polling':
        if (!this.stalled) {
          let release
          const promise = new Promise(resolve => { release = resolve })
          this.stalled = { promise, release }
        }
        return
      case 'start_polling':
        if (this.stalled) {
          this.stalled.release()
          this.stalled = null
        }
        return
      case 'slow_revoke':
        throw new Error('KafkaJS has no revoke callback')
      case 'close':
        if (this.stalled) this.stalled.release()
        await this.consumer.disconnect()
        event('closed', this.name)
        return
      case 'crash':
        throw new Error('KafkaJS cannot end a consumer without leaving; the harness kills the driver')
      default:
        throw new Error(`unknown command ${command.cmd}`)
    }
  }

  submit(command) {
    this.queue = this.queue.then(async () => {
      try {
        await this.run(command)
        ack(command.id)
      } catch (e) {
        event('error', this.name, { message: `${command.cmd}: ${describe(e)}` })
        ack(command.id, describe(e))
      }
    })
  }
}

const members = new Map()
let producer = null  // a promise of the connected producer: records sent at once share one

async function produce(command) {
  if (!producer) {
    const kafka = new Kafka({ clientId: 'groupcheck-producer',
      brokers: String(command.bootstrap).split(','), logLevel: logLevel.ERROR, logCreator })
    const created = kafka.producer({ allowAutoTopicCreation: false })
    const ready = created.connect().then(() => created)
    producer = ready
    ready.catch(() => { if (producer === ready) producer = null })  // the next one retries
  }
  await (await producer).send({ topic: String(command.topic), acks: -1, timeout: 15000,
    messages: [{ partition: Number(command.partition), value: String(command.value || '') }] })
}

async function shutdown() {
  await Promise.all([...members.values()].map(m => {
    if (m.stalled) m.stalled.release()
    return m.consumer ? m.consumer.disconnect().catch(() => {}) : null
  }))
  if (producer) await producer.then(p => p.disconnect()).catch(() => {})
}

async function handle(command) {
  const id = command.id === undefined ? -1 : command.id
  switch (command.cmd) {
    case 'hello':
      ack(id, null, { client: 'kafkajs', version, assignors: Object.keys(ASSIGNERS),
        profile: 'kip', crash: 'kill', static_membership: false, commit_styles: COMMIT_STYLES })  // KafkaJS has no group.instance.id
      return true
    case 'create': {
      const member = new Member(command)
      members.set(member.name, member)
      member.queue = member.queue.then(() => member.start()).then(
        () => ack(id), e => ack(id, describe(e)))
      return true
    }
    case 'produce':
      produce(command).then(() => ack(id), e => ack(id, describe(e)))
      return true
    case 'shutdown':
      await shutdown()
      ack(id)
      return false
    default: {
      const member = members.get(String(command.member))
      if (!member) ack(id, `unknown command or member: ${JSON.stringify(command).slice(0, 200)}`)
      else member.submit(command)
      return true
    }
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line.trim()) continue
    let command
    try {
      command = JSON.parse(line)
    } catch (e) {
      process.stderr.write(`groupcheck kafkajs driver: not JSON: ${line.slice(0, 200)}\n`)
      continue
    }
    if (command && typeof command === 'object' && !(await handle(command))) break
  }
  await shutdown()
  process.exit(0)
}

main()
