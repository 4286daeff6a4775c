/*
 * The parts of Kafka's client API that differ between 3.x and 4.x, reached by reflection.
 *
 * Kafka 3.0 to 3.3 build a Subscription from topics, user data and owned partitions only;
 * later releases add the generation (KIP-792) and the rack (KIP-881), both in the
 * Subscription and in the generated ConsumerProtocolSubscription message, and a
 * ConsumerProtocol method that decodes the raw message. Each is looked up once; where a
 * client lacks it, a value it cannot carry is refused with an UnsupportedOperationException
 * that names what is missing, and an absent field reads as Kafka's default. Without the
 * raw-message decoder the generated message is read as that decoder reads it.
 */
package groupcheck.driver;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ConsumerProtocolAssignment;
import org.apache.kafka.common.message.ConsumerProtocolSubscription;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.types.SchemaException;

final class Compat {
    private static final Constructor<?> SUBSCRIPTION_WITH_RACK = constructor(Subscription.class,
            List.class, ByteBuffer.class, List.class, int.class, Optional.class);
    private static final Constructor<?> SUBSCRIPTION_WITH_GENERATION = constructor(
            Subscription.class, List.class, ByteBuffer.class, List.class, int.class);
    private static final Method GENERATION = method(Subscription.class, "generationId");
    private static final Method RACK = method(Subscription.class, "rackId");
    private static final Method DATA_GENERATION = method(ConsumerProtocolSubscription.class,
            "generationId");
    private static final Method DATA_RACK = method(ConsumerProtocolSubscription.class, "rackId");
    private static final Method DECODE_SUBSCRIPTION_DATA = method(ConsumerProtocol.class,
            "deserializeConsumerProtocolSubscription", ByteBuffer.class);
    private static final Method DECODE_ASSIGNMENT_DATA = method(ConsumerProtocol.class,
            "deserializeConsumerProtocolAssignment", ByteBuffer.class);
    /** Take the older clients' path for the raw-message views even where the decoder
     * exists (system property groupcheck.driver.fallback: the tests compare both paths). */
    private static final boolean FALLBACK = Boolean.getBoolean("groupcheck.driver.fallback");

    private Compat() {
    }

    private static Constructor<?> constructor(Class<?> owner, Class<?>... types) {
        try {
            return owner.getConstructor(types);
        } catch (NoSuchMethodException exc) {
            return null;
        }
    }

    private static Method method(Class<?> owner, String name, Class<?>... types) {
        try {
            return owner.getMethod(name, types);
        } catch (NoSuchMethodException exc) {
            return null;
        }
    }

    /** Kafka's own exception from a reflective call, not the reflection wrapper. */
    private static Object call(Method method, Object self, Object... args) {
        try {
            return method.invoke(self, args);
        } catch (InvocationTargetException exc) {
            throw rethrow(exc.getCause());
        } catch (IllegalAccessException exc) {
            throw new IllegalStateException(exc);
        }
    }

    private static RuntimeException rethrow(Throwable cause) {
        if (cause instanceof RuntimeException) {
            throw (RuntimeException) cause;
        }
        if (cause instanceof Error) {
            throw (Error) cause;
        }
        throw new IllegalStateException(cause);
    }

    /** A Subscription with every field this client can carry; generation -1 means none. */
    static Subscription subscription(List<String> topics, ByteBuffer userData,
                                     List<TopicPartition> owned, int generation,
                                     Optional<String> rack) {
        try {
            if (SUBSCRIPTION_WITH_RACK != null) {
                return (Subscription) SUBSCRIPTION_WITH_RACK.newInstance(topics, userData, owned,
                        generation, rack);
            }
            if (rack.isPresent()) {
                throw missing("a consumer rack in Subscription (KIP-881)");
            }
            if (SUBSCRIPTION_WITH_GENERATION != null) {
                return (Subscription) SUBSCRIPTION_WITH_GENERATION.newInstance(topics, userData,
                        owned, generation);
            }
        } catch (InvocationTargetException exc) {
            throw rethrow(exc.getCause());
        } catch (ReflectiveOperationException exc) {
            throw new IllegalStateException(exc);
        }
        if (generation >= 0) {
            throw missing("a generation in Subscription (KIP-792)");
        }
        return new Subscription(topics, userData, owned);
    }

    private static UnsupportedOperationException missing(String what) {
        return new UnsupportedOperationException("this Kafka client has no " + what);
    }

    /** The generation the leader reads (null: none), as Kafka's Subscription reports it. */
    @SuppressWarnings("unchecked")
    static Integer generation(Subscription subscription) {
        if (GENERATION == null) {
            return null;
        }
        return ((Optional<Integer>) call(GENERATION, subscription)).orElse(null);
    }

    @SuppressWarnings("unchecked")
    static String rack(Subscription subscription) {
        if (RACK == null) {
            return null;
        }
        return ((Optional<String>) call(RACK, subscription)).orElse(null);
    }

    static int generation(ConsumerProtocolSubscription data) {
        return DATA_GENERATION == null ? -1 : (Integer) call(DATA_GENERATION, data);
    }

    static String rack(ConsumerProtocolSubscription data) {
        return DATA_RACK == null ? null : (String) call(DATA_RACK, data);
    }

    /** The raw subscription message: Kafka's decoder where it has one, else the generated
     * message read the way that decoder reads it. */
    static ConsumerProtocolSubscription subscriptionData(ByteBuffer buffer) {
        if (DECODE_SUBSCRIPTION_DATA != null && !FALLBACK) {
            return (ConsumerProtocolSubscription) call(DECODE_SUBSCRIPTION_DATA, null, buffer);
        }
        return readMessage(buffer, "subscription",
                new ConsumerProtocolSubscription().highestSupportedVersion(),
                ConsumerProtocolSubscription::new);
    }

    static ConsumerProtocolAssignment assignmentData(ByteBuffer buffer) {
        if (DECODE_ASSIGNMENT_DATA != null && !FALLBACK) {
            return (ConsumerProtocolAssignment) call(DECODE_ASSIGNMENT_DATA, null, buffer);
        }
        return readMessage(buffer, "assignment",
                new ConsumerProtocolAssignment().highestSupportedVersion(),
                ConsumerProtocolAssignment::new);
    }

    private interface MessageReader<T> {
        T read(Readable in, short version);
    }

    /** The header, then the body at that version capped at the highest one this client
     * knows; a negative header and a short body fail as Kafka's decoder fails. */
    private static <T> T readMessage(ByteBuffer buffer, String what, short highest,
                                     MessageReader<T> reader) {
        short version = ConsumerProtocol.deserializeVersion(buffer);
        if (version < 0) {
            throw new SchemaException("Unsupported " + what + " version: " + version);
        }
        try {
            return reader.read(new ByteBufferAccessor(buffer), (short) Math.min(version, highest));
        } catch (BufferUnderflowException exc) {
            throw new SchemaException(
                    "Buffer underflow while parsing consumer protocol's " + what, exc);
        }
    }
}
