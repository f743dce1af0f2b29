"""A real PostgreSQL server for the ledger's tests: pgserver's binaries, started once per session (`pg_server`), a
fresh database per test (`pg_url`, `new_database`), and the work of the processes that race on it.

Importing this module skips the importing test file, saying why, when psycopg or pgserver is missing (both are in
the requirements: psycopg in requirements.txt, pgserver in requirements-dev.txt).
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from pathlib import Path

import pytest

from core.errors import Refused
from core.privacy.ledger_pg import LEDGER_SCHEMA
from core.privacy.ledger_store import open_ledger
from core.privacy.population import Population

psycopg = pytest.importorskip("psycopg", reason="the PostgreSQL ledger's tests need psycopg (requirements.txt)")
with warnings.catch_warnings():  # platformdirs warns, on import, of a machine without XDG_RUNTIME_DIR
    warnings.simplefilter("ignore")
    pgserver = pytest.importorskip("pgserver", reason="the PostgreSQL ledger's tests need pgserver, which ships a "
                                   "PostgreSQL server (requirements-dev.txt)")

TABLES = ("entries", "entry_parts", "caps", "certifications", "analysts", "sign_ins", "analyst_changes", "locks")


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server for the session, stopped and deleted at the end, with its data, databases included.

    Its folder is not one of pytest's: a concurrent pytest run may reset their permissions or delete them, and a
    server started by root runs as another user (pgserver), who must keep reaching it. Commits are not flushed to
    disk (fsync off): what is tested is what each transaction sees, not a power cut (README's figures are measured
    with fsync on)."""
    folder = Path(tempfile.mkdtemp(prefix="psp-postgres-"))
    server = pgserver.get_server(folder / "data", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        for statement in ("ALTER SYSTEM SET fsync = off", "ALTER SYSTEM SET synchronous_commit = off",
                          "SELECT pg_reload_conf()"):
            db.execute(statement)
    yield server
    server.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def databases(pg_server):
    """new(): the URL of a new, empty database on the session's server."""

    def new() -> str:
        name = f"ledger_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(pg_server.get_uri(), autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return pg_server.get_uri(name)

    return new


@pytest.fixture
def pg_url(databases) -> str:
    """A fresh database of the test's own."""
    return databases()


def connect(url: str, **kwargs):
    """A connection to the database at url that reads and writes the ledger's tables by their names, as the store's
    own connections do (LEDGER_SCHEMA alone on the search_path)."""
    return psycopg.connect(url, options=f"-c search_path={LEDGER_SCHEMA}", **kwargs)


def empty(url: str) -> None:
    """Empty every table of the ledger at url (its schema stays): a fresh ledger without a new database."""
    with connect(url, autocommit=True) as db:
        db.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY")


# ------------------------------------------------------------------ what the racing processes do (spawned)


def spend_in_turns(url: str, people: list[Population], cost: tuple[float, float], start, out) -> None:
    """For each people in turn: wait for the other processes at the barrier, then try to spend cost on them through
    a connection of this process; put (people's key, "spent" or "refused") on out."""
    ledger = open_ledger(url)
    for p in people:
        start.wait(timeout=60)
        try:
            ledger.spend(p, *cost)
            out.put((p.key, "spent"))
        except Refused:
            out.put((p.key, "refused"))


def finish_in_turns(url: str, turns: list[tuple[str, Population, tuple[float, float], dict]], start, out) -> None:
    """For each (certification, people, cost, plan) in turn: wait at the barrier, then try to finish it; put
    (certification, the release entry's uid or None when refused) on out."""
    ledger = open_ledger(url)
    for uid, people, cost, plan in turns:
        start.wait(timeout=60)
        try:
            out.put((uid, ledger.finish_certification(uid, people, *cost, plan)[0].uid))
        except Refused:
            out.put((uid, None))
