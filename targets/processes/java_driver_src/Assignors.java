/*
 * Kafka's four classic assignors by the names the contract uses; a fresh instance per call,
 * since an assignor keeps the state of the consumer that owns it.
 */
package groupcheck.driver;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;

final class Assignors {
    private Assignors() {
    }

    static ConsumerPartitionAssignor create(String name) {
        switch (name) {
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new BadRequest("unknown assignor '" + name
                        + "'; expected one of range, roundrobin, sticky, cooperative-sticky");
        }
    }

    /** A consumer configured with this one assignor runs the highest protocol it supports
     * (KIP-429). */
    static boolean cooperative(ConsumerPartitionAssignor assignor) {
        return assignor.supportedProtocols().contains(RebalanceProtocol.COOPERATIVE);
    }
}
