"""librdkafka's built-in mock cluster, reached through ctypes in the bundled shared library.

confluent-kafka has no Python API for the mock cluster, so this module loads the very
librdkafka its wheel ships (``confluent_kafka.libs/librdkafka-*.so*``) and calls the C mock
API: ``rd_kafka_mock_cluster_new`` on a host producer handle, ``…_bootstraps``,
``…_topic_create`` (any partition count; auto-created topics would get 4),
``…_group_initial_rebalance_delay_ms`` (0: the first join starts at once) and
``…_push_request_errors_array`` (the next requests of one API get these errors).
"""

from __future__ import annotations

import ctypes
import glob
import os
from types import TracebackType

__all__ = ["API_KEYS", "ERROR_CODES", "MockCluster", "MockUnavailable", "library_path"]

#: Kafka API keys and error codes the harness injects
API_KEYS = {"join": 11, "heartbeat": 12, "sync": 14}
ERROR_CODES = {"ILLEGAL_GENERATION": 22, "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27}
_PRODUCER = 0
_ERRSTR = 512


class MockUnavailable(RuntimeError):
    """confluent-kafka (with its bundled librdkafka) is not installed."""


def library_path() -> str:
    try:
        import confluent_kafka
    except ImportError:
        raise MockUnavailable("librdkafka: confluent-kafka is not installed "
                              "(pip install groupcheck[peers])") from None
    site = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
    found = sorted(glob.glob(os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*")))
    if not found:
        raise MockUnavailable("librdkafka: no bundled librdkafka next to confluent_kafka")
    return found[0]


def _load() -> ctypes.CDLL:
    lib = ctypes.CDLL(library_path())
    vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    signatures = {
        "rd_kafka_conf_new": ([], vp),
        "rd_kafka_conf_set": ([vp, cp, cp, cp, ctypes.c_size_t], ci),
        "rd_kafka_new": ([ci, vp, cp, ctypes.c_size_t], vp),
        "rd_kafka_destroy": ([vp], None),
        "rd_kafka_mock_cluster_new": ([vp, ci], vp),
        "rd_kafka_mock_cluster_destroy": ([vp], None),
        "rd_kafka_mock_cluster_bootstraps": ([vp], cp),
        "rd_kafka_mock_topic_create": ([vp, cp, ci, ci], ci),
        "rd_kafka_mock_group_initial_rebalance_delay_ms": ([vp, ci], None),
        "rd_kafka_mock_broker_set_host_port": ([vp, ctypes.c_int32, cp, ci], ci),
        "rd_kafka_mock_topic_delete": ([vp, cp], ci),
        "rd_kafka_mock_push_request_errors_array": (
            [vp, ctypes.c_int16, ctypes.c_size_t, ctypes.POINTER(ci)], None),
    }
    for name, (args, result) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, result
    return lib


class MockCluster:
    """One fresh mock cluster (``brokers`` brokers on loopback); close it with `close`."""

    def __init__(self, brokers: int = 1) -> None:
        self._lib = _load()
        err = ctypes.create_string_buffer(_ERRSTR)
        conf = self._lib.rd_kafka_conf_new()
        self._lib.rd_kafka_conf_set(conf, b"log_level", b"3", err, _ERRSTR)
        self._rk = self._lib.rd_kafka_new(_PRODUCER, conf, err, _ERRSTR)
        if not self._rk:
            raise MockUnavailable(f"librdkafka: host client failed: {err.value.decode()}")
        self._mc = self._lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._mc:
            self._lib.rd_kafka_destroy(self._rk)
            raise MockUnavailable("librdkafka: rd_kafka_mock_cluster_new failed")
        self._lib.rd_kafka_mock_group_initial_rebalance_delay_ms(self._mc, 0)
        self.bootstraps: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._mc).decode()
        self.topics: dict[str, int] = {}

    def create_topic(self, topic: str, partitions: int) -> None:
        if topic in self.topics:
            raise ValueError(f"librdkafka: the mock cluster cannot change topic {topic}"
                             f" ({self.topics[topic]} → {partitions} partitions)")
        code = self._lib.rd_kafka_mock_topic_create(self._mc, topic.encode(), partitions, 1)
        if code != 0:
            raise RuntimeError(f"librdkafka: creating {topic} failed with error {code}")
        self.topics[topic] = partitions

    def advertise(self, host: str, port: int, broker: int = 1) -> None:
        """Metadata names ``host:port`` for ``broker`` (a proxy in front of it)."""
        code = self._lib.rd_kafka_mock_broker_set_host_port(self._mc, broker, host.encode(),
                                                            port)
        if code != 0:
            raise RuntimeError(f"librdkafka: advertising {host}:{port} failed ({code})")

    def delete_topic(self, topic: str) -> None:
        code = self._lib.rd_kafka_mock_topic_delete(self._mc, topic.encode())
        if code != 0:
            raise RuntimeError(f"librdkafka: deleting {topic} failed with error {code}")
        self.topics.pop(topic, None)

    def push_errors(self, api: str, errors: list[str]) -> None:
        """The next ``len(errors)`` requests of ``api`` (any member's) fail with these."""
        codes = (ctypes.c_int * len(errors))(*(ERROR_CODES[e] for e in errors))
        self._lib.rd_kafka_mock_push_request_errors_array(self._mc, API_KEYS[api],
                                                          len(errors), codes)

    def push_delay(self, api: str, rtt_ms: int, broker: int = 1) -> None:
        """The broker's next request of ``api`` (any member's) is answered ``rtt_ms`` late
        (no error: librdkafka's request error stack with a round-trip time)."""
        push = self._lib.rd_kafka_mock_broker_push_request_error_rtts  # variadic: (err, rtt)*
        push.restype = ctypes.c_int
        code = push(ctypes.c_void_p(self._mc), ctypes.c_int32(broker),
                    ctypes.c_int16(API_KEYS[api]), ctypes.c_size_t(1), ctypes.c_int(0),
                    ctypes.c_int(rtt_ms))
        if code != 0:
            raise RuntimeError(f"librdkafka: delaying {api} failed with error {code}")

    def close(self) -> None:
        if self._mc:
            self._lib.rd_kafka_mock_cluster_destroy(self._mc)
            self._mc = None
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
