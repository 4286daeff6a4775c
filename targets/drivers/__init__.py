"""Member drivers shipped with groupcheck (README, "Driving your own client").

Each driver is a child process that hosts consumers of one client library and speaks the
member-driver contract in JSON lines. The Python ones (`librdkafka`, `kafka_python`,
`aiokafka`) run as ``python -m``; `java_driver` starts Kafka's ``KafkaConsumer`` (Java source
in ``java/``, compiled on first use) and `kafkajs_driver` KafkaJS on Node (``kafkajs/``, its
npm lockfile installed on first use).
"""
