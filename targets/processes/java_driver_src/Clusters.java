/*
 * The leader's cluster metadata from a request: "partitions" {topic: count} and optional
 * "racks" {topic: [[rack, ...] per partition]}, the racks of each partition's replicas with
 * the leader's first. Each rack is one broker; a partition with no rack list (an empty one,
 * or past the end of its topic's list) has no replicas and no leader, so the rack-aware
 * paths see no rack for it. A topic of count 0 has no partitions, as if it had no metadata.
 */
package groupcheck.driver;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;

final class Clusters {
    private Clusters() {
    }

    static Cluster of(Map<String, Object> request) {
        Map<String, Object> partitions = request.get("partitions") == null
                ? Collections.emptyMap()
                : Fields.object(request.get("partitions"), "'partitions'");
        Map<String, Object> racks = request.get("racks") == null
                ? Collections.emptyMap()
                : Fields.object(request.get("racks"), "'racks'");
        Map<String, Node> brokers = new LinkedHashMap<>();
        List<PartitionInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Object> e : partitions.entrySet()) {
            String topic = e.getKey();
            int count = Fields.int32(e.getValue(), "partition count of '" + topic + "'");
            if (count < 0) {
                throw new BadRequest("partition count of '" + topic + "' must be >= 0");
            }
            List<Object> perPartition = Fields.array(racks.get(topic),
                    "racks of '" + topic + "'");
            for (int p = 0; p < count; p++) {
                Node[] replicas = p < perPartition.size()
                        ? replicas(perPartition.get(p), topic, brokers) : new Node[0];
                Node leader = replicas.length > 0 ? replicas[0] : null;
                infos.add(new PartitionInfo(topic, p, leader, replicas, replicas));
            }
        }
        return new Cluster("groupcheck", brokers.values(), infos, Collections.emptySet(),
                Collections.emptySet());
    }

    private static Node[] replicas(Object racks, String topic, Map<String, Node> brokers) {
        List<Object> names = Fields.array(racks, "racks of a partition of '" + topic + "'");
        Node[] out = new Node[names.size()];
        for (int i = 0; i < out.length; i++) {
            Object name = names.get(i);
            if (!(name instanceof String)) {
                throw new BadRequest("racks of '" + topic + "' must be lists of rack names");
            }
            out[i] = brokers.computeIfAbsent((String) name,
                    rack -> new Node(brokers.size(), "broker-" + brokers.size(), 9092, rack));
        }
        return out;
    }
}
