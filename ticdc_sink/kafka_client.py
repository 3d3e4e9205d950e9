"""What every librdkafka client of the sink shares: where its log lines go, how its
errors read and which of them are worth asking again, and how one is closed.

The producer (`producer`), its topic admin (`kafka_topics`), the settings check on the
driver (`kafka_settings`) and the reader's consumer (`read.consumer`) build on it. It knows
nothing of protocols, Spark, rows or the sink's options.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol, runtime_checkable

from confluent_kafka import KafkaError, KafkaException

__all__ = [
    "LIBRDKAFKA_LOG",
    "Closable",
    "LibrdkafkaLog",
    "close_client",
    "describe",
    "is_transient",
    "remaining",
]


class LibrdkafkaLog:
    """librdkafka's log lines through Python logging (confluent-kafka's `logger`
    setting), on the logger `ticdc_sink.librdkafka`, instead of librdkafka's own lines on
    stderr (an unreachable broker printed 118 `%3|...|FAIL|` lines before the task failed).

    Levels: what librdkafka logs as an error or a warning it retries on its own (a refused
    connection, a broker going away: once a second per broker during an outage), and the
    sink reports what stays wrong as one DeliveryError, so those lines are INFO; its
    configuration warnings (CONFWARN, e.g. a consumer setting given to the producer) stay
    WARNING; the rest is DEBUG. Served from `poll`/`flush` on the calling thread.
    """

    def __init__(self) -> None:
        self.logger = logging.getLogger("ticdc_sink.librdkafka")

    def log(self, level: int, fmt: str, *args: Any) -> None:
        if level >= logging.WARNING:
            level = logging.WARNING if args and args[0] == "CONFWARN" else logging.INFO
        else:
            level = logging.DEBUG
        self.logger.log(level, fmt, *args)


#: The one librdkafka log adapter every client (producers, admin, the reader's consumer)
#: is given as its `logger` setting.
LIBRDKAFKA_LOG = LibrdkafkaLog()


@runtime_checkable
class Closable(Protocol):
    """A librdkafka client that can be closed: `confluent_kafka.Producer` from
    confluent-kafka 2.13 on (the package allows older releases, which close a client
    when it is collected)."""

    def close(self) -> object: ...


def close_client(client: object) -> None:
    """Close a librdkafka client where its confluent-kafka release can (`Closable`)."""
    if isinstance(client, Closable):
        client.close()


# Errors that say "not now" rather than "no": the connection dropped or timed out, or the
# broker is not ready (a new topic without a leader yet, a controller moving). Metadata
# reads and topic creation are retried on these until broker-timeout-ms runs out.
_TRANSIENT = frozenset(
    {
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._TIMED_OUT,
        KafkaError._DESTROY_BROKER,  # the connection was torn down mid-request
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_CONTROLLER,
    }
)


def is_transient(error: KafkaError | KafkaException) -> bool:
    """Whether asking the brokers again may succeed (`_TRANSIENT`, or librdkafka says
    the error is retriable)."""
    if isinstance(error, KafkaException):
        if not (error.args and isinstance(error.args[0], KafkaError)):
            return False
        error = error.args[0]
    return error.code() in _TRANSIENT or bool(error.retriable())


def describe(error: KafkaError | KafkaException) -> str:
    """The broker's words for an error and its code name, e.g. "Broker: Unknown topic or
    partition (UNKNOWN_TOPIC_OR_PART)"."""
    if isinstance(error, KafkaException):
        if not (error.args and isinstance(error.args[0], KafkaError)):
            return str(error)
        error = error.args[0]
    return f"{error.str()} ({error.name()})"


def remaining(deadline: float) -> float:
    """Seconds left until `deadline` (time.monotonic), at least 1 ms: librdkafka takes 0
    as "do not wait" and a negative timeout as "wait forever"."""
    return max(deadline - time.monotonic(), 0.001)
