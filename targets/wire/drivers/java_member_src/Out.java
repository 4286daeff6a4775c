import groupcheck.driver.Json;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Acks and events on stdout, one JSON line each, one writer at a time. Every event carries
 * the member, a per-driver sequence number and System.nanoTime() (CLOCK_MONOTONIC on Linux).
 */
final class Out {
    private final PrintStream stream;
    private long seq;

    Out(PrintStream stream) {
        this.stream = new PrintStream(stream, false, StandardCharsets.UTF_8);
    }

    synchronized void event(String name, String member, Map<String, Object> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("event", name);
        line.put("member", member);
        line.put("seq", seq++);
        line.put("ts", System.nanoTime());
        line.putAll(fields);
        emit(line);
    }

    synchronized void ack(Object id, String error, Map<String, Object> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("ack", id);
        line.putAll(fields);
        if (error != null) {
            line.put("error", error);
        }
        emit(line);
    }

    private void emit(Map<String, Object> line) {
        stream.print(Json.write(line));
        stream.print('\n');
        stream.flush();
    }

    /** An exception as one line: its class and message. */
    static String describe(Throwable e) {
        String message = String.valueOf(e.getMessage()).replace('\n', ' ');
        return e.getClass().getSimpleName() + ": " + message;
    }
}
