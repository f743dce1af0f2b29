"""Who is in the data: the identity a privacy ledger is keyed on.

A release protects people, not files or settings. Two loads of the same people (a census population
sampled with another seed or size, read from another folder, downloaded or not) must draw on one
budget; data of other people must not. A `Population` names the people and nothing else:

- census data: the persons of one survey (year, horizon) in the chosen states, never the sample
  size, the sample seed, the folder, whether a file was downloaded, or whether it came as a PUMS person
  file of one's own (its ST and SERIALNO columns name the same people);
- a file of rows (a CSV): a canonical key of its content (`content_key`), which no re-writing of the same rows
  changes (names, order and coding of columns, order of rows, number formats, line endings, quoting);
- synthetic data: every generator setting, the row count and seed included (generated rows are
  their own population);
- a SYNTHETIC census sample (core.data.census_sample): made-up persons in the census layout, a kind of their own
  keyed like census data plus the sample's size, so that no charge on them is ever counted against real people
  of the same states, nor theirs against the sample. Every sample of a state, whatever its size, is also part of
  that state's samples (`census_samples_of`), which a curator caps with the state's census data.

Census populations of several states are made of the one-state populations (`parts`): a person of
California is in "CA" and in "CA + MI", so a ledger charges and checks every part; a 5-Year survey is made
of its five 1-Year surveys.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

ACS = "acs"
FILE = "file"
SYNTHETIC = "synthetic"
SYNTHETIC_CENSUS = "synthetic_census"
KINDS = (ACS, FILE, SYNTHETIC, SYNTHETIC_CENSUS)


def seed_words(seed: int | None) -> str:
    """A seed in words, the one wording of every label and description: "seed 7", or "unseeded" (never "seed None")."""
    return "unseeded" if seed is None else f"seed {seed}"


@dataclass(frozen=True)
class Population:
    """The people in a data set: a kind ("acs", "file", "synthetic" or "synthetic_census") and a key tuple within it.

    Keys: acs ((sorted states), year, horizon); file (content key,) or (content key, earlier key); synthetic (loss,
    n, d, theta_norm, noise_scale, seed); synthetic_census ((sorted states), year, horizon, rows per state), or
    ((state,), year, horizon) for every sample of one state. Only kind and key are compared and hashed; label is the
    description shown in words (it never holds the digest: a digest of the data is a function of the data, and must
    not be published).
    """

    kind: str
    key: tuple
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown population kind {self.kind!r}; one of {', '.join(KINDS)}")
        if not isinstance(self.key, tuple):
            raise TypeError(f"a population key is a tuple, got {type(self.key).__name__}")
        hash(self.key)  # a key must be hashable all the way down

    @classmethod
    def census(cls, states: tuple[str, ...] | list[str], year: int, horizon: str) -> Population:
        """The persons of the ACS (year, horizon) person files of `states` (order and repeats ignored)."""
        names = tuple(sorted(set(states)))
        files = "file" if len(names) == 1 else "files"
        label = f"the persons of the ACS {int(year)} {horizon} person {files} of {', '.join(names) or 'no state'}"
        return cls(ACS, (names, int(year), horizon), label)

    @classmethod
    def file(cls, key: str, name: str = "", earlier: str = "", holder: str = "file") -> Population:
        """The rows of a file (or of the folder that holds them: `holder`), by the key of their content
        (content_key); name only labels it. earlier, the key the same file was charged under before content_key
        (core.data.rows.earlier_key), is a part too, so what was spent under it still counts."""
        label = f"the rows of the {holder} {name}" if name else f"the rows of one {holder}"
        return cls(FILE, (key, earlier) if earlier else (key,), label)

    @classmethod
    def synthetic(cls, loss: str, n: int, d: int, theta_norm: float, noise_scale: float,
                  seed: int | None) -> Population:
        """The rows one run of the synthetic generator makes."""
        label = f"the synthetic {loss} rows (n = {n}, d = {d}, {seed_words(seed)})"
        return cls(SYNTHETIC, (loss, n, d, theta_norm, noise_scale, seed), label)

    @classmethod
    def census_sample(cls, states: tuple[str, ...] | list[str], year: int, horizon: str, rows: int) -> Population:
        """The made-up persons of a SYNTHETIC census sample of `states` (rows records per state, in the layout of the
        ACS (year, horizon) person files): nobody real, and never the census persons of those states."""
        names = tuple(sorted(set(states)))
        label = (f"the made-up persons of the SYNTHETIC census-like sample of {', '.join(names) or 'no state'} "
                 f"({rows:,} records per state, ACS {int(year)} {horizon} layout; no real person)")
        return cls(SYNTHETIC_CENSUS, (names, int(year), horizon, rows), label)

    @classmethod
    def census_samples_of(cls, state: str, year: int, horizon: str) -> Population:
        """The made-up persons of every SYNTHETIC census sample of one state (any number of records, in the layout of
        the ACS (year, horizon) person files): a part of each of them, so that a cap on it (`ledger set-cap --state`)
        binds them all.

        Parts only add checks, so this can only make caps stricter: the samples of one state, which are different
        made-up persons, share one budget, and a cap given for one sample binds this part too (a ledger caps every
        part of what it is given). That errs on the side of the people, as a curator who caps a state expects of every
        population that names it."""
        label = f"the made-up persons of every SYNTHETIC census-like sample of {state} ({int(year)}, {horizon})"
        return cls(SYNTHETIC_CENSUS, ((state,), int(year), horizon), label)

    def parts(self) -> tuple[Population, ...]:
        """The populations this one is the union of, or is charged with: for census data one per state and survey
        year (a 5-Year file holds the records of its five 1-Year surveys, so it shares their people), for a SYNTHETIC
        census sample one per state (each state's file is drawn alone) and each state's samples of every size
        (`census_samples_of`), for a file its content key and its earlier key, else itself."""
        if self.kind == SYNTHETIC_CENSUS:
            return self._sample_parts()
        if self.kind == FILE and len(self.key) == 2:
            return (Population(FILE, self.key[:1], self.label),
                    Population(FILE, self.key[1:], f"{self.describe()}, as keyed by earlier versions"))
        if self.kind != ACS:
            return (self,)
        states, year, horizon = self.key
        years = range(year - 4, year + 1) if horizon == "5-Year" else (year,)
        if len(states) <= 1 and len(years) == 1:
            return (self,)
        return tuple(Population.census((s,), y, "1-Year") for s in states for y in years)

    def _sample_parts(self) -> tuple[Population, ...]:
        if len(self.key) == 3:  # every sample of one state
            return (self,)
        states, year, horizon, rows = self.key
        own = (self,) if len(states) <= 1 else tuple(Population.census_sample((s,), year, horizon, rows)
                                                     for s in states)
        return own + tuple(Population.census_samples_of(s, year, horizon) for s in states)

    def describe(self) -> str:
        """Who these people are, in words (no digest, no count)."""
        return self.label or f"the {self.kind} population"


def content_key(columns: NDArray[np.float64]) -> str:
    """A SHA-256 key of a table of numbers (rows by columns): the same for every writing of the same rows.

    The key reads only what no re-writing of a file changes:

    - each column by its dense ranks (so any strictly increasing re-expression, from dollars to thousands to a
      logarithm, and any coding of a two-valued label, 0/1, -1/+1, 1/2, changes nothing);
    - each column turned to face one way (so a decreasing re-expression, or a label coded the other way round,
      changes nothing): the way whose counts of each rank come first; a column whose counts read the same both
      ways faces the way it co-varies with the columns already turned (an exact integer sum), and is folded about
      its middle rank when that sum is 0;
    - columns in the order of their counts, and within columns of equal counts each row's values sorted (names and
      order are ignored; which column is the response does not change who the rows are), then rows sorted.

    Whatever two tables it cannot tell apart share a budget, which errs on the side of the people.
    """
    m = np.asarray(columns, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError("content_key takes a 2-D table")
    if not np.isfinite(m).all():
        raise ValueError("content_key takes finite numbers")
    cols = _facing([np.unique(m[:, j], return_inverse=True)[1].astype(np.int64) for j in range(m.shape[1])])
    kinds = [np.bincount(c).tobytes() + bytes([folded]) for c, folded in cols]
    order = sorted(range(len(cols)), key=kinds.__getitem__)
    blocks = []
    for kind in dict.fromkeys(kinds[j] for j in order):  # each kind once, in order; a row's values sorted within it
        same = np.stack([cols[j][0] for j in order if kinds[j] == kind], axis=1)
        same.sort(axis=1)
        blocks.append(same)
    table = np.ascontiguousarray(np.concatenate(blocks, axis=1) if blocks else np.zeros((m.shape[0], 0), np.int64))
    rows = table.view(np.dtype((np.void, 8 * table.shape[1]))).ravel() if table.size else table
    rows.sort()  # in place; any order of the rows that depends on their values alone will do: bytes sort fastest
    h = hashlib.sha256(f"ranks:{m.shape[0]}x{m.shape[1]}".encode())
    for kind in (kinds[j] for j in order):
        h.update(len(kind).to_bytes(8, "little") + kind)
    h.update(np.ascontiguousarray(rows).tobytes())
    return h.hexdigest()


def _facing(ranks: list[NDArray[np.int64]]) -> list[tuple[NDArray[np.int64], bool]]:
    """Each column of dense ranks turned to face its canonical way, and whether it was folded (content_key).

    A column whose counts differ read backwards faces the way whose counts come first. One whose counts read the
    same both ways (every column of distinct values) faces the way it co-varies with a public function of the rows
    that no turning or reordering of columns changes: first the sum of the columns already turned, then, where that
    sum is 0, each row's squared distance from the middle of every column; and is folded about its middle rank when
    both are 0."""
    out: list[tuple[NDArray[np.int64], bool] | None] = [None] * len(ranks)
    centred = [2 * r - int(r.max(initial=0)) for r in ranks]
    anchor = np.zeros(len(ranks[0]) if ranks else 0, np.int64)
    for j, (r, z) in enumerate(zip(ranks, centred, strict=True)):
        counts = np.bincount(r)
        turn = first_differs(counts, counts[::-1])
        if turn != 0:
            out[j] = (r.max() - r, False) if turn > 0 else (r, False)
            anchor += -z if turn > 0 else z
    spread = sum((z * z for z in centred), np.zeros_like(anchor))
    for j, (r, z) in enumerate(zip(ranks, centred, strict=True)):
        if out[j] is None:
            way = exact_dot(z, anchor) or exact_dot(z, spread)
            out[j] = (r, False) if way > 0 else (r.max() - r, False) if way < 0 else (np.abs(z), True)
    return out  # type: ignore[return-value]


def first_differs(a: NDArray[np.int64], b: NDArray[np.int64]) -> int:
    """-1, 0 or 1 as a comes before, equals or comes after b lexicographically (arrays of one length)."""
    differ = np.flatnonzero(a != b)
    return 0 if differ.size == 0 else -1 if a[differ[0]] < b[differ[0]] else 1


_LIMB = 16  # bits of b's magnitude taken at a time by exact_dot


def exact_dot(a: NDArray[np.int64], b: NDArray[np.int64]) -> int:
    """sum(a * b) exactly, whatever the order of the rows (an inexact sum could turn a column differently for
    reordered rows): b's magnitude taken _LIMB bits at a time, each partial sum over as many rows as keep it under
    2^62, added as Python integers (a term at a time where |a| reaches 2^46, far past any rank)."""
    if a.size == 0:
        return 0
    bits = max(int(a.max()).bit_length(), (-int(a.min())).bit_length())
    if bits > 46:
        return sum(int(x) * int(y) for x, y in zip(a.tolist(), b.tolist(), strict=True))
    signed, rest = a * np.sign(b), np.abs(b).view(np.uint64)  # |-2^63| is 2^63 only as an unsigned number
    terms = 2 ** (62 - _LIMB - bits)
    total, shift = 0, 0
    while rest.any():
        limb = (rest & np.uint64(2**_LIMB - 1)).astype(np.int64)
        total += sum(int(np.dot(signed[k:k + terms], limb[k:k + terms])) for k in range(0, a.size, terms)) << shift
        rest, shift = rest >> np.uint64(_LIMB), shift + _LIMB
    return total
