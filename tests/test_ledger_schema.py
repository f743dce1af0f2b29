"""What a ledger file is comes from its tables and columns: each historical schema, built by hand with the
statements of its version, is brought to today's keeping every row and column; a file whose schema row and
tables disagree is refused and left byte for byte as it was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from core.data.spec import AcsSpec
from core.errors import LedgerUnavailable, Refused
from core.privacy.access import Spender
from core.privacy.ledger import Ledger
from core.privacy.ledger_rows import key_json, part_scope
from core.privacy.ledger_store import (
    _ENTRIES,
    _KNOWN,
    _TODAY,
    SCHEMA_VERSION,
    SqliteStore,
    _move_entries,
    _shape,
    open_ledger,
)

CA = AcsSpec(("CA",)).population()
MI = AcsSpec(("MI",)).population()
CA_MI = AcsSpec(("CA", "MI")).population()
ANA = Spender("analyst", "ana")

# The CREATE statements each version ran (this module's history), frozen here as they were.
_V1_ENTRIES = """CREATE TABLE entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL UNIQUE, time TEXT NOT NULL, kind TEXT NOT NULL,
    key TEXT NOT NULL, label TEXT NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL, coefficient TEXT,
    stages TEXT, outcome TEXT CHECK (outcome IS NULL OR outcome IN ('released', 'bottom', 'fallback')),
    value REAL, low REAL, high REAL{more})"""
_V1_REST = """
CREATE TABLE schema (version INTEGER NOT NULL);
CREATE TABLE entry_parts (uid TEXT NOT NULL REFERENCES entries(uid), part TEXT NOT NULL, PRIMARY KEY (uid, part));
CREATE INDEX entry_parts_by_part ON entry_parts (part);
CREATE TABLE caps (scope TEXT PRIMARY KEY, kind TEXT, key TEXT, label TEXT, cap_epsilon REAL NOT NULL,
                   cap_delta REAL NOT NULL);
"""
_CERTIFICATIONS = """
CREATE TABLE certifications (uid TEXT PRIMARY KEY, entry TEXT NOT NULL UNIQUE REFERENCES entries(uid),
    opened TEXT NOT NULL, plan TEXT NOT NULL, summary TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('drawing', 'open', 'finished', 'closed', 'failed')), certificates TEXT,
    release_entry TEXT UNIQUE REFERENCES entries(uid));
"""
_ACCESS = """
CREATE TABLE analysts (name TEXT PRIMARY KEY, added TEXT NOT NULL, share_epsilon REAL NOT NULL,
    share_delta REAL NOT NULL, key_id TEXT UNIQUE, salt BLOB, key_hash BLOB, email TEXT UNIQUE, expires REAL,
    revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sign_ins (seq INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, source TEXT NOT NULL,
    claimed TEXT, ok INTEGER NOT NULL);
CREATE INDEX sign_ins_by_source ON sign_ins (source, seq);
"""
_V3_FIRST = (_V1_ENTRIES.replace("'fallback')", "'fallback', 'failed')").format(more=", document TEXT, reason TEXT")
             + ";" + _V1_REST + _CERTIFICATIONS)
HISTORY = {  # name: (schema row, statements, index in _KNOWN)
    "1": (1, _V1_ENTRIES.format(more="") + ";" + _V1_REST, 0),
    "2": (2, _V1_ENTRIES.format(more=", document TEXT") + ";" + _V1_REST, 1),
    "1 then 2": (2, _V1_ENTRIES.format(more="") + ";" + _V1_REST + "ALTER TABLE entries ADD COLUMN document TEXT;", 1),
    "3 first": (3, _V3_FIRST, 2),
    "3 first, reopened": (3, _V3_FIRST + _ACCESS, 3),
    "3": (3, _V1_ENTRIES.replace("'fallback')", "'fallback', 'failed')").format(
        more=", document TEXT, reason TEXT, spender TEXT NOT NULL DEFAULT 'curator'") + ";" + _V1_REST
        + _CERTIFICATIONS + _ACCESS + "CREATE INDEX sign_ins_by_claimed ON sign_ins (claimed, seq);", 4),
}
# (seq, uid, population, epsilon, delta, details): seqs with gaps, so a renumbering shows.
ENTRIES = [(5, "e1", CA_MI, 1.5, 2e-6, {"coefficient": "female", "stages": json.dumps({"release": [1.5, 2e-6]}),
                                        "outcome": "released", "value": 0.25, "low": 0.1, "high": 0.4,
                                        "document": '{"kept": true}'}),
           (9, "e2", CA, 0.5, 0.0, {"coefficient": "age", "stages": "{}", "outcome": "bottom"}),
           (12, "e3", MI, 1.0, 1e-7, {})]


def build(path: Path, name: str) -> None:
    """A file of one historical schema, with entries, their parts, caps and whatever else that version kept."""
    version, statements, _ = HISTORY[name]
    db = sqlite3.connect(path)
    db.executescript(statements)
    columns = {r[1] for r in db.execute("PRAGMA table_info(entries)")}
    db.execute("INSERT INTO schema VALUES (?)", (version,))
    for seq, uid, p, eps, delta, details in ENTRIES:
        row = {"seq": seq, "uid": uid, "time": f"2026-01-{seq:02d}T00:00:00+00:00", "kind": p.kind,
               "key": key_json(p), "label": p.label, "epsilon": eps, "delta": delta,
               **{k: v for k, v in details.items() if k in columns}}
        if "reason" in columns and uid == "e3":
            row |= {"outcome": "failed", "reason": "the run ended", "stages": "{}"}
        db.execute(f"INSERT INTO entries ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
        db.executemany("INSERT INTO entry_parts VALUES (?, ?)", [(uid, part_scope(part)) for part in p.parts()])
    db.execute("INSERT INTO caps (scope, cap_epsilon, cap_delta) VALUES ('default', 10.0, 1e-5)")
    db.execute("INSERT INTO caps VALUES (?, ?, ?, ?, 4.0, 1e-5)", (part_scope(CA), CA.kind, key_json(CA), CA.label))
    if "certifications" in _shape(db):
        db.execute("INSERT INTO certifications VALUES ('c1', 'e1', '2026-01-05T00:00:00+00:00', '{}', '{}', 'open', "
                   "'[1, 2]', NULL)")
    if "analysts" in _shape(db):
        db.execute("INSERT INTO analysts (name, added, share_epsilon, share_delta, email) VALUES "
                   "('bo', '2026-01-01T00:00:00+00:00', 2.5, 1e-5, 'bo@example.org')")
        db.execute("INSERT INTO sign_ins (time, source, claimed, ok) VALUES (1.0, '10.0.0.7', 'bo@example.org', 1)")
    db.commit()
    db.close()


def dump(path: Path) -> dict[str, list[dict]]:
    """Every row of every table (SQLite's own included), as dicts, in a stable order."""
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out = {}
    for t in tables:
        cur = db.execute(f'SELECT * FROM "{t}"')
        names = [c[0] for c in cur.description]
        out[t] = sorted((dict(zip(names, r, strict=True)) for r in cur), key=repr)
    db.close()
    return out


def alter(path: Path, *statements: str) -> None:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def todays(path: Path) -> Ledger:
    """Today's file: caps, and the analyst ana, with a share of 2.5, who has spent 2 on CA."""
    ledger = open_ledger(path)
    ledger.set_default_cap((10.0, 1e-5))
    ledger.add_analyst("ana", (2.5, 1e-5), email="ana@example.org")
    ledger.spend(CA, 2.0, 0.0, spender=ANA)
    ledger.spend(CA_MI, 1.0, 1e-7)
    assert ledger.remaining(CA, ANA)[0] == pytest.approx(0.5)
    return ledger


def test_a_new_file_has_exactly_todays_known_shape(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    path.write_bytes(b"")  # an empty file is a new ledger
    SqliteStore(path)
    db = sqlite3.connect(path)
    assert _shape(db) == _TODAY and db.execute("SELECT version FROM schema").fetchall() == [(SCHEMA_VERSION,)]
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


@pytest.mark.parametrize("name", HISTORY)
def test_an_older_file_keeps_every_row_and_column(tmp_path, name):
    path = tmp_path / "old.sqlite3"
    build(path, name)
    db = sqlite3.connect(path)
    assert (HISTORY[name][0], _shape(db)) == _KNOWN[HISTORY[name][2]]  # the module knows this version's shape
    db.close()
    before = dump(path)
    ledger = Ledger(store=SqliteStore(path))
    after = dump(path)
    assert after["schema"] == [{"version": SCHEMA_VERSION}] and _shape(sqlite3.connect(path)) == _TODAY
    for table in ("entry_parts", "caps", "certifications", "analysts", "sign_ins", "analyst_changes"):
        assert after[table] == before.get(table, []), table
    old = {r["uid"]: r for r in before["entries"]}
    assert {r["uid"] for r in after["entries"]} == set(old)
    for row in after["entries"]:
        assert {k: row[k] for k in old[row["uid"]]} == old[row["uid"]]  # seq, charge, details: as they were
        assert row["spender"] == "curator"
        assert all(row[k] is None for k in {"document", "reason"} - old[row["uid"]].keys())
    assert ledger.spent(CA) == (2.0, 2e-6) and ledger.spent(MI) == (2.5, 2e-6 + 1e-7)
    assert ledger.cap(CA) == (4.0, 1e-5) and ledger.cap(MI) == (10.0, 1e-5)
    (first, second) = ledger.entries(CA)
    assert first.details.outcome == "released" and first.details.value == 0.25 and second.details.outcome == "bottom"
    ledger.spend(CA, 1.0, 0.0)
    assert max(r["seq"] for r in dump(path)["entries"]) == 13  # later spends follow the kept seqs


ALTERATIONS = {
    "today's, row set to 3": ("UPDATE schema SET version = 3",),
    "today's, row set to 2": ("UPDATE schema SET version = 2",),
    "today's, row set to 1": ("UPDATE schema SET version = 1",),
    "a version that is no whole number": ("UPDATE schema SET version = 2.5",),
    "a column no version had": ("ALTER TABLE entries ADD COLUMN note TEXT",),
    "no schema row": ("DELETE FROM schema",),
    "two schema rows": ("INSERT INTO schema VALUES (3)",),
    "a table no version had": ("CREATE TABLE notes (text TEXT)",),
    "a trigger": ("CREATE TRIGGER forget AFTER INSERT ON entries BEGIN DELETE FROM entry_parts; END",),
}


def refused_untouched(path: Path) -> str:
    """Open the file: LedgerUnavailable, and the file (its bytes, its rows, the files beside it) as it was."""
    files = sorted(p.name for p in path.parent.iterdir())
    data, rows = path.read_bytes(), dump(path)
    with pytest.raises(LedgerUnavailable) as err:
        SqliteStore(path)
    assert path.read_bytes() == data and sorted(p.name for p in path.parent.iterdir()) == files
    assert dump(path) == rows
    message = str(err.value)
    assert str(path) in message and "\n" not in message and "left untouched" in message
    return message


@pytest.mark.parametrize("alteration", ALTERATIONS)
def test_a_file_whose_schema_row_and_tables_disagree_is_refused_untouched(tmp_path, alteration):
    path = tmp_path / "ledger.sqlite3"
    todays(path)
    alter(path, *ALTERATIONS[alteration])
    refused_untouched(path)


def test_a_version_1_file_claiming_version_3_is_refused_untouched(tmp_path):
    path = tmp_path / "old.sqlite3"
    build(path, "1")
    alter(path, "UPDATE schema SET version = 3")
    assert "not those of its schema version 3" in refused_untouched(path)


def test_a_downgraded_file_cannot_give_an_analyst_her_share_back(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    todays(path)
    alter(path, "UPDATE schema SET version = 2")
    assert "not those of its schema version 2" in refused_untouched(path)
    alter(path, f"UPDATE schema SET version = {SCHEMA_VERSION}")  # the curator restores the row
    ledger = open_ledger(path)
    assert ledger.remaining(CA, ANA)[0] == pytest.approx(0.5) and ledger.spent_by(CA, "ana") == (2.0, 0.0)
    assert [e.spender for e in ledger.entries(CA)] == ["ana", "curator"]
    with pytest.raises(Refused):
        ledger.spend(CA, 1.0, 0.0, spender=ANA)


def test_a_column_that_holds_values_is_never_dropped_by_a_move():
    db = sqlite3.connect(":memory:")
    db.execute(_ENTRIES.format(name="entries"))
    db.execute("ALTER TABLE entries ADD COLUMN note TEXT")
    db.execute("INSERT INTO entries (uid, time, kind, key, label, epsilon, delta, spender, note) "
               "VALUES ('e1', 't', 'acs', '[]', 'x', 1.0, 0.0, 'ana', 'kept')")
    assert _move_entries(db, _shape(db)["entries"]) == 1
    assert _shape(db)["entries"] == _TODAY["entries"] | {"note"}  # nothing moved
    db.execute("UPDATE entries SET note = NULL")
    assert _move_entries(db, _shape(db)["entries"]) == 0
    assert _shape(db)["entries"] == _TODAY["entries"]
    assert db.execute("SELECT seq, uid, epsilon, spender FROM entries").fetchall() == [(1, "e1", 1.0, "ana")]
