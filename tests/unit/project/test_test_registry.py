"""The test Schema Registry (tests/support/registry.py) answers as Confluent's does, checked
through confluent-kafka's own `SchemaRegistryClient` and through raw HTTP."""

from __future__ import annotations

import base64
import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from tests.support.registry import CONTENT_TYPE, TestSchemaRegistry

_names = itertools.count(1)


def _subject() -> str:
    return f"subject-{next(_names)}-value"


def _record(*fields: dict[str, Any], name: str = "r") -> str:
    return json.dumps({"type": "record", "name": name, "namespace": "default.db", "fields": fields})


A_LONG = {"name": "a", "type": "long"}
A_STRING = {"name": "a", "type": "string"}
B = {"name": "b", "type": "string"}
B_DEFAULT = {"name": "b", "type": "string", "default": ""}
C = {"name": "c", "type": "int"}
C_DEFAULT = {"name": "c", "type": "int", "default": 0}

V1 = _record(A_LONG, B)
ADD_WITH_DEFAULT = _record(A_LONG, B, C_DEFAULT)
ADD_WITHOUT_DEFAULT = _record(A_LONG, B, C)
REMOVE_FIELD = _record(A_LONG)
CHANGE_TYPE = _record(A_STRING, B)


@pytest.fixture(scope="module")
def registry() -> Iterator[TestSchemaRegistry]:
    with TestSchemaRegistry() as server:
        yield server


@pytest.fixture
def client(registry: TestSchemaRegistry) -> Iterator[SchemaRegistryClient]:
    with SchemaRegistryClient({"url": registry.url}) as made:
        yield made


def _http(
    url: str, method: str = "GET", body: Any = None, *, auth: str | None = None
) -> tuple[int, dict[str, str], Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", CONTENT_TYPE)
    if auth is not None:
        request.add_header("Authorization", "Basic " + base64.b64encode(auth.encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


# -- register, lookup, versions, ids -------------------------------------------------------


def test_register_answers_one_global_id_per_schema(
    registry: TestSchemaRegistry, client: SchemaRegistryClient
) -> None:
    first, second = _subject(), _subject()
    schema_id = client.register_schema(first, Schema(V1, "AVRO"))
    assert schema_id >= 1
    # same text again: same id, no new version
    assert client.register_schema(first, Schema(V1, "AVRO")) == schema_id
    assert client.get_versions(first) == [1]
    # same schema (other whitespace and key order) under another subject: same id
    spaced = json.dumps(json.loads(V1), indent=2, sort_keys=True)
    assert client.register_schema(second, Schema(spaced, "AVRO")) == schema_id
    assert registry.schemas(second) == [V1]  # the text first registered under this id
    other = client.register_schema(second, Schema(ADD_WITH_DEFAULT, "AVRO"))
    assert other != schema_id
    assert client.get_versions(second) == [1, 2]
    assert registry.schema_ids(second) == [schema_id, other]


def test_register_response_is_the_id_only(registry: TestSchemaRegistry) -> None:
    status, headers, body = _http(
        f"{registry.url}/subjects/{_subject()}/versions", "POST", {"schema": V1}
    )
    assert status == 200
    assert headers["Content-Type"] == CONTENT_TYPE
    assert list(body) == ["id"]


def test_lookup(client: SchemaRegistryClient, registry: TestSchemaRegistry) -> None:
    subject = _subject()
    schema_id = client.register_schema(subject, Schema(V1, "AVRO"))
    found = client.lookup_schema(subject, Schema(V1, "AVRO"))
    assert (found.subject, found.version, found.schema_id) == (subject, 1, schema_id)
    with pytest.raises(SchemaRegistryError) as missing:
        client.lookup_schema(subject, Schema(REMOVE_FIELD, "AVRO"))
    assert (missing.value.http_status_code, missing.value.error_code) == (404, 40403)
    status, _, body = _http(f"{registry.url}/subjects/nope", "POST", {"schema": V1})
    assert (status, body) == (404, {"error_code": 40401, "message": "Subject 'nope' not found."})


def test_versions_and_get_version(
    client: SchemaRegistryClient, registry: TestSchemaRegistry
) -> None:
    subject = _subject()
    first = client.register_schema(subject, Schema(V1, "AVRO"))
    second = client.register_schema(subject, Schema(ADD_WITH_DEFAULT, "AVRO"))
    assert client.get_versions(subject) == [1, 2]
    latest = client.get_latest_version(subject)
    assert (latest.version, latest.schema_id, latest.schema.schema_str) == (
        2,
        second,
        ADD_WITH_DEFAULT,
    )
    assert client.get_version(subject, 1).schema_id == first
    status, _, body = _http(f"{registry.url}/subjects/{subject}/versions/1")
    assert status == 200
    assert body == {"subject": subject, "version": 1, "id": first, "schema": V1}
    status, _, body = _http(f"{registry.url}/subjects/{subject}/versions/-1")
    assert body["version"] == 2
    status, _, body = _http(f"{registry.url}/subjects/{subject}/versions/1/schema")
    assert body == json.loads(V1)
    status, _, body = _http(f"{registry.url}/subjects/{subject}/versions/7")
    assert (status, body["error_code"]) == (404, 40402)
    status, _, body = _http(f"{registry.url}/subjects/{subject}/versions/zero")
    assert (status, body["error_code"]) == (422, 42202)
    status, _, body = _http(f"{registry.url}/subjects/missing/versions")
    assert (status, body["error_code"]) == (404, 40401)
    assert subject in client.get_subjects()


def test_get_schema_by_id(client: SchemaRegistryClient, registry: TestSchemaRegistry) -> None:
    subject = _subject()
    schema_id = client.register_schema(subject, Schema(V1, "AVRO"))
    assert client.get_schema(schema_id).schema_str == V1
    status, _, body = _http(f"{registry.url}/schemas/ids/{schema_id}")
    assert (status, body) == (200, {"schema": V1})
    assert subject in client.get_subjects_by_schema_id(schema_id)
    assert {"subject": subject, "version": 1} in _http(
        f"{registry.url}/schemas/ids/{schema_id}/versions"
    )[2]
    status, _, body = _http(f"{registry.url}/schemas/ids/99999")
    assert (status, body) == (404, {"error_code": 40403, "message": "Schema 99999 not found"})


def test_root_types_and_unknown_paths(registry: TestSchemaRegistry) -> None:
    assert _http(registry.url + "/")[::2] == (200, {})
    assert _http(registry.url + "/schemas/types")[2] == ["AVRO"]
    status, _, body = _http(registry.url + "/no/such/thing")
    assert (status, body) == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    status, _, body = _http(registry.url + "/subjects", "PUT", {})
    assert (status, body["error_code"]) == (405, 405)


def test_invalid_schema_is_422_42201(
    client: SchemaRegistryClient, registry: TestSchemaRegistry
) -> None:
    with pytest.raises(SchemaRegistryError) as invalid:
        client.register_schema(_subject(), Schema('{"type": "record", "name": "x"}', "AVRO"))
    assert (invalid.value.http_status_code, invalid.value.error_code) == (422, 42201)
    status, _, body = _http(
        f"{registry.url}/subjects/{_subject()}/versions", "POST", {"schema": "{not json"}
    )
    assert (status, body["error_code"]) == (422, 42201)
    status, _, body = _http(
        f"{registry.url}/subjects/{_subject()}/versions",
        "POST",
        {"schema": "{}", "schemaType": "JSON"},
    )
    assert (status, body["error_code"]) == (422, 42201)


# -- compatibility -------------------------------------------------------------------------

# (level, evolution from V1, compatible?) as Confluent defines the levels.
MATRIX = [
    ("BACKWARD", ADD_WITH_DEFAULT, True),
    ("BACKWARD", ADD_WITHOUT_DEFAULT, False),
    ("BACKWARD", REMOVE_FIELD, True),
    ("BACKWARD", CHANGE_TYPE, False),
    ("FORWARD", ADD_WITH_DEFAULT, True),
    ("FORWARD", ADD_WITHOUT_DEFAULT, True),
    ("FORWARD", REMOVE_FIELD, False),
    ("FORWARD", CHANGE_TYPE, False),
    ("FULL", ADD_WITH_DEFAULT, True),
    ("FULL", ADD_WITHOUT_DEFAULT, False),
    ("FULL", REMOVE_FIELD, False),
    ("FULL", CHANGE_TYPE, False),
    ("NONE", ADD_WITH_DEFAULT, True),
    ("NONE", ADD_WITHOUT_DEFAULT, True),
    ("NONE", REMOVE_FIELD, True),
    ("NONE", CHANGE_TYPE, True),
]
for _level in ("BACKWARD", "FORWARD", "FULL"):
    # against one earlier version, a transitive level answers as its plain twin
    MATRIX += [(f"{_level}_TRANSITIVE", s, ok) for lv, s, ok in list(MATRIX) if lv == _level]

_EVOLUTION_NAMES = {
    ADD_WITH_DEFAULT: "add-with-default",
    ADD_WITHOUT_DEFAULT: "add-without-default",
    REMOVE_FIELD: "remove-field",
    CHANGE_TYPE: "change-type",
}


@pytest.mark.parametrize(
    ("level", "evolved", "compatible"),
    MATRIX,
    ids=[f"{lv}-{_EVOLUTION_NAMES[s]}" for lv, s, _ in MATRIX],
)
def test_compatibility_levels(
    client: SchemaRegistryClient, level: str, evolved: str, compatible: bool
) -> None:
    subject = _subject()
    client.set_compatibility(subject, level)
    first = client.register_schema(subject, Schema(V1, "AVRO"))
    assert client.test_compatibility(subject, Schema(evolved, "AVRO")) is compatible
    if compatible:
        assert client.register_schema(subject, Schema(evolved, "AVRO")) != first
        assert client.get_versions(subject) == [1, 2]
    else:
        with pytest.raises(SchemaRegistryError) as refused:
            client.register_schema(subject, Schema(evolved, "AVRO"))
        assert (refused.value.http_status_code, refused.value.error_code) == (409, 409)
        assert f"compatibility: '{level}'" in refused.value.error_message
        assert client.get_versions(subject) == [1]


# Sequences where the plain level accepts the last step and the transitive one refuses it,
# because the last schema cannot follow the first.
TRANSITIVE = [
    ("BACKWARD", [_record(A_LONG), _record(A_LONG, B_DEFAULT), _record(A_LONG, B)]),
    ("FULL", [_record(A_LONG), _record(A_LONG, B_DEFAULT), _record(A_LONG, B)]),
    ("FORWARD", [_record(A_LONG, B), _record(A_LONG, B_DEFAULT), _record(A_LONG)]),
]


@pytest.mark.parametrize(("level", "steps"), TRANSITIVE, ids=[t[0] for t in TRANSITIVE])
def test_transitive_levels_check_every_version(
    client: SchemaRegistryClient, level: str, steps: list[str]
) -> None:
    plain, transitive = _subject(), _subject()
    client.set_compatibility(plain, level)
    client.set_compatibility(transitive, f"{level}_TRANSITIVE")
    for subject in (plain, transitive):
        for schema in steps[:-1]:
            client.register_schema(subject, Schema(schema, "AVRO"))
    client.register_schema(plain, Schema(steps[-1], "AVRO"))
    assert client.get_versions(plain) == [1, 2, 3]
    assert not client.test_compatibility_all_versions(transitive, Schema(steps[-1], "AVRO"))
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema(transitive, Schema(steps[-1], "AVRO"))
    assert refused.value.http_status_code == 409
    assert "oldSchemaVersion: 1" in refused.value.error_message


def test_incompatible_body_is_confluents(registry: TestSchemaRegistry) -> None:
    subject = _subject()
    url = f"{registry.url}/subjects/{subject}/versions"
    assert _http(url, "POST", {"schema": V1})[0] == 200
    status, headers, body = _http(url, "POST", {"schema": ADD_WITHOUT_DEFAULT})
    assert status == 409
    assert headers["Content-Type"] == CONTENT_TYPE
    assert set(body) == {"error_code", "message"}
    assert body["error_code"] == 409
    assert body["message"].startswith(
        "Schema being registered is incompatible with an earlier schema for subject "
        f'"{subject}", details: ['
    )
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in body["message"]
    assert body["message"].endswith("{validateFields: 'false', compatibility: 'BACKWARD'}]")


def test_compatibility_endpoint_verbose(registry: TestSchemaRegistry) -> None:
    subject = _subject()
    _http(f"{registry.url}/subjects/{subject}/versions", "POST", {"schema": V1})
    base = f"{registry.url}/compatibility/subjects/{subject}/versions"
    assert _http(f"{base}/latest", "POST", {"schema": ADD_WITH_DEFAULT})[2] == {
        "is_compatible": True
    }
    status, _, body = _http(f"{base}/1?verbose=true", "POST", {"schema": CHANGE_TYPE})
    assert status == 200
    assert body["is_compatible"] is False
    assert body["messages"] and "TYPE_MISMATCH" in body["messages"][0]
    # no such subject yet: anything is compatible
    assert _http(
        f"{registry.url}/compatibility/subjects/new-one/versions/latest", "POST", {"schema": V1}
    )[2] == {"is_compatible": True}


def test_config_global_and_per_subject(registry: TestSchemaRegistry) -> None:
    with TestSchemaRegistry() as own, SchemaRegistryClient({"url": own.url}) as client:
        assert client.get_compatibility() == "BACKWARD"
        assert client.set_compatibility(level="full") == {"compatibility": "FULL"}
        assert client.get_compatibility() == "FULL"
        status, _, body = _http(f"{own.url}/config/s1")
        assert (status, body["error_code"]) == (404, 40408)
        assert _http(f"{own.url}/config/s1?defaultToGlobal=true")[2] == {
            "compatibilityLevel": "FULL"
        }
        client.set_compatibility("s1", "none")
        assert client.get_compatibility("s1") == "NONE"
        own.set_compatibility("FORWARD_TRANSITIVE", subject="s2")
        assert client.get_compatibility("s2") == "FORWARD_TRANSITIVE"
        assert _http(f"{own.url}/config/s1", "DELETE")[2] == {"compatibilityLevel": "NONE"}
        status, _, body = _http(f"{own.url}/config", "PUT", {"compatibility": "SIDEWAYS"})
        assert (status, body["error_code"]) == (422, 42203)
        own.set_compatibility("NONE")
        assert client.get_compatibility() == "NONE"
        # a subject level wins over the global one
        client.set_compatibility("s3", "BACKWARD")
        client.register_schema("s3", Schema(V1, "AVRO"))
        with pytest.raises(SchemaRegistryError):
            client.register_schema("s3", Schema(CHANGE_TYPE, "AVRO"))


def test_delete_subject_and_version(registry: TestSchemaRegistry) -> None:
    with TestSchemaRegistry() as own, SchemaRegistryClient({"url": own.url}) as client:
        first = client.register_schema("s", Schema(V1, "AVRO"))
        client.register_schema("s", Schema(ADD_WITH_DEFAULT, "AVRO"))
        assert client.delete_version("s", 2) == 2
        assert client.get_versions("s") == [1]
        assert client.delete_subject("s") == [1]
        assert client.get_subjects() == []
        assert client.get_subjects(deleted=True) == ["s"]
        assert own.schemas("s") == []
        # ids survive deletes; version numbers are not reused after a soft delete
        assert client.get_schema(first).schema_str == V1
        # (the client's own cache would answer the old id without asking: ask over HTTP)
        assert _http(f"{own.url}/subjects/s/versions", "POST", {"schema": V1})[2] == {"id": first}
        assert client.get_versions("s") == [3]
        client.delete_subject("s")
        assert client.delete_subject("s", permanent=True) == [1, 2, 3]
        assert client.get_subjects(deleted=True) == []


# -- auth, counters, failures --------------------------------------------------------------


def test_basic_auth() -> None:
    with TestSchemaRegistry(user="alice", password="s3cr:et") as server:
        status, headers, body = _http(f"{server.url}/subjects")
        assert (status, body) == (401, {"error_code": 401, "message": "Unauthorized"})
        assert headers["WWW-Authenticate"].startswith("Basic")
        assert _http(f"{server.url}/subjects", auth="alice:wrong")[0] == 401
        assert _http(f"{server.url}/subjects", auth="alice:s3cr:et")[0] == 200

        with SchemaRegistryClient({"url": server.url, "max.retries": 0}) as anonymous:
            with pytest.raises(SchemaRegistryError) as refused:
                anonymous.register_schema("s-value", Schema(V1, "AVRO"))
            assert (refused.value.http_status_code, refused.value.error_code) == (401, 401)

        info = {"url": server.url, "basic.auth.user.info": "alice:s3cr:et"}
        with SchemaRegistryClient(info) as client:
            schema_id = client.register_schema("s-value", Schema(V1, "AVRO"))

        in_url = server.url.replace("http://", "http://alice:s3cr%3Aet@")
        with SchemaRegistryClient({"url": in_url}) as client:
            assert client.get_schema(schema_id).schema_str == V1
            assert client.get_subjects() == ["s-value"]


def test_request_counters() -> None:
    with TestSchemaRegistry() as server, SchemaRegistryClient({"url": server.url}) as client:
        client.register_schema("a/b-value", Schema(V1, "AVRO"))
        client.register_schema("a/b-value", Schema(V1, "AVRO"))  # the client's cache answers
        client.get_versions("a/b-value")
        assert server.requests == [
            ("POST", "/subjects/a/b-value/versions"),
            ("GET", "/subjects/a/b-value/versions"),
        ]
        assert server.count("POST", "/subjects/{subject}/versions") == 1
        assert server.count("GET") == 1
        assert server.count() == 2
        assert server.endpoint_counts() == {
            ("POST", "/subjects/{subject}/versions"): 1,
            ("GET", "/subjects/{subject}/versions"): 1,
        }
        server.reset_requests()
        assert server.count() == 0


def test_injected_failures_are_retried_by_the_client() -> None:
    with TestSchemaRegistry() as server:
        conf = {"url": server.url, "retries.wait.ms": 1, "retries.max.wait.ms": 2}
        with SchemaRegistryClient(conf) as client:
            server.fail_next(503, times=2)
            assert client.register_schema("s-value", Schema(V1, "AVRO")) >= 1
        assert server.count("POST", "/subjects/{subject}/versions") == 3
        server.fail_next(500)
        status, _, body = _http(f"{server.url}/subjects")
        assert (status, body["error_code"]) == (500, 50001)


def test_stop_frees_the_port() -> None:
    server = TestSchemaRegistry().start()
    url = server.url
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/", timeout=2)
    with pytest.raises(RuntimeError):
        _ = server.url
