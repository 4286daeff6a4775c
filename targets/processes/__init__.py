"""Targets answered by another process over the JSON-lines contract: ``jsonl:<command>``
(any program) and ``java:[CLASSPATH]`` (Kafka's own client through groupcheck's driver,
whose Java sources live in ``java_driver_src/``)."""
