"""The privacy ledger: what has been spent on each population, and the one rule that caps it.

Every fresh draw on the same people adds to what an observer can learn about them. The ledger
records each charged draw's (epsilon, delta) against the `core.privacy.population.Population` it was drawn
on and refuses a draw that would take any of those people past their cap. Spending composes by
basic sequential composition: the spent total is the sum of the entries, in epsilon and in delta.

People, not data sets: a population made of several (census data of several states) is charged
on each of its parts, and a draw must fit under the cap of every part, so data sets that share
people share their budget. What one population has spent (`spent`) is the most any of its parts
has spent, the total that its most exposed person has seen.

The cap: a draw of (epsilon, delta) on a part that has spent (E, D) is allowed when
E + epsilon <= cap_epsilon * (1 + TOLERANCE) and D + delta <= cap_delta * (1 + TOLERANCE). The
relative tolerance of 1e-12 lets a draw that lands exactly on the cap through rounding (ten
draws of 0.1 under a cap of 1) pass; it can never let through more than a 1e-12 fraction of
the cap. A population's cap is the one given for it, or for a population it is part of (the
smallest when several apply), else the default.

The entries are kept by a `LedgerStore`; `MemoryStore` keeps them for the life of the process,
`core.privacy.ledger_store.SqliteStore` in a file the data's curator keeps (docs/privacy.md, "The durable
ledger"). A spend is one step, check and record: the ledger hands the store the entry and the rule
(`spend_atomically`), and the store applies the rule to what it holds and appends the entry without
letting any other spend come between. The ledger's lock gives that between threads over a
`MemoryStore`; a durable store gives it between processes with one database transaction. Over a
durable store the caps are the store's too (read in the same transaction), and `set_cap` and
`set_default_cap` write them there.

A release certified first (core.plan) is a `Certification` the ledger owns from its first charge to its last: it
is opened in the transaction that charges the certificates, keeps their private outputs once drawn, and is
finished in the transaction that charges the release event, once. A finish that names a finished, closed or
unknown certification, other people, or another plan (other rows, another target, budget, ...) is refused in that
transaction and charges nothing, whichever handle, copy or process asks.

Modelled on the budget accountant of IBM's diffprivlib (`BudgetAccountant`: check, spend,
remaining, a ceiling and a list of spends), keyed here by population and without its advanced
composition.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from core.errors import BudgetError, Refused
from core.privacy.access import (
    CURATOR,
    WINDOW,
    AccessError,
    Analyst,
    Count,
    Spender,
    check_name,
    email_taken,
    key_id,
    matches,
    name_taken,
    new_key,
    throttle,
    too_many,
)
from core.privacy.marks import public
from core.privacy.population import Population

TOLERANCE = 1e-12  # relative slack on the cap, for the rounding of sums (module docstring)
_LOG = logging.getLogger("psp.access")

Pair = tuple[float, float]  # (epsilon, delta)
Caps = tuple[Pair | None, dict[Population, Pair]]  # (the default cap or None, the caps of populations)
OUTCOMES = ("released", "bottom", "fallback", "failed")


@dataclass(frozen=True)
class ReleaseDetails:
    """What a charged draw released: the coefficient, each stage's (epsilon, delta), the outcome and its values.

    outcome is "released", "bottom", "fallback" or "failed" (an error after the charge: reason says which, in one
    line; the charge stays spent); value and the interval (low, high) are the private outputs (None for bottom).
    document is the release's private report (`core.report.private_report` as JSON), so that it can be shown again
    after its session. Nothing here is computed on the data except by the mechanism.
    """

    coefficient: str
    stages: dict[str, Pair]
    outcome: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    document: str | None = field(default=None, repr=False)
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"a release's outcome is one of {', '.join(OUTCOMES)}, got {self.outcome!r}")


def _published(entry: LedgerEntry) -> bool:
    """Whether a charge's release kept its private document (a failed release, or certificates alone, keep none)."""
    return entry.details is not None and bool(entry.details.document)


def release_details(run: Any, coefficient: str, document: str | None = None) -> ReleaseDetails:
    """The details of a `core.mechanisms.pipeline.PrivateRun` (its budget's stages, its release's status, value,
    interval) and its private document (JSON), if given."""
    rel = public(run).release  # the ledger's log keeps private outputs only
    low, high = rel.interval if rel.interval is not None else (None, None)
    return ReleaseDetails(str(coefficient), stage_costs(run.budget), rel.status, rel.value, low, high, document)


def stage_costs(budget: Any) -> dict[str, tuple[float, float]]:
    """A core.privacy.accounting.Budget's stages by name, as the ledger records them: {name: (epsilon, delta)}."""
    return {name: (float(s.epsilon), float(s.delta)) for name, s in budget.stages()}


@dataclass(frozen=True)
class LedgerEntry:
    """One charged draw: its population, its (epsilon, delta), optional details and record of what was released.

    uid tells entries apart (two draws of the same cost on the same people are two entries); time is
    when it was charged (seconds since the epoch); spender is who spent it (the curator, an analyst's name, or
    the browser on the server's machine: core.privacy.access). details (`ReleaseDetails`) are kept by every store;
    record (any object, e.g. the app's release) only in memory.
    """

    population: Population
    epsilon: float
    delta: float
    record: Any = field(default=None, compare=False, repr=False)
    time: float = field(default_factory=time.time, compare=False)
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)
    details: ReleaseDetails | None = field(default=None, compare=False)
    spender: str = CURATOR.name


CERTIFICATION_STATES = ("drawing", "open", "finished", "closed", "failed")


@dataclass(frozen=True)
class Certification:
    """A release certified first, owned by the ledger from its first charge (`entry`) to its last (`release_entry`).

    plan holds the digests of the plan's parts that a finish must match (core.plan.plan_digests: data, rows, model,
    target, budget, calibration, level, fallback); summary, the plan in public words. state is "drawing" (charged,
    certificates not yet kept), "open" (certificates kept: one finish may release from them), "finished",
    "closed" (unspent, by the curator; the first charge stays spent) or "failed" (an error after the charge).
    certificates are the private outputs of stages 1-2 as JSON (core.plan), once drawn.
    """

    uid: str
    population: Population
    entry: str
    plan: Mapping[str, str]
    summary: Mapping[str, Any]
    state: str = "drawing"
    certificates: str | None = field(default=None, repr=False)
    release_entry: str | None = None
    opened: float = field(default_factory=time.time, compare=False)

    def __post_init__(self) -> None:
        if self.state not in CERTIFICATION_STATES:
            raise ValueError(f"a certification's state is one of {CERTIFICATION_STATES}, got {self.state!r}")


# A certification's next state, given the stored one (None: none with that uid); raises Refused to refuse.
Change = Callable[[Certification | None], Certification]
# An analyst's change: from the stored record (None: no such analyst), the new one and the change in words.
Edit = Callable[[Analyst | None], tuple[Analyst, str]]
# Where a finish's plan may differ from its certification's, in the words of a refusal.
PLAN_PARTS = {"data": "other data", "rows": "other rows", "model": "another model", "target": "another target",
              "budget": "another budget", "calibration": "another calibration", "level": "another interval level",
              "fallback": "another fallback setting"}


SpentOf = Callable[[Population, "str | None"], Pair]  # a part's spent (epsilon, delta), by one spender or by all
AnalystOf = Callable[[str], "Analyst | None"]  # an analyst's record by name, as the store holds it
# the rule: why the entry does not fit, or None
Refusal = Callable[[SpentOf, "Caps | None", AnalystOf], "str | None"]


@dataclass(frozen=True)
class AnalystChange:
    """One change to the curator's record of the analysts: when (seconds since the epoch), whose record, what changed
    in words, and who changed it (the command line acts as the curator)."""

    time: float
    name: str
    change: str
    by: str


class LedgerStore(Protocol):
    """Where a ledger keeps its entries, caps, certifications, analysts and sign-ins: `MemoryStore` for the life of
    the process, `core.privacy.ledger_store.SqliteStore` in a file."""

    def caps(self) -> Caps:
        """(the default cap or None, {population: its own cap})."""

    def set_cap(self, population: Population, cap: Pair) -> None:
        """Give a population a cap of its own."""

    def set_default_cap(self, cap: Pair) -> None:
        """Set the cap of every population without one of its own."""

    def log(self) -> list[dict[str, Any]]:
        """Every entry, oldest first, as a dict of its columns with its parts (for an export)."""

    def parts_charged(self) -> list[Population]:
        """Every part any entry has charged, in the order first charged."""

    def entries(self, part: Population) -> Sequence[LedgerEntry]:
        """Every entry whose population has `part` among its parts, oldest first."""

    def spent(self, part: Population, by: str | None = None) -> Pair:
        """What one part has spent (by one spender's name, or by all): the exact sums of its entries."""

    def spend_atomically(self, entry: LedgerEntry, refusal: Refusal, step: tuple[str, Change] | None = None) -> None:
        """Append the entry unless refusal(spent_of, caps, analyst_of) gives a reason (then raise Refused with
        it), with no other spend between the reading and the appending. caps is the store's (None when it keeps
        none). step = (uid, change) also moves that certification to change(stored) in the same step; a change
        that raises refuses the spend."""

    def change_certification(self, uid: str, change: Change) -> Certification:
        """Replace a certification by change(stored), atomically; what change raises refuses it."""

    def certification(self, uid: str) -> Certification | None:
        """The certification of that uid, or None."""

    def certifications(self, part: Population) -> Sequence[Certification]:
        """Every certification on people with `part` among their parts, oldest first."""

    def update_details(self, uid: str, details: ReleaseDetails) -> None:
        """Set the release details of an entry (its charge is never changed)."""

    def add_analyst(self, analyst: Analyst, change: str, by: str) -> None:
        """Add an analyst's record (refused if their name or e-mail is taken), and log the change in words and who
        made it, in one step."""

    def change_analyst(self, name: str, edit: Edit, by: str) -> Analyst:
        """Replace an analyst's record by edit(stored) and log its words and who made it, atomically: a change made
        meanwhile is read, never written over; what edit raises refuses it."""

    def analysts(self) -> Sequence[Analyst]:
        """Every analyst's record, in the order added."""

    def analyst_changes(self) -> Sequence[AnalystChange]:
        """Every change to the analysts' records, oldest first."""

    def reserve_attempt(self, source: str, claimed: str | None, now: float) -> tuple[float, str, int | None]:
        """In one step: count the failures of source and of the claimed key id (core.privacy.access.throttle), then,
        unless either must still wait, log a new attempt as failed until `confirm_attempt` (so that attempts racing
        each other all count): (seconds to wait, the count that binds, the attempt's id or None when it must
        wait)."""

    def confirm_attempt(self, attempt: int) -> None:
        """Mark a reserved attempt as passed."""


def _fsum_spent(entries: Sequence[LedgerEntry]) -> Pair:
    return math.fsum(e.epsilon for e in entries), math.fsum(e.delta for e in entries)


class MemoryStore:
    """Entries in memory, indexed by every part of their population; atomic under the ledger's lock. In memory the
    caps given for a part and for unions holding it all bind (the smallest wins)."""

    def __init__(self, default_cap: Pair | None = None, caps: Mapping[Population, Pair] | None = None) -> None:
        self._default = default_cap
        self._caps = dict(caps or {})
        self._by_part: dict[Population, list[LedgerEntry]] = {}
        self._certifications: dict[str, Certification] = {}
        self._analysts: dict[str, Analyst] = {}
        self._changes: list[AnalystChange] = []
        self._attempts: list[dict] = []

    def append(self, entry: LedgerEntry) -> None:
        for part in entry.population.parts():
            self._by_part.setdefault(part, []).append(entry)

    def __str__(self) -> str:
        return "kept in memory"

    def caps(self) -> Caps:
        return self._default, dict(self._caps)

    def set_cap(self, population: Population, cap: Pair) -> None:
        self._caps[population] = cap

    def set_default_cap(self, cap: Pair) -> None:
        self._default = cap

    def _all_entries(self) -> list[LedgerEntry]:
        return sorted({e.uid: e for es in self._by_part.values() for e in es}.values(), key=lambda e: e.time)

    def log(self) -> list[dict[str, Any]]:
        return [{"uid": e.uid, "time": e.time, "spender": e.spender, "epsilon": e.epsilon, "delta": e.delta,
                 "parts": [p.describe() for p in e.population.parts()]} for e in self._all_entries()]

    def parts_charged(self) -> list[Population]:
        return list(dict.fromkeys(p for e in self._all_entries() for p in e.population.parts()))

    def entries(self, part: Population) -> Sequence[LedgerEntry]:
        return tuple(self._by_part.get(part, ()))

    def spent(self, part: Population, by: str | None = None) -> Pair:
        return _fsum_spent([e for e in self.entries(part) if by in (None, e.spender)])

    def spend_atomically(self, entry: LedgerEntry, refusal: Refusal, step: tuple[str, Change] | None = None) -> None:
        changed = None if step is None else step[1](self._certifications.get(step[0]))
        reason = refusal(self.spent, None, self._analysts.get)
        if reason is not None:
            raise Refused(reason)
        self.append(entry)
        if changed is not None:
            self._certifications[changed.uid] = changed

    def change_certification(self, uid: str, change: Change) -> Certification:
        changed = self._certifications[uid] = change(self._certifications.get(uid))
        return changed

    def certification(self, uid: str) -> Certification | None:
        return self._certifications.get(uid)

    def certifications(self, part: Population) -> Sequence[Certification]:
        return tuple(c for c in self._certifications.values() if part in c.population.parts())

    def add_analyst(self, analyst: Analyst, change: str, by: str) -> None:
        if analyst.name in self._analysts:
            raise name_taken(analyst.name)
        if holder := next((a.name for a in self._analysts.values() if analyst.email and a.email == analyst.email),
                          None):
            raise email_taken(analyst.email, holder)
        self._analysts[analyst.name] = analyst
        self._changes.append(AnalystChange(time.time(), analyst.name, change, by))

    def change_analyst(self, name: str, edit: Edit, by: str) -> Analyst:
        changed, words = edit(self._analysts.get(name))
        self._analysts[name] = changed
        self._changes.append(AnalystChange(time.time(), name, words, by))
        return changed

    def analysts(self) -> Sequence[Analyst]:
        return tuple(self._analysts.values())

    def analyst_changes(self) -> Sequence[AnalystChange]:
        return tuple(self._changes)

    def reserve_attempt(self, source: str, claimed: str | None, now: float) -> tuple[float, str, int | None]:
        left, binding = throttle(*_failures(self._attempts, source, claimed, now), now)
        if left > 0:
            return left, binding, None
        self._attempts.append(dict(time=now, source=source, claimed=claimed, ok=False))
        return 0.0, binding, len(self._attempts) - 1

    def confirm_attempt(self, attempt: int) -> None:
        self._attempts[attempt]["ok"] = True

    def update_details(self, uid: str, details: ReleaseDetails) -> None:
        found = False
        for entries in self._by_part.values():
            for i, e in enumerate(entries):
                if e.uid == uid:
                    entries[i] = replace(e, details=details)
                    found = True
        if not found:
            raise KeyError(f"no ledger entry {uid}")


def _check_pair(pair: Pair, what: str) -> Pair:
    """(epsilon, delta) as floats, both >= 0 and not NaN (delta at most 1); epsilon may be inf for a cap."""
    try:
        epsilon, delta = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise BudgetError(f"{what} must be a pair (epsilon, delta) of numbers, got {pair!r}") from None
    if not (epsilon >= 0 and 0 <= delta <= 1):  # False for NaN
        raise BudgetError(f"{what} needs epsilon >= 0 and delta in [0, 1], got ({epsilon:g}, {delta:g})")
    return epsilon, delta


class Ledger:
    """Spent (epsilon, delta) per population under caps: `check`, `spend`, `spent`, `remaining`, `cap`, `entries`.

    In memory (the default store), default_cap applies to every population without a cap of its own in
    caps (module docstring). Over a durable store the caps are the store's: default_cap and caps must
    not be given, `set_cap` and `set_default_cap` write to the store, and a population without any cap
    there is refused until one is set.
    """

    def __init__(
        self,
        default_cap: Pair | None = None,
        caps: Mapping[Population, Pair] | None = None,
        store: LedgerStore | None = None,
    ) -> None:
        if store is None:
            if default_cap is None:
                raise ValueError("a ledger kept in memory needs a default cap (epsilon, delta)")
            store = MemoryStore(_check_pair(default_cap, "the default cap"),
                                {p: _check_pair(c, f"the cap of {p.describe()}") for p, c in (caps or {}).items()})
        elif default_cap is not None or caps:
            raise ValueError(f"the caps of the ledger {store} are kept in it by its curator; set them with "
                             "Ledger.set_cap / set_default_cap or `python -m core ledger set-cap`, not when opening it")
        self._store: LedgerStore = store
        self._lock = threading.Lock()

    def __str__(self) -> str:
        """Where the entries are kept (a file's path, or memory)."""
        return str(self._store)

    # ------------------------------------------------------------ caps

    def _all_caps(self) -> Caps:
        return self._store.caps()

    def caps(self) -> Caps:
        """(the default cap or None, {population: its own cap}), as the store keeps them."""
        with self._lock:
            return self._all_caps()

    @property
    def default_cap(self) -> Pair | None:
        """The cap of every population without one of its own (None: a durable store without one)."""
        with self._lock:
            return self._all_caps()[0]

    def set_default_cap(self, cap: Pair) -> None:
        """Change the cap of every population without one of its own (what was spent stays spent)."""
        checked = _check_pair(cap, "the default cap")
        with self._lock:
            self._store.set_default_cap(checked)

    def set_cap(self, population: Population, cap: Pair) -> None:
        """Give a population (and so each of its parts) a cap of its own.

        In memory the caps given for a part and for unions holding it all bind (the smallest wins); a
        durable store keeps one cap per part, which this replaces (so a curator can raise it again).
        """
        checked = _check_pair(cap, f"the cap of {population.describe()}")
        with self._lock:
            self._store.set_cap(population, checked)

    def cap(self, population: Population) -> Pair:
        """The cap that binds the population: the smallest over its parts, in epsilon and in delta."""
        with self._lock:
            table = self._all_caps()
        caps = [_part_cap(p, table) for p in population.parts()]
        if any(c is None for c in caps):
            raise Refused(self._no_cap(population))
        return min(c[0] for c in caps), min(c[1] for c in caps)  # type: ignore[index]

    def _no_cap(self, part: Population) -> str:
        return (f"refused: no cap is set for {part.describe()} in the ledger {self._store}, and it has no default "
                "cap; the data's curator sets one with `python -m core ledger set-cap`")

    # ------------------------------------------------------------ what was spent

    def _spent_part(self, part: Population, by: str | None = None) -> Pair:
        return self._store.spent(part, by)

    def spent_by(self, part: Population, name: str) -> Pair:
        """What one spender (by the name entries record) has spent on one part."""
        with self._lock:
            return self._spent_part(part, name)

    def spent(self, population: Population) -> Pair:
        """(epsilon, delta) spent on the population by basic composition: the most any of its parts has spent."""
        with self._lock:
            spent = [self._spent_part(p) for p in population.parts()]
        return max(s[0] for s in spent), max(s[1] for s in spent)

    def entries_until(self, population: Population, uid: str) -> tuple[LedgerEntry, ...]:
        """The entries charged to any part of the population up to and including the entry uid, oldest first: the
        log as it stood when that entry was charged (it is append-only, so this never changes); () for an uid that
        is not among them."""
        entries = self.entries(population)
        ends = next((i for i, e in enumerate(entries) if e.uid == uid), None)
        return () if ends is None else entries[:ends + 1]

    def spent_until(self, population: Population, uid: str) -> Pair:
        """spent(population) as it stood when the entry uid was charged (it included): each part's sum over the entries
        that charged it, the most of any part."""
        upto = self.entries_until(population, uid)
        spent = [_fsum_spent([e for e in upto if part in e.population.parts()]) for part in population.parts()]
        return max(s[0] for s in spent), max(s[1] for s in spent)

    def remaining(self, population: Population, spender: Spender = CURATOR) -> Pair:
        """The largest (epsilon, delta) a draw on the population by spender may still cost, each at least 0: what the
        cap leaves and, for an analyst, what their share leaves too."""
        cap = self.cap(population)  # Refused when a durable store has no cap for it
        with self._lock:
            table = self._all_caps()
            left = [(c[0] - s[0], c[1] - s[1]) for p in population.parts()
                    for c, s in [(_part_cap(p, table) or cap, self._spent_part(p))]]
        analyst = self._analyst(spender.name) if spender.kind == "analyst" else None
        if analyst is not None:
            left += [(analyst.share[0] - s[0], analyst.share[1] - s[1])
                     for s in (self.spent_by(p, spender.name) for p in population.parts())]
        return max(0.0, min(r[0] for r in left)), max(0.0, min(r[1] for r in left))

    def log(self) -> list[dict[str, Any]]:
        """The whole append-only log, oldest first (for the curator's export)."""
        with self._lock:
            return self._store.log()

    def parts_charged(self) -> list[Population]:
        """Every population part any entry has charged, in the order first charged."""
        with self._lock:
            return self._store.parts_charged()

    def entries(self, population: Population) -> tuple[LedgerEntry, ...]:
        """Every entry charged to any part of the population, each once, oldest first."""
        return self._entries(population.parts())

    def _entries(self, parts: Iterable[Population]) -> tuple[LedgerEntry, ...]:
        """Every entry charged to any of these parts, each once (an entry on several parts is stored on each), oldest
        first."""
        with self._lock:
            found = {e.uid: e for p in parts for e in self._store.entries(p)}
        return tuple(sorted(found.values(), key=lambda e: e.time))

    def latest_report(self, population: Population) -> LedgerEntry | None:
        """The newest entry on any part of the population whose release kept its private report (None without)."""
        kept = [e for e in self.entries(population) if _published(e)]
        return kept[-1] if kept else None

    def publications(self) -> tuple[LedgerEntry, ...]:
        """Every charge whose release kept its private document, on any people, newest first: what the server of
        this ledger has published (a failed release keeps none)."""
        return tuple(e for e in reversed(self._entries(self.parts_charged())) if _published(e))

    def publication(self, uid: str) -> LedgerEntry | None:
        """The published entry of this uid, or None (an unknown uid, or a charge that kept no document)."""
        return next((e for e in self.publications() if e.uid == uid), None)

    # ------------------------------------------------------------ the rule

    def refusal(self, population: Population, epsilon: float, delta: float,
                spender: Spender = CURATOR) -> str | None:
        """Why a draw of (epsilon, delta) on the population by spender would pass a cap or their share, or None
        when it fits."""
        cost = _check_pair((epsilon, delta), "a draw's cost")
        with self._lock:
            return self._refusal(population, cost, self._spent_part, self._all_caps(), spender, self._analyst)

    def _analyst(self, name: str) -> Analyst | None:
        return next((a for a in self._store.analysts() if a.name == name), None)

    def _refusal(self, population: Population, cost: Pair, spent_of: SpentOf, table: Caps,
                 spender: Spender = CURATOR, analyst_of: AnalystOf | None = None) -> str | None:
        if spender.kind == "analyst":
            why = _share_refusal(population, cost, spent_of, spender, (analyst_of or self._analyst)(spender.name))
            if why is not None:
                return why
        for part in population.parts():
            cap = _part_cap(part, table)
            if cap is None:
                return self._no_cap(part)
            (spent_e, spent_d), (cap_e, cap_d) = spent_of(part, None), cap
            if spent_e + cost[0] > cap_e * (1 + TOLERANCE) or spent_d + cost[1] > cap_d * (1 + TOLERANCE):
                return (
                    f"refused: this draw costs (ε, δ) = ({cost[0]:g}, {cost[1]:g}); ({spent_e:g}, {spent_d:g}) is "
                    f"already spent on {part.describe()}, and the cap is ({cap_e:g}, {cap_d:g}). Raise the cap only "
                    "if the data's owner agrees: every fresh draw on the same people adds to what an observer "
                    "can learn."
                )
        return None

    def check(self, population: Population, epsilon: float, delta: float) -> None:
        """Raise Refused, saying what the draw costs, what is spent and the cap, unless the draw fits."""
        reason = self.refusal(population, epsilon, delta)
        if reason is not None:
            raise Refused(reason)

    def spend(self, population: Population, epsilon: float, delta: float, record: Any = None,
              details: ReleaseDetails | None = None, spender: Spender = CURATOR) -> LedgerEntry:
        """Check and record a draw by spender in one step (no other spend can come between); Refused if it does
        not fit the cap, or an analyst's share (AccessError when the analyst was revoked or has expired).

        The store applies the rule and appends the entry atomically (in one transaction for a durable
        store, so no other process can come between either).
        """
        cost = _check_pair((epsilon, delta), "a draw's cost")
        entry = LedgerEntry(population, cost[0], cost[1], record, details=details, spender=spender.name)
        self._spend(entry, spender=spender)
        return entry

    def _spend(self, entry: LedgerEntry, step: tuple[str, Change] | None = None, spender: Spender = CURATOR) -> None:
        cost = (entry.epsilon, entry.delta)

        def rule(spent_of: SpentOf, store_caps: Caps | None, analyst_of: AnalystOf) -> str | None:
            return self._refusal(entry.population, cost, spent_of,
                                 self._all_caps() if store_caps is None else store_caps, spender, analyst_of)

        with self._lock:
            self._store.spend_atomically(entry, rule, step)

    def record_outcome(self, entry: LedgerEntry | str, details: ReleaseDetails) -> None:
        """Record what a charged draw released on its entry; the charge itself stays as it was."""
        uid = entry if isinstance(entry, str) else entry.uid
        with self._lock:
            self._store.update_details(uid, details)

    # ------------------------------------------------------------ releases certified first

    def open_certification(self, population: Population, epsilon: float, delta: float, plan: Mapping[str, str],
                           summary: Mapping[str, Any], spender: Spender = CURATOR) -> tuple[LedgerEntry, Certification]:
        """Charge a release's first phase and open its certification in one step (Refused past the cap)."""
        entry = LedgerEntry(population, *_check_pair((epsilon, delta), "a draw's cost"), spender=spender.name)
        opened = Certification(uuid.uuid4().hex, population, entry.uid, dict(plan), dict(summary))

        def change(stored: Certification | None) -> Certification:
            if stored is not None:
                raise Refused(f"a certification {opened.uid} exists already")
            return opened

        self._spend(entry, (opened.uid, change), spender)
        return entry, opened

    def keep_certificates(self, uid: str, certificates: str) -> Certification:
        """Keep the drawn certificates' private outputs on their certification, which opens it for one finish."""
        def change(stored: Certification | None) -> Certification:
            if stored is None or stored.state != "drawing":
                raise Refused(f"the certification {uid} is not waiting for its certificates")
            return replace(stored, state="open", certificates=certificates)

        return self._change(uid, change)

    def finish_certification(self, uid: str, population: Population, epsilon: float, delta: float,
                             plan: Mapping[str, str], spender: Spender = CURATOR) -> tuple[LedgerEntry, Certification]:
        """Charge the release event of an open certification and finish it, in one step: refused (Refused,
        nothing charged) when it is not open, is on other people, or was drawn for another plan (`PLAN_PARTS`)."""
        entry = LedgerEntry(population, *_check_pair((epsilon, delta), "a draw's cost"), spender=spender.name)
        finished: list[Certification] = []

        def change(stored: Certification | None) -> Certification:
            finished.append(replace(_finishable(stored, uid, population, plan), state="finished",
                                    release_entry=entry.uid))
            return finished[-1]

        self._spend(entry, (uid, change), spender)
        return entry, finished[-1]

    def close_certification(self, uid: str, state: str = "closed") -> Certification:
        """End a certification that has not released: "closed" unspent (the curator's), or "failed" (an error
        after its charge). What its first phase spent stays spent."""
        def change(stored: Certification | None) -> Certification:
            if stored is None:
                raise Refused(f"refused: no certification {uid} in the ledger {self._store}")
            if stored.state not in ("drawing", "open"):
                raise Refused(f"refused: the certification {uid} is {stored.state} already")
            return replace(stored, state=state)

        return self._change(uid, change)

    def certification(self, uid: str) -> Certification | None:
        with self._lock:
            return self._store.certification(uid)

    def certifications(self, population: Population) -> tuple[Certification, ...]:
        """Every certification on any part of the population, whatever its state, oldest first."""
        with self._lock:
            found = {c.uid: c for p in population.parts() for c in self._store.certifications(p)}
        return tuple(sorted(found.values(), key=lambda c: c.opened))

    def open_certifications(self, population: Population) -> tuple[Certification, ...]:
        """The certifications on any part of the population that may still release (open), oldest first."""
        return tuple(c for c in self.certifications(population) if c.state == "open")

    def _change(self, uid: str, change: Change) -> Certification:
        with self._lock:
            return self._store.change_certification(uid, change)

    # ------------------------------------------------------------ analysts (core.privacy.access)

    def add_analyst(self, name: str, share: Pair, email: str | None = None,
                    expires: float = math.inf, by: str = CURATOR.name) -> str | None:
        """Register an analyst who may spend `share` of each people's cap: signing in by the identity provider's
        e-mail when given, else by an access key, returned here once and kept only as its salted hash."""
        checked = _check_pair(share, f"the share of {name}")
        check_name(name)
        key = None
        if email is None:
            key, kid, salt, hashed = new_key()
            analyst = Analyst(name, checked, kid, salt, hashed, expires=expires)
        else:
            analyst = Analyst(name, checked, email=email.strip().lower(), expires=expires)
        signs_in = f"e-mail {analyst.email}" if email is not None else "an access key"
        with self._lock:
            self._store.add_analyst(analyst, f"added with a share of ε = {checked[0]:g}, δ = {checked[1]:g}, "
                                    f"signing in with {signs_in}, {_expiry_words(expires)}", by)
        return key

    def revoke_analyst(self, name: str, by: str = CURATOR.name) -> Analyst:
        """Revoke an analyst at once: every later spend or sign-in of theirs is refused (what they spent stays)."""
        return self.change_analyst(name, revoked=True, by=by)

    def change_analyst(self, name: str, share: Pair | None = None, expires: float | None = None,
                       revoked: bool | None = None, by: str = CURATOR.name) -> Analyst:
        """Change an analyst's share, expiry (seconds since the epoch; inf: never) or revocation (False reinstates),
        logged with who made the change (`analyst_changes`); what they spent stays spent, and a smaller share than
        they have spent leaves them nothing more to spend. AccessError for an unknown name or no change."""
        checked = None if share is None else _check_pair(share, f"the share of {name}")

        def edit(found: Analyst | None) -> tuple[Analyst, str]:
            if found is None:
                raise AccessError(f"no analyst named {name} in the ledger {self._store}; `ledger analyst list` lists "
                                  "them")
            changed = replace(found, share=found.share if checked is None else checked,
                              expires=found.expires if expires is None else expires,
                              revoked=found.revoked if revoked is None else revoked)
            if not (words := _change_words(found, changed)):
                raise AccessError(f"nothing to change for {name}: name a new share, expiry or reinstatement")
            return changed, words

        with self._lock:
            return self._store.change_analyst(name, edit, by)

    def analyst_changes(self) -> tuple[AnalystChange, ...]:
        """Every change to the analysts' records, oldest first, with who made it."""
        with self._lock:
            return tuple(self._store.analyst_changes())

    def analysts(self) -> tuple[Analyst, ...]:
        with self._lock:
            return tuple(self._store.analysts())

    def has_analysts(self, now: float | None = None) -> bool:
        """Whether any analyst may sign in now (not revoked, not expired)."""
        now = time.time() if now is None else now
        return any(a.why_not(now) is None for a in self.analysts())

    def analyst_spender(self, name: str, now: float | None = None) -> Spender:
        """The spender of an analyst who may spend now, by name; AccessError (one sentence) otherwise. An app checks
        its signed-in analyst on every run with it, so a revocation ends an open session at once."""
        found = self._analyst(name)
        why = (f"no analyst named {name} is registered in this ledger" if found is None else
               found.why_not(time.time() if now is None else now))
        if why is not None:
            raise AccessError(f"{why[:1].upper()}{why[1:]}, so {name} cannot spend.")
        return Spender("analyst", name)

    def by_email(self, email: str, now: float | None = None) -> Spender | None:
        """The analyst the identity provider's e-mail was registered for, if they may spend now (else None)."""
        wanted = email.strip().lower()
        found = next((a for a in self.analysts() if a.email is not None and a.email == wanted), None)
        ok = found is not None and found.why_not(time.time() if now is None else now) is None
        return Spender("analyst", found.name) if ok else None  # type: ignore[union-attr]

    def sign_in(self, key: str, source: str, now: float | None = None) -> Spender:
        """An analyst's spender from their access key; AccessError in one sentence for a wrong, revoked or expired
        key, or for a source or key id that must wait after too many failures (core.privacy.access: throttled, every
        attempt logged, the key never kept)."""
        now = time.time() if now is None else now
        claimed = key_id(key)
        with self._lock:
            left, binding, attempt = self._store.reserve_attempt(source, claimed, now)
        if attempt is None:  # throttled: the key is not looked at, and the attempt does not count
            _LOG.warning("sign-in refused from %s: too many failures %s; %.0f s to wait", source,
                         "with the key it claims" if binding == "key" else "from that source", left)
            raise AccessError(too_many(left, binding, source))
        found = next((a for a in self.analysts() if a.key_id is not None and a.key_id == claimed), None)
        if found is None or not matches(key, found):
            _LOG.warning("failed sign-in from %s", source)
            raise AccessError("That access key is not valid: check it, or ask the data's curator for a new one.")
        why = found.why_not(now)
        if why is not None:
            _LOG.warning("sign-in of %s from %s refused: %s", found.name, source, why)
            raise AccessError(f"That key no longer works: {why}.")
        with self._lock:
            self._store.confirm_attempt(attempt)
        return Spender("analyst", found.name)

    # ------------------------------------------------------------ copies

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock cannot be copied; a copy gets its own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def _share_refusal(population: Population, cost: Pair, spent_of: SpentOf, spender: Spender,
                   analyst: Analyst | None) -> str | None:
    """Why an analyst may not spend this draw (unknown, revoked, expired, past their share on a part), or None."""
    if analyst is None:
        return f"refused: {spender.name} is not an analyst of this ledger"
    why = analyst.why_not(time.time())
    if why is not None:
        return f"refused: {why}"
    share_e, share_d = analyst.share
    for part in population.parts():
        spent_e, spent_d = spent_of(part, spender.name)
        if spent_e + cost[0] > share_e * (1 + TOLERANCE) or spent_d + cost[1] > share_d * (1 + TOLERANCE):
            return (f"refused: this draw costs (ε, δ) = ({cost[0]:g}, {cost[1]:g}); {spender.name} has spent "
                    f"({spent_e:g}, {spent_d:g}) on {part.describe()}, and their share is ({share_e:g}, {share_d:g}). "
                    "The data's curator sets the shares.")
    return None


def _expiry_words(expires: float) -> str:
    if math.isinf(expires):
        return "never expiring"
    return f"expiring {datetime.fromtimestamp(expires, UTC):%Y-%m-%d %H:%M} UTC"


def _change_words(before: Analyst, after: Analyst) -> str:
    """What changed between two records of one analyst, in words ("" for nothing)."""
    said = []
    if after.share != before.share:
        said.append(f"share ε = {before.share[0]:g}, δ = {before.share[1]:g} → ε = {after.share[0]:g}, "
                    f"δ = {after.share[1]:g}")
    if after.expires != before.expires:
        said.append(f"{_expiry_words(before.expires)} → {_expiry_words(after.expires)}")
    if after.revoked != before.revoked:
        said.append("revoked" if after.revoked else "reinstated")
    return "; ".join(said)


def _failures(attempts: Sequence[dict], source: str, claimed: str | None, now: float) -> tuple[Count, Count]:
    """The counts of core.privacy.access.throttle from attempts (dicts of time, source, claimed, ok), oldest first:
    the source's failures in the last WINDOW seconds, and the claimed key id's since its last success, each as
    (failures, the time of the last). SqliteStore.reserve_attempt counts the same in SQL."""
    recent = [a["time"] for a in attempts if a["source"] == source and not a["ok"] and a["time"] > now - WINDOW]
    in_a_row, last = 0, None
    for a in attempts if claimed is not None else ():
        if a["claimed"] == claimed:
            in_a_row, last = (0, None) if a["ok"] else (in_a_row + 1, a["time"])
    return (len(recent), max(recent, default=None)), (in_a_row, last)


def _finishable(stored: Certification | None, uid: str, population: Population,
                plan: Mapping[str, str]) -> Certification:
    """The stored certification if this plan may release from it; else Refused, saying why and what to do
    (unknown, not open, on other people, or drawn for another plan)."""
    again = "certify again for this release"
    if stored is None:
        raise Refused(f"refused: no certification {uid} in this ledger; {again}")
    if stored.state == "finished":
        raise Refused(f"refused: these certificates have released already (one release each); {again}")
    if stored.state != "open":
        how = {"closed": "were closed unspent", "failed": "failed after their charge",
               "drawing": "were never kept"}[stored.state]
        raise Refused(f"refused: these certificates {how}; {again}")
    if population != stored.population:
        raise Refused(f"refused: these certificates were drawn on other people; {again}")
    for part, words in PLAN_PARTS.items():
        if plan.get(part) != stored.plan.get(part):
            raise Refused(f"refused: these certificates were drawn for {words} than this release names; "
                              "set it back to release from them, or " + again)
    return stored


def _part_cap(part: Population, table: Caps) -> Pair | None:
    """The cap of one part: the smallest given for a population holding it, else the default (None if neither)."""
    default, caps = table
    given = [c for p, c in caps.items() if part in p.parts()]
    if not given:
        return default
    return min(c[0] for c in given), min(c[1] for c in given)
