/*
 * The profile op: what this Kafka client can do, learned from the client itself when first
 * asked (reflection and small probes of its ConsumerProtocol and assignors), never from a
 * table of release numbers. Answered once per JVM; a probe that fails answers its
 * feature's "absent" value (false, none, null), never an error.
 *
 * Fields (snake_case, the Python ClientProfile mirrors them):
 *   version                AppInfoParser.getVersion()
 *   subscription_versions  {"writes": the header version ConsumerProtocol writes by
 *   assignment_versions     default, "reads": the versions that round-trip through it}
 *   generation_in          where the cooperative-sticky member's generation travels:
 *                          "subscription" (KIP-792), else "user_data" (its user data after
 *                          onAssignment reads back the generation), else "none"
 *   user_data_generation   cooperative-sticky's user data carries it (either way)
 *   user_data_generation_assignors  every assignor whose user data carries it
 *   rack                   Subscription carries the member's rack (KIP-881)
 *   rack_aware_assignors   assignors that gave each member the partition on its own rack
 *                          in two mirrored probes (empty without a rack)
 *   on_partitions_lost     ConsumerRebalanceListener declares onPartitionsLost (KIP-429)
 *   static_membership      ConsumerConfig has group.instance.id (KIP-345)
 *   pause                  a paused partition that a new assignment keeps stays paused in
 *                          SubscriptionState (assignFromSubscribed, which the classic
 *                          coordinator calls after a cooperative rebalance); this is the
 *                          client's bookkeeping only, not what its fetcher does; null when
 *                          the internal API cannot be reached
 *   assignors              {name: supportedProtocols()} of the four the jar has
 */
package groupcheck.driver;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.LogContext;

final class Profile {
    private static final String TOPIC = "t";
    private static final int PROBE_GENERATION = 7;
    private static Map<String, Object> cached;
    private static Set<String> userDataGeneration;

    private Profile() {
    }

    static synchronized Map<String, Object> answer() {
        if (cached == null) {
            cached = Collections.unmodifiableMap(learn());
        }
        return cached;
    }

    /** The assignors whose own user data carries the member's generation. */
    static synchronized Set<String> userDataGenerationAssignors() {
        if (userDataGeneration == null) {
            Set<String> out = new HashSet<>();
            for (String name : Assignors.available()) {
                if (userDataCarriesGeneration(name)) {
                    out.add(name);
                }
            }
            userDataGeneration = Collections.unmodifiableSet(out);
        }
        return userDataGeneration;
    }

    private static Map<String, Object> learn() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("version", AppInfoParser.getVersion());
        out.put("subscription_versions", subscriptionVersions());
        out.put("assignment_versions", assignmentVersions());
        boolean inSubscription = subscriptionCarriesGeneration();
        Set<String> inUserData = userDataGenerationAssignors();
        boolean cooperative = inUserData.contains("cooperative-sticky");
        out.put("generation_in", inSubscription ? "subscription"
                : cooperative ? "user_data" : "none");
        out.put("user_data_generation", cooperative);
        List<String> carriers = new ArrayList<>();
        for (String name : Assignors.available()) {
            if (inUserData.contains(name)) {
                carriers.add(name);
            }
        }
        out.put("user_data_generation_assignors", carriers);
        boolean rack = subscriptionCarriesRack();
        out.put("rack", rack);
        out.put("rack_aware_assignors", rack ? rackAwareAssignors() : new ArrayList<>());
        out.put("on_partitions_lost", hasMethod(ConsumerRebalanceListener.class,
                "onPartitionsLost", Collection.class));
        out.put("static_membership", hasField(ConsumerConfig.class, "GROUP_INSTANCE_ID_CONFIG"));
        out.put("pause", pauseKeptWhenRetained());
        Map<String, Object> assignors = new LinkedHashMap<>();
        for (String name : Assignors.available()) {
            List<Object> protocols = new ArrayList<>();
            for (RebalanceProtocol p : Assignors.create(name).supportedProtocols()) {
                protocols.add(p.name());
            }
            assignors.put(name, protocols);
        }
        out.put("assignors", assignors);
        return out;
    }

    private static boolean hasMethod(Class<?> owner, String name, Class<?>... types) {
        try {
            owner.getMethod(name, types);
            return true;
        } catch (NoSuchMethodException exc) {
            return false;
        }
    }

    private static boolean hasField(Class<?> owner, String name) {
        try {
            owner.getField(name);
            return true;
        } catch (NoSuchFieldException exc) {
            return false;
        }
    }

    private static List<TopicPartition> owned() {
        return Collections.singletonList(new TopicPartition(TOPIC, 0));
    }

    /** Written by default, and every version from 0 to one past the generated message's
     * highest that ConsumerProtocol writes under its own number and reads back. */
    private static Map<String, Object> subscriptionVersions() {
        Subscription probe = new Subscription(Collections.singletonList(TOPIC), null, owned());
        List<Object> reads = new ArrayList<>();
        int highest = new ConsumerProtocolSubscription().highestSupportedVersion();
        for (short v = 0; v <= highest + 1; v++) {
            try {
                ByteBuffer wire = ConsumerProtocol.serializeSubscription(probe, v);
                if (ConsumerProtocol.deserializeVersion(wire.duplicate()) == v
                        && ConsumerProtocol.deserializeSubscription(wire).topics()
                        .equals(probe.topics())) {
                    reads.add((long) v);
                }
            } catch (RuntimeException exc) {
                // not a version this client writes and reads
            }
        }
        return versions(ConsumerProtocol.deserializeVersion(
                ConsumerProtocol.serializeSubscription(probe)), reads);
    }

    private static Map<String, Object> assignmentVersions() {
        Assignment probe = new Assignment(owned());
        List<Object> reads = new ArrayList<>();
        int highest = new ConsumerProtocolAssignment().highestSupportedVersion();
        for (short v = 0; v <= highest + 1; v++) {
            try {
                ByteBuffer wire = ConsumerProtocol.serializeAssignment(probe, v);
                if (ConsumerProtocol.deserializeVersion(wire.duplicate()) == v
                        && ConsumerProtocol.deserializeAssignment(wire).partitions()
                        .equals(probe.partitions())) {
                    reads.add((long) v);
                }
            } catch (RuntimeException exc) {
                // not a version this client writes and reads
            }
        }
        return versions(ConsumerProtocol.deserializeVersion(
                ConsumerProtocol.serializeAssignment(probe)), reads);
    }

    private static Map<String, Object> versions(short writes, List<Object> reads) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("writes", (long) writes);
        out.put("reads", reads);
        return out;
    }

    /** KIP-792: a Subscription built with a generation reads it back after ConsumerProtocol's
     * default encoding. */
    private static boolean subscriptionCarriesGeneration() {
        if (!Compat.SUBSCRIPTION_GENERATION) {
            return false;
        }
        try {
            Subscription sent = Compat.subscription(Collections.singletonList(TOPIC), null,
                    owned(), PROBE_GENERATION, Optional.empty());
            Integer read = Compat.generation(ConsumerProtocol.deserializeSubscription(
                    ConsumerProtocol.serializeSubscription(sent)));
            return read != null && read == PROBE_GENERATION;
        } catch (RuntimeException exc) {
            return false;
        }
    }

    /** KIP-881, the same way. */
    private static boolean subscriptionCarriesRack() {
        if (!Compat.SUBSCRIPTION_RACK) {
            return false;
        }
        try {
            Subscription sent = Compat.subscription(Collections.singletonList(TOPIC), null,
                    owned(), -1, Optional.of("r0"));
            return "r0".equals(Compat.rack(ConsumerProtocol.deserializeSubscription(
                    ConsumerProtocol.serializeSubscription(sent))));
        } catch (RuntimeException exc) {
            return false;
        }
    }

    /** A fresh assignor told its generation through onAssignment writes user data from
     * which the leader's assignor (its memberData, reached by reflection) reads it back;
     * where memberData cannot be reached, user data that changes with the generation. */
    static boolean userDataCarriesGeneration(String name) {
        try {
            ByteBuffer first = userData(name, PROBE_GENERATION);
            if (first == null) {
                return false;
            }
            Integer read = memberDataGeneration(Assignors.create(name),
                    new Subscription(Collections.singletonList(TOPIC), first, owned()));
            if (read != null) {
                return read == PROBE_GENERATION;
            }
            ByteBuffer second = userData(name, PROBE_GENERATION + 1);
            return second != null && !second.equals(first);
        } catch (RuntimeException | LinkageError exc) {
            return false;
        }
    }

    private static ByteBuffer userData(String name, int generation) {
        ConsumerPartitionAssignor assignor = Assignors.create(name);
        assignor.onAssignment(new Assignment(owned()), new ConsumerGroupMetadata(
                CodecOps.GROUP_ID, generation, "m", Optional.empty()));
        return assignor.subscriptionUserData(new HashSet<>(Collections.singletonList(TOPIC)));
    }

    /** The generation in AbstractStickyAssignor.MemberData; null when there is no
     * memberData or no generation field to read. */
    @SuppressWarnings("unchecked")
    private static Integer memberDataGeneration(ConsumerPartitionAssignor assignor,
                                                Subscription subscription) {
        for (Class<?> c = assignor.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Method memberData = c.getDeclaredMethod("memberData", Subscription.class);
                memberData.setAccessible(true);
                Object data = memberData.invoke(assignor, subscription);
                Object generation = data.getClass().getField("generation").get(data);
                return generation instanceof Optional
                        ? ((Optional<Integer>) generation).orElse(-1) : null;
            } catch (NoSuchMethodException exc) {
                // look in the superclass
            } catch (ReflectiveOperationException | RuntimeException exc) {
                return null;
            }
        }
        return null;
    }

    /** Two members on racks r0 and r1, partition 0 only on r1 and 1 only on r0, then the
     * racks swapped: an assignor that matches racks both times is rack-aware. */
    private static List<String> rackAwareAssignors() {
        List<String> out = new ArrayList<>();
        for (String name : Assignors.available()) {
            try {
                if (rackMatched(name, "r0", "r1") && rackMatched(name, "r1", "r0")) {
                    out.add(name);
                }
            } catch (RuntimeException exc) {
                // not rack-aware as far as the probe can tell
            }
        }
        return out;
    }

    private static boolean rackMatched(String name, String rackA, String rackB) {
        Map<String, Object> request = new HashMap<>();
        request.put("partitions", Collections.singletonMap(TOPIC, (Object) 2L));
        request.put("racks", Collections.singletonMap(TOPIC, (Object) Arrays.asList(
                Collections.singletonList("r1"), Collections.singletonList("r0"))));
        Map<String, Subscription> members = new HashMap<>();
        members.put("a", Compat.subscription(Collections.singletonList(TOPIC), null,
                Collections.emptyList(), -1, Optional.of(rackA)));
        members.put("b", Compat.subscription(Collections.singletonList(TOPIC), null,
                Collections.emptyList(), -1, Optional.of(rackB)));
        Map<String, Assignment> result = Assignors.create(name).assign(Clusters.of(request),
                new GroupSubscription(members)).groupAssignment();
        int partitionOnA = "r1".equals(rackA) ? 0 : 1;
        return result.get("a").partitions().equals(Collections.singletonList(
                new TopicPartition(TOPIC, partitionOnA)))
                && result.get("b").partitions().equals(Collections.singletonList(
                new TopicPartition(TOPIC, 1 - partitionOnA)));
    }

    /** SubscriptionState (internal; its constructor and subscribe differ between
     * releases): subscribe, be assigned t-0 and t-1, pause t-0, be assigned t-0 and t-2
     * (a cooperative rebalance that keeps t-0); is t-0 still paused? Null when unreachable. */
    private static Boolean pauseKeptWhenRetained() {
        try {
            Class<?> type = Class.forName(
                    "org.apache.kafka.clients.consumer.internals.SubscriptionState");
            Object state = null;
            for (Constructor<?> c : type.getConstructors()) {
                Class<?>[] params = c.getParameterTypes();
                if (params.length == 2 && params[0] == LogContext.class
                        && params[1].isEnum()) {
                    state = c.newInstance(new LogContext(), params[1].getEnumConstants()[0]);
                }
            }
            if (state == null || !subscribe(type, state)) {
                return null;
            }
            TopicPartition kept = new TopicPartition(TOPIC, 0);
            Method assign = type.getMethod("assignFromSubscribed", Collection.class);
            assign.invoke(state, Arrays.asList(kept, new TopicPartition(TOPIC, 1)));
            type.getMethod("pause", TopicPartition.class).invoke(state, kept);
            assign.invoke(state, Arrays.asList(kept, new TopicPartition(TOPIC, 2)));
            return (Boolean) type.getMethod("isPaused", TopicPartition.class)
                    .invoke(state, kept);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError exc) {
            return null;
        }
    }

    private static boolean subscribe(Class<?> type, Object state)
            throws ReflectiveOperationException {
        ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            }
        };
        Set<String> topics = new HashSet<>(Collections.singletonList(TOPIC));
        for (Method m : type.getMethods()) {
            Class<?>[] params = m.getParameterTypes();
            if (!m.getName().equals("subscribe") || params.length != 2
                    || params[0] != Set.class) {
                continue;
            }
            if (params[1] == ConsumerRebalanceListener.class) {
                m.invoke(state, topics, listener);
                return true;
            }
            if (params[1] == Optional.class) {
                m.invoke(state, topics, Optional.of(listener));
                return true;
            }
        }
        return false;
    }
}
