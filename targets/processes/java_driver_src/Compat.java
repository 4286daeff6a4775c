/*
 * The parts of Kafka's client API that differ between releases, reached by reflection.
 *
 * Kafka 2.8 to 3.3 build a Subscription from topics, user data and owned partitions only;
 * 3.4 adds the generation (KIP-792) and the rack (KIP-881), both in the Subscription and in
 * the generated ConsumerProtocolSubscription message, and 4.0 a ConsumerProtocol method that
 * decodes the raw message. Each is looked up once, never inferred from a version string.
 * Two ways to build a Subscription: subscription() carries every field it is given and
 * refuses one the client cannot carry with an UnsupportedOperationException naming the
 * feature and the release (raw mode, the codec ops); memberSubscription() drops such a
 * field and says so, as that release's own consumer would never have sent it (client
 * mode). An absent field reads as Kafka's default. Without the raw-message decoder the
 * generated message is read as that decoder reads it.
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
import org.apache.kafka.common.utils.AppInfoParser;

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
    /** Subscription carries a generation (KIP-792): its constructor takes one and it reads
     * one back. */
    static final boolean SUBSCRIPTION_GENERATION = GENERATION != null
            && (SUBSCRIPTION_WITH_RACK != null || SUBSCRIPTION_WITH_GENERATION != null);
    /** Subscription carries the member's rack (KIP-881). */
    static final boolean SUBSCRIPTION_RACK = RACK != null && SUBSCRIPTION_WITH_RACK != null;

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

    /** The release this client reports (AppInfoParser), for messages. */
    static String release() {
        return AppInfoParser.getVersion();
    }

    /** A Subscription with every field given; generation -1 means none. A field this
     * client cannot carry is refused. */
    static Subscription subscription(List<String> topics, ByteBuffer userData,
                                     List<TopicPartition> owned, int generation,
                                     Optional<String> rack) {
        if (rack.isPresent() && !SUBSCRIPTION_RACK) {
            throw missing("consumer rack in Subscription (KIP-881)");
        }
        if (generation >= 0 && !SUBSCRIPTION_GENERATION) {
            throw missing("generation in Subscription (KIP-792)");
        }
        return build(topics, userData, owned, generation, rack);
    }

    /** The Subscription this release's own consumer sends: a generation or a rack it
     * cannot carry is left out, and its name ("generation", "rack") added to dropped. */
    static Subscription memberSubscription(List<String> topics, ByteBuffer userData,
                                           List<TopicPartition> owned, int generation,
                                           Optional<String> rack, List<String> dropped) {
        if (generation >= 0 && !SUBSCRIPTION_GENERATION) {
            dropped.add("generation");
            generation = -1;
        }
        if (rack.isPresent() && !SUBSCRIPTION_RACK) {
            dropped.add("rack");
            rack = Optional.empty();
        }
        return build(topics, userData, owned, generation, rack);
    }

    private static Subscription build(List<String> topics, ByteBuffer userData,
                                      List<TopicPartition> owned, int generation,
                                      Optional<String> rack) {
        try {
            if (SUBSCRIPTION_WITH_RACK != null) {
                return (Subscription) SUBSCRIPTION_WITH_RACK.newInstance(topics, userData, owned,
                        generation, rack);
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
        return new Subscription(topics, userData, owned);
    }

    private static UnsupportedOperationException missing(String what) {
        return new UnsupportedOperationException("Kafka " + release() + "'s client has no "
                + what);
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
