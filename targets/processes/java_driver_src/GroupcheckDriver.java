/*
 * groupcheck's driver for Kafka's own Java client: the JSON-lines contract of
 * `groupcheck jsonl` (README, "The JSON-lines contract") answered by Kafka's real
 * ConsumerProtocol and its four classic assignors, plus the driver's own profile op
 * (Profile: what this client release can do, learned from it).
 *
 * One request per line on stdin, one answer per line on stdout, in order, flushed at once,
 * carrying the request's "id" when it has one (the caller keeps many requests in flight);
 * blank lines are skipped; the driver runs until stdin ends. A request of the wrong shape is
 * answered {"error": "InvalidRequestError: ..."}; an exception Kafka raises is answered
 * with error, errorClass and errorMessage (Errors); either way the driver goes on with the
 * next line. A request Kafka never finishes is the caller's to time out: it kills this JVM.
 * Should the caller die instead, the JVM exits when it notices (an assignor that loops
 * forever would otherwise outlive everything that could stop it).
 */
package groupcheck.driver;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

public final class GroupcheckDriver {
    private GroupcheckDriver() {
    }

    public static void main(String[] args) throws IOException {
        exitWithParent();
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        Writer out = new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            out.write(answer(line));
            out.write('\n');
            out.flush();
        }
    }

    /** Halt once this JVM has another parent: the caller exited and the JVM was handed to
     * init (or a subreaper), even while the caller is a zombie nobody has reaped yet. */
    private static void exitWithParent() {
        long parent = parentPid();
        Thread watch = new Thread(() -> {
            while (parentPid() == parent) {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException exc) {
                    return;
                }
            }
            Runtime.getRuntime().halt(3);
        }, "groupcheck-parent-watch");
        watch.setDaemon(true);
        watch.start();
    }

    private static long parentPid() {
        return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
    }

    /** One line in, one line out, with the request's id (error answers too); never
     * throws. */
    static String answer(String line) {
        Map<String, Object> response;
        Object id = null;
        try {
            Map<String, Object> request = Fields.object(Json.parse(line), "a request");
            id = requestId(request);
            response = handle(request);
        } catch (BadRequest | Json.Malformed exc) {
            response = new LinkedHashMap<>();
            response.put("error", "InvalidRequestError: " + exc.getMessage());
        } catch (Throwable exc) {  // Kafka's own exception, or an Error: the driver goes on
            response = new LinkedHashMap<>();
            Errors.describe(exc, "error", response);
        }
        if (id != null) {
            response = new LinkedHashMap<>(response);
            response.put("id", id);
        }
        return Json.write(response);
    }

    /** A request's "id" (a string or an integer), or null when it has none; the caller may
     * keep many requests in flight and match the answers by it. */
    static Object requestId(Map<String, Object> request) {
        if (!request.containsKey("id")) {
            return null;
        }
        Object id = request.get("id");
        if (id instanceof String || id instanceof Long) {
            return id;
        }
        throw new BadRequest("'id' must be a string or an integer, not " + Json.write(id));
    }

    static Map<String, Object> handle(Map<String, Object> request) {
        Object op = request.get("op");
        switch (op instanceof String ? (String) op : "") {
            case "ping":
                Map<String, Object> pong = new LinkedHashMap<>();
                pong.put("pong", Boolean.TRUE);
                return pong;
            case "encode_subscription":
                return CodecOps.encodeSubscription(request);
            case "decode_subscription":
                return CodecOps.decodeSubscription(request);
            case "encode_assignment":
                return CodecOps.encodeAssignment(request);
            case "decode_assignment":
                return CodecOps.decodeAssignment(request);
            case "user_data":
                return CodecOps.userData(request);
            case "assign":
                return AssignOp.assign(request);
            case "profile":
                return new LinkedHashMap<>(Profile.answer());
            default:
                throw new BadRequest("unknown op " + Json.write(op) + "; expected one of ping, "
                        + "encode_subscription, decode_subscription, encode_assignment, "
                        + "decode_assignment, user_data, assign, profile");
        }
    }
}
