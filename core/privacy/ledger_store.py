"""A durable privacy ledger: `SqliteStore`, one SQLite file the data's curator keeps (docs/privacy.md).

The file holds an append-only log of charged draws and the caps:

- `entries`: uid, time (UTC, ISO 8601), the population (kind and key as JSON, its description), epsilon,
  delta and the release details (coefficient, each stage's (epsilon, delta) as JSON, outcome, value,
  interval low and high, and the release's private document, `core.report.private_report` as JSON; empty
  until the run is over). Rows are never deleted and their charge is never
  changed; only the release details of a row are written once the run has ended.
- `entry_parts`: one row per part an entry charges (a census population of several states charges
  each state), indexed, so what a part has spent is one query.
- `caps`: the cap of each part (scope = the part's key as JSON) and the default cap (scope "default").
- `schema`: the schema version.

A spend is one transaction: `BEGIN IMMEDIATE` (which takes the file's write lock), read the spent total
and cap of each part, apply the rule, insert, `COMMIT`. Two threads or processes spending at once are
serialised by the write lock, so they can never both pass a cap. The file is in WAL mode, and a
connection waits up to `BUSY_TIMEOUT` seconds for the lock before giving up.

Any failure of the file (unreadable, not a database, unwritable, locked past the timeout, written by a
newer schema, or altered: its schema row and its tables are not what any version wrote) raises
`LedgerUnavailable` naming the path and what is wrong: a release is refused, never charged to nothing or to
memory. What a file is comes from its tables and columns, read before anything is written: an altered file
is refused untouched, and an older one is brought to today's schema keeping every column it has.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.errors import LedgerUnavailable, Refused
from core.privacy.access import WINDOW, Analyst, email_taken, name_taken, throttle
from core.privacy.ledger import (
    AnalystChange,
    Caps,
    Certification,
    Change,
    Edit,
    Ledger,
    LedgerEntry,
    Pair,
    Refusal,
    ReleaseDetails,
)
from core.privacy.ledger_rows import (
    ANALYST_COLUMNS,
    CERTIFICATIONS_SQL,
    analyst_from_row,
    analyst_values,
    certification_from_row,
    entry_from_row,
    iso_time,
    key_json,
    part_scope,
    parts_in_order,
    sql_real,
    tuples,
    with_parts,
)
from core.privacy.population import Population

# 2 added entries.document; 3 the outcome "failed" with entries.reason, who spent each entry, the certifications,
# the analysts and the sign-ins; 4 the log of changes to the analysts (_KNOWN). An older file is brought up to 4 when
# opened.
SCHEMA_VERSION = 4
BUSY_TIMEOUT = 10.0  # seconds a connection waits for another's write lock
ENV_VAR = "PSP_LEDGER"
APP_DIR = "private-single-parameter"
DEFAULT_SCOPE = "default"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")  # a ledger named so is a PostgresStore
# Any other name of this form is a URL too, never a file's path: opened as one, it would be a new ledger of its own.
_URL = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.-]*)://")

_ENTRIES = """
CREATE TABLE IF NOT EXISTS {name} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uid TEXT NOT NULL UNIQUE,
    time TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    label TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    coefficient TEXT,
    stages TEXT,
    outcome TEXT CHECK (outcome IS NULL OR outcome IN ('released', 'bottom', 'fallback', 'failed')),
    value REAL,
    low REAL,
    high REAL,
    document TEXT,
    reason TEXT,
    spender TEXT NOT NULL DEFAULT 'curator'
)"""

# The columns of each table as this module has ever written them; entries alone changed between versions.
_V1_ENTRIES = frozenset({"seq", "uid", "time", "kind", "key", "label", "epsilon", "delta", "coefficient", "stages",
                         "outcome", "value", "low", "high"})
_TABLES = {
    "schema": frozenset({"version"}),
    "entry_parts": frozenset({"uid", "part"}),
    "caps": frozenset({"scope", "kind", "key", "label", "cap_epsilon", "cap_delta"}),
    "certifications": frozenset({"uid", "entry", "opened", "plan", "summary", "state", "certificates",
                                 "release_entry"}),
    "analysts": frozenset({"name", "added", "share_epsilon", "share_delta", "key_id", "salt", "key_hash", "email",
                           "expires", "revoked"}),
    "sign_ins": frozenset({"seq", "time", "source", "claimed", "ok"}),
    "analyst_changes": frozenset({"seq", "time", "name", "change", "by"}),
}
_Shape = dict[str, frozenset[str]]  # table -> its columns


def _known(entries: frozenset[str], *tables: str) -> _Shape:
    return {"entries": entries, **{t: _TABLES[t] for t in ("schema", "entry_parts", "caps", *tables)}}


# Every (schema row, tables and columns) this module's history wrote. Version 3 came in two steps: first
# entries.reason and the certifications, then entries.spender, the analysts and the sign-ins; a file of the first
# step opened by the second gained the two tables but not the column. Nothing else is a ledger.
_KNOWN: tuple[tuple[int, _Shape], ...] = (
    (1, _known(_V1_ENTRIES)),
    (2, _known(_V1_ENTRIES | {"document"})),
    (3, _known(_V1_ENTRIES | {"document", "reason"}, "certifications")),
    (3, _known(_V1_ENTRIES | {"document", "reason"}, "certifications", "analysts", "sign_ins")),
    (3, _known(_V1_ENTRIES | {"document", "reason", "spender"}, "certifications", "analysts", "sign_ins")),
    (4, _known(_V1_ENTRIES | {"document", "reason", "spender"}, "certifications", "analysts", "sign_ins",
               "analyst_changes")),
)
_TODAY = _KNOWN[-1][1]  # what _SCHEMA creates (tests/test_ledger_schema.py checks that they agree)
_ALTERED = "it was altered or is not a ledger ({}), and is left untouched; restore it from a backup"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema (version INTEGER NOT NULL);
""" + _ENTRIES.format(name="entries") + """;
CREATE TABLE IF NOT EXISTS entry_parts (
    uid TEXT NOT NULL REFERENCES entries(uid),
    part TEXT NOT NULL,
    PRIMARY KEY (uid, part)
);
CREATE INDEX IF NOT EXISTS entry_parts_by_part ON entry_parts (part);
CREATE TABLE IF NOT EXISTS caps (
    scope TEXT PRIMARY KEY,
    kind TEXT,
    key TEXT,
    label TEXT,
    cap_epsilon REAL NOT NULL,
    cap_delta REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS certifications (
    uid TEXT PRIMARY KEY,
    entry TEXT NOT NULL UNIQUE REFERENCES entries(uid),
    opened TEXT NOT NULL,
    plan TEXT NOT NULL,
    summary TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('drawing', 'open', 'finished', 'closed', 'failed')),
    certificates TEXT,
    release_entry TEXT UNIQUE REFERENCES entries(uid)
);
CREATE TABLE IF NOT EXISTS analysts (
    name TEXT PRIMARY KEY,
    added TEXT NOT NULL,
    share_epsilon REAL NOT NULL,
    share_delta REAL NOT NULL,
    key_id TEXT UNIQUE,
    salt BLOB,
    key_hash BLOB,
    email TEXT UNIQUE,
    expires REAL,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sign_ins (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    source TEXT NOT NULL,
    claimed TEXT,
    ok INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sign_ins_by_source ON sign_ins (source, seq);
CREATE INDEX IF NOT EXISTS sign_ins_by_claimed ON sign_ins (claimed, seq);
CREATE TABLE IF NOT EXISTS analyst_changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    name TEXT NOT NULL,
    change TEXT NOT NULL,
    by TEXT NOT NULL
);
"""


# ------------------------------------------------------------------ where the file lives


def is_postgres(where: str | os.PathLike, named_by: str = "--ledger or PSP_LEDGER") -> bool:
    """Whether a ledger's place is a PostgreSQL URL (core.privacy.ledger_pg) rather than an SQLite file's path;
    LedgerUnavailable for a URL of any other form (another scheme, capitals, a space before it), named by its scheme
    alone, since the rest may hold a password."""
    if not isinstance(where, str):
        return False
    if where.startswith(POSTGRES_SCHEMES):
        return True
    if url := _URL.match(where):
        raise LedgerUnavailable(
            f"refused: the privacy ledger named by a {url.group(1)}:// URL cannot be used: a PostgreSQL ledger's URL "
            f"starts {' or '.join(POSTGRES_SCHEMES)} in lower case with nothing before it, and any other name is an "
            f"SQLite file's path; correct {named_by}")
    return False


def default_ledger_path() -> Path | str:
    """$PSP_LEDGER (a PostgreSQL URL as it is), else $XDG_DATA_HOME (or ~/.local/share)/private-single-parameter/
    ledger.sqlite3."""
    given = os.environ.get(ENV_VAR)
    if given:
        return given if is_postgres(given) else Path(given).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / APP_DIR / "ledger.sqlite3"


def open_ledger(path: str | os.PathLike | None = None) -> Ledger:
    """The durable ledger in the file at path (default `default_ledger_path()`), or in the PostgreSQL database of a
    postgresql:// or postgres:// URL; caps read from it."""
    where = default_ledger_path() if path is None else path
    if is_postgres(where):
        from core.privacy.ledger_pg import PostgresStore  # psycopg is loaded only for a PostgreSQL ledger

        return Ledger(store=PostgresStore(where))
    return Ledger(store=SqliteStore(where))


# ------------------------------------------------------------------ populations as JSON






def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _shape(db: sqlite3.Connection) -> _Shape:
    """The file's tables (SQLite's own aside) and the columns of each, read without writing anything."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not r[0].startswith("sqlite_")]
    return {t: frozenset(r[0] for r in db.execute("SELECT name FROM pragma_table_info(?)", (t,))) for t in tables}


def _move_entries(db: sqlite3.Connection, old: frozenset[str]) -> int:
    """Move the entries to a table of today's definition in the open transaction (SQLite cannot widen a CHECK in
    place), copying every column the file's table and today's both have, as it is.

    Returns how many of the file's columns today's lacks while they hold a value; then nothing is moved, since
    moving would drop them."""
    lost = sum(db.execute(f"SELECT 1 FROM entries WHERE {_quoted(c)} IS NOT NULL LIMIT 1").fetchone() is not None
               for c in sorted(old - _TODAY["entries"]))
    if lost:
        return lost
    kept = ", ".join(_quoted(c) for c in sorted(old & _TODAY["entries"]))
    db.execute(_ENTRIES.format(name="entries_new"))
    db.execute(f"INSERT INTO entries_new ({kept}) SELECT {kept} FROM entries")
    db.execute("DROP TABLE entries")
    db.execute("ALTER TABLE entries_new RENAME TO entries")
    return 0


# ------------------------------------------------------------------ the store


class SqliteStore:
    """Entries and caps in one SQLite file; every spend is one `BEGIN IMMEDIATE` transaction (module docstring).

    Opening creates the file (and its folder) with the schema, or checks an existing one; LedgerUnavailable
    when the file cannot be used. A connection is opened per operation, so a store may be shared by
    threads, pickled, and opened by several processes on the same file.
    """

    def __init__(self, path: str | os.PathLike, timeout: float = BUSY_TIMEOUT) -> None:
        self.path = Path(path).expanduser()
        self.timeout = float(timeout)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerUnavailable(self._message(f"its folder cannot be created ({exc.strerror or exc})")) from None
        if self.path.exists() and not self.path.is_file():
            raise LedgerUnavailable(self._message("it is not a file"))
        with self._transaction(wal=False) as db:  # not even the journal mode is written before the file is checked
            self._open(db)
        with self._connect():  # WAL mode, once the file is known to be a ledger
            pass

    def _open(self, db: sqlite3.Connection) -> None:
        """Create the schema in a new file, or bring a ledger of a known shape to SCHEMA_VERSION; refuse any other
        file before writing anything to it."""
        shape = _shape(db)
        version = self._version(db, shape) if shape else None
        if version is not None and shape["entries"] != _TODAY["entries"]:
            lost = _move_entries(db, shape["entries"])
            if lost:
                raise LedgerUnavailable(self._message(
                    f"its log has {lost} column(s) holding values that this program's schema has no place for, "
                    "so it is left untouched rather than lose them"))
        for statement in _SCHEMA.split(";"):  # executescript would commit the open transaction
            if statement.strip():
                db.execute(statement)
        if version is None:
            db.execute("INSERT INTO schema (version) VALUES (?)", (SCHEMA_VERSION,))
        elif version != SCHEMA_VERSION:
            db.execute("UPDATE schema SET version = ?", (SCHEMA_VERSION,))

    def _version(self, db: sqlite3.Connection, shape: _Shape) -> int:
        """The schema version of a file with tables, when its one schema row and its tables and columns agree
        with a version this module wrote (_KNOWN); LedgerUnavailable otherwise."""
        if db.execute("SELECT 1 FROM sqlite_master WHERE type IN ('view', 'trigger')").fetchone():
            raise LedgerUnavailable(self._message(_ALTERED.format("it has a view or trigger, which no ledger has")))
        if shape.get("schema") != _TABLES["schema"]:
            raise LedgerUnavailable(self._message(_ALTERED.format("its tables have no schema version")))
        rows = db.execute("SELECT version FROM schema").fetchall()
        if len(rows) != 1:
            raise LedgerUnavailable(self._message(_ALTERED.format(
                f"its schema table has {len(rows)} rows where a ledger has one")))
        if type(rows[0][0]) is not int:
            raise LedgerUnavailable(self._message(_ALTERED.format("its schema version is not a whole number")))
        version = rows[0][0]
        if version > SCHEMA_VERSION:
            raise LedgerUnavailable(self._message(
                f"its schema version is {version}, and this program reads version {SCHEMA_VERSION}"))
        if (version, shape) not in _KNOWN:
            raise LedgerUnavailable(self._message(_ALTERED.format(
                f"its tables and columns are not those of its schema version {version}")))
        return version

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.path)!r})"

    def __str__(self) -> str:
        return str(self.path)

    def _message(self, what: str) -> str:
        return (f"refused: the privacy ledger {self.path} cannot be used: {what}. No release is made without it; "
                "fix or move the file, or name another with --ledger or PSP_LEDGER")

    @contextmanager
    def _connect(self, wal: bool = True) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode (transactions are explicit), WAL (unless wal is False), the busy timeout;
        errors as LedgerUnavailable."""
        db = None
        try:
            db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
            db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            if wal and db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise LedgerUnavailable(self._message("it cannot be put in WAL mode"))
            db.execute("PRAGMA synchronous = FULL")
            yield db
        except sqlite3.Error as exc:
            raise LedgerUnavailable(self._message(_explain(exc))) from None
        finally:
            if db is not None:
                db.close()

    @contextmanager
    def _transaction(self, wal: bool = True) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE (the write lock) ... COMMIT, or ROLLBACK on any exception."""
        with self._connect(wal) as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -------------------------------------------------------------- reading

    def _spent(self, db: sqlite3.Connection, part: Population, by: str | None = None) -> Pair:
        rows = db.execute(
            "SELECT e.epsilon, e.delta FROM entry_parts p JOIN entries e ON e.uid = p.uid WHERE p.part = ? "
            "AND (? IS NULL OR e.spender = ?)", (part_scope(part), by, by)).fetchall()
        return math.fsum(r[0] for r in rows), math.fsum(r[1] for r in rows)

    def _caps(self, db: sqlite3.Connection) -> Caps:
        default: Pair | None = None
        caps: dict[Population, Pair] = {}
        for scope, kind, key, label, cap_e, cap_d in db.execute(
                "SELECT scope, kind, key, label, cap_epsilon, cap_delta FROM caps"):
            cap = (float(cap_e), float(cap_d))
            if scope == DEFAULT_SCOPE:
                default = cap
            else:
                caps[Population(kind, tuples(json.loads(key)), label or "")] = cap
        return default, caps

    def spent(self, part: Population, by: str | None = None) -> Pair:
        """What one part has spent (by one spender, or by all): the exact sum (math.fsum) of its entries."""
        with self._connect() as db:
            return self._spent(db, part, by)

    def caps(self) -> Caps:
        """(the default cap or None, {part: cap})."""
        with self._connect() as db:
            return self._caps(db)

    def entries(self, part: Population) -> Sequence[LedgerEntry]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT e.* FROM entry_parts p JOIN entries e ON e.uid = p.uid WHERE p.part = ? ORDER BY e.seq",
                (part_scope(part),)).fetchall()
            names = [c[0] for c in db.execute("SELECT * FROM entries LIMIT 0").description]
        return tuple(entry_from_row(dict(zip(names, r, strict=True))) for r in rows)

    def log(self) -> list[dict[str, Any]]:
        """The whole append-only log, oldest first: one dict per entry with its parts (for export)."""
        with self._connect() as db:
            cur = db.execute("SELECT * FROM entries ORDER BY seq")
            names = [c[0] for c in cur.description]
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
            return with_parts(rows, db.execute("SELECT uid, part FROM entry_parts ORDER BY rowid").fetchall())

    def parts_charged(self) -> list[Population]:
        """Every part any entry has charged, in the order first charged."""
        with self._connect() as db:
            return parts_in_order(db.execute("SELECT e.kind, e.key, e.label, p.part FROM entry_parts p JOIN entries "
                                             "e ON e.uid = p.uid ORDER BY e.seq, p.rowid").fetchall())

    # -------------------------------------------------------------- writing

    def spend_atomically(self, entry: LedgerEntry, refusal: Refusal, step: tuple[str, Change] | None = None) -> None:
        """In one BEGIN IMMEDIATE transaction: move the certification of step, read spent and caps, apply the rule,
        insert the entry or refuse (rolling back the step)."""
        with self._transaction() as db:
            changed = None if step is None else step[1](self._certification(db, step[0]))
            reason = refusal(lambda part, by: self._spent(db, part, by), self._caps(db),
                             lambda name: self._analyst(db, name))
            if reason is not None:
                raise Refused(reason)
            self._insert(db, entry)
            if changed is not None:
                self._write_certification(db, changed)

    def change_certification(self, uid: str, change: Change) -> Certification:
        with self._transaction() as db:
            changed = change(self._certification(db, uid))
            self._write_certification(db, changed)
        return changed

    def certification(self, uid: str) -> Certification | None:
        with self._connect() as db:
            return self._certification(db, uid)

    def certifications(self, part: Population) -> Sequence[Certification]:
        with self._connect() as db:
            rows = db.execute(f"{CERTIFICATIONS_SQL} JOIN entry_parts p ON p.uid = c.entry WHERE p.part = ? "
                              "ORDER BY e.seq", (part_scope(part),)).fetchall()
        return tuple(certification_from_row(r) for r in rows)

    def _certification(self, db: sqlite3.Connection, uid: str) -> Certification | None:
        row = db.execute(f"{CERTIFICATIONS_SQL} WHERE c.uid = ?", (uid,)).fetchone()
        return None if row is None else certification_from_row(row)

    def _write_certification(self, db: sqlite3.Connection, c: Certification) -> None:
        db.execute("INSERT OR REPLACE INTO certifications (uid, entry, opened, plan, summary, state, certificates, "
                   "release_entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   (c.uid, c.entry, iso_time(c.opened), json.dumps(dict(c.plan), sort_keys=True),
                    json.dumps(dict(c.summary), ensure_ascii=False, sort_keys=True), c.state, c.certificates,
                    c.release_entry))

    def append(self, entry: LedgerEntry) -> None:
        """Append an entry without any rule (an import of past charges; spends go through spend_atomically)."""
        with self._transaction() as db:
            self._insert(db, entry)

    def _insert(self, db: sqlite3.Connection, entry: LedgerEntry) -> None:
        p = entry.population
        db.execute("INSERT INTO entries (uid, time, kind, key, label, epsilon, delta, spender) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (entry.uid, iso_time(entry.time), p.kind, key_json(p), p.label,
                                                       entry.epsilon, entry.delta, entry.spender))
        db.executemany("INSERT INTO entry_parts (uid, part) VALUES (?, ?)",
                       [(entry.uid, part_scope(part)) for part in p.parts()])
        if entry.details is not None:
            self._write_details(db, entry.uid, entry.details)

    def update_details(self, uid: str, details: ReleaseDetails) -> None:
        with self._transaction() as db:
            self._write_details(db, uid, details)

    def _write_details(self, db: sqlite3.Connection, uid: str, d: ReleaseDetails) -> None:
        stages = json.dumps({k: list(v) for k, v in d.stages.items()}, allow_nan=False)
        cur = db.execute("UPDATE entries SET coefficient = ?, stages = ?, outcome = ?, value = ?, low = ?, high = ?, "
                         "document = ?, reason = ? WHERE uid = ?",
                         (d.coefficient, stages, d.outcome, sql_real(d.value), sql_real(d.low), sql_real(d.high),
                          d.document, d.reason, uid))
        if cur.rowcount != 1:
            raise LedgerUnavailable(self._message(f"it has no entry {uid} to record the release on"))

    def set_cap(self, population: Population, cap: Pair) -> None:
        """Set (replace) the cap of each part of the population."""
        with self._transaction() as db:
            for part in population.parts():
                db.execute("INSERT OR REPLACE INTO caps (scope, kind, key, label, cap_epsilon, cap_delta) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (part_scope(part), part.kind, key_json(part), part.label, cap[0], cap[1]))

    def add_analyst(self, a: Analyst, change: str, by: str) -> None:
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM analysts WHERE name = ?", (a.name,)).fetchone():
                raise name_taken(a.name)
            if holder := db.execute("SELECT name FROM analysts WHERE email = ?", (a.email,)).fetchone():
                raise email_taken(a.email, holder[0])
            db.execute("INSERT INTO analysts (name, added, share_epsilon, share_delta, key_id, salt, key_hash, email, "
                       "expires, revoked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (a.name, iso_time(time.time()), *analyst_values(a)))
            self._log_change(db, a.name, change, by)

    def change_analyst(self, name: str, edit: Edit, by: str) -> Analyst:
        """In one BEGIN IMMEDIATE transaction (another writer waits): read the record, edit it, write it back."""
        with self._transaction() as db:
            changed, words = edit(self._analyst(db, name))
            db.execute("UPDATE analysts SET share_epsilon = ?, share_delta = ?, key_id = ?, salt = ?, key_hash = ?, "
                       "email = ?, expires = ?, revoked = ? WHERE name = ?", (*analyst_values(changed), name))
            self._log_change(db, name, words, by)
        return changed

    def _log_change(self, db: sqlite3.Connection, name: str, change: str, by: str) -> None:
        db.execute("INSERT INTO analyst_changes (time, name, change, by) VALUES (?, ?, ?, ?)",
                   (time.time(), name, change, by))

    def analysts(self) -> Sequence[Analyst]:
        with self._connect() as db:
            return self._analysts(db)

    def analyst_changes(self) -> Sequence[AnalystChange]:
        with self._connect() as db:
            rows = db.execute("SELECT time, name, change, by FROM analyst_changes ORDER BY seq").fetchall()
        return tuple(AnalystChange(*row) for row in rows)

    def _analysts(self, db: sqlite3.Connection) -> list[Analyst]:
        return [analyst_from_row(r) for r in db.execute(f"SELECT {ANALYST_COLUMNS} FROM analysts ORDER BY rowid")]

    def _analyst(self, db: sqlite3.Connection, name: str) -> Analyst | None:
        row = db.execute(f"SELECT {ANALYST_COLUMNS} FROM analysts WHERE name = ?", (name,)).fetchone()
        return None if row is None else analyst_from_row(row)

    def reserve_attempt(self, source: str, claimed: str | None, now: float) -> tuple[float, str, int | None]:
        """In one transaction, the counts of core.privacy.ledger._failures (the source's failures in the last WINDOW
        seconds, the claimed key id's since its last success), the rule (throttle), and the attempt's row."""
        with self._transaction() as db:
            by_source = db.execute("SELECT COUNT(*), MAX(time) FROM sign_ins WHERE source = ? AND ok = 0 AND time > ?",
                                   (source, now - WINDOW)).fetchone()
            by_key = db.execute("SELECT COUNT(*), MAX(time) FROM sign_ins WHERE claimed = ? AND seq > (SELECT "
                                "COALESCE(MAX(seq), 0) FROM sign_ins WHERE claimed = ? AND ok = 1)",
                                (claimed, claimed)).fetchone()  # claimed None: no key id, nothing counted
            left, binding = throttle((int(by_source[0]), by_source[1]), (int(by_key[0]), by_key[1]), now)
            if left > 0:
                return left, binding, None
            cur = db.execute("INSERT INTO sign_ins (time, source, claimed, ok) VALUES (?, ?, ?, 0)",
                             (now, source, claimed))
        return 0.0, binding, int(cur.lastrowid)

    def confirm_attempt(self, attempt: int) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sign_ins SET ok = 1 WHERE seq = ?", (attempt,))

    def set_default_cap(self, cap: Pair) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO caps (scope, cap_epsilon, cap_delta) VALUES (?, ?, ?)",
                       (DEFAULT_SCOPE, cap[0], cap[1]))






def _explain(exc: sqlite3.Error) -> str:
    """What is wrong with the file, in words, from SQLite's error."""
    text = str(exc)
    low = text.lower()
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"it is not a readable SQLite database (corrupt or another kind of file: {text})"
    if "readonly" in low or "read-only" in low:
        return f"it cannot be written (read-only file or folder: {text})"
    if "unable to open" in low:
        return f"it cannot be opened or created (check that its folder exists and is writable: {text})"
    if "locked" in low or "busy" in low:
        return f"another process held it locked for longer than the timeout ({text})"
    return text
