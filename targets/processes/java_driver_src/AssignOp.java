/*
 * The assign op: one rebalance, run as Kafka's group leader runs it, with Kafka's own
 * assignor and ConsumerProtocol.
 *
 * Client mode builds each member's subscription as a consumer configured with this one
 * assignor builds it: its own fresh assignor instance first receives the member's owned
 * partitions and generation through onAssignment (when it has a generation), then answers
 * subscriptionUserData (unless the request overrides the user data); an eager consumer
 * sends no owned partitions (it revoked them before rejoining), a cooperative one sends
 * those of topics it still subscribes to; the subscription is encoded at the request's
 * subscriptionVersion (3 by default, capped at the highest this release writes) and decoded
 * again as the leader reads it, so an old version loses what it cannot carry. A member is
 * shaped by the release (Profile): its generation travels in the user data where the
 * assignor keeps it there, in the Subscription where it has one (KIP-792), and is absent
 * where neither; its rack is dropped where Subscription has none (KIP-881); what was left
 * out is answered in "dropped" {member: [field, ...]} (members with nothing dropped are
 * not listed). Raw mode hands the fields to the assignor as this release's leader reads
 * them: a field its reader does not have (a generation before KIP-792, a rack before KIP-881,
 * which a newer member may well send) is left out, as its decoder leaves it, and answered in
 * "dropped" the same way. A group has at least one member (its leader): an empty
 * "members" is a bad request, never handed to Kafka's assignor.
 * The leader keeps the subscriptions in a HashMap filled in request order, as Kafka's
 * ConsumerCoordinator does, and runs a fresh assignor instance once. Then each member
 * receives its assignment (through the assignment codec with wireAssignment) in the new
 * generation, in a fresh instance, and reports the user data of its next join.
 */
package groupcheck.driver;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

final class AssignOp {
    private AssignOp() {
    }

    static Map<String, Object> assign(Map<String, Object> request) {
        String name = Fields.string(request, "assignor");
        Map<String, Object> members = Fields.object(request.get("members"),
                "'members' (an object keyed by member id)");
        Object mode = request.get("mode") == null ? "client" : request.get("mode");
        if (!"client".equals(mode) && !"raw".equals(mode)) {
            throw new BadRequest("mode must be 'client' or 'raw', not " + Json.write(mode));
        }
        if (members.isEmpty()) {
            throw new BadRequest("a group has at least one member (its leader); 'members' is "
                    + "empty");
        }
        short version = (short) Math.min(
                Fields.version(request, "subscriptionVersion", CodecOps.HIGHEST_VERSION),
                CodecOps.highestWritten());
        Map<String, Subscription> subscriptions = new HashMap<>();
        Map<String, Object> dropped = new LinkedHashMap<>();
        for (Map.Entry<String, Object> e : members.entrySet()) {
            Map<String, Object> member = Fields.object(e.getValue(),
                    "member '" + e.getKey() + "'");
            List<String> lost = new ArrayList<>();
            subscriptions.put(e.getKey(), "client".equals(mode)
                    ? clientSubscription(name, e.getKey(), member, version, lost)
                    : rawSubscription(member, lost));
            if (!lost.isEmpty()) {
                dropped.put(e.getKey(), lost);
            }
        }
        Cluster cluster = Clusters.of(request);
        ConsumerPartitionAssignor leader = Assignors.create(name);
        long started = System.nanoTime();
        GroupAssignment result = leader.assign(cluster, new GroupSubscription(subscriptions));
        double ms = (System.nanoTime() - started) / 1_000_000.0;
        int generation = newGeneration(request, members);
        boolean wire = Boolean.TRUE.equals(request.get("wireAssignment"));

        Map<String, Object> assignment = new LinkedHashMap<>();
        Map<String, Object> userData = new LinkedHashMap<>();
        Map<String, Object> assignmentUserData = new LinkedHashMap<>();
        for (Map.Entry<String, Assignment> e : result.groupAssignment().entrySet()) {
            String id = e.getKey();
            Assignment given = e.getValue();
            Assignment received = wire
                    ? ConsumerProtocol.deserializeAssignment(
                            ConsumerProtocol.serializeAssignment(given))
                    : given;
            Map<String, Object> member = members.get(id) instanceof Map
                    ? Fields.object(members.get(id), id) : new HashMap<>();
            ConsumerPartitionAssignor consumer = Assignors.create(name);
            consumer.onAssignment(received, metadata(generation, id, member));
            assignment.put(id, Fields.pairs(given.partitions()));
            userData.put(id, Fields.base64(consumer.subscriptionUserData(
                    new HashSet<>(Fields.strings(member, "topics")))));
            assignmentUserData.put(id, Fields.base64(given.userData()));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("assignment", assignment);
        out.put("userData", userData);
        out.put("assignmentUserData", assignmentUserData);
        out.put("generation", (long) generation);
        out.put("protocol", Assignors.cooperative(leader) ? "COOPERATIVE" : "EAGER");
        out.put("ms", Math.round(ms * 1000.0) / 1000.0);
        if (!dropped.isEmpty()) {
            out.put("dropped", dropped);
        }
        return out;
    }

    private static ConsumerGroupMetadata metadata(int generation, String id,
                                                  Map<String, Object> member) {
        return new ConsumerGroupMetadata(CodecOps.GROUP_ID, generation, id,
                Optional.ofNullable(Fields.optionalString(member, "groupInstanceId")));
    }

    /** What a consumer of this release configured with {@code name} alone sends, as the
     * leader reads it; the fields it cannot send are added to {@code dropped}. */
    private static Subscription clientSubscription(String name, String id,
                                                   Map<String, Object> member, short version,
                                                   List<String> dropped) {
        ConsumerPartitionAssignor consumer = Assignors.create(name);
        List<String> topics = Fields.strings(member, "topics");
        List<TopicPartition> owned = Fields.partitions(member, "owned");
        Integer generation = Fields.optionalInt32(member, "generation");
        if (generation != null) {
            consumer.onAssignment(new Assignment(owned), metadata(generation, id, member));
        }
        ByteBuffer userData = Fields.base64(member, "userData");
        boolean ownUserData = userData == null;
        if (ownUserData) {
            userData = consumer.subscriptionUserData(new HashSet<>(topics));
        }
        List<TopicPartition> sent = new ArrayList<>();
        if (generation != null && Assignors.cooperative(consumer)) {
            for (TopicPartition tp : owned) {
                if (topics.contains(tp.topic())) {
                    sent.add(tp);
                }
            }
        }
        String rack = Fields.optionalString(member, "rack");
        List<String> left = new ArrayList<>();
        Subscription built = Compat.memberSubscription(topics, userData, sent,
                generation == null ? -1 : generation,
                rack == null || rack.isEmpty() ? Optional.empty() : Optional.of(rack), left);
        for (String field : left) {  // a generation the assignor's user data carries is kept
            if (!"generation".equals(field) || !ownUserData
                    || !Profile.userDataGenerationAssignors().contains(name)) {
                dropped.add(field);
            }
        }
        Subscription read = ConsumerProtocol.deserializeSubscription(
                ConsumerProtocol.serializeSubscription(built, version));
        read.setGroupInstanceId(Optional.ofNullable(
                Fields.optionalString(member, "groupInstanceId")));
        return read;
    }

    private static Subscription rawSubscription(Map<String, Object> member,
                                                List<String> dropped) {
        Integer generation = Fields.optionalInt32(member, "generation");
        Subscription subscription = Compat.memberSubscription(Fields.strings(member, "topics"),
                Fields.base64(member, "userData"), Fields.partitions(member, "owned"),
                generation == null ? -1 : generation,
                Optional.ofNullable(Fields.optionalString(member, "rack")), dropped);
        subscription.setGroupInstanceId(Optional.ofNullable(
                Fields.optionalString(member, "groupInstanceId")));
        return subscription;
    }

    /** newGeneration, else the largest member generation (0 when none) plus one. */
    private static int newGeneration(Map<String, Object> request, Map<String, Object> members) {
        Integer given = Fields.optionalInt32(request, "newGeneration");
        if (given != null) {
            return given;
        }
        int largest = 0;
        boolean any = false;
        for (Object value : members.values()) {
            Integer g = Fields.optionalInt32(Fields.object(value, "member"), "generation");
            if (g != null) {
                largest = any ? Math.max(largest, g) : g;
                any = true;
            }
        }
        return (any ? largest : 0) + 1;
    }
}
