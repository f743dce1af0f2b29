"""Who is in the data: the identity a privacy ledger is keyed on.

A release protects people, not files or settings. Two loads of the same people (a census population
sampled with another seed or size, read from another folder, downloaded or not) must draw on one
budget; data of other people must not. A `Population` names the people and nothing else:

- census data: the persons of one survey (year, horizon) in the chosen states, never the sample
  size, the sample seed, the folder, whether a file was downloaded, or whether it came as a PUMS person
  file of one's own (its ST and SERIALNO columns name the same people);
- a CSV file: a canonical key of its content (core.data.spec.content_key), which renaming or reordering its
  columns, reordering its rows, rescaling a column or re-encoding the file does not change;
- synthetic data: every generator setting, the row count and seed included (generated rows are
  their own population);
- a SYNTHETIC census sample (core.data.census_sample): made-up persons in the census layout, a kind of their own
  keyed like census data plus the sample's size, so that no charge on them is ever counted against real people
  of the same states, nor theirs against the sample.

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

    Keys: acs ((sorted states), year, horizon); file (sha256 hex digest,); synthetic (loss, n, d,
    theta_norm, noise_scale, seed); synthetic_census ((sorted states), year, horizon, rows per state). Only kind
    and key are compared and hashed; label is the description shown in words (it never holds the digest: a digest
    of the data is a function of the data, and must not be published).
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
    def file(cls, digest: str, name: str = "") -> Population:
        """The rows of a file, by a digest of its content (content_key for a CSV); name only labels it."""
        return cls(FILE, (digest,), f"the rows of the file {name}" if name else "the rows of one file")

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

    def parts(self) -> tuple[Population, ...]:
        """The populations this one is the union of: for census data one per state and survey year (a 5-Year file
        holds the records of its five 1-Year surveys, so it shares their people), for a SYNTHETIC census sample one
        per state (each state's file is drawn alone), else itself."""
        if self.kind == SYNTHETIC_CENSUS:
            states, year, horizon, rows = self.key
            return (self,) if len(states) <= 1 else tuple(Population.census_sample((s,), year, horizon, rows)
                                                         for s in states)
        if self.kind != ACS:
            return (self,)
        states, year, horizon = self.key
        years = range(year - 4, year + 1) if horizon == "5-Year" else (year,)
        if len(states) <= 1 and len(years) == 1:
            return (self,)
        return tuple(Population.census((s,), y, "1-Year") for s in states for y in years)

    def describe(self) -> str:
        """Who these people are, in words (no digest, no count)."""
        return self.label or f"the {self.kind} population"


KEY_DIGITS = 9  # significant digits a column keeps in content_key: what re-encoding a number may not change


def content_key(columns: NDArray[np.float64]) -> str:
    """A SHA-256 key of a table of numbers (rows by columns) that trivial edits cannot change.

    Each column is mapped onto [0, 1] by its own minimum and range (so rescaling or shifting it, in dollars or in
    thousands, changes nothing), turned to face the way whose sorted values come first (so negating it changes
    nothing either), and rounded to KEY_DIGITS digits (so writing a number another way changes nothing); then the
    columns are sorted by their values (names and order are ignored: which column is the response does not change
    who the rows are) and the rows are sorted. Two tables of the same people keyed this way share a budget.
    """
    m = np.asarray(columns, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError("content_key takes a 2-D table")
    lo, hi = m.min(axis=0, initial=np.inf), m.max(axis=0, initial=-np.inf)
    span = np.where(hi > lo, hi - lo, 1.0)
    unit = np.round((m - lo) / span * 10**KEY_DIGITS).astype(np.int64)
    top = 10**KEY_DIGITS
    cols = []
    for j in range(unit.shape[1]):
        up, down = unit[:, j], np.where(hi[j] > lo[j], top - unit[:, j], 0)
        cols.append(up if _sorted_first(np.sort(up), np.sort(down)) else down)
    cols.sort(key=lambda c: np.sort(c).tobytes())
    table = np.stack(cols, axis=1) if cols else unit
    rows = table[np.lexsort(table.T[::-1])] if table.size else table
    h = hashlib.sha256(f"{table.shape[0]}x{table.shape[1]}".encode())
    h.update(np.ascontiguousarray(rows).tobytes())
    return h.hexdigest()


def _sorted_first(a: NDArray[np.int64], b: NDArray[np.int64]) -> bool:
    """Whether a comes first, or equals b, lexicographically (arrays of one length): at their first difference."""
    differ = np.flatnonzero(a != b)
    return differ.size == 0 or bool(a[differ[0]] < b[differ[0]])

