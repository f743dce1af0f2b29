"""A shared privacy ledger on PostgreSQL: `PostgresStore`, for several app servers spending one budget.

The same methods and semantics as `core.privacy.ledger_store.SqliteStore`, on one database named by a URL
(`postgresql://user@host/database`, given with --ledger or PSP_LEDGER). Its tables mirror the SQLite file's
(`entries`, `entry_parts`, `caps`, `certifications`, `analysts`, `sign_ins`, `analyst_changes` and the `schema` row,
here version `SCHEMA_VERSION` of this store's own numbering), with two additions: an ordering column `seq` in
`entry_parts` and `analysts`, where SQLite has its rowid, and `locks`, one row per people part and one for the
sign-ins. They live in the PostgreSQL schema `LEDGER_SCHEMA` (psp_ledger), which every connection puts alone on
its search_path: servers connecting as different roles, each with a schema of its own name first on the default
search_path, still share one ledger (a role without rights on it is refused, never given a ledger of its own). The
schema and its tables are created on the first open of a database without them; opens are serialised by an advisory
lock, so that two servers starting at once create them once.

Concurrency: row locks, not SERIALIZABLE. Every charge is one transaction (READ COMMITTED) that first locks the
`locks` row of each part it charges (`SELECT ... FOR UPDATE`, in one order, so that two spends never wait on each
other in a cycle) and, for a certification's finish, that certification's row; only then does it read what
the rule reads (each part's spent total, by everyone and by the spender, the caps, the analyst's share), apply the
rule and insert. A second server charging the same people waits for the first to commit, and its reads, each
taking a fresh snapshot after the wait, see the first's entry: two servers can never both pass a cap or a share,
and a certification finishes once. Spends on other people take other rows and do not wait. SERIALIZABLE would
give the same guarantee through aborts instead: every overlapping spend rolled back and retried, and PostgreSQL's
predicate locks, coarsened to pages or tables, abort spends on other people too, so that a bounded retry turns a
busy hour into refusals; a lock only waits, up to `BUSY_TIMEOUT` seconds (lock_timeout), then refuses.

Any failure (the server unreachable, a lock held past the timeout, a schema version this program does not know,
tables that are not a ledger's, a trigger on them) raises `LedgerUnavailable` in one sentence naming the database
and PSP_LEDGER; a transaction that fails is rolled back, so nothing is charged. `core.privacy.ledger_store` selects
this store, so this module does not import that one (core's imports are acyclic: tests/test_layers.py); the row
format both stores write (a part's key, an entry's and a certification's row) is repeated here, and
tests/test_ledger_pg.py checks that the two key every part alike.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from core.errors import InputError, LedgerUnavailable, Refused
from core.privacy.access import WINDOW, Analyst, email_taken, name_taken, throttle
from core.privacy.ledger import (
    AnalystChange,
    Caps,
    Certification,
    Change,
    Edit,
    LedgerEntry,
    LedgerStore,
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

try:
    import psycopg
    from psycopg.rows import dict_row
except ImportError:  # only a PostgreSQL ledger needs it (requirements.txt)
    psycopg = None

SCHEMA_VERSION = 1
LEDGER_SCHEMA = "psp_ledger"  # the PostgreSQL schema of the ledger's tables, whichever role connects
BUSY_TIMEOUT = 10.0  # seconds a transaction waits for another's lock, and a connection for the server
DEFAULT_SCOPE = "default"
SIGN_INS = "sign-ins"  # the lock row of the sign-ins (a part's scope is a JSON list, never this)
_OPENING = 0x5053504C4544  # the advisory lock that serialises the first opens of one database
_ALTERED = "it was altered or is not a ledger ({}), and is left untouched; restore it from a backup"

_ENTRY_COLUMNS = ("seq", "uid", "time", "kind", "key", "label", "epsilon", "delta", "coefficient", "stages",
                  "outcome", "value", "low", "high", "document", "reason", "spender")
_SHAPE = {  # each table's columns, as _SCHEMA creates them
    "schema": frozenset({"version"}),
    "entries": frozenset(_ENTRY_COLUMNS),
    "entry_parts": frozenset({"seq", "uid", "part"}),
    "caps": frozenset({"scope", "kind", "key", "label", "cap_epsilon", "cap_delta"}),
    "certifications": frozenset({"uid", "entry", "opened", "plan", "summary", "state", "certificates",
                                 "release_entry"}),
    "analysts": frozenset({"seq", "name", "added", "share_epsilon", "share_delta", "key_id", "salt", "key_hash",
                           "email", "expires", "revoked"}),
    "sign_ins": frozenset({"seq", "time", "source", "claimed", "ok"}),
    "analyst_changes": frozenset({"seq", "time", "name", "change", "by"}),
    "locks": frozenset({"scope"}),
}

_SCHEMA = """
CREATE TABLE schema (version INTEGER NOT NULL);
CREATE TABLE entries (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    time TEXT NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    label TEXT NOT NULL,
    epsilon DOUBLE PRECISION NOT NULL,
    delta DOUBLE PRECISION NOT NULL,
    coefficient TEXT,
    stages TEXT,
    outcome TEXT CHECK (outcome IS NULL OR outcome IN ('released', 'bottom', 'fallback', 'failed')),
    value DOUBLE PRECISION,
    low DOUBLE PRECISION,
    high DOUBLE PRECISION,
    document TEXT,
    reason TEXT,
    spender TEXT NOT NULL DEFAULT 'curator'
);
CREATE TABLE entry_parts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    uid TEXT NOT NULL REFERENCES entries(uid),
    part TEXT NOT NULL,
    PRIMARY KEY (uid, part)
);
CREATE INDEX entry_parts_by_part ON entry_parts (part);
CREATE TABLE caps (
    scope TEXT PRIMARY KEY,
    kind TEXT,
    key TEXT,
    label TEXT,
    cap_epsilon DOUBLE PRECISION NOT NULL,
    cap_delta DOUBLE PRECISION NOT NULL
);
CREATE TABLE certifications (
    uid TEXT PRIMARY KEY,
    entry TEXT NOT NULL UNIQUE REFERENCES entries(uid),
    opened TEXT NOT NULL,
    plan TEXT NOT NULL,
    summary TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('drawing', 'open', 'finished', 'closed', 'failed')),
    certificates TEXT,
    release_entry TEXT UNIQUE REFERENCES entries(uid)
);
CREATE TABLE analysts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    name TEXT PRIMARY KEY,
    added TEXT NOT NULL,
    share_epsilon DOUBLE PRECISION NOT NULL,
    share_delta DOUBLE PRECISION NOT NULL,
    key_id TEXT UNIQUE,
    salt BYTEA,
    key_hash BYTEA,
    email TEXT UNIQUE,
    expires DOUBLE PRECISION,
    revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE sign_ins (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time DOUBLE PRECISION NOT NULL,
    source TEXT NOT NULL,
    claimed TEXT,
    ok INTEGER NOT NULL
);
CREATE INDEX sign_ins_by_source ON sign_ins (source, seq);
CREATE INDEX sign_ins_by_claimed ON sign_ins (claimed, seq);
CREATE TABLE analyst_changes (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time DOUBLE PRECISION NOT NULL,
    name TEXT NOT NULL,
    change TEXT NOT NULL,
    "by" TEXT NOT NULL
);
CREATE TABLE locks (scope TEXT PRIMARY KEY);
"""


def _upsert(table: str, columns: Sequence[str], key: str, keep: Sequence[str] = ()) -> str:
    """An INSERT of columns that replaces the row of the same key (SQLite's INSERT OR REPLACE), keeping `keep`."""
    changed = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c != key and c not in keep)
    return (f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))}) "
            f"ON CONFLICT ({key}) DO UPDATE SET {changed}")


_CAP_COLUMNS = ("scope", "kind", "key", "label", "cap_epsilon", "cap_delta")
_CERTIFICATION_COLUMNS = ("uid", "entry", "opened", "plan", "summary", "state", "certificates", "release_entry")
_ANALYST_COLUMNS = ("name", "added", "share_epsilon", "share_delta", "key_id", "salt", "key_hash", "email", "expires",
                    "revoked")
_SET_CAP = _upsert("caps", _CAP_COLUMNS, "scope")
_WRITE_CERTIFICATION = _upsert("certifications", _CERTIFICATION_COLUMNS, "uid")
_ADD_ANALYST = (f"INSERT INTO analysts ({', '.join(_ANALYST_COLUMNS)}) VALUES ({', '.join(['%s'] * 10)}) "
                "ON CONFLICT DO NOTHING")  # a name or an e-mail the ledger holds already: add_analyst says which
_PUT_ANALYST = _upsert("analysts", _ANALYST_COLUMNS, "name", keep=("added",))
_LOG_CHANGE = 'INSERT INTO analyst_changes (time, name, change, "by") VALUES (%s, %s, %s, %s)'


# ------------------------------------------------------------------ the row format (as core.privacy.ledger_store)







def _certification_row(c: Certification) -> tuple:
    return (c.uid, c.entry, iso_time(c.opened), json.dumps(dict(c.plan), sort_keys=True),
            json.dumps(dict(c.summary), ensure_ascii=False, sort_keys=True), c.state, c.certificates, c.release_entry)


def _analyst_row(a: Analyst, added: float) -> tuple:
    return (a.name, iso_time(added), *analyst_values(a))


def shown(url: str) -> str:
    """The URL with its password, if any, replaced by ***: what messages and `ledger show` print (a URL that cannot
    be read, its scheme alone)."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # read to check it: a bad port raises ValueError here rather than later
    except ValueError:
        return url.split("://", 1)[0] + "://*** (a URL that cannot be read)"
    netloc = parts.netloc
    if parts.password:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    return urlunsplit(parts._replace(netloc=netloc, query=re.sub(r"(password=)[^&]*", r"\1***", parts.query)))


# ------------------------------------------------------------------ the store


class PostgresStore:
    """Entries, caps, certifications and analysts in one PostgreSQL database; every charge is one transaction
    holding the row locks of its parts (module docstring).

    Opening creates the schema in a database without one, or checks it; LedgerUnavailable when the database cannot
    be used. A connection is opened per operation, so a store may be shared by threads, pickled, and opened by
    several servers on the same database.
    """

    def __init__(self, url: str, timeout: float = BUSY_TIMEOUT) -> None:
        self.url = url
        self.timeout = float(timeout)
        with self._transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_OPENING,))
            shape = _shape(db)
            if shape:
                self._check(db, shape)
            else:
                self._create_schema(db)
                db.execute(_SCHEMA)
                db.execute("INSERT INTO schema (version) VALUES (%s)", (SCHEMA_VERSION,))

    def _create_schema(self, db: Any) -> None:
        """LEDGER_SCHEMA, unless it exists (refused when this role may not use it); refused when another schema of the
        database holds a ledger's tables, whose spends a new ledger would not count."""
        if db.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (LEDGER_SCHEMA,)).fetchone():
            if not db.execute("SELECT has_schema_privilege(%s, 'USAGE')", (LEDGER_SCHEMA,)).fetchone()[0]:
                raise LedgerUnavailable(self._message(
                    f"its user may not use the schema {LEDGER_SCHEMA}, which holds it (the database's owner may grant "
                    "USAGE on it and the rights on its tables)"))
            return
        elsewhere = db.execute(
            "SELECT table_schema FROM information_schema.tables WHERE table_name = ANY(%s) GROUP BY table_schema "
            "HAVING count(*) = %s ORDER BY table_schema", (list(_SHAPE), len(_SHAPE))).fetchall()
        if elsewhere:
            raise LedgerUnavailable(self._message(
                f"the schema {elsewhere[0][0]} holds a ledger's tables, where this program keeps them in the schema "
                f"{LEDGER_SCHEMA} only; move them there (ALTER TABLE ... SET SCHEMA {LEDGER_SCHEMA})"))
        db.execute(f"CREATE SCHEMA {LEDGER_SCHEMA}")

    def _check(self, db: Any, shape: dict[str, frozenset[str]]) -> None:
        """Refuse a database whose ledger tables are not those this module creates, of SCHEMA_VERSION."""
        if "schema" not in shape:
            raise LedgerUnavailable(self._message(_ALTERED.format("its tables have no schema version")))
        rows = db.execute("SELECT version FROM schema").fetchall()
        if len(rows) != 1:
            raise LedgerUnavailable(self._message(_ALTERED.format(
                f"its schema table has {len(rows)} rows where a ledger has one")))
        if rows[0][0] != SCHEMA_VERSION:
            raise LedgerUnavailable(self._message(
                f"its schema version is {rows[0][0]}, and this program reads version {SCHEMA_VERSION} only"))
        if shape != _SHAPE:
            raise LedgerUnavailable(self._message(_ALTERED.format(
                f"its tables and columns are not those of schema version {SCHEMA_VERSION}")))
        if db.execute("SELECT 1 FROM information_schema.triggers WHERE event_object_schema = %s "
                      "AND event_object_table = ANY(%s)", (LEDGER_SCHEMA, list(_SHAPE))).fetchone():
            raise LedgerUnavailable(self._message(_ALTERED.format("a trigger is set on its tables")))

    def __repr__(self) -> str:
        return f"PostgresStore({shown(self.url)!r})"

    def __str__(self) -> str:
        return shown(self.url)

    def _message(self, what: str) -> str:
        return (f"refused: the privacy ledger {self} cannot be used: {what}; no release is made without it, so "
                "check the database and its server, or name another ledger with --ledger or PSP_LEDGER")

    @contextmanager
    def _connect(self) -> Iterator[Any]:
        """A connection in autocommit mode (transactions are explicit); errors as LedgerUnavailable."""
        if psycopg is None:
            raise LedgerUnavailable(self._message("psycopg is not installed (pip install -r requirements.txt)"))
        try:
            db = psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, round(self.timeout)))
        except psycopg.Error as exc:
            raise LedgerUnavailable(self._message(
                f"its server cannot be reached or refuses the connection{_quoted(exc, self.url)}")) from None
        try:
            db.execute(f"SET search_path TO {LEDGER_SCHEMA}")
            yield db
        except psycopg.Error as exc:
            raise LedgerUnavailable(self._message(_explain(exc))) from None
        finally:
            db.close()

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """BEGIN ... COMMIT, or ROLLBACK on any exception; a lock is waited for at most `timeout` seconds."""
        with self._connect() as db, db.transaction():
            db.execute(f"SET LOCAL lock_timeout = {int(self.timeout * 1000)}")
            yield db

    def _lock(self, db: Any, scopes: Sequence[str]) -> None:
        """Hold the lock rows of these scopes until the transaction ends, taken in one order (code points, as
        sorted() and the collation "C" both order them) so that two transactions never wait on each other."""
        keys = sorted(set(scopes))
        db.execute("INSERT INTO locks (scope) SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING", (keys,))
        db.execute('SELECT scope FROM locks WHERE scope = ANY(%s) ORDER BY scope COLLATE "C" FOR UPDATE', (keys,))

    # -------------------------------------------------------------- reading

    def _spent(self, db: Any, part: Population, by: str | None = None) -> Pair:
        rows = db.execute(
            "SELECT e.epsilon, e.delta FROM entry_parts p JOIN entries e ON e.uid = p.uid WHERE p.part = %s "
            "AND (%s::text IS NULL OR e.spender = %s)", (part_scope(part), by, by)).fetchall()
        return math.fsum(r[0] for r in rows), math.fsum(r[1] for r in rows)

    def _caps(self, db: Any) -> Caps:
        default: Pair | None = None
        caps: dict[Population, Pair] = {}
        for scope, kind, key, label, cap_e, cap_d in db.execute(f"SELECT {', '.join(_CAP_COLUMNS)} FROM caps"):
            if scope == DEFAULT_SCOPE:
                default = (float(cap_e), float(cap_d))
            else:
                caps[Population(kind, tuples(json.loads(key)), label or "")] = (float(cap_e), float(cap_d))
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
        columns = ", ".join(f"e.{c}" for c in _ENTRY_COLUMNS)
        with self._connect() as db:
            rows = db.cursor(row_factory=dict_row).execute(
                f"SELECT {columns} FROM entry_parts p JOIN entries e ON e.uid = p.uid WHERE p.part = %s "
                "ORDER BY e.seq", (part_scope(part),)).fetchall()
        return tuple(entry_from_row(r) for r in rows)

    def log(self) -> list[dict[str, Any]]:
        """The whole append-only log, oldest first: one dict per entry (its columns, as SQLite's) with its parts."""
        with self._connect() as db, db.transaction():  # one snapshot for both
            rows = db.cursor(row_factory=dict_row).execute(
                f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM entries ORDER BY seq").fetchall()
            return with_parts(rows, db.execute("SELECT uid, part FROM entry_parts ORDER BY seq").fetchall())

    def parts_charged(self) -> list[Population]:
        """Every part any entry has charged, in the order first charged."""
        with self._connect() as db:
            return parts_in_order(db.execute("SELECT e.kind, e.key, e.label, p.part FROM entry_parts p JOIN entries "
                                             "e ON e.uid = p.uid ORDER BY e.seq, p.seq").fetchall())

    # -------------------------------------------------------------- writing

    def spend_atomically(self, entry: LedgerEntry, refusal: Refusal, step: tuple[str, Change] | None = None) -> None:
        """In one transaction: lock the entry's parts (and the certification of step), move the certification, read
        spent, caps and shares, apply the rule, insert the entry or refuse (rolling back the step)."""
        with self._transaction() as db:
            self._lock(db, [part_scope(part) for part in entry.population.parts()])
            changed = None if step is None else step[1](self._certification(db, step[0], lock=True))
            reason = refusal(lambda part, by: self._spent(db, part, by), self._caps(db),
                             lambda name: self._analyst(db, name))
            if reason is not None:
                raise Refused(reason)
            self._insert(db, entry)
            if changed is not None:
                db.execute(_WRITE_CERTIFICATION, _certification_row(changed))

    def change_certification(self, uid: str, change: Change) -> Certification:
        with self._transaction() as db:
            changed = change(self._certification(db, uid, lock=True))
            db.execute(_WRITE_CERTIFICATION, _certification_row(changed))
        return changed

    def certification(self, uid: str) -> Certification | None:
        with self._connect() as db:
            return self._certification(db, uid)

    def certifications(self, part: Population) -> Sequence[Certification]:
        with self._connect() as db:
            rows = db.execute(f"{CERTIFICATIONS_SQL} JOIN entry_parts p ON p.uid = c.entry WHERE p.part = %s "
                              "ORDER BY e.seq", (part_scope(part),)).fetchall()
        return tuple(certification_from_row(r) for r in rows)

    def _certification(self, db: Any, uid: str, lock: bool = False) -> Certification | None:
        """The certification of uid; with lock, its row is held until the transaction ends (a racing finish waits,
        then reads what this one wrote)."""
        lock_row = " FOR UPDATE OF c" if lock else ""
        row = db.execute(f"{CERTIFICATIONS_SQL} WHERE c.uid = %s{lock_row}", (uid,)).fetchone()
        return None if row is None else certification_from_row(row)

    def append(self, entry: LedgerEntry) -> None:
        """Append an entry without any rule (an import of past charges; spends go through spend_atomically)."""
        with self._transaction() as db:
            self._insert(db, entry)

    def _insert(self, db: Any, entry: LedgerEntry) -> None:
        p = entry.population
        db.execute("INSERT INTO entries (uid, time, kind, key, label, epsilon, delta, spender) "
                   "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                   (entry.uid, iso_time(entry.time), p.kind, key_json(p), p.label, entry.epsilon, entry.delta,
                    entry.spender))
        with db.cursor() as cur:
            cur.executemany("INSERT INTO entry_parts (uid, part) VALUES (%s, %s)",
                            [(entry.uid, part_scope(part)) for part in p.parts()])
        if entry.details is not None:
            self._write_details(db, entry.uid, entry.details)

    def update_details(self, uid: str, details: ReleaseDetails) -> None:
        with self._transaction() as db:
            self._write_details(db, uid, details)

    def _write_details(self, db: Any, uid: str, d: ReleaseDetails) -> None:
        stages = json.dumps({k: list(v) for k, v in d.stages.items()}, allow_nan=False)
        cur = db.execute("UPDATE entries SET coefficient = %s, stages = %s, outcome = %s, value = %s, low = %s, "
                         "high = %s, document = %s, reason = %s WHERE uid = %s",
                         (d.coefficient, stages, d.outcome, sql_real(d.value), sql_real(d.low), sql_real(d.high),
                          d.document, d.reason, uid))
        if cur.rowcount != 1:
            raise LedgerUnavailable(self._message(f"it has no entry {uid} to record the release on"))

    def set_cap(self, population: Population, cap: Pair) -> None:
        """Set (replace) the cap of each part of the population."""
        with self._transaction() as db:
            for part in sorted(population.parts(), key=part_scope):  # one order: two curators never deadlock
                db.execute(_SET_CAP, (part_scope(part), part.kind, key_json(part), part.label, cap[0], cap[1]))

    def set_default_cap(self, cap: Pair) -> None:
        with self._transaction() as db:
            db.execute(_SET_CAP, (DEFAULT_SCOPE, None, None, None, cap[0], cap[1]))

    def add_analyst(self, a: Analyst, change: str, by: str) -> None:
        with self._transaction() as db:
            if db.execute(_ADD_ANALYST, _analyst_row(a, time.time())).rowcount == 0:
                holder = db.execute("SELECT name FROM analysts WHERE name = %s OR email = %s ORDER BY name <> %s",
                                    (a.name, a.email, a.name)).fetchone()[0]
                raise name_taken(a.name) if holder == a.name else email_taken(a.email, holder)
            db.execute(_LOG_CHANGE, (time.time(), a.name, change, by))

    def change_analyst(self, name: str, edit: Edit, by: str) -> Analyst:
        """In one transaction holding the analyst's row (a concurrent change waits, then reads this one's): read the
        record, edit it, write it back."""
        with self._transaction() as db:
            changed, words = edit(self._analyst(db, name, lock=True))
            db.execute(_PUT_ANALYST, _analyst_row(changed, time.time()))
            db.execute(_LOG_CHANGE, (time.time(), name, words, by))
        return changed

    def analysts(self) -> Sequence[Analyst]:
        with self._connect() as db:
            return self._analysts(db)

    def analyst_changes(self) -> Sequence[AnalystChange]:
        with self._connect() as db:
            rows = db.execute('SELECT time, name, change, "by" FROM analyst_changes ORDER BY seq').fetchall()
        return tuple(AnalystChange(*row) for row in rows)

    def _analysts(self, db: Any) -> list[Analyst]:
        return [analyst_from_row(r) for r in db.execute(f"SELECT {ANALYST_COLUMNS} FROM analysts ORDER BY seq")]

    def _analyst(self, db: Any, name: str, lock: bool = False) -> Analyst | None:
        """The analyst of that name, or None; with lock, their row is held until the transaction ends (a racing change
        waits, then reads what this one wrote)."""
        lock_row = " FOR UPDATE" if lock else ""
        row = db.execute(f"SELECT {ANALYST_COLUMNS} FROM analysts WHERE name = %s{lock_row}", (name,)).fetchone()
        return None if row is None else analyst_from_row(row)

    def reserve_attempt(self, source: str, claimed: str | None, now: float) -> tuple[float, str, int | None]:
        """In one transaction holding the sign-ins' lock: the counts of core.privacy.ledger._failures, the rule
        (throttle), and the attempt's row (as SqliteStore.reserve_attempt)."""
        with self._transaction() as db:
            self._lock(db, [SIGN_INS])
            by_source = db.execute("SELECT COUNT(*), MAX(time) FROM sign_ins WHERE source = %s AND ok = 0 AND "
                                   "time > %s", (source, now - WINDOW)).fetchone()
            by_key = db.execute("SELECT COUNT(*), MAX(time) FROM sign_ins WHERE claimed = %s AND seq > (SELECT "
                                "COALESCE(MAX(seq), 0) FROM sign_ins WHERE claimed = %s AND ok = 1)",
                                (claimed, claimed)).fetchone()  # claimed None: no key id, nothing counted
            left, binding = throttle((int(by_source[0]), by_source[1]), (int(by_key[0]), by_key[1]), now)
            if left > 0:
                return left, binding, None
            seq = db.execute("INSERT INTO sign_ins (time, source, claimed, ok) VALUES (%s, %s, %s, 0) RETURNING seq",
                             (now, source, claimed)).fetchone()[0]
        return 0.0, binding, int(seq)

    def confirm_attempt(self, attempt: int) -> None:
        with self._transaction() as db:
            db.execute("UPDATE sign_ins SET ok = 1 WHERE seq = %s", (attempt,))

    # -------------------------------------------------------------- moving a ledger here

    def copy_from(self, source: LedgerStore) -> dict[str, int]:
        """Copy every entry (its columns as `log` gives them, and its parts), cap, analyst (share, key's hash,
        e-mail, expiry, revocation), change to the analysts and certification of source (a SqliteStore) into this
        empty ledger, in one transaction; InputError when it holds anything. An analyst's date of addition is that
        of their first logged change; the sign-in attempts (the throttle's last hour) are not copied."""
        log, (default, caps) = source.log(), source.caps()
        analysts, changes = source.analysts(), source.analyst_changes()
        certifications = {c.uid: c for p in source.parts_charged() for c in source.certifications(p)}
        first_change = {c.name: c.time for c in reversed(changes)}
        with self._transaction() as db:
            db.execute("LOCK TABLE entries, caps, analysts, analyst_changes IN SHARE ROW EXCLUSIVE MODE")
            held = db.execute("SELECT (SELECT COUNT(*) FROM entries), (SELECT COUNT(*) FROM caps), "
                              "(SELECT COUNT(*) FROM analysts)").fetchone()
            if any(held):
                raise InputError(f"the ledger {self} is not empty (it holds {held[0]} entries, {held[1]} caps and "
                                 f"{held[2]} analysts), so nothing was moved: name an empty database with --to")
            self._copy(db, log, default, caps)
            with db.cursor() as cur:
                cur.executemany(_ADD_ANALYST, [_analyst_row(a, first_change.get(a.name, time.time()))
                                               for a in analysts])
                cur.executemany(_LOG_CHANGE, [(c.time, c.name, c.change, c.by) for c in changes])
                cur.executemany(_WRITE_CERTIFICATION, [_certification_row(c) for c in certifications.values()])
        return dict(entries=len(log), caps=len(caps) + (default is not None), analysts=len(analysts),
                    analyst_changes=len(changes), certifications=len(certifications))

    def _copy(self, db: Any, log: list[dict[str, Any]], default: Pair | None, caps: dict[Population, Pair]) -> None:
        """The entries in their order, with their parts, and the caps, in the open transaction."""
        columns = _ENTRY_COLUMNS[1:]  # seq is given anew, in the same order
        with db.cursor() as cur:
            cur.executemany(f"INSERT INTO entries ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
                            [tuple(row[c] for c in columns) for row in log])
            cur.executemany("INSERT INTO entry_parts (uid, part) VALUES (%s, %s)",
                            [(row["uid"], part) for row in log for part in row["parts"]])
            cur.executemany(_SET_CAP, [(part_scope(p), p.kind, key_json(p), p.label, *cap) for p, cap in caps.items()])
            if default is not None:
                cur.execute(_SET_CAP, (DEFAULT_SCOPE, None, None, None, *default))


def _shape(db: Any) -> dict[str, frozenset[str]]:
    """The ledger's tables present in LEDGER_SCHEMA and the columns of each (other tables are not looked at: the
    database may hold them)."""
    found: dict[str, set[str]] = {}
    for table, column in db.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN information_schema.tables t "
            "ON t.table_schema = c.table_schema AND t.table_name = c.table_name WHERE t.table_type = 'BASE TABLE' "
            "AND c.table_schema = %s AND c.table_name = ANY(%s)", (LEDGER_SCHEMA, list(_SHAPE))):
        found.setdefault(table, set()).add(column)
    return {t: frozenset(c) for t, c in found.items()}


def _first(exc: Exception) -> str:
    """The first line of psycopg's error (the rest are hints), without its full stop: part of one sentence."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0].rstrip(".")


def _quoted(exc: Exception, url: str) -> str:
    """psycopg's words on a failed connect, in brackets, unless they might repeat the URL's password: libpq quotes a
    part of the URL it cannot read, and a password may be that part, escaped or not."""
    words = _first(exc)
    try:
        parts = urlsplit(url)
        secrets = [parts.password or "", *re.findall(r"(?:^|&)password=([^&]*)", parts.query)]
    except ValueError:
        return ""
    if any(s and (s in words or unquote(s) in words) for s in secrets) or "://" in words:
        return ""
    return f" ({words})"


def _explain(exc: Exception) -> str:
    """What is wrong, in words, from psycopg's error on an open connection."""
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return f"another server held its lock for longer than the timeout ({_first(exc)})"
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return f"its user may not read or write its tables ({_first(exc)})"
    if isinstance(exc, psycopg.OperationalError):
        return f"the connection to its server failed ({_first(exc)})"
    return _first(exc)
