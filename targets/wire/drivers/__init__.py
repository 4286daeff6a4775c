"""Member drivers shipped with groupcheck (the member-driver contract:
``docs/reference/member-driver-contract.md``).

Each driver is a child process that hosts consumers of one client library and speaks the
member-driver contract in JSON lines. The Python ones (`librdkafka_member`,
`kafka_python_member`, `aiokafka_member`, all built on `host`) run as ``python -m``;
`java_member` starts Kafka's ``KafkaConsumer`` (Java sources in ``java_member_src/``,
compiled on first use) and `kafkajs_member` KafkaJS on Node (``kafkajs_member_src/``, its
npm lockfile installed on first use). Each runs a client's release too (``kafka-python@2.0.2``):
the Python drivers on that release's own virtualenv, with only their own modules on its path,
so they import nothing but the standard library, `host` and ``client_assignors`` (Python 3.9+);
the KafkaJS driver on the release's ``node_modules`` (``wire/release_envs``).
"""
