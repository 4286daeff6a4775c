// KafkaJS against groupcheck's broker (or any broker): a producer writes N records, M consumers
// (default 2) share one group and read them all, then disconnect (leave). Prints "settled_ms
// <ms from the first connect to every member holding partitions>", "assigned <client>
// <partitions>", "records <n>", "closed".
// Usage: node smoke.js <bootstrap> <topic> <group> <records> [members] [heartbeat ms, 500]
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, topic, group, countText] = process.argv.slice(2)
  const count = Number(countText)
  const members = Number(process.argv[6] || 2)
  const heartbeatInterval = Number(process.argv[7] || 500)
  const make = clientId => new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.ERROR })
  const producer = make('kafkajs-producer').producer()
  await producer.connect()
  for (let i = 0; i < count; i++) {
    await producer.send({ topic, messages: [{ value: `v${i}` }] })
  }
  await producer.disconnect()
  let seen = 0
  const assigned = {}
  const beats = {}
  const consumers = []
  const started = Date.now()
  const names = Array.from({ length: members }, (_, i) => `kafkajs-${String.fromCharCode(97 + i)}`)
  for (const name of names) {
    const consumer = make(name).consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval, maxWaitTimeInMs: 250 })
    consumer.on(consumer.events.HEARTBEAT, () => { beats[name] = true })
    consumer.on(consumer.events.GROUP_JOIN, e => {
      const parts = (e.payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b)
      assigned[name] = parts
    })
    await consumer.connect()
    await consumer.subscribe({ topic, fromBeginning: true })
    await consumer.run({ eachMessage: async () => { seen += 1 } })
    consumers.push(consumer)
  }
  const deadline = Date.now() + 60000
  const balanced = () => Object.values(assigned).filter(p => p.length).length === members
  let settled = -1
  while (!(seen >= count && balanced()) && Date.now() < deadline) {
    if (settled < 0 && balanced()) settled = Date.now() - started
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  if (settled < 0 && balanced()) settled = Date.now() - started
  console.log(`settled_ms ${settled}`)
  // wait until each member has heartbeated: a live member does within its session timeout
  // (6 s), or the coordinator evicts it
  const dwell = Date.now() + 6000
  while (Object.keys(beats).length < members && Date.now() < dwell) {
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  for (const name of Object.keys(assigned).sort()) {
    console.log(`assigned ${name} [${assigned[name].map(p => `${topic}-${p}`).join(', ')}]`)
  }
  console.log(`records ${seen}`)
  for (const consumer of consumers) await consumer.disconnect()
  console.log('closed')
}

main().catch(e => { console.error(e); process.exit(1) })
