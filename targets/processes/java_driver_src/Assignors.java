/*
 * Kafka's four classic assignors by the names the contract uses; a fresh instance per call,
 * since an assignor keeps the state of the consumer that owns it.
 *
 * Each is looked up by class name when first asked for, so the driver compiles and runs
 * against a client that lacks one (then only a request naming it fails, and the profile
 * op leaves it out).
 */
package groupcheck.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;

final class Assignors {
    private static final Map<String, String> CLASSES = new LinkedHashMap<>();

    static {
        CLASSES.put("range", "org.apache.kafka.clients.consumer.RangeAssignor");
        CLASSES.put("roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor");
        CLASSES.put("sticky", "org.apache.kafka.clients.consumer.StickyAssignor");
        CLASSES.put("cooperative-sticky",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
    }

    private Assignors() {
    }

    static ConsumerPartitionAssignor create(String name) {
        String className = CLASSES.get(name);
        if (className == null) {
            throw new BadRequest("unknown assignor '" + name
                    + "'; expected one of range, roundrobin, sticky, cooperative-sticky");
        }
        Class<?> type = type(className);
        if (type == null) {
            throw new BadRequest("Kafka " + Compat.release() + "'s client has no " + name
                    + " assignor (" + className + ")");
        }
        try {
            return (ConsumerPartitionAssignor) type.getConstructor().newInstance();
        } catch (java.lang.reflect.InvocationTargetException exc) {
            Throwable cause = exc.getCause();
            throw cause instanceof RuntimeException ? (RuntimeException) cause
                    : new IllegalStateException(cause);
        } catch (ReflectiveOperationException exc) {
            throw new IllegalStateException(exc);
        }
    }

    private static Class<?> type(String className) {
        try {
            return Class.forName(className);
        } catch (ClassNotFoundException | LinkageError exc) {
            return null;
        }
    }

    /** The contract's names of the assignors this client has, in the contract's order. */
    static List<String> available() {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, String> e : CLASSES.entrySet()) {
            if (type(e.getValue()) != null) {
                out.add(e.getKey());
            }
        }
        return out;
    }

    /** A consumer configured with this one assignor runs the highest protocol it supports
     * (KIP-429). */
    static boolean cooperative(ConsumerPartitionAssignor assignor) {
        return assignor.supportedProtocols().contains(RebalanceProtocol.COOPERATIVE);
    }
}
