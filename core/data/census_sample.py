"""SYNTHETIC census samples: made-up person files in the census layout, made once per size, kept apart.

Without the census files (no internet, or a census site that does not answer) the census path can still be tried
end to end on a SYNTHETIC sample of the chosen states: every record drawn by the seeded generator of
`core.data.synthetic_pums` (no census record, no real person), written as folktables lays out census files, in
`core.data.acs.sample_root()`, a sibling of the census folder and never inside it, one folder per size. A file once
written is kept and read again by every later load, in any session: the generator is seeded (SEED), so writing it
again would give the same records. `core.data.spec.SyntheticCensusSpec` names such a sample; its description and
its population say SYNTHETIC, so no result on it can pass for census data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.data import acs, synthetic_pums
from core.errors import DataError

SEED = 0  # one made-up population per size: every machine makes the same records
FIRST_YEAR = 2017  # the first survey year of the person-file layout (psam_pXX.csv) the generator writes


def folder(rows: int) -> Path:
    """The folder of the sample of `rows` records per state, laid out as folktables lays out census files."""
    return acs.sample_root() / f"rows-{rows}"


def missing(states: tuple[str, ...], year: int, horizon: str, rows: int) -> list[str]:
    """The states whose SYNTHETIC file of this size is not written yet (DataError for a state, year or horizon the
    census files do not have)."""
    return [s for s in states if not acs.census_path(folder(rows), s, year, horizon).is_file()]


def make(states: tuple[str, ...], year: int, horizon: str, rows: int,
         progress: Callable[[float], None] | None = None) -> Path:
    """The sample's folder with a file for every state: the missing ones written (progress told the share written),
    the others kept. A folder that cannot be written is a DataError that says where and what to do."""
    todo = missing(states, year, horizon, rows)
    if todo and year < FIRST_YEAR:
        raise DataError(f"a SYNTHETIC census sample is made in the layout of survey years {FIRST_YEAR} and later, "
                        f"got {year}; choose a later {{year}}", "year")
    try:
        synthetic_pums.write_synthetic_pums(folder(rows), todo, year, horizon, rows, SEED, progress=progress)
    except OSError as exc:
        raise DataError(f"the SYNTHETIC census sample could not be written in {folder(rows)} "
                        f"({exc.strerror or type(exc).__name__}): make that folder writable, or start the app (or the "
                        "command) with XDG_CACHE_HOME naming a writable folder") from None
    return folder(rows)
