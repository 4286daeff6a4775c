// Kafka's Java client against groupcheck's broker (or any broker): a producer writes N
// records, M KafkaConsumers (classic group protocol, default 2) share one group and poll until
// every record is read and every member holds partitions, keep polling 1.5 s (each member
// heartbeats), then leave. Prints "settled_ms <ms from subscribe to every member holding
// partitions>", "assigned <client> <partitions>", "records <n>", "closed".
// Usage: BrokerSmoke <bootstrap> <topic> <group> <records> <assignor class> [members]
//        [heartbeat.interval.ms, default 500]
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class BrokerSmoke {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2], assignor = args[4];
        int count = Integer.parseInt(args[3]);
        int members = args.length > 5 ? Integer.parseInt(args[5]) : 2;
        String heartbeat = args.length > 6 ? args[6] : "500";
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        if (count > 0) try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, ("v" + i).getBytes())).get();
            }
        }
        List<KafkaConsumer<byte[], byte[]>> consumers = new ArrayList<>();
        long started = System.currentTimeMillis();
        for (int m = 0; m < members; m++) {
            String name = "java-" + (char) ('a' + m);
            Properties c = new Properties();
            c.put("bootstrap.servers", bootstrap);
            c.put("group.id", group);
            c.put("client.id", name);
            c.put("group.protocol", "classic");
            c.put("auto.offset.reset", "earliest");
            c.put("partition.assignment.strategy", assignor);
            c.put("heartbeat.interval.ms", heartbeat);
            c.put("session.timeout.ms", "6000");
            c.put("key.deserializer", ByteArrayDeserializer.class.getName());
            c.put("value.deserializer", ByteArrayDeserializer.class.getName());
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c);
            consumer.subscribe(List.of(topic));
            consumers.add(consumer);
        }
        int seen = 0;
        long deadline = System.currentTimeMillis() + 60_000;
        boolean balanced = false;
        long settled = -1;
        while ((seen < count || !balanced) && System.currentTimeMillis() < deadline) {
            balanced = true;
            for (KafkaConsumer<byte[], byte[]> consumer : consumers) {
                seen += consumer.poll(Duration.ofMillis(10)).count();
                balanced &= !consumer.assignment().isEmpty();
            }
            if (balanced && settled < 0) {
                settled = System.currentTimeMillis() - started;
            }
        }
        System.out.println("settled_ms " + settled);
        // poll until each member has heartbeated: a live member does within its session
        // timeout (6 s), or the coordinator evicts it
        long dwell = System.currentTimeMillis() + 6000;
        while (!heartbeated(consumers) && System.currentTimeMillis() < dwell) {
            for (KafkaConsumer<byte[], byte[]> consumer : consumers) {
                seen += consumer.poll(Duration.ofMillis(100)).count();
            }
        }
        for (int i = 0; i < consumers.size(); i++) {
            List<String> parts = new ArrayList<>();
            consumers.get(i).assignment().forEach(tp -> parts.add(tp.toString()));
            Collections.sort(parts);
            System.out.println("assigned java-" + (char) ('a' + i) + " " + parts);
        }
        System.out.println("records " + seen);
        for (KafkaConsumer<byte[], byte[]> consumer : consumers) {
            consumer.close();
        }
        System.out.println("closed");
    }

    /** Has every consumer sent a heartbeat the coordinator answered (its heartbeat-total)? */
    private static boolean heartbeated(List<KafkaConsumer<byte[], byte[]>> consumers) {
        for (KafkaConsumer<byte[], byte[]> consumer : consumers) {
            double beats = 0;
            for (var entry : consumer.metrics().entrySet()) {
                if (entry.getKey().name().equals("heartbeat-total")) {
                    beats = ((Number) entry.getValue().metricValue()).doubleValue();
                }
            }
            if (beats < 1) {
                return false;
            }
        }
        return true;
    }
}
