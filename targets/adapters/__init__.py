"""Assignor adapters: ``builtin:`` (groupcheck's own coordinator and consumers), ``python:``
(a user's assignor), ``kafka-python:`` and ``aiokafka:`` (those libraries' assignors called as
their consumers call them), the codec targets, and the legacy clients a mixed group holds."""
