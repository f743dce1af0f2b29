"""The privacy ledger: what has been spent on each population, and the one rule that caps it.

Every fresh draw on the same people adds to what an observer can learn about them. The ledger
records each charged draw's (epsilon, delta) against the `core.population.Population` it was drawn
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

The entries are kept by a `LedgerStore`; `MemoryStore` keeps them for the life of the process.
The ledger's lock makes `spend` one step (check and record), so two threads can never both pass
the cap; a store shared between processes must give the same guarantee itself.

Modelled on the budget accountant of IBM's diffprivlib (`BudgetAccountant`: check, spend,
remaining, a ceiling and a list of spends), keyed here by population and without its advanced
composition.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import BudgetError
from core.population import Population

TOLERANCE = 1e-12  # relative slack on the cap, for the rounding of sums (module docstring)

Pair = tuple[float, float]  # (epsilon, delta)


@dataclass(frozen=True)
class LedgerEntry:
    """One charged draw: its population, its (epsilon, delta), an optional record of what was released.

    uid tells entries apart (two draws of the same cost on the same people are two entries); time is
    when it was charged (seconds since the epoch).
    """

    population: Population
    epsilon: float
    delta: float
    record: Any = field(default=None, compare=False, repr=False)
    time: float = field(default_factory=time.time, compare=False)
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)


class LedgerStore(Protocol):
    """Where a ledger keeps its entries (in memory here; a durable store implements the same two methods)."""

    def append(self, entry: LedgerEntry) -> None:
        """Keep one more entry."""

    def entries(self, part: Population) -> Sequence[LedgerEntry]:
        """Every entry whose population has `part` among its parts, oldest first."""


class MemoryStore:
    """Entries in memory, indexed by every part of their population."""

    def __init__(self) -> None:
        self._by_part: dict[Population, list[LedgerEntry]] = {}

    def append(self, entry: LedgerEntry) -> None:
        for part in entry.population.parts():
            self._by_part.setdefault(part, []).append(entry)

    def entries(self, part: Population) -> Sequence[LedgerEntry]:
        return tuple(self._by_part.get(part, ()))


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

    default_cap applies to every population without a cap of its own in caps (module docstring).
    """

    def __init__(
        self,
        default_cap: Pair,
        caps: Mapping[Population, Pair] | None = None,
        store: LedgerStore | None = None,
    ) -> None:
        self._default = _check_pair(default_cap, "the default cap")
        self._caps = {p: _check_pair(c, f"the cap of {p.describe()}") for p, c in (caps or {}).items()}
        self._store: LedgerStore = MemoryStore() if store is None else store
        self._lock = threading.Lock()

    # ------------------------------------------------------------ caps

    @property
    def default_cap(self) -> Pair:
        return self._default

    def set_default_cap(self, cap: Pair) -> None:
        """Change the cap of every population without one of its own (what was spent stays spent)."""
        checked = _check_pair(cap, "the default cap")
        with self._lock:
            self._default = checked

    def set_cap(self, population: Population, cap: Pair) -> None:
        """Give a population (and so each of its parts) a cap of its own."""
        checked = _check_pair(cap, f"the cap of {population.describe()}")
        with self._lock:
            self._caps[population] = checked

    def cap(self, population: Population) -> Pair:
        """The cap that binds the population: the smallest over its parts, in epsilon and in delta."""
        with self._lock:
            caps = [self._part_cap(p) for p in population.parts()]
        return min(c[0] for c in caps), min(c[1] for c in caps)

    def _part_cap(self, part: Population) -> Pair:
        given = [c for p, c in self._caps.items() if part in p.parts()]
        if not given:
            return self._default
        return min(c[0] for c in given), min(c[1] for c in given)

    # ------------------------------------------------------------ what was spent

    def _spent_part(self, part: Population) -> Pair:
        entries = self._store.entries(part)
        return math.fsum(e.epsilon for e in entries), math.fsum(e.delta for e in entries)

    def spent(self, population: Population) -> Pair:
        """(epsilon, delta) spent on the population by basic composition: the most any of its parts has spent."""
        with self._lock:
            spent = [self._spent_part(p) for p in population.parts()]
        return max(s[0] for s in spent), max(s[1] for s in spent)

    def remaining(self, population: Population) -> Pair:
        """The largest (epsilon, delta) a draw on the population may still cost, each at least 0."""
        with self._lock:
            left = [(c[0] - s[0], c[1] - s[1]) for p in population.parts()
                    for c, s in [(self._part_cap(p), self._spent_part(p))]]
        return max(0.0, min(r[0] for r in left)), max(0.0, min(r[1] for r in left))

    def entries(self, population: Population) -> tuple[LedgerEntry, ...]:
        """Every entry charged to any part of the population, each once, oldest first."""
        with self._lock:
            found = {e.uid: e for p in population.parts() for e in self._store.entries(p)}
        return tuple(sorted(found.values(), key=lambda e: e.time))

    # ------------------------------------------------------------ the rule

    def refusal(self, population: Population, epsilon: float, delta: float) -> str | None:
        """Why a draw of (epsilon, delta) on the population would pass a cap, or None when it fits."""
        cost = _check_pair((epsilon, delta), "a draw's cost")
        with self._lock:
            return self._refusal(population, cost)

    def _refusal(self, population: Population, cost: Pair) -> str | None:
        for part in population.parts():
            (spent_e, spent_d), (cap_e, cap_d) = self._spent_part(part), self._part_cap(part)
            if spent_e + cost[0] > cap_e * (1 + TOLERANCE) or spent_d + cost[1] > cap_d * (1 + TOLERANCE):
                return (
                    f"refused: this draw costs (ε, δ) = ({cost[0]:g}, {cost[1]:g}); ({spent_e:g}, {spent_d:g}) is "
                    f"already spent on {part.describe()}, and the cap is ({cap_e:g}, {cap_d:g}). Raise the cap only "
                    "if the data's owner agrees: every fresh draw on the same people adds to what an observer "
                    "can learn."
                )
        return None

    def check(self, population: Population, epsilon: float, delta: float) -> None:
        """Raise BudgetError, saying what the draw costs, what is spent and the cap, unless the draw fits."""
        reason = self.refusal(population, epsilon, delta)
        if reason is not None:
            raise BudgetError(reason)

    def spend(self, population: Population, epsilon: float, delta: float, record: Any = None) -> LedgerEntry:
        """Check and record a draw in one step (no other spend can come between); BudgetError if it does not fit."""
        cost = _check_pair((epsilon, delta), "a draw's cost")
        with self._lock:
            reason = self._refusal(population, cost)
            if reason is not None:
                raise BudgetError(reason)
            entry = LedgerEntry(population, cost[0], cost[1], record)
            self._store.append(entry)
        return entry

    # ------------------------------------------------------------ copies

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]  # a lock cannot be copied; a copy gets its own
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
