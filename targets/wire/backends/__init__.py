"""The clusters a wire group runs on, behind `backend.Backend`: groupcheck's own broker
(`groupcheck_broker`, the default) and librdkafka's mock cluster (`mock`, behind the
recording proxy `mock_proxy`, reached through the ctypes binding `mock_binding`).
`factory.make_backend` makes one by name."""
