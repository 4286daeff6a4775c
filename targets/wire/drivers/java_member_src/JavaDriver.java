import groupcheck.driver.Json;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.utils.AppInfoParser;

/**
 * groupcheck's member driver for Kafka's Java consumer (README, "Driving your own client"):
 * commands as JSON lines on stdin, acks and events as JSON lines on stdout. Each consumer is
 * a Member thread; produce uses one KafkaProducer; shutdown closes what is left and exits.
 */
public final class JavaDriver {
    static final long PRODUCE_TIMEOUT_S = 15;
    static final long SHUTDOWN_JOIN_MS = 30_000;

    private final Out out = new Out(System.out);
    private final Map<String, Member> members = new LinkedHashMap<>();
    private KafkaProducer<String, String> producer;

    public static void main(String[] args) throws Exception {
        new JavaDriver().serve();
        System.exit(0);
    }

    private void serve() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Object parsed;
            try {
                parsed = Json.parse(line);
            } catch (IllegalArgumentException e) {
                System.err.println("groupcheck java driver: " + e.getMessage());
                continue;
            }
            if (!(parsed instanceof Map)) {
                continue;
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> command = (Map<String, Object>) parsed;
            if (!handle(command)) {
                return;
            }
        }
        shutdown();
    }

    /** Dispatches one command; false once the driver should exit. */
    private boolean handle(Map<String, Object> command) throws InterruptedException {
        String cmd = String.valueOf(command.get("cmd"));
        Object id = command.getOrDefault("id", -1L);
        Object member = command.get("member");
        switch (cmd) {
            case "hello":
                out.ack(id, null, hello());
                return true;
            case "create": {
                Member thread = new Member(out, command);
                members.put(String.valueOf(member), thread);
                thread.start();
                return true;
            }
            case "produce":
                try {
                    produce(command);
                    out.ack(id, null, Map.of());
                } catch (Exception | LinkageError e) {
                    // LinkageError: a release whose producer cannot load here (3.8's loads
                    // zstd-jni's native library as its config class starts) answers, not exits
                    out.ack(id, Out.describe(e), Map.of());
                }
                return true;
            case "shutdown":
                shutdown();
                out.ack(id, null, Map.of());
                return false;
            default:
                Member target = members.get(String.valueOf(member));
                if (target == null || !target.isAlive()) {
                    out.ack(id, "unknown command or member: " + Json.write(command), Map.of());
                } else {
                    target.commands.add(command);
                }
                return true;
        }
    }

    private static Map<String, Object> hello() {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("client", "java");
        fields.put("version", AppInfoParser.getVersion());
        fields.put("assignors", assignors());
        fields.put("profile", "java");
        fields.put("crash", "kill");
        fields.put("static_membership", staticMembership());
        fields.put("commit_styles", Commits.STYLES);
        return fields;
    }

    /** Whether this release's ConsumerConfig has group.instance.id (KIP-345, Kafka 2.3). */
    private static boolean staticMembership() {
        try {
            ConsumerConfig.class.getField("GROUP_INSTANCE_ID_CONFIG");
            return true;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }

    /** The assignors whose class this release of Kafka's client has, in Kafka's order. */
    private static List<String> assignors() {
        List<String> found = new ArrayList<>();
        for (String name : List.of("range", "roundrobin", "sticky", "cooperative-sticky")) {
            try {
                Class.forName(Member.ASSIGNORS.get(name), false, JavaDriver.class.getClassLoader());
                found.add(name);
            } catch (ClassNotFoundException e) {
                // not in this release
            }
        }
        return found;
    }

    private void produce(Map<String, Object> command) throws Exception {
        if (producer == null) {
            Properties p = new Properties();
            p.put("bootstrap.servers", command.get("bootstrap"));
            p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            // send() may wait this long for metadata (default 60 s, the harness's whole
            // command timeout): bounded, a partition that never appears is an error answer
            p.put("max.block.ms", String.valueOf(TimeUnit.SECONDS.toMillis(PRODUCE_TIMEOUT_S)));
            producer = new KafkaProducer<>(p);
        }
        String topic = String.valueOf(command.get("topic"));
        int partition = ((Number) command.get("partition")).intValue();
        Object value = command.get("value");
        producer.send(new ProducerRecord<>(topic, partition, null, value == null ? "" : value.toString()))
            .get(PRODUCE_TIMEOUT_S, TimeUnit.SECONDS);
    }

    private void shutdown() throws InterruptedException {
        List<Member> alive = new ArrayList<>();
        for (Member m : members.values()) {
            if (m.isAlive()) {
                m.commands.add(Map.of("id", -1L, "cmd", "close"));
                alive.add(m);
            }
        }
        for (Member m : alive) {
            m.join(SHUTDOWN_JOIN_MS);
        }
        if (producer != null) {
            producer.close();
            producer = null;
        }
    }
}
