/*
 * A request the driver cannot answer because of its own shape (a missing field, a wrong
 * type, an unknown op or assignor): answered as groupcheck's InvalidRequestError, never
 * confused with an exception Kafka raised.
 */
package groupcheck.driver;

final class BadRequest extends RuntimeException {
    private static final long serialVersionUID = 1L;

    BadRequest(String message) {
        super(message);
    }
}
