"""The one in-memory schema registry (`codec.SchemaRegistry`) of the unit tests: one id
per schema text (a key and a value of the same text share it, as in a real registry),
from `first_id` on (a first id of four non-zero bytes exercises the whole id in the
Confluent header); every call recorded in `calls`, every schema in `texts` (id -> text)
for decoders. An instance is also its own `registry_factory`."""

from __future__ import annotations

from typing import Any

__all__ = ["FakeRegistry"]


class FakeRegistry:
    """An in-memory SchemaRegistry: ids by schema text, every call recorded."""

    def __init__(self, first_id: int = 1) -> None:
        self.calls: list[tuple[str, str, bool]] = []
        self.ids: dict[str, int] = {}
        self.texts: dict[int, str] = {}
        self.first_id = first_id

    def __call__(self, *args: Any) -> FakeRegistry:
        return self

    def schema_id(self, topic: str, record_name: str, schema: str, *, is_key: bool) -> int:
        self.calls.append((topic, record_name, is_key))
        schema_id = self.ids.setdefault(schema, self.first_id + len(self.ids))
        self.texts[schema_id] = schema
        return schema_id

    def schema_text(self, schema_id: int) -> str:
        return self.texts[schema_id]

    def close(self) -> None:
        pass
