import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;

/**
 * One KafkaConsumer on a thread of its own (the client is single-threaded): the thread
 * creates the consumer, then loops — the next command from its queue if there is one, else
 * one poll — and acks every command once the client call has returned. The rebalance
 * listener logs each callback's start and end with the generation and member id the
 * consumer reports from inside the callback. A create's "assignors" (else its one "assignor")
 * become partition.assignment.strategy's list of classes, in that order; what KafkaConsumer
 * refuses is its own exception, the create's error. Its config's commit_style decides how
 * the application commits (Commits); every "records" event carries the generation the
 * consumer reports right after the poll. A poll that raises FencedInstanceIdException (the
 * instance id was taken by another consumer: fatal to this one) ends its polling, as an
 * application's does; a later close still runs its callbacks.
 */
final class Member extends Thread implements ConsumerRebalanceListener {
    static final Duration POLL = Duration.ofMillis(50);
    static final Map<String, String> ASSIGNORS = Map.of(
        "range", "org.apache.kafka.clients.consumer.RangeAssignor",
        "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
        "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    private final Out out;
    private final Map<String, Object> create;
    private final String name;
    final BlockingQueue<Map<String, Object>> commands = new LinkedBlockingQueue<>();
    private KafkaConsumer<byte[], byte[]> consumer;
    private Commits commits;
    private boolean polling = true;
    private long slowRevokeMs;

    Member(Out out, Map<String, Object> create) {
        super("member-" + create.get("member"));
        setDaemon(true);
        this.out = out;
        this.create = create;
        this.name = String.valueOf(create.get("member"));
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> given(Map<String, Object> create) {
        return (Map<String, Object>) create.getOrDefault("config", Map.of());
    }

    static Properties config(Map<String, Object> create, Commits commits) {
        Map<String, Object> given = given(create);
        List<String> classes = new ArrayList<>();
        for (String assignor : assignors(create)) {
            if (!ASSIGNORS.containsKey(assignor)) {
                throw new IllegalArgumentException("Kafka's Java consumer has no assignor " + assignor);
            }
            classes.add(ASSIGNORS.get(assignor));
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", create.get("bootstrap"));
        p.put("group.id", create.get("group"));
        p.put("group.protocol", "classic");
        p.put("client.id", String.valueOf(given.getOrDefault("client_id", create.get("member"))));
        p.put("partition.assignment.strategy", String.join(",", classes));
        p.put("session.timeout.ms", String.valueOf(given.getOrDefault("session_timeout_ms", 6000)));
        p.put("heartbeat.interval.ms",
              String.valueOf(given.getOrDefault("heartbeat_interval_ms", 500)));
        p.put("max.poll.interval.ms",
              String.valueOf(given.getOrDefault("max_poll_interval_ms", 6000)));
        p.put("metadata.max.age.ms",
              String.valueOf(given.getOrDefault("metadata_max_age_ms", 300000)));
        p.put("auto.offset.reset", String.valueOf(given.getOrDefault("auto_offset_reset", "earliest")));
        if (given.get("request_timeout_ms") != null) {  // else the client's own default
            p.put("request.timeout.ms", String.valueOf(given.get("request_timeout_ms")));
        }
        boolean auto = commits.style.equals("auto");
        p.put("enable.auto.commit", String.valueOf(given.getOrDefault("enable_auto_commit", auto)));
        if (given.get("auto_commit_interval_ms") != null) {
            p.put("auto.commit.interval.ms", String.valueOf(given.get("auto_commit_interval_ms")));
        }
        if (auto) {  // the application observes its auto-commits through an interceptor
            p.put("interceptor.classes", CommitReporter.class.getName());
            p.put(CommitReporter.KEY, commits);
        }
        if (given.get("group_instance_id") != null) {  // a static member (KIP-345)
            p.put("group.instance.id", String.valueOf(given.get("group_instance_id")));
        }
        p.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        return p;
    }

    /** A create's assignors in preference order: its "assignors" list, else its "assignor". */
    static List<String> assignors(Map<String, Object> create) {
        Object list = create.get("assignors");
        List<String> names = new ArrayList<>();
        if (list instanceof List && !((List<?>) list).isEmpty()) {
            for (Object name : (List<?>) list) {
                names.add(String.valueOf(name));
            }
        } else {
            names.add(String.valueOf(create.get("assignor")));
        }
        return names;
    }

    @Override
    public void run() {
        try {
            commits = new Commits(out, name, given(create));
            consumer = new KafkaConsumer<>(config(create, commits));
            consumer.subscribe(topics(create.get("topics")), this);
        } catch (RuntimeException e) {
            out.ack(create.get("id"), Out.describe(e), Map.of());
            return;
        }
        out.ack(create.get("id"), null, Map.of());
        while (true) {
            Map<String, Object> command;
            try {
                command = commands.poll(polling ? 0 : 200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (command != null) {
                if (handle(command)) {
                    return;
                }
            } else if (polling) {
                poll();
            }
        }
    }

    private void poll() {
        ConsumerRecords<byte[], byte[]> records;
        try {
            records = consumer.poll(POLL);
        } catch (FencedInstanceIdException e) {  // fatal (KIP-345): the application stops
            polling = false;                     // consuming and is closed, it never rejoins
            out.event("error", name, Map.of("message", Out.describe(e), "raised_by", "poll"));
            return;
        } catch (RuntimeException e) {
            out.event("error", name, Map.of("message", Out.describe(e), "raised_by", "poll"));
            return;
        }
        if (records.isEmpty()) {
            return;
        }
        List<Object> rows = new ArrayList<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
            rows.add(List.of(r.topic(), r.partition(), r.offset()));
        }
        int generation = consumer.groupMetadata().generationId();
        commits.handed(records, generation);
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("records", rows);
        fields.put("generation", generation);
        out.event("records", name, fields);
        try {
            commits.afterPoll(consumer);
        } catch (RuntimeException e) {
            out.event("error", name, Map.of("message", "commit: " + Out.describe(e)));
        }
    }

    /** Runs one command and acks it; true when the consumer is gone. */
    private boolean handle(Map<String, Object> command) {
        String cmd = String.valueOf(command.get("cmd"));
        String error = null;
        try {
            run(cmd, command);
        } catch (RuntimeException e) {
            error = Out.describe(e);
            out.event("error", name, Map.of("message", cmd + ": " + error));
        }
        boolean gone = cmd.equals("close");
        if (gone) {
            out.event("closed", name, Map.of());
        }
        out.ack(command.get("id"), error, Map.of());
        return gone;
    }

    private void run(String cmd, Map<String, Object> command) {
        switch (cmd) {
            case "subscribe": {
                List<Object> before = parts(consumer.assignment());
                List<String> topics = topics(command.get("topics"));
                consumer.subscribe(topics, this);
                Map<String, Object> fields = new LinkedHashMap<>();
                fields.put("topics", topics);
                fields.put("before", before);
                fields.put("after", parts(consumer.assignment()));
                out.event("subscribed", name, fields);
                break;
            }
            case "unsubscribe":
                consumer.unsubscribe();
                break;
            case "pause": {
                Set<TopicPartition> owned = consumer.assignment();
                List<TopicPartition> mine = new ArrayList<>();
                for (TopicPartition tp : partitions(command.get("partitions"))) {
                    if (owned.contains(tp)) {
                        mine.add(tp);
                    }
                }
                consumer.pause(mine);
                out.event("paused", name, Map.of("partitions", parts(mine)));
                break;
            }
            case "resume": {
                List<TopicPartition> wanted = partitions(command.get("partitions"));
                consumer.resume(wanted);
                out.event("resumed", name, Map.of("partitions", parts(wanted)));
                break;
            }
            case "stop_polling":
                polling = false;
                break;
            case "start_polling":
                polling = true;
                break;
            case "slow_revoke":
                slowRevokeMs = ((Number) command.get("ms")).longValue();
                break;
            case "close": {                      // timeout_ms: close(Duration), else close()
                slowRevokeMs = 0;
                Object ms = command.get("timeout_ms");
                if (ms == null) {
                    consumer.close();
                } else {
                    consumer.close(Duration.ofMillis(((Number) ms).longValue()));
                }
                break;
            }
            case "crash":
                throw new UnsupportedOperationException(
                    "KafkaConsumer cannot end without leaving the group; the harness kills the driver");
            default:
                throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    // --- the rebalance listener ------------------------------------------------------------

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        callback("revoked", partitions, true);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        callback("assigned", partitions, false);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        callback("lost", partitions, false);
    }

    private void callback(String kind, Collection<TopicPartition> partitions, boolean revoke) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("kind", kind);
        fields.put("partitions", parts(partitions));
        ConsumerGroupMetadata meta = consumer.groupMetadata();
        fields.put("generation", meta.generationId());
        fields.put("memberId", meta.memberId());
        out.event("callback_start", name, fields);
        commits.generation = meta.generationId();
        if (revoke) {
            commits.revoking(consumer, partitions, meta.generationId());
        } else if (kind.equals("lost")) {
            commits.lost(partitions);
        }
        if (revoke && !partitions.isEmpty() && slowRevokeMs > 0) {
            long ms = slowRevokeMs;
            slowRevokeMs = 0;
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Map<String, Object> end = new LinkedHashMap<>(fields);
        end.put("paused", parts(consumer.paused()));
        out.event("callback_end", name, end);
    }

    // --- conversions -------------------------------------------------------------------------

    static List<String> topics(Object value) {
        List<String> topics = new ArrayList<>();
        for (Object t : (List<?>) value) {
            topics.add(String.valueOf(t));
        }
        return topics;
    }

    static List<TopicPartition> partitions(Object value) {
        List<TopicPartition> out = new ArrayList<>();
        for (Object item : (List<?>) value) {
            List<?> pair = (List<?>) item;
            out.add(new TopicPartition(String.valueOf(pair.get(0)), ((Number) pair.get(1)).intValue()));
        }
        return out;
    }

    static List<Object> parts(Collection<TopicPartition> partitions) {
        List<TopicPartition> sorted = new ArrayList<>(new HashSet<>(partitions));
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<Object> rows = new ArrayList<>();
        for (TopicPartition tp : sorted) {
            rows.add(List.of(tp.topic(), tp.partition()));
        }
        return rows;
    }
}
