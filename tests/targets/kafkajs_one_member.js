// One KafkaJS consumer for a test: joins group "g" on topic "t" of the broker named by the
// first argument, with the request timeout (ms) of the second ("-": KafkaJS's default), and
// prints a JSON line when it joins, when KafkaJS gives a request up (its REQUEST_TIMEOUT
// event: the API and how long the request was pending) and for each line it logs at WARN or
// above.
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, timeout] = process.argv.slice(2)
const say = (fields) => process.stdout.write(JSON.stringify(fields) + '\n')
const logCreator = () => ({ namespace, log }) => say({ ...log, namespace })
const kafka = new Kafka({
  clientId: 'a', brokers: [bootstrap], logLevel: logLevel.WARN, logCreator,
  ...(timeout === '-' ? {} : { requestTimeout: Number(timeout) }),
})
const consumer = kafka.consumer({
  groupId: 'g', sessionTimeout: 6000, rebalanceTimeout: 3000, heartbeatInterval: 300,
})
consumer.on(consumer.events.GROUP_JOIN, () => say({ joined: true }))
consumer.on(consumer.events.REQUEST_TIMEOUT, ({ payload }) => say({
  timeout: payload.apiName, waited: Date.now() - payload.sentAt }))
const main = async () => {
  await consumer.connect()
  await consumer.subscribe({ topic: 't', fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
}
main().catch((error) => { say({ failed: String(error) }); process.exit(1) })
process.stdin.on('end', () => consumer.disconnect().then(() => process.exit(0)))
process.stdin.resume()
