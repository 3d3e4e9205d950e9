"""Schema ids from a Confluent Schema Registry, for the Avro encoders.

The Avro encoder (codec/avro/) does no I/O: it asks an injected `SchemaRegistry`
(codec/__init__.py) for the id of each schema it writes, as TiCDC's avro encoder holds a
`SchemaManager` (tiflow pkg/sink/codec/avro/confluent_schema_registry.go). This module is
that lookup over confluent-kafka's `SchemaRegistryClient`: it names the subject after the
configured strategy, registers the schema (`POST /subjects/{subject}/versions`, which
answers the existing id when the subject already holds the schema) and caches the id by
(subject, schema text), so a task sends one request per distinct schema, never one per
row. `schema_text(id)` serves the decoders (`GET /schemas/ids/{id}`).

Subjects (`subject_for`):

| strategy | subject | follows |
| --- | --- | --- |
| topic (default) | `<topic, every . replaced by _>-key` / `-value` | TiCDC `sanitizeTopic` |
| record | `<record full name>` | confluent-kafka |
|  |  | `record_subject_name_strategy` |
| topic-record | `<topic>-<record full name>`, topic as is | confluent-kafka |
|  |  | `topic_record_subject_name_strategy` |

TiCDC knows only the topic strategy and sanitizes the topic; Confluent's TopicNameStrategy
does not (we follow TiCDC there, so existing consumers find the same subjects). The record
strategies come from Confluent, whose functions we follow exactly. TiCDC gives a table's
key and value records one full name; under the record strategies the key record is named
`<value full name>.Key` (`codec.avro.schema.key_record_name`), so key and value get
subjects of their own, as Confluent's strategy gives records of different names.

Requests go through `SchemaRegistryClient`, which retries 408/429/5xx and network errors
with backoff (`max.retries` 3, `retries.wait.ms` 1000, up to 20 s a wait) and gives up after
`timeout` (from `schema-registry-timeout-ms`) per attempt; so an unreachable registry fails
in bounded time. Its own caches are unbounded; ours is bounded (`cache_capacity`), and
`calls` counts the lookups that missed ours (each sends at most one request).

Errors become `RegistryError` naming the subject (or schema id), the registry's message and
error code, and the registry URL with any credentials masked; the password never appears
in a message, a repr or a log line. An instance is safe to share between threads (one lock).
"""

from __future__ import annotations

import logging
import re
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from ticdc_sink.config import RegistryConfig, SubjectNameStrategy
from ticdc_sink.errors import ConfigError, RegistryError

__all__ = ["ConfluentSchemaRegistry", "subject_for"]

logger = logging.getLogger(__name__)

_MASK = "***"
_LEVEL = re.compile(r"compatibility:\s*'?([A-Za-z_]+)")
_MAX_REGISTRY_MESSAGE = 1000
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<info>.*)@(?P<rest>[^@]*)$")


def subject_for(
    strategy: SubjectNameStrategy, topic: str, record_name: str, *, is_key: bool
) -> str:
    """The registry subject of a key or value schema (table in the module docstring).

    Raises:
        ConfigError: the strategy needs a topic and `topic` is empty.
    """
    strategy = SubjectNameStrategy(strategy)
    if strategy is SubjectNameStrategy.RECORD:
        return record_name
    if not topic:
        raise ConfigError(
            f"subject-name-strategy '{strategy.value}' needs the topic of the message, which "
            "is empty; set option 'topic'",
            option="subject-name-strategy",
            value=strategy.value,
        )
    if strategy is SubjectNameStrategy.TOPIC_RECORD:
        return f"{topic}-{record_name}"
    # tiflow pkg/sink/codec/avro/avro.go, sanitizeTopic: every "." becomes "_" ("it may
    # have special meanings for sink connectors"); the message still goes to the topic.
    return topic.replace(".", "_") + ("-key" if is_key else "-value")


def _mask_url(url: str | None) -> str:
    """The URL with any user info's password replaced by ***. Text, not urlsplit: a
    password with a raw "/" or "@" would otherwise leak into the "path"."""
    if not url:
        return "<unset>"
    match = _USERINFO.match(url)
    if match is None:
        return url
    user = match.group("info").split(":", 1)[0]
    return f"{match.group('scheme')}{user}:{_MASK}@{match.group('rest')}"


_SHARED_MAX = 8
_SHARED_LOCK = threading.Lock()
_SHARED: OrderedDict[tuple[RegistryConfig, SubjectNameStrategy], ConfluentSchemaRegistry] = (
    OrderedDict()
)


class ConfluentSchemaRegistry:
    """`SchemaRegistry` (codec/__init__.py) over a Confluent Schema Registry.

    The client is made on the first request, so building one is cheap and cannot fail on
    the network. `client_options` are extra `SchemaRegistryClient` settings over
    `config.client_config()` (e.g. `max.retries`); `cache_capacity` bounds each of the two
    caches (schema -> id, id -> schema text).

    Raises:
        ConfigError: `config.url` is unset (`schema-registry`).
    """

    def __init__(
        self,
        config: RegistryConfig,
        strategy: SubjectNameStrategy = SubjectNameStrategy.TOPIC,
        *,
        cache_capacity: int = 1000,
        client_options: Mapping[str, Any] | None = None,
    ) -> None:
        if not config.url:
            raise ConfigError(
                "option 'schema-registry' is not set; give the Schema Registry URL such as "
                "http://registry:8081",
                option="schema-registry",
            )
        if cache_capacity < 1:
            raise ValueError(f"cache_capacity must be at least 1 (got {cache_capacity})")
        self._config = config
        self._strategy = SubjectNameStrategy(strategy)
        self._options = dict(client_options or {})
        self._capacity = cache_capacity
        self._url = _mask_url(config.url)
        self._secrets = self._secret_texts()
        # Credentials in the URL (RegistryConfig refuses them; defence in depth): foreign
        # error texts may quote pieces of the URL, so they are withheld.
        self._withhold = _USERINFO.match(config.url) is not None
        self._lock = threading.Lock()
        self._client: SchemaRegistryClient | None = None
        self._ids: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._texts: OrderedDict[int, str] = OrderedDict()
        self.calls = 0

    @classmethod
    def shared(
        cls, config: RegistryConfig, strategy: SubjectNameStrategy = SubjectNameStrategy.TOPIC
    ) -> ConfluentSchemaRegistry:
        """One instance per (config, strategy) per process, so the tasks a Python worker
        runs one after another (Spark reuses workers, but unpickles a fresh writer per
        task) share the ids already fetched (style §7). Bounded: the oldest of
        `_SHARED_MAX` is closed and dropped. Its `calls` counts for all tasks together.
        """
        key = (config, SubjectNameStrategy(strategy))
        with _SHARED_LOCK:
            found = _SHARED.get(key)
            if found is None:
                found = _SHARED[key] = cls(config, strategy)
                while len(_SHARED) > _SHARED_MAX:
                    _, oldest = _SHARED.popitem(last=False)
                    oldest.close()
            else:
                _SHARED.move_to_end(key)
            return found

    def __repr__(self) -> str:
        return (
            f"ConfluentSchemaRegistry(url={self._url!r}, strategy={self._strategy.value!r}, "
            f"calls={self.calls})"
        )

    @property
    def url(self) -> str:
        """The registry URL, credentials masked (for messages and logs)."""
        return self._url

    @property
    def strategy(self) -> SubjectNameStrategy:
        return self._strategy

    # -- SchemaRegistry --------------------------------------------------------------

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        """The id of `schema` (Avro schema JSON, sent as is) under the strategy's subject;
        registers it on the first call for (subject, schema), then answers from the cache.

        Raises:
            RegistryError: the registry refused the schema (409 incompatible, 422 invalid,
                401 credentials, ...) or could not be reached.
        """
        subject = subject_for(self._strategy, topic, record_name, is_key=is_key)
        key = (subject, schema)
        with self._lock:
            cached = self._get(self._ids, key)
            if cached is not None:
                return cached
            client = self._get_client()
            self.calls += 1
            try:
                schema_id = client.register_schema(subject, Schema(schema, "AVRO"))
            except SchemaRegistryError as exc:
                raise self._refused(exc, subject=subject) from None
            except Exception as exc:
                raise self._unreachable(
                    exc, f"register the schema for subject '{subject}'", subject=subject
                ) from (None if self._leaks(exc) else exc)
            if not isinstance(schema_id, int) or schema_id <= 0:
                # TiCDC treats id 0 as an error too (confluent_schema_registry.go Register).
                raise self._error(
                    f"schema registry {self._url} answered id {schema_id!r} for subject "
                    f"'{subject}'; a registry answers a positive id, check option "
                    "'schema-registry' points at a Confluent-compatible registry",
                    subject=subject,
                )
            logger.debug("schema for subject %s has id %d", subject, schema_id)
            self._put(self._ids, key, schema_id)
            self._put(self._texts, schema_id, schema)
            return schema_id

    def decoder_schema_text(self, schema_id: int) -> str:
        """`schema_text` for a decoder: an id the registry does not know is a LookupError,
        which the avro decoder reports as a message that does not decode (one bad
        message, not a failed read); an unreachable registry stays a RegistryError."""
        try:
            return self.schema_text(schema_id)
        except RegistryError as exc:
            if exc.http_status == 404:
                raise LookupError(schema_id) from exc
            raise

    def schema_text(self, schema_id: int) -> str:
        """The schema text of `schema_id` (cached): the text this instance registered
        under the id, else the registry's (the same schema, maybe other whitespace).

        Raises:
            RegistryError: the registry does not know the id or could not be reached.
        """
        with self._lock:
            cached = self._get(self._texts, schema_id)
            if cached is not None:
                return cached
            client = self._get_client()
            self.calls += 1
            try:
                text = client.get_schema(schema_id).schema_str
            except SchemaRegistryError as exc:
                raise self._refused(exc, schema_id=schema_id) from None
            except Exception as exc:
                raise self._unreachable(exc, f"read schema id {schema_id}") from (
                    None if self._leaks(exc) else exc
                )
            if not isinstance(text, str):
                raise self._error(
                    f"schema registry {self._url} answered no schema text for id {schema_id}; "
                    "check option 'schema-registry' points at a Confluent-compatible registry"
                )
            self._put(self._texts, schema_id, text)
            return text

    def close(self) -> None:
        """Close the HTTP session; the caches stay, a later request opens a new one."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def __enter__(self) -> ConfluentSchemaRegistry:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------

    @staticmethod
    def _get(cache: OrderedDict[Any, Any], key: Any) -> Any:
        """The cached value of `key` (now the most recently used), or None."""
        value = cache.get(key)
        if value is not None:
            cache.move_to_end(key)
        return value

    def _put(self, cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > self._capacity:
            cache.popitem(last=False)

    def _get_client(self) -> SchemaRegistryClient:
        if self._client is None:
            settings = self._config.client_config()
            settings.update(self._options)
            try:
                self._client = SchemaRegistryClient(settings)
            except Exception as exc:
                # Bad TLS files, credentials both in the URL and in the options, unknown
                # settings: the configuration, not the registry.
                raise ConfigError(
                    f"cannot set up the schema registry client for {self._url}: "
                    f"{self._scrub(self._describe(exc))}; check options "
                    "'schema-registry', 'schema-registry-ca', 'schema-registry-cert' and "
                    "'schema-registry-key'",
                    option="schema-registry",
                ) from None
        return self._client

    def _secret_texts(self) -> tuple[str, ...]:
        found: list[str] = []
        if self._config.password:
            found.append(self._config.password)
        match = _USERINFO.match(self._config.url or "")
        if match and ":" in match.group("info"):
            password = match.group("info").split(":", 1)[1]
            found += [password, urllib.parse.unquote(password)]
        for name, value in self._options.items():
            if "password" in name or "user.info" in name or "secret" in name:
                found.append(str(value))
        if self._config.password:
            found.append(urllib.parse.quote(self._config.password, safe=""))
        # Longest first, so a password containing another is masked whole.
        return tuple(sorted({s for s in found if s}, key=len, reverse=True))

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, _MASK)
        return " ".join(text.split())

    def _leaks(self, exc: BaseException) -> bool:
        return self._withhold or self._scrub(str(exc)) != " ".join(str(exc).split())

    def _describe(self, exc: BaseException) -> str:
        if self._withhold:
            return f"{type(exc).__name__} (details withheld: the URL holds credentials)"
        return f"{type(exc).__name__}: {exc}"

    def _error(
        self,
        message: str,
        *,
        subject: str | None = None,
        http_status: int | None = None,
        error_code: int | None = None,
        registry_message: str | None = None,
    ) -> RegistryError:
        return RegistryError(
            self._scrub(message),
            subject=subject,
            url=self._url,
            http_status=http_status,
            error_code=error_code,
            registry_message=registry_message,
        )

    def _refused(
        self,
        exc: SchemaRegistryError,
        *,
        subject: str | None = None,
        schema_id: int | None = None,
    ) -> RegistryError:
        status = exc.http_status_code
        code = exc.error_code
        said = self._scrub(str(exc.error_message or ""))
        if len(said) > _MAX_REGISTRY_MESSAGE:
            said = said[: _MAX_REGISTRY_MESSAGE - 3] + "..."
        what = f"subject '{subject}'" if subject is not None else f"schema id {schema_id}"
        detail = f"(HTTP {status}, error code {code}: {said})"
        if status == 409:
            level = _LEVEL.search(said)
            under = (
                f"compatibility level {level.group(1).upper()}"
                if level
                else ("the subject's compatibility level")
            )
            # Under the record strategies each table has its subjects already.
            own = (
                ", or give each table its own subjects (a topic per table, or "
                "subject-name-strategy=record)"
                if self._strategy is SubjectNameStrategy.TOPIC
                else ""
            )
            message = (
                f"schema registry {self._url} refused the schema for {what}: it is "
                f"incompatible with an earlier version under {under}; make the change "
                f"compatible, relax the subject's compatibility level{own} {detail}"
            )
        elif status in (401, 403):
            message = (
                f"schema registry {self._url} refused the credentials for {what} {detail}; "
                "check options 'schema-registry-user' and 'schema-registry-password'"
            )
        elif status == 422 and subject is not None:
            message = (
                f"schema registry {self._url} says the schema for {what} is invalid "
                f"{detail}; the Avro schema the encoder built was refused, report it with "
                "the table's schema"
            )
        elif status == 404 and schema_id is not None:
            message = (
                f"schema registry {self._url} does not know {what} {detail}; read the "
                "messages with the registry they were written with (option 'schema-registry')"
            )
        else:
            message = (
                f"schema registry {self._url} refused the request for {what} {detail}; "
                "check option 'schema-registry' and the registry's log"
            )
        return self._error(
            message,
            subject=subject,
            http_status=status,
            error_code=code,
            registry_message=said,
        )

    def _unreachable(
        self, exc: BaseException, doing: str, *, subject: str | None = None
    ) -> RegistryError:
        return self._error(
            f"cannot reach schema registry {self._url} to {doing}: "
            f"{self._describe(exc)}; check option 'schema-registry' and that the "
            "registry is running and reachable",
            subject=subject,
        )
