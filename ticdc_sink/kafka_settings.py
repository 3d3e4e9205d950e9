"""The librdkafka settings of the sink's clients, and checking them on the driver.

`producer_settings` is what a task's producer is made with: the sink's defaults under the
user's `kafka.*` settings; `admin_settings` derives the admin client's (topic creation and
configs) from them. `check_client_config` has librdkafka check the `kafka.*` settings
without connecting (the driver, `ticdc-sink check`), so a refused setting fails before any
task with the option named. It knows nothing of protocols, Spark or rows.
"""

from __future__ import annotations

import difflib
import functools
import logging
from collections.abc import Mapping
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaException

from ticdc_sink.config import KafkaConfig
from ticdc_sink.errors import ConfigError
from ticdc_sink.kafka_client import LIBRDKAFKA_LOG, close_client, describe
from ticdc_sink.redaction import is_secret

__all__ = [
    "PRODUCER_DEFAULTS",
    "admin_settings",
    "check_client_config",
    "message_timeout_ms",
    "producer_settings",
    "warn_client_setting",
]

logger = logging.getLogger(__name__)

# Defaults the producer applies under the user's settings (`kafka.*` options win).
# - allow.auto.create.topics: librdkafka's producer default (true) lets a metadata request
#   create a missing topic with the broker's default partition count; the sink creates
#   topics itself with partition-num, as TiCDC does (it never relies on broker auto-create).
# - queue.buffering.max.kbytes: librdkafka's default is 1 GiB per producer; a Spark executor
#   runs several tasks, so bound each queue at 64 MiB (Spark's Kafka sink: 32 MiB
#   buffer.memory). Throughput does not need more: batches are at most 1 MiB.
# - delivery.report.only.error: a delivery report per acknowledged message costs a Python
#   callback (~3 us, as much as producing it); counts are kept when sending instead, and a
#   failed message's report takes it back out. After a flush that leaves nothing queued and
#   saw no failure, every message sent was acknowledged, so the counts are exact then.
PRODUCER_DEFAULTS: Mapping[str, Any] = {
    "allow.auto.create.topics": "false",
    "queue.buffering.max.kbytes": "65536",
    "delivery.report.only.error": True,
}

# Settings that only mean something for the producer; the admin client (topic creation)
# must not start an idempotent or transactional producer of its own.
_PRODUCER_ONLY = frozenset(
    {
        "acks",
        "enable.idempotence",
        "request.required.acks",
        "transactional.id",
        "transaction.timeout.ms",
        "enable.gapless.guarantee",
    }
)

# librdkafka fails a message after message.timeout.ms (default 5 minutes).
_DEFAULT_MESSAGE_TIMEOUT_MS = 300_000


def producer_settings(config: KafkaConfig) -> dict[str, Any]:
    """The librdkafka settings of a task's producer: the sink's defaults under the user's
    `kafka.*` settings."""
    settings = dict(PRODUCER_DEFAULTS)
    settings.update(config.producer_config())
    settings.setdefault("bootstrap.servers", config.bootstrap_servers)
    # The delivery counts depend on it (see PRODUCER_DEFAULTS), so a `kafka.*` option
    # cannot turn it off; set as a bool, which is what confluent-kafka accepts here.
    settings["delivery.report.only.error"] = True
    return settings


def admin_settings(producer: Mapping[str, Any]) -> dict[str, Any]:
    """The admin client's settings, from a producer's (`producer_settings`): the same
    brokers, security and timeouts, without what only a producer means, never creating
    topics by a metadata request."""
    settings = {key: value for key, value in producer.items() if key not in _PRODUCER_ONLY}
    settings["allow.auto.create.topics"] = "false"
    settings["logger"] = LIBRDKAFKA_LOG
    return settings


def message_timeout_ms(settings: Mapping[str, Any]) -> int:
    """How long librdkafka tries to deliver a message, from a producer's settings."""
    value = settings.get("message.timeout.ms", settings.get("delivery.timeout.ms"))
    # 0 means "forever" to librdkafka; flush stays bounded anyway.
    if value is None or int(value) <= 0:
        return _DEFAULT_MESSAGE_TIMEOUT_MS
    return int(value)


# -- checking the librdkafka settings on the driver -----------------------------------------

# Common librdkafka producer settings, for "did you mean" suggestions when librdkafka
# does not know a `kafka.*` name (librdkafka has no API listing its settings; a unit test
# checks librdkafka knows each of these). CONFIGURATION.md lists them all.
_KNOWN_SETTINGS = (
    "acks",
    "allow.auto.create.topics",
    "api.version.request",
    "batch.num.messages",
    "batch.size",
    "bootstrap.servers",
    "broker.address.family",
    "client.dns.lookup",
    "client.id",
    "compression.level",
    "compression.type",
    "connections.max.idle.ms",
    "debug",
    "delivery.timeout.ms",
    "enable.idempotence",
    "enable.ssl.certificate.verification",
    "linger.ms",
    "log_level",
    "max.in.flight.requests.per.connection",
    "message.max.bytes",
    "message.send.max.retries",
    "message.timeout.ms",
    "metadata.max.age.ms",
    "queue.buffering.max.kbytes",
    "queue.buffering.max.messages",
    "queue.buffering.max.ms",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "request.required.acks",
    "request.timeout.ms",
    "retries",
    "retry.backoff.max.ms",
    "retry.backoff.ms",
    "sasl.kerberos.keytab",
    "sasl.kerberos.principal",
    "sasl.kerberos.service.name",
    "sasl.mechanism",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.password",
    "sasl.username",
    "security.protocol",
    "socket.connection.setup.timeout.ms",
    "socket.keepalive.enable",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "socket.timeout.ms",
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.certificate.pem",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.key.pem",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "statistics.interval.ms",
    "sticky.partitioning.linger.ms",
    "topic.metadata.refresh.interval.ms",
    "transaction.timeout.ms",
)
_CONFIGURATION_MD = "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md"
_CREATE_FAILED = "Failed to create producer"


class _ConfigWarnings:
    """The `logger` of the probe client of `check_client_config`: keeps librdkafka's
    configuration warnings (CONFWARN), drops the rest (the probe has no brokers)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, level: int, fmt: str, *args: Any) -> None:
        if level >= logging.WARNING and len(args) == 3 and args[0] == "CONFWARN":
            self.lines.append(str(args[2]).split("]: ", 1)[-1])


def _is_file_setting(name: str) -> bool:
    return name.endswith(".location") or name == "sasl.kerberos.keytab"


@functools.lru_cache(maxsize=32)
def check_client_config(config: KafkaConfig) -> tuple[str, ...]:
    """Check the task producers' librdkafka settings where this runs (the driver, `ticdc-
    sink check`), without connecting: librdkafka validates every setting when a client is
    made, and a client without `bootstrap.servers` opens no connection. Settings naming
    files (`*.location`, `sasl.kerberos.keytab`) are left to the tasks: the files may
    exist only where the tasks run (spark-submit --files).

    Returns librdkafka's configuration warnings (e.g. a consumer setting that the
    producer ignores), for the caller to log or print. Cached per configuration.

    Raises:
        ConfigError: librdkafka refuses a setting: the option named (with a close match
            for an unknown name) and librdkafka's reason, secrets masked.
    """
    settings = producer_settings(config)
    probe = {
        name: value
        for name, value in settings.items()
        if name != "bootstrap.servers" and not _is_file_setting(name)
    }
    warnings = _ConfigWarnings()
    try:
        client = confluent_kafka.Producer({**probe, "logger": warnings})
    except KafkaException as exc:
        raise _refused_setting(probe, exc) from None
    close_client(client)
    return tuple(warnings.lines)


def _refused_setting(probe: Mapping[str, Any], exc: KafkaException) -> ConfigError:
    """A ConfigError naming the setting librdkafka refused. librdkafka names a setting by
    its canonical name (`request.required.acks` for `acks`), so each one is tried alone
    to find the culprit; what librdkafka refuses only when making the client ("Failed to
    create producer: ...", e.g. SASL without a user) is about the settings together."""
    reason = describe(exc).removesuffix(" (_INVALID_ARG)").strip()
    for secret in (str(v) for k, v in probe.items() if is_secret(k) and str(v)):
        reason = reason.replace(secret, "***")
    culprit = None
    if not reason.startswith(_CREATE_FAILED):
        for name, value in probe.items():
            try:
                confluent_kafka.Producer({name: value, "logger": _ConfigWarnings()})
            except KafkaException as alone:
                if not describe(alone).startswith(_CREATE_FAILED):
                    culprit = name
                    break
    if culprit is None:
        return ConfigError(
            "librdkafka, the Kafka client, refuses the kafka.* settings: "
            f"{reason.removeprefix(_CREATE_FAILED).lstrip(': ')}; check the kafka.* options "
            "and the sink-uri parameters that set them (sasl-*, ca, cert, key, ...)",
            option="kafka.*",
        )
    option = f"kafka.{culprit}"
    if "No such configuration property" in reason:
        close = difflib.get_close_matches(culprit, _KNOWN_SETTINGS, n=1, cutoff=0.75)
        hint = f"did you mean 'kafka.{close[0]}'?" if close else f"see {_CONFIGURATION_MD}"
        return ConfigError(
            f"option '{option}' is unknown to librdkafka, the Kafka client; {hint}",
            option=option,
            allowed=(f"kafka.{close[0]}",) if close else None,
        )
    return ConfigError(
        f"option '{option}' is refused by librdkafka, the Kafka client: {reason}",
        option=option,
    )


@functools.cache
def warn_client_setting(warning: str) -> None:
    """Log one of librdkafka's warnings about the settings (`check_client_config`), once
    per process."""
    logger.warning("ticdc: librdkafka: %s", warning)
