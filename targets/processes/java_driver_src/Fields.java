/*
 * Typed access to the fields of one JSON request, and the wire forms of the answers:
 * byte strings as base64 (user data) or lowercase hex (encoded messages), a partition as
 * the pair [topic, partition]. A field of the wrong type is a BadRequest.
 */
package groupcheck.driver;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

final class Fields {
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Fields() {
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object value, String what) {
        if (!(value instanceof Map)) {
            throw new BadRequest(what + " must be a JSON object");
        }
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    static List<Object> array(Object value, String what) {
        if (value == null) {
            return Collections.emptyList();
        }
        if (!(value instanceof List)) {
            throw new BadRequest(what + " must be a list");
        }
        return (List<Object>) value;
    }

    static String string(Map<String, Object> request, String key) {
        Object value = request.get(key);
        if (!(value instanceof String)) {
            throw new BadRequest("'" + key + "' must be a string");
        }
        return (String) value;
    }

    static String optionalString(Map<String, Object> request, String key) {
        Object value = request.get(key);
        if (value != null && !(value instanceof String)) {
            throw new BadRequest("'" + key + "' must be a string or null");
        }
        return (String) value;
    }

    /** A list of strings; a null element is kept (Kafka decides what it means). */
    static List<String> strings(Map<String, Object> request, String key) {
        List<String> out = new ArrayList<>();
        for (Object item : array(request.get(key), "'" + key + "'")) {
            if (item != null && !(item instanceof String)) {
                throw new BadRequest("'" + key + "' must be a list of strings");
            }
            out.add((String) item);
        }
        return out;
    }

    static long integer(Object value, String what) {
        if (!(value instanceof Long)) {
            throw new BadRequest(what + " must be an integer, not " + value);
        }
        return (Long) value;
    }

    static int int32(Object value, String what) {
        long n = integer(value, what);
        if (n < Integer.MIN_VALUE || n > Integer.MAX_VALUE) {
            throw new BadRequest(what + " " + n + " does not fit in an int32");
        }
        return (int) n;
    }

    static short int16(Object value, String what) {
        long n = integer(value, what);
        if (n < Short.MIN_VALUE || n > Short.MAX_VALUE) {
            throw new BadRequest(what + " " + n + " does not fit in an int16");
        }
        return (short) n;
    }

    static Integer optionalInt32(Map<String, Object> request, String key) {
        Object value = request.get(key);
        return value == null ? null : int32(value, "'" + key + "'");
    }

    static short version(Map<String, Object> request, String key, short otherwise) {
        Object value = request.get(key);
        return value == null ? otherwise : int16(value, "'" + key + "'");
    }

    static List<TopicPartition> partitions(Map<String, Object> request, String key) {
        List<TopicPartition> out = new ArrayList<>();
        for (Object item : array(request.get(key), "'" + key + "'")) {
            List<Object> pair = array(item, "each of '" + key + "'");
            if (pair.size() != 2 || !(pair.get(0) instanceof String)) {
                throw new BadRequest("'" + key + "': " + Json.write(item)
                        + " is not a [topic, partition] pair");
            }
            out.add(new TopicPartition((String) pair.get(0),
                    int32(pair.get(1), "'" + key + "' partition")));
        }
        return out;
    }

    static List<Object> pairs(List<TopicPartition> partitions) {
        List<Object> out = new ArrayList<>(partitions.size());
        for (TopicPartition tp : partitions) {
            out.add(Arrays.asList(tp.topic(), (long) tp.partition()));
        }
        return out;
    }

    static ByteBuffer base64(Map<String, Object> request, String key) {
        String text = optionalString(request, key);
        if (text == null) {
            return null;
        }
        try {
            return ByteBuffer.wrap(Base64.getDecoder().decode(text));
        } catch (IllegalArgumentException exc) {
            throw new BadRequest("'" + key + "' is not valid base64: " + exc.getMessage());
        }
    }

    /** The remaining bytes of {@code data} as base64 (its position is left alone). */
    static String base64(ByteBuffer data) {
        return data == null ? null : Base64.getEncoder().encodeToString(bytes(data));
    }

    static byte[] hex(Map<String, Object> request, String key) {
        String text = string(request, key);
        if (text.length() % 2 != 0) {
            throw new BadRequest("'" + key + "' is not valid hex");
        }
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(text.charAt(2 * i), 16);
            int lo = Character.digit(text.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new BadRequest("'" + key + "' is not valid hex");
            }
            out[i] = (byte) (hi * 16 + lo);
        }
        return out;
    }

    static String hex(ByteBuffer data) {
        byte[] raw = bytes(data);
        StringBuilder out = new StringBuilder(raw.length * 2);
        for (byte b : raw) {
            out.append(HEX[(b >> 4) & 15]).append(HEX[b & 15]);
        }
        return out.toString();
    }

    private static byte[] bytes(ByteBuffer data) {
        ByteBuffer view = data.duplicate();
        byte[] raw = new byte[view.remaining()];
        view.get(raw);
        return raw;
    }
}
