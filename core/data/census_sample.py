"""SYNTHETIC census samples: made-up person files in the census layout, made once per size, kept apart.

Without the census files (no internet, or a census site that does not answer) the census path can still be tried
end to end on a SYNTHETIC sample of the chosen states: every record drawn by the seeded generator of
`core.data.synthetic_pums` (no census record, no real person), written as folktables lays out census files, in
`core.data.acs.sample_root()`, a sibling of the census folder and never inside it, one folder per size. A file once
written is kept and read again by every later load, in any session: the generator is seeded (SEED), so writing it
again would give the same records. `core.data.spec.SyntheticCensusSpec` names such a sample; its description and
its population say SYNTHETIC, so no result on it can pass for census data.

The label is earned by content, not by the folder: anyone who can write the folder (or set XDG_CACHE_HOME) could put
a census file there. A file is read as SYNTHETIC only when the SHA-256 of its bytes is the digest of what the
generator writes for its (state, year, rows, SEED): kept in this process's memory when this process wrote the file,
else computed once per process by drawing the records again in memory (`synthetic_pums.synthetic_pums_digest`:
about 0.05 s a state at 1,000 rows, 0.7 s at 50,000), never read from the writable folder. The bytes checked are
the bytes parsed (no second read), and no encoded cache is kept in that folder. Any other file is refused and left
as it is: the curator deletes it.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.data import acs, synthetic_pums
from core.errors import DataError

SEED = 0  # one made-up population per size: every machine makes the same records
FIRST_YEAR = 2017  # the first survey year of the person-file layout (psam_pXX.csv) the generator writes

# What the generator writes for (state, year, rows, SEED), as SHA-256 hex digests, in this process's memory only. The
# horizon only names the folder: both horizons' files of a state and year hold the same bytes.
_EXPECTED: dict[tuple[str, int, int, int], str] = {}
_LOCK = threading.Lock()  # the app's sessions load in threads: one regeneration per file, not one per thread
_CHECKED: dict[Path, tuple[int, int, int, int]] = {}  # files whose bytes `read` checked, as they were then (stat)


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
    the others kept and checked (`check`). A folder that cannot be written, or a file that is not the generator's, is
    a DataError that says where and what to do; no file there is ever overwritten."""
    todo = list(dict.fromkeys(missing(states, year, horizon, rows)))
    if todo and year < FIRST_YEAR:
        raise DataError(f"a SYNTHETIC census sample is made in the layout of survey years {FIRST_YEAR} and later, "
                        f"got {year}; choose a later {{year}}", "year")
    try:
        written = synthetic_pums.write_synthetic_pums(folder(rows), todo, year, horizon, rows, SEED,
                                                      progress=progress)
    except OSError as exc:
        raise DataError(f"the SYNTHETIC census sample could not be written in {folder(rows)} "
                        f"({exc.strerror or type(exc).__name__}): make that folder writable, or start the app (or the "
                        "command) with XDG_CACHE_HOME naming a writable folder") from None
    with _LOCK:
        _EXPECTED.update({(state, int(year), rows, SEED): sha
                          for state, sha in zip(todo, written.values(), strict=True)})
    for state in states:
        check(state, year, horizon, rows)
    return folder(rows)


def expected_digest(state: str, year: int, rows: int) -> str:
    """The SHA-256 hex digest of the file the generator writes for the state's sample of `rows` records: the one this
    process wrote, else the records drawn again in memory (once per process)."""
    key = (state, int(year), rows, SEED)
    with _LOCK:
        if key not in _EXPECTED:
            _EXPECTED[key] = synthetic_pums.synthetic_pums_digest(rows, state, SEED, int(year))
        return _EXPECTED[key]


def read(state: str, year: int, horizon: str, rows: int) -> bytes:
    """The bytes of the state's SYNTHETIC file, read once and refused (one DataError naming what to do, no data
    value) unless they are what the generator writes for it."""
    path = acs.census_path(folder(rows), state, year, horizon)
    what = f"what the SYNTHETIC generator writes for {state}, {year} {horizon}, {rows:,} records"
    try:
        with path.open("rb") as file:
            content, seen = file.read(), _fingerprint(os.fstat(file.fileno()))
    except OSError:
        raise DataError(f"{path} is missing or unreadable, so it does not hold {what}; make the sample again with "
                        "{census_sample}", "census_sample") from None
    if hashlib.sha256(content).hexdigest() != expected_digest(state, year, rows):
        raise DataError(f"{path} does not hold {what}, so it is not read as made-up data; delete the files of "
                        f"{folder(rows)} and make the sample again with {{census_sample}}", "census_sample")
    with _LOCK:
        _CHECKED[path] = seen
    return content


def check(state: str, year: int, horizon: str, rows: int) -> None:
    """Refuse the state's file (DataError) unless it holds what the generator writes for it. A file whose bytes were
    checked in this process and that has not changed since (same inode, size, modification and change times) is not
    read again: this spares the app a read per rerun. It is an early refusal (the Data page's Make button), not the
    guarantee: `read` checks every byte it hands to a load."""
    path = acs.census_path(folder(rows), state, year, horizon)
    try:
        if _CHECKED.get(path) == _fingerprint(path.stat()):
            return
    except OSError:
        pass  # read() says what is wrong
    read(state, year, horizon, rows)


def _fingerprint(stat: os.stat_result) -> tuple[int, int, int, int]:
    return stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def load_state(state: str, year: int, horizon: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """One state's encoded SYNTHETIC population, parsed from the very bytes `read` checked."""
    path = acs.census_path(folder(rows), state, year, horizon)
    return acs.encode_acs_income(acs.read_person_columns(read(state, year, horizon, rows), str(path)))
