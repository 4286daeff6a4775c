/*
 * A minimal JSON reader and writer for the driver's JSON-lines contract.
 *
 * Objects read as LinkedHashMap (key order kept: the order of "members" is the order in
 * which the leader received them), arrays as ArrayList, integers as Long, other numbers as
 * Double, true/false as Boolean, null as null. The writer emits ASCII only: every other
 * character is a \\uXXXX escape, so any Java string (lone surrogates included) survives the
 * trip to Python unchanged. Malformed input is a `Json.Malformed` naming the character
 * offset. Both drivers use this one class: the java: target's (this package) and the wire
 * layer's member driver (`targets/drivers/java`, which imports it).
 */
package groupcheck.driver;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Json {
    /** Input that is not one JSON value; the message names the offset. */
    public static final class Malformed extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** One JSON value, the whole of {@code text} (surrounding blanks allowed). */
    public static Object parse(String text) {
        Json reader = new Json(text);
        reader.blanks();
        Object value = reader.value(0);
        reader.blanks();
        if (reader.pos != text.length()) {
            throw reader.fail("trailing characters after the JSON value");
        }
        return value;
    }

    private Malformed fail(String why) {
        return new Malformed("line is not JSON: " + why + " at character " + pos);
    }

    private void blanks() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private Object value(int depth) {
        if (depth > 512) {
            throw fail("nesting deeper than 512");
        }
        if (pos >= text.length()) {
            throw fail("unexpected end");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number();
                }
                throw fail("unexpected character '" + c + "'");
        }
    }

    private Object literal(String word, Object result) {
        if (!text.startsWith(word, pos)) {
            throw fail("expected " + word);
        }
        pos += word.length();
        return result;
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        pos++;
        blanks();
        if (peek('}')) {
            pos++;
            return out;
        }
        while (true) {
            blanks();
            if (!peek('"')) {
                throw fail("expected a string key");
            }
            String key = string();
            blanks();
            expect(':');
            blanks();
            out.put(key, value(depth + 1));
            blanks();
            if (peek(',')) {
                pos++;
                continue;
            }
            expect('}');
            return out;
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        pos++;
        blanks();
        if (peek(']')) {
            pos++;
            return out;
        }
        while (true) {
            blanks();
            out.add(value(depth + 1));
            blanks();
            if (peek(',')) {
                pos++;
                continue;
            }
            expect(']');
            return out;
        }
    }

    private boolean peek(char c) {
        return pos < text.length() && text.charAt(pos) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw fail("expected '" + c + "'");
        }
        pos++;
    }

    private String string() {
        pos++;
        StringBuilder out = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw fail("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw fail("control character in a string");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw fail("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': out.append(hexChar()); break;
                default: throw fail("bad escape \\" + e);
            }
        }
    }

    private char hexChar() {
        if (pos + 4 > text.length()) {
            throw fail("short \\u escape");
        }
        int code = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(pos++), 16);
            if (digit < 0) {
                throw fail("bad \\u escape");
            }
            code = code * 16 + digit;
        }
        return (char) code;
    }

    private Object number() {
        int start = pos;
        if (peek('-')) {
            pos++;
        }
        boolean integral = true;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c >= '0' && c <= '9') {
                pos++;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                integral = false;
                pos++;
            } else {
                break;
            }
        }
        String digits = text.substring(start, pos);
        try {
            if (integral) {
                return Long.parseLong(digits);
            }
            return Double.parseDouble(digits);
        } catch (NumberFormatException exc) {
            if (integral) {  // an integer too large for a long: keep it as a number
                try {
                    return Double.parseDouble(digits);
                } catch (NumberFormatException ignored) {
                    // reported below
                }
            }
            throw fail("bad number " + digits);
        }
    }

    /** {@code value} as one line of ASCII JSON. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer
                || value instanceof Short) {
            out.append(value);
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(e.getKey(), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            boolean first = true;
            for (Object item : (Iterable<Object>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(item, out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass().getName());
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                out.append(c);
            } else {
                out.append("\\u").append(HEX[(c >> 12) & 15]).append(HEX[(c >> 8) & 15])
                        .append(HEX[(c >> 4) & 15]).append(HEX[c & 15]);
            }
        }
        out.append('"');
    }
}
