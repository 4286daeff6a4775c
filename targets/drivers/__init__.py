"""Member drivers that ship with groupcheck (README, "Driving your own client").

Each driver is a child process that hosts consumers of one client library and speaks the
member-driver contract in JSON lines; the modules here say how to start them: `java_driver`
(Kafka's ``KafkaConsumer``, Java source in ``java/``) and `kafkajs_driver` (KafkaJS on Node,
``kafkajs/``).
"""
