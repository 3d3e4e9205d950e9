"""An in-memory, Confluent-REST-compatible Schema Registry for the tests (design §7).

The integration tests run against a real registry, Apicurio (tests/support/apicurio.py);
this one serves what Apicurio cannot give them: basic auth, injected faults and request
counts, mostly in unit tests. A `ThreadingHTTPServer` on a free 127.0.0.1 port, in a
daemon thread, speaking the REST endpoints that confluent-kafka's `SchemaRegistryClient`
calls (checked against confluent-kafka 2.16.1,
`schema_registry/_sync/schema_registry_client.py`), with Confluent's global ids. It lives
with the tests, never in the product. Only Avro schemas; no contexts, modes, references
or rules.

    with TestSchemaRegistry(user="u", password="p") as registry:
        client = SchemaRegistryClient({"url": registry.url, "basic.auth.user.info": "u:p"})

| request | answer |
| --- | --- |
| `GET /` | `{}` (TiCDC checks this at start-up) |
| `POST /subjects/{s}/versions` | `{"id": N}`; the same schema (same canonical form) in the |
|  | subject: its id, no new version; else checked against the subject's compatibility |
|  | level, then a new version; ids are global: one id per canonical schema, also across |
|  | subjects |
| `POST /subjects/{s}` (lookup) | `{"subject","id","version","schema"}`; 40401, 40403 |
| `GET /subjects` | live subject names, sorted (`?deleted=true`: soft-deleted too) |
| `GET /subjects/{s}/versions` | live version numbers; 40401 |
| `GET /subjects/{s}/versions/{v or latest or -1}` | `{"subject","version","id","schema"}`; |
|  | 40401, 40402, 42202 (not a version) |
| `GET /subjects/{s}/versions/{v}/schema` | the schema itself (JSON) |
| `DELETE /subjects/{s}[?permanent=true]` | deleted version numbers; soft delete hides, |
|  | permanent forgets; version numbers are never reused after a soft delete |
| `DELETE /subjects/{s}/versions/{v}` | the version number |
| `GET /schemas/ids/{id}` | `{"schema": text}` as first registered; 40403 |
| `GET /schemas/ids/{id}/subjects`, `/versions` | where the id is used |
| `GET /schemas/types` | `["AVRO"]` |
| `POST /compatibility/subjects/{s}/versions/{v}` | `{"is_compatible": bool}` against one |
|  | version (`?verbose=true` adds `messages`); no subject: compatible |
| `POST /compatibility/subjects/{s}/versions` | the same against what the level checks |
| `GET /config`, `PUT /config` | global level `{"compatibilityLevel": L}`; PUT body |
|  | `{"compatibility": L}` answers `{"compatibility": L}`; 42203 for an unknown level |
| `GET/PUT/DELETE /config/{s}` | per-subject level; GET without one: 40408, or the |
|  | global level with `?defaultToGlobal=true` |
| `GET /mode`, `GET /mode/{s}` | `{"mode": "READWRITE"}` |
| anything else | 404 `{"error_code": 404, "message": "HTTP 404 Not Found"}` (405 for a |
|  | known path with another method) |

Compatibility (Confluent's semantics, checked with Apache avro 1.12's
`ReaderWriterCompatibilityChecker`): BACKWARD (default) = the new schema reads data written
with the latest live version; FORWARD = the latest reads data written with the new one;
FULL = both; `_TRANSITIVE` = against every live version, not only the latest; NONE = no
check. An incompatible schema gets HTTP 409 with Confluent's body, `{"error_code": 409,
"message": "Schema being registered is incompatible with an earlier schema for subject
\\"s\\", details: [...]"}`, whose details end with `{compatibility: 'BACKWARD'}` as
Confluent 7.x writes them. A schema avro cannot parse, or a schemaType other than AVRO,
gets 422 with error_code 42201.

Auth: with `user`/`password`, every request needs HTTP basic auth with them, else 401
`{"error_code": 401, "message": "Unauthorized"}` (counted in `requests` all the same).

For the tests: `requests` is the list of (method, path) received (path unquoted, without
the query); `count(method, endpoint)` counts by endpoint template such as
`/subjects/{subject}/versions`; `set_compatibility(level, subject=None)`; `schemas(subject)`
gives the schema texts of the live versions in order; `fail_next(status, times)` answers
the next requests with a 5xx-style error to exercise retries. Responses use
`application/vnd.schemaregistry.v1+json`. All state is behind one lock.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import attrs
import avro.errors
import avro.schema
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

__all__ = ["COMPATIBILITY_LEVELS", "CONTENT_TYPE", "TestSchemaRegistry"]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
COMPATIBILITY_LEVELS = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)


class _HttpError(Exception):
    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def _subject_not_found(subject: str) -> _HttpError:
    return _HttpError(404, 40401, f"Subject '{subject}' not found.")


@attrs.define
class _Version:
    version: int
    schema_id: int
    deleted: bool = False


@attrs.define
class _Subject:
    versions: list[_Version] = attrs.Factory(list)
    next_version: int = 1
    deleted: bool = False

    def live(self) -> list[_Version]:
        return [v for v in self.versions if not v.deleted]


@attrs.define
class _Stored:
    text: str
    parsed: avro.schema.Schema
    canonical: str


def _canonical(parsed: avro.schema.Schema) -> str:
    # Identity of a schema: avro's own JSON form with object keys sorted. It keeps every
    # attribute (defaults, docs, connect.parameters) and field order, so only whitespace,
    # key order and `{"type": "string"}` vs `"string"` make two texts one schema.
    return json.dumps(parsed.to_json(), sort_keys=True, separators=(",", ":"))


def _compatibility_problems(
    new: avro.schema.Schema, old: avro.schema.Schema, level: str
) -> list[tuple[str, str]]:
    """(errorType, description) pairs; empty when `new` may follow `old` under `level`."""
    pairs: list[tuple[avro.schema.Schema, avro.schema.Schema]] = []  # (reader, writer)
    if level.startswith(("BACKWARD", "FULL")):
        pairs.append((new, old))
    if level.startswith(("FORWARD", "FULL")):
        pairs.append((old, new))
    problems: list[tuple[str, str]] = []
    for reader, writer in pairs:
        result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
        if result.compatibility is not SchemaCompatibilityType.compatible:
            kind = (
                result.incompatibilities[0].name.upper()
                if result.incompatibilities
                else "TYPE_MISMATCH"
            )
            where = ", ".join(sorted(result.locations))
            said = "; ".join(sorted(result.messages))
            template = _DESCRIPTIONS.get(kind, "Incompatible at path '{where}': {said}")
            description = template.format(where=where, said=said)
            problems.append((kind, f"{description}', additionalInfo:'{said}"))
    return problems


# The wording of Confluent's 409 details (as its registry writes them, e.g. "The field 'b'
# at path '/fields/1' in the new schema has no default value and is missing in the old
# schema", additionalInfo 'b'), filled from avro's result.
_DESCRIPTIONS = {
    "READER_FIELD_MISSING_DEFAULT_VALUE": (
        "The field '{said}' at path '{where}' in the new schema has no default value and is "
        "missing in the old schema"
    ),
    "TYPE_MISMATCH": (
        "The type (path '{where}') of a field in the new schema does not match with the old schema"
    ),
    "NAME_MISMATCH": "The name of the schema has changed (path '{where}')",
    "MISSING_ENUM_SYMBOLS": (
        "The new schema is missing enum symbols '{said}' at path '{where}' in the old schema"
    ),
    "MISSING_UNION_BRANCH": (
        "The new schema is missing a type inside a union field at path '{where}' in the old schema"
    ),
    "FIXED_SIZE_MISMATCH": (
        "The size of FIXED type field at path '{where}' in the new schema does not match with "
        "the old schema"
    ),
}


class _State:
    """The registry's data; every method runs under `lock`."""

    def __init__(self, compatibility: str) -> None:
        self.lock = threading.Lock()
        self.compatibility = compatibility
        self.subject_compatibility: dict[str, str] = {}
        self.subjects: dict[str, _Subject] = {}
        self.by_id: dict[int, _Stored] = {}
        self.id_by_canonical: dict[str, int] = {}

    # -- helpers ---------------------------------------------------------------------

    def level(self, subject: str) -> str:
        return self.subject_compatibility.get(subject, self.compatibility)

    def subject(self, name: str, *, deleted: bool = False) -> _Subject:
        found = self.subjects.get(name)
        if found is None or (found.deleted and not deleted):
            raise _subject_not_found(name)
        return found

    def version(self, name: str, spec: str, *, deleted: bool = False) -> _Version:
        subject = self.subject(name, deleted=deleted)
        candidates = subject.versions if deleted else subject.live()
        if spec in ("latest", "-1"):
            if not candidates:
                raise _HttpError(404, 40402, f"Version {spec} not found.")
            return candidates[-1]
        try:
            number = int(spec)
        except ValueError:
            number = 0
        if number < 1 or number > 2**31 - 1:
            raise _HttpError(
                422,
                42202,
                f"The specified version '{spec}' is not a valid version id. Allowed values are "
                'between [1, 2^31-1] and the string "latest"',
            )
        for version in candidates:
            if version.version == number:
                return version
        raise _HttpError(404, 40402, f"Version {number} not found.")

    def parse(self, body: dict[str, Any]) -> tuple[str, avro.schema.Schema]:
        text = body.get("schema")
        schema_type = body.get("schemaType") or "AVRO"
        if schema_type != "AVRO":
            raise _HttpError(
                422, 42201, f"Invalid schema type {schema_type}; the test registry knows AVRO only"
            )
        if body.get("references"):
            raise _HttpError(422, 42201, "Invalid schema: the test registry has no references")
        if not isinstance(text, str):
            raise _HttpError(422, 42201, "Empty schema")
        try:
            return text, avro.schema.parse(text)
        except (avro.errors.AvroException, ValueError, TypeError, KeyError) as exc:
            raise _HttpError(
                422,
                42201,
                f"Invalid schema {text} with refs [] of type AVRO, details: {exc}",
            ) from None

    def response(self, name: str, version: _Version) -> dict[str, Any]:
        return {
            "subject": name,
            "version": version.version,
            "id": version.schema_id,
            "schema": self.by_id[version.schema_id].text,
        }

    def against(self, subject: _Subject, level: str) -> list[_Version]:
        live = subject.live()
        if level == "NONE" or not live:
            return []
        return live if level.endswith("_TRANSITIVE") else live[-1:]

    # -- operations ------------------------------------------------------------------

    def register(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        text, parsed = self.parse(body)
        canonical = _canonical(parsed)
        subject = self.subjects.get(name)
        if subject is not None and subject.deleted:
            subject.deleted = False
        if subject is None:
            subject = self.subjects[name] = _Subject()
        for version in subject.live():
            if self.by_id[version.schema_id].canonical == canonical:
                return {"id": version.schema_id}
        level = self.level(name)
        for old in reversed(self.against(subject, level)):
            problems = _compatibility_problems(parsed, self.by_id[old.schema_id].parsed, level)
            if problems:
                details = ", ".join(
                    f"{{errorType:'{kind}', description:'{text}'}}" for kind, text in problems
                )
                raise _HttpError(
                    409,
                    409,
                    "Schema being registered is incompatible with an earlier schema for subject "
                    f'"{name}", details: [{details}, {{oldSchemaVersion: {old.version}}}, '
                    f"{{oldSchema: '{self.by_id[old.schema_id].text}'}}, "
                    f"{{validateFields: 'false', compatibility: '{level}'}}]",
                )
        schema_id = self.id_by_canonical.get(canonical)
        if schema_id is None:
            schema_id = len(self.by_id) + 1
            self.by_id[schema_id] = _Stored(text, parsed, canonical)
            self.id_by_canonical[canonical] = schema_id
        subject.versions.append(_Version(subject.next_version, schema_id))
        subject.next_version += 1
        return {"id": schema_id}

    def lookup(self, name: str, body: dict[str, Any], *, deleted: bool) -> dict[str, Any]:
        _, parsed = self.parse(body)
        canonical = _canonical(parsed)
        subject = self.subject(name, deleted=deleted)
        for version in subject.versions if deleted else subject.live():
            if self.by_id[version.schema_id].canonical == canonical:
                return self.response(name, version)
        raise _HttpError(404, 40403, "Schema not found")

    def test_compatibility(
        self, name: str, spec: str | None, body: dict[str, Any], *, verbose: bool
    ) -> dict[str, Any]:
        _, parsed = self.parse(body)
        level = self.level(name)
        if name not in self.subjects or self.subjects[name].deleted:
            if spec is not None and spec not in ("latest", "-1"):
                raise _subject_not_found(name)
            olds: list[_Version] = []
        elif spec is None:
            olds = self.against(self.subjects[name], level)
        else:
            olds = [self.version(name, spec)]
        messages: list[str] = []
        for old in olds if level != "NONE" else []:
            for kind, text in _compatibility_problems(
                parsed, self.by_id[old.schema_id].parsed, level
            ):
                messages.append(f"{kind}: {text} (version {old.version})")
        answer: dict[str, Any] = {"is_compatible": not messages}
        if verbose:
            answer["messages"] = messages
        return answer

    def delete_subject(self, name: str, *, permanent: bool) -> list[int]:
        subject = self.subject(name, deleted=permanent)
        if permanent:
            if not subject.deleted:
                raise _HttpError(
                    404,
                    40405,
                    f"Subject '{name}' was not deleted first before being permanently deleted",
                )
            del self.subjects[name]
            self.subject_compatibility.pop(name, None)
            return [v.version for v in subject.versions]
        numbers = [v.version for v in subject.live()]
        for version in subject.versions:
            version.deleted = True
        subject.deleted = True
        return numbers

    def delete_version(self, name: str, spec: str, *, permanent: bool) -> int:
        version = self.version(name, spec, deleted=permanent)
        subject = self.subjects[name]
        if permanent:
            subject.versions.remove(version)
        else:
            version.deleted = True
        if not subject.live():
            subject.deleted = True
        return version.version


def _level(body: dict[str, Any]) -> str:
    level = str(body.get("compatibility") or "").upper()
    if level not in COMPATIBILITY_LEVELS:
        raise _HttpError(
            422,
            42203,
            "Invalid compatibility level. Valid values are none, backward, forward, full, "
            "backward_transitive, forward_transitive, and full_transitive",
        )
    return level


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].lower() == "true"


_METHODS = ("GET", "POST", "PUT", "DELETE")


class TestSchemaRegistry:
    """The test registry; see the module docstring for what it answers."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(
        self,
        *,
        user: str | None = None,
        password: str | None = None,
        compatibility: str = "BACKWARD",
    ) -> None:
        if compatibility.upper() not in COMPATIBILITY_LEVELS:
            raise ValueError(f"unknown compatibility level {compatibility!r}")
        self._user = user
        self._password = password
        self._state = _State(compatibility.upper())
        self._requests: list[tuple[str, str]] = []
        self._endpoints: Counter[tuple[str, str]] = Counter()
        self._failures: list[int] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> TestSchemaRegistry:
        if self._server is not None:
            return self
        registry = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One send per response: headers and body written separately meet Nagle and
            # delayed ACKs on keep-alive connections (~40 ms a request).
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                registry._handle(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                registry._handle(self, "POST")

            def do_PUT(self) -> None:  # noqa: N802
                registry._handle(self, "PUT")

            def do_DELETE(self) -> None:  # noqa: N802
                registry._handle(self, "DELETE")

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> TestSchemaRegistry:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the test registry is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`, without credentials."""
        return f"http://127.0.0.1:{self.port}"

    # -- test helpers ----------------------------------------------------------------

    @property
    def requests(self) -> list[tuple[str, str]]:
        """(method, path) of every request received, in order (a copy)."""
        with self._state.lock:
            return list(self._requests)

    def count(self, method: str | None = None, endpoint: str | None = None) -> int:
        """Requests received with this method and endpoint template (None: any), e.g.
        `count("POST", "/subjects/{subject}/versions")`."""
        with self._state.lock:
            return sum(
                n
                for (m, e), n in self._endpoints.items()
                if (method is None or m == method) and (endpoint is None or e == endpoint)
            )

    def endpoint_counts(self) -> dict[tuple[str, str], int]:
        """Requests received per (method, endpoint template)."""
        with self._state.lock:
            return dict(self._endpoints)

    def reset_requests(self) -> None:
        with self._state.lock:
            self._requests.clear()
            self._endpoints.clear()

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        """Set the global level, or the level of one subject."""
        level = level.upper()
        if level not in COMPATIBILITY_LEVELS:
            raise ValueError(f"unknown compatibility level {level!r}")
        with self._state.lock:
            if subject is None:
                self._state.compatibility = level
            else:
                self._state.subject_compatibility[subject] = level

    def subjects(self) -> list[str]:
        with self._state.lock:
            return sorted(n for n, s in self._state.subjects.items() if not s.deleted)

    def schemas(self, subject: str) -> list[str]:
        """The schema texts of the subject's live versions, oldest first ([] if none)."""
        with self._state.lock:
            found = self._state.subjects.get(subject)
            if found is None or found.deleted:
                return []
            return [self._state.by_id[v.schema_id].text for v in found.live()]

    def schema_ids(self, subject: str) -> list[int]:
        """The ids of the subject's live versions, oldest first."""
        with self._state.lock:
            found = self._state.subjects.get(subject)
            if found is None or found.deleted:
                return []
            return [v.schema_id for v in found.live()]

    def fail_next(self, status: int = 500, times: int = 1) -> None:
        """Answer the next `times` requests with `status` (error_code status*100+1)."""
        with self._state.lock:
            self._failures.extend([status] * times)

    # -- HTTP ------------------------------------------------------------------------

    def _authorized(self, header: str | None) -> bool:
        if self._user is None:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return False
        user, _, password = decoded.partition(":")
        return user == self._user and password == (self._password or "")

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urllib.parse.urlsplit(handler.path)
        segments = [urllib.parse.unquote(s) for s in parts.path.split("/") if s]
        query = urllib.parse.parse_qs(parts.query)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        endpoint, route = _route(segments)
        with self._state.lock:
            self._requests.append((method, "/" + "/".join(segments)))
            self._endpoints[(method, endpoint)] += 1
            failure = self._failures.pop(0) if self._failures else None
        status = 200
        try:
            if failure is not None:
                raise _HttpError(failure, failure * 100 + 1, "injected failure")
            if not self._authorized(handler.headers.get("Authorization")):
                raise _HttpError(401, 401, "Unauthorized")
            body: dict[str, Any] = {}
            if raw:
                try:
                    loaded = json.loads(raw)
                except ValueError:
                    raise _HttpError(400, 400, "Unexpected character in request body") from None
                if not isinstance(loaded, dict):
                    raise _HttpError(422, 422, "Unrecognized request body")
                body = loaded
            if route is None:
                raise _HttpError(404, 404, "HTTP 404 Not Found")
            answer = self._dispatch(method, route, segments, query, body)
        except _HttpError as exc:
            status = exc.status
            answer = {"error_code": exc.error_code, "message": exc.message}
        payload = json.dumps(answer).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", CONTENT_TYPE)
        handler.send_header("Content-Length", str(len(payload)))
        if status == 401:
            handler.send_header("WWW-Authenticate", 'Basic realm="SchemaRegistry"')
        handler.end_headers()
        handler.wfile.write(payload)

    def _dispatch(
        self,
        method: str,
        route: str,
        seg: list[str],
        query: dict[str, list[str]],
        body: dict[str, Any],
    ) -> Any:
        state = self._state
        deleted = _flag(query, "deleted")
        with state.lock:
            match (method, route):
                case ("GET", "root"):
                    return {}
                case ("GET", "types"):
                    return ["AVRO"]
                case ("GET", "mode") | ("GET", "mode_subject"):
                    return {"mode": "READWRITE"}
                case (
                    ("GET", "schema_id")
                    | ("GET", "schema_id_subjects")
                    | (
                        "GET",
                        "schema_id_versions",
                    )
                ):
                    schema_id = _int(seg[2])
                    if schema_id not in state.by_id:
                        raise _HttpError(404, 40403, f"Schema {seg[2]} not found")
                    if route == "schema_id":
                        return {"schema": state.by_id[schema_id].text}
                    uses = [
                        (name, v.version)
                        for name, s in sorted(state.subjects.items())
                        for v in s.versions
                        if v.schema_id == schema_id and (deleted or not v.deleted)
                    ]
                    if route == "schema_id_subjects":
                        return sorted({name for name, _ in uses})
                    return [{"subject": name, "version": number} for name, number in uses]
                case ("GET", "subjects"):
                    return sorted(n for n, s in state.subjects.items() if deleted or not s.deleted)
                case ("POST", "subject"):
                    return state.lookup(seg[1], body, deleted=deleted)
                case ("DELETE", "subject"):
                    return state.delete_subject(seg[1], permanent=_flag(query, "permanent"))
                case ("GET", "versions"):
                    subject = state.subject(seg[1], deleted=deleted)
                    chosen = subject.versions if deleted else subject.live()
                    return [v.version for v in chosen]
                case ("POST", "versions"):
                    return state.register(seg[1], body)
                case ("GET", "version") | ("GET", "version_schema"):
                    version = state.version(seg[1], seg[3], deleted=deleted)
                    if route == "version_schema":
                        return json.loads(state.by_id[version.schema_id].text)
                    return state.response(seg[1], version)
                case ("DELETE", "version"):
                    return state.delete_version(seg[1], seg[3], permanent=_flag(query, "permanent"))
                case ("POST", "compat_version"):
                    return state.test_compatibility(
                        seg[2], seg[4], body, verbose=_flag(query, "verbose")
                    )
                case ("POST", "compat_all"):
                    return state.test_compatibility(
                        seg[2], None, body, verbose=_flag(query, "verbose")
                    )
                case ("GET", "config"):
                    return {"compatibilityLevel": state.compatibility}
                case ("PUT", "config"):
                    state.compatibility = _level(body)
                    return {"compatibility": state.compatibility}
                case ("GET", "config_subject"):
                    level = state.subject_compatibility.get(seg[1])
                    if level is None:
                        if not _flag(query, "defaultToGlobal"):
                            raise _HttpError(
                                404,
                                40408,
                                f"Subject '{seg[1]}' does not have subject-level compatibility "
                                "configured",
                            )
                        level = state.compatibility
                    return {"compatibilityLevel": level}
                case ("PUT", "config_subject"):
                    state.subject_compatibility[seg[1]] = _level(body)
                    return {"compatibility": state.subject_compatibility[seg[1]]}
                case ("DELETE", "config_subject"):
                    if seg[1] not in state.subject_compatibility:
                        raise _subject_not_found(seg[1])
                    return {"compatibilityLevel": state.subject_compatibility.pop(seg[1])}
                case _:
                    raise _HttpError(405, 405, "HTTP 405 Method Not Allowed")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _HttpError(404, 404, "HTTP 404 Not Found") from None


def _route(seg: list[str]) -> tuple[str, str | None]:
    """(endpoint template for the counters, route name or None) of a path."""
    n = len(seg)
    head = seg[0] if seg else ""
    if n == 0:
        return "/", "root"
    if head == "schemas":
        if n == 2 and seg[1] == "types":
            return "/schemas/types", "types"
        if n == 3 and seg[1] == "ids":
            return "/schemas/ids/{id}", "schema_id"
        if n == 4 and seg[1] == "ids" and seg[3] in ("subjects", "versions"):
            return f"/schemas/ids/{{id}}/{seg[3]}", f"schema_id_{seg[3]}"
    if head == "subjects":
        if n == 1:
            return "/subjects", "subjects"
        if n == 2:
            return "/subjects/{subject}", "subject"
        if n == 3 and seg[2] == "versions":
            return "/subjects/{subject}/versions", "versions"
        if n == 4 and seg[2] == "versions":
            return "/subjects/{subject}/versions/{version}", "version"
        if n == 5 and seg[2] == "versions" and seg[4] == "schema":
            return "/subjects/{subject}/versions/{version}/schema", "version_schema"
    if head == "compatibility" and n >= 4 and seg[1] == "subjects" and seg[3] == "versions":
        if n == 4:
            return "/compatibility/subjects/{subject}/versions", "compat_all"
        if n == 5:
            return "/compatibility/subjects/{subject}/versions/{version}", "compat_version"
    if head == "config":
        if n == 1:
            return "/config", "config"
        if n == 2:
            return "/config/{subject}", "config_subject"
    if head == "mode":
        if n == 1:
            return "/mode", "mode"
        if n == 2:
            return "/mode/{subject}", "mode_subject"
    return "/" + "/".join(seg), None
