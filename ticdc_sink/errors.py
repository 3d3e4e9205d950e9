"""The errors a user of the sink can act on.

Every error names what to fix in its first line (Spark shows the last line of the Python
traceback, so the message has to stand alone). Errors keep their facts as attributes and
never carry secrets or whole rows.

    TiCDCSinkError
    ├── ConfigError(ValueError)        an option, the sink-uri or the TOML config
    ├── SchemaError(ValueError)        a Spark type, column-types, table-ddl, no handle key
    ├── InputError(ValueError)         a row: bad _op, null key, value out of range, ...
    ├── MessageTooLargeError           an encoded message above max-message-bytes
    ├── RegistryError                  the schema registry refused or was unreachable
    ├── DeliveryError                  the broker was unreachable or did not acknowledge, or
    │                                  a claim-check file could not be stored
    └── DecodeError(ValueError)        a message that is not what the protocol says
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DecodeError",
    "DeliveryError",
    "InputError",
    "MessageTooLargeError",
    "RegistryError",
    "SchemaError",
    "TiCDCSinkError",
]


class TiCDCSinkError(Exception):
    """Base class of every error the sink raises on purpose."""

    prefix = "ticdc: "

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.prefix + self.message


class ConfigError(TiCDCSinkError, ValueError):
    """An option, the sink-uri or the config file is wrong; raised on the driver."""

    def __init__(
        self,
        message: str,
        *,
        option: str | None = None,
        value: str | None = None,
        allowed: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(message)
        self.option = option
        self.value = value
        self.allowed = allowed


class SchemaError(TiCDCSinkError, ValueError):
    """The table schema cannot be derived: a Spark type, column-types or table-ddl."""

    def __init__(self, message: str, *, column: str | None = None) -> None:
        super().__init__(message)
        self.column = column


class InputError(TiCDCSinkError, ValueError):
    """A row cannot become a change event: names the table, column and value."""

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        column: str | None = None,
        value: object = None,
    ) -> None:
        super().__init__(message)
        self.table = table
        self.column = column
        self.value = value


class MessageTooLargeError(TiCDCSinkError):
    """An encoded message exceeds max-message-bytes, or the topic's `max.message.bytes`
    (less 128 bytes, as TiCDC keeps) when that is lower: then `topic` and
    `topic_max_message_bytes` say so, and `max_message_bytes` is the option's value."""

    def __init__(
        self,
        *,
        table: str,
        key: str,
        size: int,
        limit: int,
        topic: str | None = None,
        topic_max_message_bytes: int | None = None,
        max_message_bytes: int | None = None,
    ) -> None:
        if topic_max_message_bytes is None:
            text = (
                f"message for table {table} key {key} is {size} bytes, above "
                f"max-message-bytes {limit}; raise max-message-bytes (and the topic's "
                "max.message.bytes) or set large-message-handle-option"
            )
        else:
            text = (
                f"message for table {table} key {key} is {size} bytes, above {limit}: topic "
                f"{topic} has max.message.bytes {topic_max_message_bytes} (less 128 bytes, as "
                f"TiCDC keeps), below max-message-bytes {max_message_bytes}; raise the topic's "
                "max.message.bytes or set large-message-handle-option"
            )
        super().__init__(text)
        self.table = table
        self.key = key
        self.size = size
        self.limit = limit
        self.topic = topic
        self.topic_max_message_bytes = topic_max_message_bytes
        self.max_message_bytes = max_message_bytes


class RegistryError(TiCDCSinkError):
    """The schema registry refused a schema or could not be reached."""

    def __init__(
        self,
        message: str,
        *,
        subject: str | None = None,
        url: str | None = None,
        http_status: int | None = None,
        error_code: int | None = None,
        registry_message: str | None = None,
    ) -> None:
        super().__init__(message)
        self.subject = subject
        self.url = url  # credentials masked
        self.http_status = http_status
        self.error_code = error_code
        self.registry_message = registry_message


class DeliveryError(TiCDCSinkError):
    """The broker could not be reached or did not acknowledge a message, or the
    claim-check storage refused the file a message names."""

    def __init__(self, message: str, *, brokers: str | None = None) -> None:
        super().__init__(message)
        self.brokers = brokers


class DecodeError(TiCDCSinkError, ValueError):
    """A Kafka message does not decode under the protocol it claims."""
