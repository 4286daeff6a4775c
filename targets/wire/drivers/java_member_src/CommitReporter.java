import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The consumer interceptor a member in commit style auto is configured with: KafkaConsumer
 * calls onCommit when a commit succeeds (its auto-commits, on whichever of its threads
 * completed the request), which is the one hook Kafka gives an application to observe them.
 * It changes nothing: records pass through untouched. Its member's Commits comes in the
 * consumer's config under KEY.
 */
public final class CommitReporter implements ConsumerInterceptor<byte[], byte[]> {
    static final String KEY = "groupcheck.commits";

    private Commits commits;

    @Override
    public void configure(Map<String, ?> configs) {
        commits = (Commits) configs.get(KEY);
    }

    @Override
    public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (commits != null) {
            commits.autoCommitted(offsets);
        }
    }

    @Override
    public void close() {
    }
}
