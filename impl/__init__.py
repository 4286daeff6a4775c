"""The real thing: Kafka's classic consumer-group protocol, standard library only.

Codecs (`consumer_protocol`, `user_data`), the four assignors (`assignors`), and the
JSON-lines service over them (`jsonl`). Nothing here imports outside the standard library.
"""
