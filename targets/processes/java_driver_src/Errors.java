/*
 * An exception as the contract reports it: "<Class>: <message>", each cause appended as
 * " [caused by <Class>: <message>]", beside the exception's full class name and its own
 * message, under one prefix ("error" for the request or the leader's view, "dataError"
 * for a decoder's raw-message view).
 */
package groupcheck.driver;

import java.util.IdentityHashMap;
import java.util.Map;

final class Errors {
    private Errors() {
    }

    static void describe(Throwable exc, String prefix, Map<String, Object> out) {
        out.put(prefix, text(exc));
        out.put(prefix + "Class", exc.getClass().getName());
        out.put(prefix + "Message", exc.getMessage());
    }

    static String text(Throwable exc) {
        StringBuilder out = new StringBuilder(label(exc));
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        seen.put(exc, true);
        for (Throwable cause = exc.getCause(); cause != null && !seen.containsKey(cause);
                cause = cause.getCause()) {
            seen.put(cause, true);
            out.append(" [caused by ").append(label(cause)).append(']');
        }
        return out.toString();
    }

    private static String label(Throwable exc) {
        String name = exc.getClass().getSimpleName();
        if (name.isEmpty()) {
            name = exc.getClass().getName();
        }
        return name + ": " + exc.getMessage();
    }
}
