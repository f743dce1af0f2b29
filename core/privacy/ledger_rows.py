"""How the durable ledger's stores (core.privacy.ledger_store's SQLite file, core.privacy.ledger_pg's PostgreSQL
database) write a population, a time, an entry and a certification as rows, and read them back: one form for both,
so that a ledger moved from one to the other keys its people alike."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from core.privacy.access import Analyst
from core.privacy.ledger import Certification, LedgerEntry, ReleaseDetails
from core.privacy.population import Population

# A certification with its people: those of the entry that charged its first phase.
CERTIFICATIONS_SQL = ("SELECT c.uid, c.entry, c.opened, c.plan, c.summary, c.state, c.certificates, c.release_entry, "
                      "e.kind, e.key, e.label FROM certifications c JOIN entries e ON e.uid = c.entry")


def lists(value: Any) -> Any:
    return [lists(v) for v in value] if isinstance(value, (tuple, list)) else value


def tuples(value: Any) -> Any:
    return tuple(tuples(v) for v in value) if isinstance(value, list) else value


def population_to_json(population: Population) -> str:
    """{"kind", "key" (tuples as lists), "label"} as JSON; `population_from_json` gives the same Population back."""
    return json.dumps({"kind": population.kind, "key": lists(population.key), "label": population.label},
                      ensure_ascii=False, allow_nan=False)


def population_from_json(text: str) -> Population:
    """The Population `population_to_json` wrote (lists back to tuples, so it hashes and compares equal)."""
    doc = json.loads(text)
    return Population(doc["kind"], tuples(doc["key"]), doc.get("label", ""))


def key_json(population: Population) -> str:
    """The canonical JSON of a population's key."""
    return json.dumps(lists(population.key), separators=(",", ":"), allow_nan=False)


def part_scope(part: Population) -> str:
    """What a part is looked up by: [kind, key] as canonical JSON."""
    return json.dumps([part.kind, lists(part.key)], separators=(",", ":"), allow_nan=False)


def iso_time(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def to_epoch(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def sql_real(x: float | None) -> float | None:
    """A float for a row: NaN as NULL (as SQLite stores it); an infinite cap is kept as it is."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def parts_in_order(rows: Iterable[Sequence[Any]]) -> list[Population]:
    """Every part of (kind, key, label, part scope) rows, once each, in the rows' order: `parts_charged`."""
    found: dict[str, Population] = {}
    for kind, key, label, scope in rows:
        if scope not in found:
            whole = Population(kind, tuples(json.loads(key)), label)
            found[scope] = next(p for p in whole.parts() if part_scope(p) == scope)
    return list(found.values())


ANALYST_COLUMNS = "name, share_epsilon, share_delta, key_id, salt, key_hash, email, expires, revoked"


def analyst_from_row(row: Sequence[Any]) -> Analyst:
    """An analyst from a row of ANALYST_COLUMNS."""
    name, e, d, kid, salt, hashed, email, expires, revoked = row
    return Analyst(name, (e, d), kid, salt, hashed, email, math.inf if expires is None else expires, bool(revoked))


def analyst_values(a: Analyst) -> tuple:
    """An analyst's columns after name and added: share_epsilon, share_delta, key_id, salt, key_hash, email, expires
    (NULL: never) and revoked (0 or 1)."""
    return (a.share[0], a.share[1], a.key_id, a.salt, a.key_hash, a.email, None if math.isinf(a.expires) else a.expires,
            int(a.revoked))


def with_parts(rows: list[dict[str, Any]], pairs: Iterable[Sequence[Any]]) -> list[dict[str, Any]]:
    """Each entry's row with "parts", the scopes of its parts from (uid, part) pairs in their order: `log`."""
    parts: dict[str, list[str]] = {}
    for uid, part in pairs:
        parts.setdefault(uid, []).append(part)
    for row in rows:
        row["parts"] = parts.get(row["uid"], [])
    return rows


def entry_from_row(row: dict[str, Any]) -> LedgerEntry:
    """A ledger entry from its row (and its details' columns, NULL until its outcome is recorded)."""
    population = Population(row["kind"], tuples(json.loads(row["key"])), row["label"])
    details = None
    if row["outcome"] is not None:
        stages = {k: (float(v[0]), float(v[1])) for k, v in json.loads(row["stages"] or "{}").items()}
        details = ReleaseDetails(row["coefficient"] or "", stages, row["outcome"], row["value"], row["low"],
                                 row["high"], row["document"], row["reason"])
    return LedgerEntry(population, row["epsilon"], row["delta"], time=to_epoch(row["time"]), uid=row["uid"],
                       details=details, spender=row["spender"])


def certification_from_row(row: Sequence[Any]) -> Certification:
    """A certification from a row of CERTIFICATIONS_SQL."""
    uid, entry, opened, plan, summary, state, certificates, release_entry, kind, key, label = row
    return Certification(uid, Population(kind, tuples(json.loads(key)), label), entry, json.loads(plan),
                         json.loads(summary), state, certificates, release_entry, to_epoch(opened))
