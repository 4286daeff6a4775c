/*
 * The codec ops of the contract, answered by Kafka's ConsumerProtocol, and user_data,
 * answered by a fresh instance of one of Kafka's assignors.
 *
 * decode_subscription and decode_assignment give two views of the same bytes, each
 * computed on its own buffer so that either may fail alone: the top level is what the
 * group leader reads (ConsumerProtocol's Subscription / Assignment, the header as read
 * and the bytes left unread), "data" is the generated raw message. A failure of a view is
 * reported in that view's error fields (error* for the top level, dataError* for data).
 */
package groupcheck.driver;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;

final class CodecOps {
    /** The group id handed to onAssignment; Kafka's assignors do not read it. */
    static final String GROUP_ID = "groupcheck";
    static final short HIGHEST_VERSION = 3;
    private static final short WRITTEN = ConsumerProtocol.deserializeVersion(
            ConsumerProtocol.serializeSubscription(new Subscription(new ArrayList<>())));

    private CodecOps() {
    }

    static Map<String, Object> encodeSubscription(Map<String, Object> request) {
        Integer generation = Fields.optionalInt32(request, "generation");
        Subscription subscription = Compat.subscription(Fields.strings(request, "topics"),
                Fields.base64(request, "userData"), Fields.partitions(request, "owned"),
                generation == null ? -1 : generation,
                Optional.ofNullable(Fields.optionalString(request, "rack")));
        short version = Fields.version(request, "version", HIGHEST_VERSION);
        return hex(ConsumerProtocol.serializeSubscription(subscription, version));
    }

    static Map<String, Object> encodeAssignment(Map<String, Object> request) {
        Assignment assignment = new Assignment(Fields.partitions(request, "partitions"),
                Fields.base64(request, "userData"));
        short version = Fields.version(request, "version", HIGHEST_VERSION);
        return hex(ConsumerProtocol.serializeAssignment(assignment, version));
    }

    /** The subscription version this release's ConsumerProtocol writes by default, the
     * highest it writes. */
    static short highestWritten() {
        return WRITTEN;
    }

    private static Map<String, Object> hex(ByteBuffer encoded) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("hex", Fields.hex(encoded));
        return out;
    }

    static Map<String, Object> decodeSubscription(Map<String, Object> request) {
        byte[] raw = Fields.hex(request, "hex");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            ByteBuffer buffer = ByteBuffer.wrap(raw);
            short version = ConsumerProtocol.deserializeVersion(buffer);
            Subscription s = ConsumerProtocol.deserializeSubscription(buffer, version);
            out.put("version", (long) version);
            out.put("topics", s.topics());
            out.put("userData", Fields.base64(s.userData()));
            out.put("owned", Fields.pairs(s.ownedPartitions()));
            Integer generation = Compat.generation(s);
            out.put("generation", generation == null ? null : (long) generation);
            out.put("rack", Compat.rack(s));
            out.put("remaining", (long) buffer.remaining());
        } catch (RuntimeException exc) {
            Errors.describe(exc, "error", out);
        }
        try {
            ConsumerProtocolSubscription d = Compat.subscriptionData(ByteBuffer.wrap(raw));
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("topics", d.topics());
            data.put("userData", Fields.base64(d.userData()));
            List<Object> owned = new ArrayList<>();
            for (ConsumerProtocolSubscription.TopicPartition tp : d.ownedPartitions()) {
                owned.add(topicEntry(tp.topic(), tp.partitions()));
            }
            data.put("ownedPartitions", owned);
            data.put("generationId", (long) Compat.generation(d));
            data.put("rackId", Compat.rack(d));
            out.put("data", data);
        } catch (RuntimeException exc) {
            Errors.describe(exc, "dataError", out);
        }
        return out;
    }

    static Map<String, Object> decodeAssignment(Map<String, Object> request) {
        byte[] raw = Fields.hex(request, "hex");
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            ByteBuffer buffer = ByteBuffer.wrap(raw);
            short version = ConsumerProtocol.deserializeVersion(buffer);
            Assignment a = ConsumerProtocol.deserializeAssignment(buffer, version);
            out.put("version", (long) version);
            out.put("partitions", Fields.pairs(a.partitions()));
            out.put("userData", Fields.base64(a.userData()));
            out.put("remaining", (long) buffer.remaining());
        } catch (RuntimeException exc) {
            Errors.describe(exc, "error", out);
        }
        try {
            ConsumerProtocolAssignment d = Compat.assignmentData(ByteBuffer.wrap(raw));
            Map<String, Object> data = new LinkedHashMap<>();
            List<Object> assigned = new ArrayList<>();
            for (ConsumerProtocolAssignment.TopicPartition tp : d.assignedPartitions()) {
                assigned.add(topicEntry(tp.topic(), tp.partitions()));
            }
            data.put("assignedPartitions", assigned);
            data.put("userData", Fields.base64(d.userData()));
            out.put("data", data);
        } catch (RuntimeException exc) {
            Errors.describe(exc, "dataError", out);
        }
        return out;
    }

    private static Map<String, Object> topicEntry(String topic, List<Integer> partitions) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("topic", topic);
        List<Object> numbers = new ArrayList<>(partitions.size());
        for (Integer p : partitions) {
            numbers.add(p == null ? null : (long) p);
        }
        entry.put("partitions", numbers);
        return entry;
    }

    /** One consumer's next subscription user data after it was given {@code owned} in
     * {@code generation} (no onAssignment when the generation is null). */
    static Map<String, Object> userData(Map<String, Object> request) {
        ConsumerPartitionAssignor assignor = Assignors.create(Fields.string(request, "assignor"));
        Integer generation = Fields.optionalInt32(request, "generation");
        if (generation != null) {
            String member = Fields.optionalString(request, "memberId");
            assignor.onAssignment(new Assignment(Fields.partitions(request, "owned")),
                    new ConsumerGroupMetadata(GROUP_ID, generation, member == null ? "" : member,
                            Optional.empty()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("userData", Fields.base64(assignor.subscriptionUserData(
                new HashSet<>(Fields.strings(request, "topics")))));
        return out;
    }
}
