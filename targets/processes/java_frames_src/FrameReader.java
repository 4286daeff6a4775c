/*
 * Kafka's own reading of Kafka protocol frames: a second reader for groupcheck's broker.
 *
 * One JSON object per line on stdin: {"direction": "request"|"response", "api_key": n,
 * "api_version": n, "hex": "<the frame without its 4-byte size>"}. One line per frame on
 * stdout: {"header": {...}, "body": {...}} as Kafka's generated message classes read it, or
 * {"error": "..."}.
 *
 * The header version is the one ApiMessageType gives for the API and version (an ApiVersions
 * answer is always header v0, KIP-511); the header is RequestHeaderData or
 * ResponseHeaderData, the body the API's generated *Data class, each read with its
 * generated read(Readable, version). A frame with bytes left after the body is an error.
 *
 * A message is shown by walking its schema for that version (SCHEMAS, the same generated
 * classes): one entry per field the version has, under Kafka's protocol name (snake case),
 * tagged fields included, each value taken from the message's generated accessor. Values:
 * integers and floats as JSON numbers, strings, booleans, null; bytes and records as
 * lowercase hex; a Uuid as the 32 hex digits of its 16 bytes; arrays as lists; structs as
 * objects. Tags the classes do not know are listed under "_unknown_tagged_fields".
 */
package groupcheck.frames;

import groupcheck.driver.Json;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;
import org.apache.kafka.common.record.MemoryRecords;

public final class FrameReader {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    /** Per generated class: its accessors, by field name lowercased without underscores. */
    private static final Map<Class<?>, Map<String, Method>> ACCESSORS = new HashMap<>();

    private FrameReader() {
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        BufferedWriter out = new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            String answer;
            try {
                answer = Json.write(read(Json.parse(line)));
            } catch (RuntimeException e) {
                Map<String, Object> error = new LinkedHashMap<>();
                error.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                answer = Json.write(error);
            }
            out.write(answer);
            out.write('\n');
            out.flush();
        }
    }

    private static Object field(Object request, String name) {
        if (!(request instanceof Map) || !((Map<?, ?>) request).containsKey(name)) {
            throw new IllegalArgumentException("the request has no \"" + name + "\"");
        }
        return ((Map<?, ?>) request).get(name);
    }

    private static short number(Object request, String name) {
        Object value = field(request, name);
        if (!(value instanceof Long) || (Long) value < 0 || (Long) value > Short.MAX_VALUE) {
            throw new IllegalArgumentException("\"" + name + "\" is not a small integer");
        }
        return (short) (long) (Long) value;
    }

    /** One frame, read by Kafka's classes: {"header": ..., "body": ...}. */
    static Map<String, Object> read(Object request) {
        String direction = String.valueOf(field(request, "direction"));
        short key = number(request, "api_key");
        short version = number(request, "api_version");
        ByteBuffer buffer = ByteBuffer.wrap(unhex(String.valueOf(field(request, "hex"))));
        ByteBufferAccessor accessor = new ByteBufferAccessor(buffer);
        ApiMessageType type = ApiMessageType.fromApiKey(key);
        Message header;
        Schema headerSchema;
        ApiMessage body;
        Schema bodySchema;
        if (direction.equals("request")) {
            short headerVersion = type.requestHeaderVersion(version);
            header = new RequestHeaderData(accessor, headerVersion);
            headerSchema = RequestHeaderData.SCHEMAS[headerVersion];
            body = type.newRequest();
            bodySchema = schemaAt(type.requestSchemas(), version, type);
        } else if (direction.equals("response")) {
            short headerVersion = type.responseHeaderVersion(version);
            header = new ResponseHeaderData(accessor, headerVersion);
            headerSchema = ResponseHeaderData.SCHEMAS[headerVersion];
            body = type.newResponse();
            bodySchema = schemaAt(type.responseSchemas(), version, type);
        } else {
            throw new IllegalArgumentException("direction is request or response, not "
                    + direction);
        }
        body.read(accessor, version);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException(buffer.remaining() + " bytes left after the "
                    + type.name + " v" + version + " " + direction + " body");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("header", struct(header, headerSchema));
        out.put("body", struct(body, bodySchema));
        return out;
    }

    private static Schema schemaAt(Schema[] schemas, short version, ApiMessageType type) {
        if (version >= schemas.length || schemas[version] == null) {
            throw new IllegalArgumentException(type.name + " has no version " + version);
        }
        return schemas[version];
    }

    private static Map<String, Object> struct(Message message, Schema schema) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (BoundField bound : schema.fields()) {
            if (bound.def.type instanceof TaggedFields) {
                for (org.apache.kafka.common.protocol.types.Field tagged
                        : ((TaggedFields) bound.def.type).fields().values()) {
                    out.put(tagged.name, show(get(message, tagged.name), tagged.type));
                }
            } else {
                out.put(bound.def.name, show(get(message, bound.def.name), bound.def.type));
            }
        }
        List<Object> unknown = new ArrayList<>();
        for (RawTaggedField raw : message.unknownTaggedFields()) {
            Map<String, Object> tag = new LinkedHashMap<>();
            tag.put("tag", (long) raw.tag());
            tag.put("data", hex(raw.data()));
            unknown.add(tag);
        }
        if (!unknown.isEmpty()) {
            out.put("_unknown_tagged_fields", unknown);
        }
        return out;
    }

    private static Object show(Object value, Type type) {
        if (value == null) {
            return null;
        }
        if (value instanceof Message) {
            if (!(type instanceof Schema)) {
                throw new IllegalStateException("no schema for " + value.getClass().getName());
            }
            return struct((Message) value, (Schema) type);
        }
        if (value instanceof Collection) {
            Type element = type.arrayElementType().orElseThrow(() -> new IllegalStateException(
                    "a list where the schema has " + type));
            List<Object> out = new ArrayList<>();
            for (Object item : (Collection<?>) value) {
                out.add(show(item, element));
            }
            return out;
        }
        return scalar(value);
    }

    private static Object scalar(Object value) {
        if (value instanceof Byte || value instanceof Short || value instanceof Integer
                || value instanceof Long) {
            return ((Number) value).longValue();
        }
        if (value instanceof Boolean || value instanceof String || value instanceof Double) {
            return value;
        }
        if (value instanceof byte[]) {
            return hex((byte[]) value);
        }
        if (value instanceof ByteBuffer) {
            ByteBuffer copy = ((ByteBuffer) value).duplicate();
            byte[] bytes = new byte[copy.remaining()];
            copy.get(bytes);
            return hex(bytes);
        }
        if (value instanceof MemoryRecords) {
            return scalar(((MemoryRecords) value).buffer());
        }
        if (value instanceof Uuid) {
            Uuid id = (Uuid) value;
            return String.format("%016x%016x", id.getMostSignificantBits(),
                    id.getLeastSignificantBits());
        }
        throw new IllegalStateException("no reading for a " + value.getClass().getName());
    }

    private static Object get(Message message, String name) {
        Map<String, Method> accessors = ACCESSORS.computeIfAbsent(message.getClass(),
                FrameReader::accessors);
        Method accessor = accessors.get(name.replace("_", "").toLowerCase());
        if (accessor == null) {
            throw new IllegalStateException(message.getClass().getName()
                    + " has no accessor for " + name);
        }
        try {
            return accessor.invoke(message);
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException("cannot read " + name + ": " + e, e);
        }
    }

    private static Map<String, Method> accessors(Class<?> cls) {
        Map<String, Method> out = new HashMap<>();
        for (Field field : cls.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) || field.getName().startsWith("_")) {
                continue;
            }
            try {
                out.put(field.getName().toLowerCase(), cls.getMethod(field.getName()));
            } catch (NoSuchMethodException e) {
                // bookkeeping of the generated collections (next, prev): not a message field
            }
        }
        return out;
    }

    private static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 15];
            out[2 * i + 1] = HEX[bytes[i] & 15];
        }
        return new String(out);
    }

    private static byte[] unhex(String text) {
        if (text.length() % 2 != 0) {
            throw new IllegalArgumentException("hex of odd length " + text.length());
        }
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int high = Character.digit(text.charAt(2 * i), 16);
            int low = Character.digit(text.charAt(2 * i + 1), 16);
            if (high < 0 || low < 0) {
                throw new IllegalArgumentException("not hex at character " + 2 * i);
            }
            out[i] = (byte) (high * 16 + low);
        }
        return out;
    }
}
