// KafkaJS against groupcheck's broker: a producer writes N records, two consumers share one
// group and read them all, then disconnect (leave). Prints "assigned <client> <partitions>",
// "records <n>", "closed". Usage: node smoke.js <bootstrap> <topic> <group> <records>
const { Kafka, logLevel } = require('kafkajs')

async function main () {
  const [bootstrap, topic, group, countText] = process.argv.slice(2)
  const count = Number(countText)
  const make = clientId => new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.ERROR })
  const producer = make('kafkajs-producer').producer()
  await producer.connect()
  for (let i = 0; i < count; i++) {
    await producer.send({ topic, messages: [{ value: `v${i}` }] })
  }
  await producer.disconnect()
  let seen = 0
  const assigned = {}
  const consumers = []
  for (const name of ['kafkajs-a', 'kafkajs-b']) {
    const consumer = make(name).consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 500, maxWaitTimeInMs: 250 })
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
  const ready = () => seen >= count && Object.values(assigned).filter(p => p.length).length === 2
  while (!ready() && Date.now() < deadline) {
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  await new Promise(resolve => setTimeout(resolve, 1500)) // so that each member heartbeats
  for (const name of Object.keys(assigned).sort()) {
    console.log(`assigned ${name} [${assigned[name].map(p => `${topic}-${p}`).join(', ')}]`)
  }
  console.log(`records ${seen}`)
  for (const consumer of consumers) await consumer.disconnect()
  console.log('closed')
}

main().catch(e => { console.error(e); process.exit(1) })
