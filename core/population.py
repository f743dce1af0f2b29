"""Who is in the data: the identity a privacy ledger is keyed on.

A release protects people, not files or settings. Two loads of the same people (a census population
sampled with another seed or size, read from another folder, downloaded or not) must draw on one
budget; data of other people must not. A `Population` names the people and nothing else:

- census data: the persons of one survey (year, horizon) in the chosen states, never the sample
  size, the sample seed, the folder or whether a file was downloaded;
- a file (a CSV or a PUMS person file): the SHA-256 digest of its bytes, so a renamed copy is the
  same population and an edited file is another;
- synthetic data: every generator setting, the row count and seed included (generated rows are
  their own population).

Census populations of several states are made of the one-state populations (`parts`): a person of
California is in "CA" and in "CA + MI", so a ledger charges and checks every part.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ACS = "acs"
FILE = "file"
SYNTHETIC = "synthetic"
KINDS = (ACS, FILE, SYNTHETIC)


@dataclass(frozen=True)
class Population:
    """The people in a data set: a kind ("acs", "file" or "synthetic") and a key tuple within it.

    Keys: acs ((sorted states), year, horizon); file (sha256 hex digest,); synthetic (loss, n, d,
    theta_norm, noise_scale, seed). Only kind and key are compared and hashed; label is the
    description shown in words (it never holds the digest: a digest of the data is a function of
    the data, and must not be published).
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
        """The rows of a file, by the SHA-256 digest of its bytes; name only labels it."""
        return cls(FILE, (digest,), f"the rows of the file {name}" if name else "the rows of one file")

    @classmethod
    def synthetic(cls, loss: str, n: int, d: int, theta_norm: float, noise_scale: float,
                  seed: int | None) -> Population:
        """The rows one run of the synthetic generator makes."""
        label = f"the synthetic {loss} rows of seed {seed} (n = {n}, d = {d})"
        return cls(SYNTHETIC, (loss, n, d, theta_norm, noise_scale, seed), label)

    def parts(self) -> tuple[Population, ...]:
        """The populations this one is the union of: one per state for census data, else itself."""
        if self.kind != ACS or len(self.key[0]) <= 1:
            return (self,)
        states, year, horizon = self.key
        return tuple(Population.census((s,), year, horizon) for s in states)

    def describe(self) -> str:
        """Who these people are, in words (no digest, no count)."""
        return self.label or f"the {self.kind} population"
