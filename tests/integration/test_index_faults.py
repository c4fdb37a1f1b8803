"""Faults at every step of build and publish, with readers running.

Readers only ever see the old or the new snapshot, never a mix, and the old
one answers identically after a failed or killed build or publish. "Killed"
is a real SIGKILL of a separate process in the middle of the step.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.index import Builder, IndexReader, IndexSettings, publish
from grounded.index.publishing import publish as publish_with_faults
from tests.conftest import make_tenant
from tests.integration.index_corpus import CORPUS, HashingEmbedder, add_document

pytestmark = pytest.mark.integration

BUILD_STEPS = ["lock", "read", "tokenize", "embed", "write_entries", "write_vectors", "ready"]
PUBLISH_STEPS = ["publish.lock", "publish.check", "publish.retire", "publish.activate"]
PUBLISH_STEPS += ["publish.outbox"]
QUERIES = ["warranty months", "zebra tariff", "保修期", "pump"]
SETTINGS = IndexSettings()
EMBEDDER = HashingEmbedder()
Seen = tuple[int, str, tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]
Answer = tuple[int, dict[str, Seen]]


class Injected(Exception):
    pass


def raise_at(step: str) -> object:
    def hook(at: str) -> None:
        if at == step:
            raise Injected(step)

    return hook


def one(reader: IndexReader, who: Principal, query: str) -> Seen:
    """One read: both lists come from one snapshot, named by its generation."""
    got = reader.candidates(who, query, query_vector=EMBEDDER.embed_query(query), k=5)
    return (
        got.snapshot.generation,
        query,
        tuple((c.unit_id, round(c.score, 9)) for c in got.lexical),
        tuple((c.unit_id, round(c.score, 6)) for c in got.dense),
    )


def answer(reader: IndexReader, who: Principal) -> Answer:
    """Every query once; all must come from one generation (asserted)."""
    seen = [one(reader, who, q) for q in QUERIES]
    generations = {s[0] for s in seen}
    assert len(generations) == 1, "the live snapshot changed during answer()"
    return generations.pop(), {s[1]: s for s in seen}


class Readers:
    def __init__(self, database: Database, who: Principal, n: int = 2) -> None:
        self.reader = IndexReader(database, SETTINGS)
        self.who = who
        self.seen: list[Seen] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run) for _ in range(n)]

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for query in QUERIES:
                    self.seen.append(one(self.reader, self.who, query))
                self._stop.wait(0.01)  # leave CPU to the builder on small machines
            except BaseException as exc:  # recorded, asserted by the test
                self.errors.append(exc)
                return

    def __enter__(self) -> Readers:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


@pytest.fixture
def world(database: Database, owner: psycopg.Connection) -> tuple[Principal, Answer]:
    tenant = make_tenant(owner, "acme")
    for title, chunks in CORPUS:
        add_document(owner, tenant, title, chunks)
    who = Principal("user", uuid.uuid4(), tenant, frozenset({"admin"}))
    publish(database, who, Builder(database, SETTINGS, EMBEDDER).build(who).snapshot.generation)
    old = answer(IndexReader(database, SETTINGS), who)
    add_document(owner, tenant, "Tariffs", ["zebra crossing tariff, warranty months apply"])
    return who, old


def check_seen(readers: Readers, allowed: dict[int, Answer]) -> None:
    """Each read equals the answer of its generation, and only known generations appear."""
    assert not readers.errors, readers.errors
    assert readers.seen, "readers never ran"
    for seen in readers.seen:
        generation, query = seen[0], seen[1]
        assert generation in allowed, generation
        assert seen == allowed[generation][1][query]


@pytest.mark.parametrize("step", BUILD_STEPS)
def test_exception_at_each_build_step(
    database: Database, world: tuple[Principal, Answer], step: str
) -> None:
    who, old = world
    with Readers(database, who) as readers:
        with pytest.raises(Injected):
            Builder(database, SETTINGS, EMBEDDER, faults=raise_at(step)).build(  # type: ignore[arg-type]
                who, incremental=step in ("embed", "ready")
            )
        assert answer(readers.reader, who) == old
    check_seen(readers, {old[0]: old})
    new = Builder(database, SETTINGS, EMBEDDER).build(who).snapshot
    publish(database, who, new.generation)
    assert answer(readers.reader, who) != old


@pytest.mark.parametrize("step", PUBLISH_STEPS)
def test_exception_at_each_publish_step(
    database: Database, world: tuple[Principal, Answer], step: str
) -> None:
    who, old = world
    ready = Builder(database, SETTINGS, EMBEDDER).build(who).snapshot
    with Readers(database, who) as readers:
        with pytest.raises(Injected):
            publish_with_faults(database, who, ready.generation, faults=raise_at(step))  # type: ignore[arg-type]
        assert answer(readers.reader, who) == old
        publish(database, who, ready.generation)  # the same build still publishes
        new = answer(readers.reader, who)
    assert new[0] == ready.generation
    check_seen(readers, {old[0]: old, new[0]: new})


# One warmed-up parent (imports, Jieba dictionary) forks a child per step; the
# child builds and publishes and SIGKILLs itself when it reaches the step.
_CHILD = """
import json, os, signal, sys, uuid
sys.path.insert(0, {root!r})
from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.index import Builder, IndexSettings
from grounded.index.publishing import publish
from grounded.index.tokenize import analyzer
from tests.integration.index_corpus import HashingEmbedder
args = json.loads(sys.argv[1])
analyzer().tokenize("预热 warm up")
settings = Settings(**args["settings"])
who = Principal("user", uuid.uuid4(), uuid.UUID(args["tenant"]), frozenset({{"admin"}}))
results = {{}}
for step in args["steps"]:
    pid = os.fork()
    if pid == 0:
        def hook(at, step=step):
            if at == step:
                os.kill(os.getpid(), signal.SIGKILL)
        with Database.open(settings) as db:
            quiet = lambda at: None
            build_hook = quiet if step.startswith("publish.") else hook
            snap = Builder(db, IndexSettings(), HashingEmbedder(), faults=build_hook).build(who)
            publish(db, who, snap.snapshot.generation, faults=hook)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    results[step] = os.waitstatus_to_exitcode(status)
print(json.dumps(results))
"""


def kill_at(settings: Settings, tenant: uuid.UUID, steps: list[str]) -> dict[str, int]:
    root = str(Path(__file__).resolve().parents[2])
    payload = {
        "steps": steps,
        "tenant": str(tenant),
        "settings": {
            "data_dir": str(settings.data_dir),
            "database_url": settings.database_url.get_secret_value(),  # type: ignore[union-attr]
            "app_database_url": settings.app_database_url.get_secret_value(),  # type: ignore[union-attr]
        },
    }
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=root), json.dumps(payload)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_killed_process_at_each_step(
    database: Database, settings: Settings, world: tuple[Principal, Answer]
) -> None:
    who, old = world
    steps = BUILD_STEPS + PUBLISH_STEPS
    with Readers(database, who, n=1) as readers:
        codes = kill_at(settings, who.tenant_id, steps)
        assert answer(readers.reader, who) == old
    assert codes == dict.fromkeys(steps, -9)
    check_seen(readers, {old[0]: old})
    # The killed builders left no lock and no half state behind.
    report = Builder(database, SETTINGS, EMBEDDER).build(who)
    publish(database, who, report.snapshot.generation)
    with database.transaction(who.tenant_id) as conn:
        states = [r["state"] for r in conn.execute("SELECT state FROM index_snapshots")]
    assert "building" not in states
    assert states.count("live") == 1
