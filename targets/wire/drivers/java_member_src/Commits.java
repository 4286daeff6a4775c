import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One member's commit style, done as an application in that style does it with
 * KafkaConsumer, and each commit's outcome as a "commit" event:
 * none never commits; auto leaves it to enable.auto.commit (its outcomes come from the
 * CommitReporter interceptor); sync calls commitSync() after each poll that returned
 * records; async calls commitAsync(callback) there; revoke calls commitSync(offsets) of the
 * partitions being revoked inside onPartitionsRevoked, and nowhere else (lost partitions
 * are never committed). The next offset of every partition handed records in its current
 * ownership (last handed + 1) is what the sync and revoke events list, and what revoke
 * commits. Everything but autoCommitted runs on the member's thread.
 */
final class Commits {
    static final List<String> STYLES = List.of("none", "auto", "sync", "async", "revoke");

    final String style;
    private final Out out;
    private final String member;
    private final Map<TopicPartition, Long> next = new HashMap<>();
    /** The generation the consumer last reported on the member's thread (for auto). */
    volatile Integer generation;

    Commits(Out out, String member, Map<String, Object> config) {
        this.out = out;
        this.member = member;
        this.style = String.valueOf(config.getOrDefault("commit_style", "none"));
        if (!STYLES.contains(style)) {
            throw new IllegalArgumentException(
                "the java driver offers commit styles " + STYLES + ", not " + style);
        }
    }

    /** A poll handed these records (generation: what the consumer reports now). */
    void handed(ConsumerRecords<byte[], byte[]> records, int generation) {
        this.generation = generation;
        for (ConsumerRecord<byte[], byte[]> r : records) {
            next.put(new TopicPartition(r.topic(), r.partition()), r.offset() + 1);
        }
    }

    /** The application's commit after a poll that returned records (sync and async). */
    void afterPoll(KafkaConsumer<byte[], byte[]> consumer) {
        int generation = consumer.groupMetadata().generationId();
        if (style.equals("sync")) {
            List<Object> offsets = rows(next, consumer.assignment());
            try {
                consumer.commitSync();
                report("sync", offsets, "ok", generation);
            } catch (RuntimeException e) {
                report("sync", offsets, Out.describe(e), generation);
            }
        } else if (style.equals("async")) {
            consumer.commitAsync((offsets, exception) -> report(
                "async", committed(offsets), exception == null ? "ok" : Out.describe(exception),
                generation));
        }
    }

    /** Inside onPartitionsRevoked: revoke commits what it was handed of them; every style
     *  then forgets their positions (the ownership ended). */
    void revoking(KafkaConsumer<byte[], byte[]> consumer, Collection<TopicPartition> partitions,
                  int generation) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : partitions) {
            if (next.containsKey(tp)) {
                offsets.put(tp, new OffsetAndMetadata(next.get(tp)));
            }
        }
        if (style.equals("revoke") && !offsets.isEmpty()) {
            try {
                consumer.commitSync(offsets);
                report("revoke", committed(offsets), "ok", generation);
            } catch (RuntimeException e) {
                report("revoke", committed(offsets), Out.describe(e), generation);
            }
        }
        next.keySet().removeAll(partitions);
    }

    /** Inside onPartitionsLost: nothing is committed, the positions are forgotten. */
    void lost(Collection<TopicPartition> partitions) {
        next.keySet().removeAll(partitions);
    }

    /** A commit the client's auto-commit completed (CommitReporter.onCommit: any thread).
     *  An empty one sent nothing (newer releases call onCommit for it before a join). */
    void autoCommitted(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (!offsets.isEmpty()) {
            report("auto", committed(offsets), "ok", generation);
        }
    }

    private void report(String how, List<Object> offsets, String outcome, Integer generation) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("style", how);
        fields.put("offsets", offsets);
        fields.put("outcome", outcome);
        fields.put("generation", generation);
        out.event("commit", member, fields);
    }

    private static List<Object> committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<TopicPartition, Long> plain = new HashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            plain.put(e.getKey(), e.getValue().offset());
        }
        return rows(plain, plain.keySet());
    }

    /** [topic, partition, next offset] of the partitions in ``among``, sorted. */
    private static List<Object> rows(Map<TopicPartition, Long> offsets, Set<TopicPartition> among) {
        List<TopicPartition> sorted = new ArrayList<>();
        for (TopicPartition tp : offsets.keySet()) {
            if (among.contains(tp)) {
                sorted.add(tp);
            }
        }
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<Object> rows = new ArrayList<>();
        for (TopicPartition tp : sorted) {
            rows.add(List.of(tp.topic(), tp.partition(), offsets.get(tp)));
        }
        return rows;
    }
}
