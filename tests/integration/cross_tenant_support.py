"""The machinery of the cross-tenant suite: planting canaries, walking routes.

Kept apart from the test module so the rules a later endpoint must satisfy
(``ENTITY_OF``, ``QUERY_OVERRIDES``, ``NOT_WALKED``, ``UNPLANTED_TABLES``)
are one screen, in ``test_cross_tenant.py``.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import psycopg

CANARY = "CANARY-b7e1"


@dataclass
class Planted:
    """Tenant B's rows (by entity) and every string that must never leak to A."""

    ids: dict[str, uuid.UUID] = field(default_factory=dict)
    strings: set[str] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)

    def canary(self, what: str) -> str:
        value = f"{CANARY}-{what}-{uuid.uuid4().hex[:8]}"
        self.strings.add(value)
        return value


def plant(owner: psycopg.Connection[Any], tenant: uuid.UUID, planted: Planted) -> None:
    """Insert one canary-bearing row of B into every tenant table we know."""

    def insert(table: str, columns: dict[str, Any]) -> uuid.UUID | None:
        names = ", ".join(columns)
        marks = ", ".join(["%s"] * len(columns))
        keyed = table != "catalog_revisions"  # one row per tenant, keyed by tenant_id
        cursor = owner.execute(
            f"INSERT INTO {table} (tenant_id, {names}) VALUES (%s, {marks})"
            + (" RETURNING id" if keyed else ""),
            (tenant, *columns.values()),
        )
        planted.tables.add(table)
        row = cursor.fetchone() if keyed else None
        return row[0] if row is not None else None

    sha = "0" * 64
    source = insert(
        "sources",
        {"kind": "upload", "name": planted.canary("source"), "uri": planted.canary("uri")},
    )
    document = insert(
        "documents",
        {
            "source_id": source,
            "title": planted.canary("title"),
            "external_id": planted.canary("external"),
            "acl_groups": [planted.canary("group")],
            "metadata": json.dumps({"note": planted.canary("metadata")}),
        },
    )
    version = insert(
        "document_versions",
        {
            "document_id": document,
            "version_no": 1,
            "content_sha256": sha,
            "byte_size": 1,
            "filename": planted.canary("filename"),
        },
    )
    owner.execute("UPDATE documents SET current_version_id = %s WHERE id = %s", (version, document))
    asset = insert(
        "assets",
        {
            "document_version_id": version,
            "kind": "image",
            "detail": json.dumps({"ocr": planted.canary("asset")}),
        },
    )
    chunk = insert(
        "chunks",
        {
            "document_id": document,
            "document_version_id": version,
            "ordinal": 0,
            "modality": "text",
            "text": planted.canary("chunk"),
            "content_sha256": sha,
        },
    )
    item = insert(
        "knowledge_items",
        {"source_id": source, "document_id": document, "body": planted.canary("knowledge")},
    )
    insert(
        "events",
        {
            "actor_kind": "system",
            "entity_type": "knowledge_item",
            "entity_id": item,
            "action": "create",
            "after": json.dumps({"body": planted.canary("event")}),
        },
    )
    snapshot = insert(
        "index_snapshots",
        {"generation": 1, "config": json.dumps({"note": planted.canary("snapshot")})},
    )
    run = insert(
        "retrieval_runs",
        {
            "principal": json.dumps({"kind": "user"}),
            "query": planted.canary("query"),
            "snapshot_id": snapshot,
        },
    )
    insert("catalog_revisions", {"revision": 41})
    insert(
        "index_outbox",
        {
            "entity_type": "knowledge_item",
            "entity_id": item,
            "entity_version": 1,
            "op": "upsert",
            "catalog_revision": 41,
        },
    )
    present = tenant_tables(owner)
    run_id = None
    if "ingest_runs" in present:  # migration 0006 (ingest); planted where it exists
        run_id = insert(
            "ingest_runs",
            {
                "document_id": document,
                "document_version_id": version,
                "pipeline_version": planted.canary("pipeline"),
                "error": planted.canary("ingest-error"),
                "detail": json.dumps({"note": planted.canary("ingest-detail")}),
            },
        )
        planted.ids["ingest_run"] = run_id  # type: ignore[assignment]
    if "answers" in present:  # migration 0007 (answers)
        context = insert(
            "answer_contexts",
            {
                "retrieval_run_id": run,
                "question": planted.canary("context-question"),
                "budget_chars": 1000,
                "evidence": json.dumps([{"text": planted.canary("evidence")}]),
                "excluded": "[]",
            },
        )
        answer = insert(
            "answers",
            {
                "principal": json.dumps({"kind": "user", "id": str(uuid.uuid4())}),
                "question": planted.canary("answer-question"),
                "status": "answered",
                "mode": "extractive",
                "text": planted.canary("answer"),
                "context_id": context,
                "retrieval_run_ids": [run],
                "prompt_version": "answer-v1",
            },
        )
        planted.ids["answer"] = answer  # type: ignore[assignment]
    for name, value in {
        "source": source,
        "document": document,
        "document_version": version,
        "asset": asset,
        "chunk": chunk,
        "knowledge_item": item,
        "index_snapshot": snapshot,
        "retrieval_run": run,
    }.items():
        assert value is not None
        planted.ids[name] = value


def tenant_tables(owner: psycopg.Connection[Any]) -> set[str]:
    rows = owner.execute(
        "SELECT table_name FROM information_schema.columns"
        " WHERE table_schema = 'public' AND column_name = 'tenant_id'"
    ).fetchall()
    return {r[0] for r in rows}


def snapshot_tenant(owner: psycopg.Connection[Any], tenant: uuid.UUID) -> dict[str, list[str]]:
    """Every row of ``tenant`` in every tenant table, as JSON text (for before/after)."""
    found = {}
    for table in sorted(tenant_tables(owner)):
        rows = owner.execute(
            f"SELECT row_to_json(t)::text FROM {table} t WHERE tenant_id = %s ORDER BY 1",
            (tenant,),
        ).fetchall()
        found[table] = [r[0] for r in rows]
    return found


# -- request generation from the OpenAPI schema --------------------------------


class CannotWalk(Exception):
    """The suite does not know how to exercise a route: a loud failure, not a skip."""


@dataclass(frozen=True)
class Probe:
    method: str
    url: str
    body: Any = None  # JSON body
    form: dict[str, str] | None = None  # multipart fields
    files: dict[str, tuple[str, bytes, str]] | None = None  # multipart files
    sent_ids: frozenset[str] = frozenset()
    slots: int = 0  # how many id slots the request has
    foreign_slot: str | None = None  # which of them carried a B id


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = spec["components"]["schemas"][name]
    return schema


class Filler:
    """Builds a request in which id slot number ``foreign`` holds B's id and every
    other id slot a fresh id that exists nowhere (``foreign=None``: all fresh).

    Probing one slot at a time means a route that checks its first id cannot
    hide what it would do with its second.
    """

    def __init__(
        self,
        spec: dict[str, Any],
        entity_of: dict[str, str],
        ids: dict[str, uuid.UUID],
        route: str,
        foreign: int | None,
    ) -> None:
        self.spec = spec
        self.entity_of = entity_of
        self.ids = ids
        self.route = route
        self.foreign = foreign
        self.slots = 0
        self.foreign_slot: str | None = None
        self.sent: set[str] = set()

    def id_for(self, name: str, resource: str | None = None) -> str:
        entity = self.entity_of.get(name) or (
            self.entity_of.get(f"@{resource}") if resource else None
        )
        if entity is None:
            raise CannotWalk(
                f"{self.route}: id slot {name!r} names no entity; add it to ENTITY_OF in "
                "tests/integration/test_cross_tenant.py"
            )
        if entity not in self.ids:
            raise CannotWalk(f"{self.route}: no planted B row for entity {entity!r}; plant one")
        if self.slots == self.foreign:
            value = str(self.ids[entity])
            self.foreign_slot = name
        else:
            value = str(uuid.uuid4())
        self.slots += 1
        self.sent.add(value)
        return value

    def value(self, schema: dict[str, Any], name: str, resource: str | None) -> Any:
        schema = _resolve(schema, self.spec)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [s for s in schema[key] if _resolve(s, self.spec).get("type") != "null"]
                return self.value(options[0], name, resource)
        if "allOf" in schema:
            return self.value(schema["allOf"][0], name, resource)
        if "enum" in schema:
            return schema["enum"][0]
        if "const" in schema:
            return schema["const"]
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            return self.obj(schema, resource)
        if kind == "array":
            item = schema.get("items", {})
            looks_like_id = _resolve(item, self.spec).get("format") == "uuid"
            count = max(schema.get("minItems", 0), 1 if looks_like_id else 0)
            return [self.value(item, name, resource) for _ in range(count)]
        if kind == "string":
            fmt = schema.get("format")
            if fmt == "uuid":
                return self.id_for(name, resource)
            if fmt == "date-time":
                return "2030-01-01T00:00:00Z"
            return "x" * max(schema.get("minLength", 1), 1)
        if kind == "integer":
            return max(int(schema.get("minimum", 1)), 1)
        if kind == "number":
            return float(schema.get("minimum", 1))
        if kind == "boolean":
            return False
        return None

    def obj(self, schema: dict[str, Any], resource: str | None) -> dict[str, Any]:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for name, sub in properties.items():
            if name in required or _is_id_slot(_resolve(sub, self.spec), self.spec):
                out[name] = self.value(sub, name, resource)
        return out

    def multipart(
        self, schema: dict[str, Any], resource: str | None
    ) -> tuple[dict[str, str], dict[str, tuple[str, bytes, str]]]:
        """Form fields and one small harmless file per file field."""
        schema = _resolve(schema, self.spec)
        form: dict[str, str] = {}
        files: dict[str, tuple[str, bytes, str]] = {}
        required = set(schema.get("required", []))
        for name, sub in schema.get("properties", {}).items():
            sub = _resolve(sub, self.spec)
            if sub.get("format") == "binary" or "contentMediaType" in sub:
                files[name] = ("probe.txt", b"a harmless cross-tenant probe\n", "text/plain")
            elif name in required or _is_id_slot(sub, self.spec):
                form[name] = str(self.value(sub, name, resource))
        return form, files


def _is_id_slot(schema: dict[str, Any], spec: dict[str, Any]) -> bool:
    """An optional field that carries an id (or ids): always filled, to probe it."""
    for option in [*schema.get("anyOf", []), schema]:
        option = _resolve(option, spec)
        if option.get("format") == "uuid":
            return True
        if (
            option.get("type") == "array"
            and _resolve(option.get("items", {}), spec).get("format") == "uuid"
        ):
            return True
    return False


_PARAM = re.compile(r"\{([^}]+)\}")


def build_probe(
    spec: dict[str, Any],
    path: str,
    method: str,
    entity_of: dict[str, str],
    query_overrides: dict[str, str],
    ids: dict[str, uuid.UUID],
    foreign: int | None,
    body_extra: dict[str, object] | None = None,
) -> Probe:
    """The request for one route; id slot ``foreign`` carries B's id (None: none does)."""
    route = f"{method.upper()} {path}"
    operation = spec["paths"][path][method]
    segments = [s for s in path.split("/") if s and not s.startswith("{") and s != "v1"]
    resource = segments[0] if segments else None
    filler = Filler(spec, entity_of, ids, route, foreign)
    url = _PARAM.sub(lambda m: filler.id_for(m.group(1), resource), path)
    query: dict[str, str] = {}
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "query":
            continue
        name = parameter["name"]
        if name in query_overrides:
            template = query_overrides[name]
            query[name] = _PARAM.sub(lambda m: filler.id_for(m.group(1), resource), template)
            continue
        schema = _resolve(parameter.get("schema", {}), spec)
        if parameter.get("required") or _is_id_slot(schema, spec):
            query[name] = str(filler.value(schema, name, resource))
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    body = form = files = None
    request_body = operation.get("requestBody")
    if request_body is not None:
        content = request_body.get("content", {})
        if "application/json" in content:
            body = filler.value(content["application/json"]["schema"], "body", resource)
            if body_extra and isinstance(body, dict):
                body.update(body_extra)
        elif "multipart/form-data" in content:
            form, files = filler.multipart(content["multipart/form-data"]["schema"], resource)
            if body_extra:
                form.update({k: str(v) for k, v in body_extra.items()})
        else:
            raise CannotWalk(
                f"{route}: body type {sorted(content)} is not generated yet; teach "
                "tests/integration/cross_tenant_support.py or list it in NOT_WALKED"
            )
    return Probe(
        method=method,
        url=url,
        body=body,
        form=form,
        files=files,
        sent_ids=frozenset(filler.sent),
        slots=filler.slots,
        foreign_slot=filler.foreign_slot,
    )
