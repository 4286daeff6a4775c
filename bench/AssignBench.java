// Times Kafka's own assignors in process, for bench/assign.py (side by side with groupcheck).
//
// Usage: java -cp <kafka-clients.jar:lib/*:classes> AssignBench CASE TOPICS PARTITIONS CONSUMERS
//            WARMUP RUNS
//
// CASE is range, roundrobin, sticky, cooperative-sticky, sticky-unequal or
// cooperative-sticky-unequal (the same inputs as bench/assign.py builds in Python: topics
// "topic-<t>", members "consumer<NNNN>", the last member subscribing to topic-0 only in the
// unequal cases). Each phase (first assignment, then for the sticky family a reassignment
// after consumer0000 left, fed the first answer the way clients send it) is run WARMUP times
// untimed for the JIT, then RUNS times timed; a fresh assignor instance each run, a full GC
// before each (outside the timing). Only ConsumerPartitionAssignor.assign(Cluster,
// GroupSubscription) is timed. Prints one JSON line: the timings in ms per phase and a
// SHA-256 digest of each phase's answer (members in the answer map's order, each with its
// partitions in order), which bench/assign.py compares with groupcheck's.

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
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
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public final class AssignBench {
    private static final int GENERATION = 1;

    private AssignBench() {
    }

    private static ConsumerPartitionAssignor newAssignor(String assignor) {
        switch (assignor) {
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown assignor " + assignor);
        }
    }

    private static Cluster cluster(List<String> topics, int partitions) {
        Node node = new Node(0, "localhost", 9092);
        Node[] replicas = {node};
        List<PartitionInfo> infos = new ArrayList<>(topics.size() * partitions);
        for (String topic : topics) {
            for (int p = 0; p < partitions; p++) {
                infos.add(new PartitionInfo(topic, p, node, replicas, replicas));
            }
        }
        return new Cluster("bench", Collections.singletonList(node), infos,
                Collections.emptySet(), Collections.emptySet());
    }

    private static Map<String, Subscription> firstGroup(List<String> topics, int consumers,
                                                        boolean unequal) {
        Map<String, Subscription> subs = new LinkedHashMap<>();
        for (int i = 0; i < consumers; i++) {
            List<String> mine = unequal && i == consumers - 1
                    ? Collections.singletonList(topics.get(0)) : topics;
            subs.put(String.format("consumer%04d", i), new Subscription(mine));
        }
        return subs;
    }

    /** The group after consumer0000 left, each survivor reporting its partitions. */
    private static Map<String, Subscription> afterOneLeft(String assignor,
                                                          Map<String, Subscription> first,
                                                          GroupAssignment answer) {
        Map<String, Subscription> subs = new LinkedHashMap<>();
        for (Map.Entry<String, Subscription> e : first.entrySet()) {
            String member = e.getKey();
            if (member.equals("consumer0000")) {
                continue;
            }
            List<String> topics = e.getValue().topics();
            List<TopicPartition> owned = answer.groupAssignment().get(member).partitions();
            if (assignor.equals("sticky")) {
                StickyAssignor client = new StickyAssignor();
                client.onAssignment(new Assignment(owned),
                        new ConsumerGroupMetadata("bench", GENERATION, member, Optional.empty()));
                ByteBuffer userData = client.subscriptionUserData(new HashSet<>(topics));
                subs.put(member, new Subscription(topics, userData, Collections.emptyList(),
                        GENERATION, Optional.empty()));
            } else {
                ByteBuffer userData = ByteBuffer.allocate(4).putInt(0, GENERATION);
                subs.put(member, new Subscription(topics, userData, owned, GENERATION,
                        Optional.empty()));
            }
        }
        return subs;
    }

    private static GroupAssignment assignOnce(String assignor, Cluster cluster,
                                              Map<String, Subscription> subs, long[] nanos) {
        ConsumerPartitionAssignor instance = newAssignor(assignor);
        GroupSubscription group = new GroupSubscription(subs);
        for (Subscription s : subs.values()) {
            ByteBuffer data = s.userData();
            if (data != null) {
                data.rewind();
            }
        }
        long gcBefore = gcMillis();
        long started = System.nanoTime();
        GroupAssignment answer = instance.assign(cluster, group);
        nanos[0] = System.nanoTime() - started;
        nanos[1] = gcMillis() - gcBefore;
        return answer;
    }

    /** Milliseconds the JVM's collectors have spent so far (all collectors). */
    private static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, bean.getCollectionTime());
        }
        return total;
    }

    /** Warm-up runs, then timed runs; returns the last answer and fills times (ms). */
    private static GroupAssignment phase(String assignor, Cluster cluster,
                                         Map<String, Subscription> subs, int warmup, int runs,
                                         List<Double> times, List<Double> gcTimes) {
        long[] nanos = new long[2];
        GroupAssignment answer = null;
        for (int i = 0; i < warmup + runs; i++) {
            answer = null;
            System.gc();
            answer = assignOnce(assignor, cluster, subs, nanos);
            if (i >= warmup) {
                times.add(nanos[0] / 1e6);
                gcTimes.add((double) nanos[1]);
            }
        }
        return answer;
    }

    private static String digest(GroupAssignment answer) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        StringBuilder line = new StringBuilder();
        for (Map.Entry<String, Assignment> e : answer.groupAssignment().entrySet()) {
            line.setLength(0);
            line.append(e.getKey()).append('\t');
            boolean first = true;
            for (TopicPartition tp : e.getValue().partitions()) {
                if (!first) {
                    line.append(',');
                }
                first = false;
                line.append(tp.topic()).append('-').append(tp.partition());
            }
            line.append('\n');
            sha.update(line.toString().getBytes(StandardCharsets.UTF_8));
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : sha.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    private static String json(List<Double> times) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < times.size(); i++) {
            out.append(i == 0 ? "" : ", ").append(String.format("%.3f", times.get(i)));
        }
        return out.append(']').toString();
    }

    public static void main(String[] args) throws Exception {
        String name = args[0];
        int nTopics = Integer.parseInt(args[1]);
        int nPartitions = Integer.parseInt(args[2]);
        int consumers = Integer.parseInt(args[3]);
        int warmup = Integer.parseInt(args[4]);
        int runs = Integer.parseInt(args[5]);
        boolean unequal = name.endsWith("-unequal");
        String assignor = unequal ? name.substring(0, name.length() - "-unequal".length()) : name;
        List<String> topics = new ArrayList<>();
        for (int t = 0; t < nTopics; t++) {
            topics.add("topic-" + t);
        }
        Cluster cluster = cluster(topics, nPartitions);
        Map<String, Subscription> subs = firstGroup(topics, consumers, unequal);
        List<Double> firstTimes = new ArrayList<>();
        List<Double> firstGc = new ArrayList<>();
        GroupAssignment first = phase(assignor, cluster, subs, warmup, runs, firstTimes, firstGc);
        StringBuilder out = new StringBuilder("{\"first_ms\": ").append(json(firstTimes))
                .append(", \"first_gc_ms\": ").append(json(firstGc))
                .append(", \"first_digest\": \"").append(digest(first)).append('"');
        if (assignor.contains("sticky")) {
            Map<String, Subscription> again = afterOneLeft(assignor, subs, first);
            first = null;
            List<Double> times = new ArrayList<>();
            List<Double> gcTimes = new ArrayList<>();
            GroupAssignment second = phase(assignor, cluster, again, warmup, runs, times, gcTimes);
            out.append(", \"reassign_ms\": ").append(json(times))
                    .append(", \"reassign_gc_ms\": ").append(json(gcTimes))
                    .append(", \"reassign_digest\": \"").append(digest(second)).append('"');
        }
        System.out.println(out.append('}'));
    }
}
