"""The people's key of a folder read in blocks: core.privacy.population.content_key of its rows, formed with memory
bounded by a chunk of rows whatever the folder's size.

content_key reads every row at once: each column's dense ranks, each column turned one canonical way, then the rows
sorted. Here each of those steps is an external one, in a temporary folder on this machine's disk:

- a column's dense ranks: sorted runs of its values with their row numbers, merged in order (the rank steps where the
  value does), the ranks sent back to row order through buckets of `chunk` rows; its counts written as they end;
- the turn of each column: its counts read from both ends; the exact integer sums of a column of symmetric counts
  against the columns already turned, one pass over the ranks;
- the rows, each turned and sorted within its columns of one kind: sorted runs of their bytes, merged into the hash.

The same rows therefore have one key however they are held: a CSV file loaded whole, or a folder of Parquet or CSV
files in any number of parts (tests/test_folder_key.py checks it against content_key). Disk: about 2 n d 8 bytes at the
peak; memory: a few chunks of rows.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from core.data.folder import Folder, open_folder
from core.errors import DataError
from core.privacy.population import exact_dot, first_differs

CHUNK = 2**19  # rows per sorted run and per merged piece: a few of them in memory at once
PARALLEL_ROWS = 2**20  # from here the columns are ranked side by side
MAX_JOBS = 4  # columns ranked at once: each adds about 0.1 GB at the default chunk

Ints = NDArray[np.int64]


@dataclass(frozen=True)
class _Ranked:
    """One column's dense ranks (in row order) and the count of each rank, as files of int64; top = ranks - 1."""

    ranks: str
    counts: str
    top: int


@dataclass(frozen=True)
class _Face:
    """How a column faces in the key (content_key's _facing): kept, turned (top - r) or folded (|2 r - top|)."""

    column: _Ranked
    turn: bool = False
    fold: bool = False

    def values(self, r: Ints) -> Ints:
        return np.abs(2 * r - self.column.top) if self.fold else self.column.top - r if self.turn else r

    def counts(self, chunk: int) -> Iterator[Ints]:
        """The counts of the faced column's values 0..top (np.bincount of values()), in order, a chunk at a time."""
        top = self.column.top
        if not (self.turn or self.fold):
            yield from _pieces(self.column.counts, top + 1, chunk)
            return
        for start in range(0, top + 1, chunk):
            v = np.arange(start, min(start + chunk, top + 1), dtype=np.int64)
            if self.turn:
                yield _read(self.column.counts, top - v[-1], top - v[0] + 1)[::-1].copy()
                continue
            # |2 r - top| = v at r = (top + v)/2 and (top - v)/2, where those are whole (one r where v = 0)
            whole = (top + v) % 2 == 0
            out = np.zeros(v.size, np.int64)
            if whole.any():
                w = v[whole]
                out[whole] = _gather(self.column.counts, (top + w) // 2) + np.where(w > 0, _gather(
                    self.column.counts, (top - w) // 2), 0)
            yield out


def folder_key(root: str | os.PathLike, chunk: int = CHUNK, jobs: int | None = None) -> str:
    """content_key of every column of every row of the folder at root (core.data.folder: its features, response and
    any other column alike), formed with `chunk` rows in memory at a time (on each of `jobs` threads, key_of)."""
    return key_of(open_folder(root, None), chunk, jobs)


def key_of(folder: Folder, chunk: int = CHUNK, jobs: int | None = None) -> str:
    """folder_key of the files as `folder` opened them (each read checks that a file is still as it was). The
    columns' ranks, most of the work, are Dask tasks, a column each, on `jobs` threads of this machine (its scratch
    folder is theirs; reading and sorting release the GIL): by default one per core, at most MAX_JOBS (each holds
    its own chunks), from PARALLEL_ROWS rows."""
    names = (*folder.features, folder.response)
    if jobs is None:
        jobs = min(os.cpu_count() or 1, MAX_JOBS) if folder.n >= PARALLEL_ROWS else 1
    with tempfile.TemporaryDirectory(prefix="psp-key-") as scratch:
        ranked = _ranks(folder, names, scratch, chunk, jobs)
        faces = _faces(ranked, folder.n, chunk)
        kinds = [functools.partial(_kind, face, chunk) for face in faces]
        # Kinds are read once for a digest, so that equal ones (every column of distinct values has the same counts)
        # compare without being read again; differing ones are read to their first difference.
        digests = [_digest(kind()) for kind in kinds]
        order = sorted(range(len(faces)), key=functools.cmp_to_key(
            lambda a, b: 0 if digests[a] == digests[b] else _compare(kinds[a](), kinds[b]())))
        h = hashlib.sha256(f"ranks:{folder.n}x{len(names)}".encode())
        for j in order:
            h.update((8 * (faces[j].column.top + 1) + 1).to_bytes(8, "little"))
            for piece in kinds[j]():
                h.update(piece)
        groups = _groups(order, digests)
        for (piece,) in _merge(_row_runs(faces, groups, folder.n, f"{scratch}/rows", chunk), chunk):
            piece.sort()
            h.update(piece.tobytes())
    return h.hexdigest()


# --- one column's dense ranks --------------------------------------------------------------------------------------


def _ranks(folder: Folder, names: tuple[str, ...], scratch: str, chunk: int, jobs: int) -> list[_Ranked]:
    """Every column's _rank, in order: one after another, or as Dask tasks on `jobs` threads (each column's files are
    its own, so the tasks share nothing but the scratch folder)."""
    stems = [f"{scratch}/{j}" for j in range(len(names))]
    if jobs <= 1 or len(names) == 1:
        return [_rank(folder, name, stem, chunk) for name, stem in zip(names, stems, strict=True)]
    import dask

    rank = dask.delayed(_rank, pure=False)
    tasks = [rank(folder, name, stem, chunk) for name, stem in zip(names, stems, strict=True)]
    return list(dask.compute(*tasks, scheduler="threads", num_workers=jobs))


def _rank(folder: Folder, name: str, stem: str, chunk: int) -> _Ranked:
    """The column's dense ranks in row order and each rank's count (np.unique's inverse and counts), externally."""
    n = folder.n
    runs = []
    for start in range(0, n, chunk):
        values = folder.columns(start, min(start + chunk, n), (name,))[:, 0]
        _check_finite(folder, name, start, values)
        order = np.argsort(values, kind="stable")
        runs.append(_write(f"{stem}.run{len(runs)}", values[order], order + start))
    buckets = [f"{stem}.bucket{b}" for b in range(-(-n // chunk))]
    counts, previous, rank, count = f"{stem}.counts", None, -1, 0
    for values, rows in _merge_values(runs, chunk):
        new = np.empty(values.size, bool)
        new[0] = previous is None or values[0] != previous
        new[1:] = values[1:] != values[:-1]
        ranks = rank + np.cumsum(new)
        sizes = np.bincount(ranks - ranks[0])
        if new[0]:  # the rank still open from the last piece ended there
            if rank >= 0:
                _append(counts, np.array([count], np.int64))
        else:
            sizes[0] += count
        _append(counts, sizes[:-1])
        count = int(sizes[-1])
        rank, previous = int(ranks[-1]), values[-1]
        by = rows // chunk
        cut = np.argsort(by, kind="stable")
        edges = np.flatnonzero(np.diff(by[cut])) + 1
        for piece in np.split(cut, edges):
            _append(buckets[int(by[piece[0]])], np.stack([rows[piece], ranks[piece]], axis=1))
    _append(counts, np.array([count], np.int64))
    for run in runs:
        for path, _ in run.files:
            _remove(path)
    ranks_file = f"{stem}.ranks"
    for b, bucket in enumerate(buckets):
        pairs = np.fromfile(bucket, np.int64).reshape(-1, 2)
        local = np.empty(pairs.shape[0], np.int64)
        local[pairs[:, 0] - b * chunk] = pairs[:, 1]
        _append(ranks_file, local)
        os.remove(bucket)
    return _Ranked(ranks_file, counts, rank)


def _check_finite(folder: Folder, name: str, start: int, values: NDArray[np.float64]) -> None:
    """DataError at a NaN or an infinity: content_key keys finite numbers only (a file holding one has no key), and a
    NaN, unequal to itself, would rank differently as the runs fall."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        ends = np.cumsum([p.rows for p in folder.parts])
        part = folder.parts[int(np.searchsorted(ends, start + int(bad[0]), side="right"))]
        raise DataError(f"column {name} of {part.name} has a cell that is not a finite number (NaN or an "
                        "infinity), so its rows have no key and no release on them can be charged; remove or fix "
                        "those rows")


def _merge_values(runs: list[_Run], chunk: int) -> Iterator[tuple[NDArray[np.float64], Ints]]:
    """The runs' (value, row) pairs in value order (the rows of equal values in any order)."""
    for values, rows in _merge(runs, chunk):
        order = np.argsort(values, kind="stable")
        yield values[order], rows[order]


# --- facing and kinds ----------------------------------------------------------------------------------------------


def _faces(ranked: list[_Ranked], n: int, chunk: int) -> list[_Face]:
    """content_key's _facing: a column whose counts differ read backwards faces the way whose counts come first;
    one whose counts read the same both ways faces the way its centred ranks co-vary with those of the turned
    columns (an exact sum), else with the rows' squared spread, and is folded when both sums are 0."""
    turns = [_turn(c, chunk) for c in ranked]
    symmetric = [j for j, t in enumerate(turns) if t == 0]
    dots = {j: [0, 0] for j in symmetric}
    if symmetric:
        for start in range(0, n, chunk):
            z = [2 * _read(c.ranks, start, min(start + chunk, n)) - c.top for c in ranked]
            anchor = sum((-zj if t > 0 else zj for zj, t in zip(z, turns, strict=True) if t != 0),
                         np.zeros_like(z[0]))
            spread = sum((zj * zj for zj in z), np.zeros_like(z[0]))
            for j in symmetric:
                dots[j][0] += exact_dot(z[j], anchor)
                dots[j][1] += exact_dot(z[j], spread)
    faces = []
    for j, (c, t) in enumerate(zip(ranked, turns, strict=True)):
        way = t if t != 0 else -(dots[j][0] or dots[j][1])  # turned (way > 0) where the sums are negative
        faces.append(_Face(c, turn=way > 0, fold=t == 0 and way == 0))
    return faces


def _turn(column: _Ranked, chunk: int) -> int:
    """population.first_differs(counts, counts[::-1]), reading the counts from both ends a chunk at a time."""
    size = column.top + 1
    for start in range(0, (size + 1) // 2, chunk):
        stop = min(start + chunk, (size + 1) // 2)
        turn = first_differs(_read(column.counts, start, stop), _read(column.counts, size - stop, size - start)[::-1])
        if turn:
            return turn
    return 0


def _kind(face: _Face, chunk: int) -> Iterator[bytes]:
    """content_key's kind of a faced column as a stream of bytes: its counts' int64 bytes, then whether folded."""
    for counts in face.counts(chunk):
        yield counts.astype("<i8").tobytes()
    yield bytes([face.fold])


def _compare(a: Iterator[bytes], b: Iterator[bytes]) -> int:
    """-1, 0 or 1 as the byte stream a comes before, equals or comes after b (Python's order of bytes)."""
    x, y = b"", b""
    while True:
        if not x:
            x = next(a, b"")
        if not y:
            y = next(b, b"")
        if not x or not y:
            return (len(x) > 0) - (len(y) > 0)
        m = min(len(x), len(y))
        if x[:m] != y[:m]:
            return -1 if x[:m] < y[:m] else 1
        x, y = x[m:], y[m:]


def _groups(order: list[int], digests: list[bytes]) -> list[list[int]]:
    """The columns in the key's order, those of one kind (one digest of it) together."""
    groups: list[list[int]] = []
    for j in order:
        if groups and digests[groups[-1][0]] == digests[j]:
            groups[-1].append(j)
        else:
            groups.append([j])
    return groups


def _digest(stream: Iterator[bytes]) -> bytes:
    h = hashlib.sha256()
    for piece in stream:
        h.update(piece)
    return h.digest()


# --- the rows ------------------------------------------------------------------------------------------------------


def _row_runs(faces: list[_Face], groups: list[list[int]], n: int, stem: str, chunk: int) -> list[_Run]:
    """Sorted runs of the key's rows: each row's faced values, sorted within each kind, as bytes (content_key)."""
    runs = []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        blocks = []
        for group in groups:
            same = np.stack([faces[j].values(_read(faces[j].column.ranks, start, stop)) for j in group], axis=1)
            same.sort(axis=1)
            blocks.append(same)
        table = np.ascontiguousarray(np.concatenate(blocks, axis=1))
        rows = table.view(np.dtype((np.void, 8 * table.shape[1]))).ravel()
        rows.sort()
        path = f"{stem}.{len(runs)}"
        rows.tofile(path)
        runs.append(_Run(((path, rows.dtype),), rows.size))
    for face in faces:
        _remove(face.column.ranks)
        _remove(face.column.counts)
    return runs


@dataclass
class _Run:
    """A sorted run on disk, its columns in files (the first the sort key), read a piece at a time into `held`."""

    files: tuple[tuple[str, np.dtype], ...]
    size: int
    at: int = 0
    held: list[np.ndarray] | None = None

    def fill(self, per: int) -> None:
        """Top up the piece held to per items from the run (None once nothing is held or left)."""
        held = 0 if self.held is None else self.held[0].size
        stop = min(self.at + per - held, self.size)
        if stop > self.at:
            more = [_read(path, self.at, stop, kind) for path, kind in self.files]
            self.held = more if self.held is None else [np.concatenate(p) for p in zip(self.held, more, strict=True)]
            self.at = stop
        elif held == 0:
            self.held = None


def _merge(runs: list[_Run], chunk: int) -> Iterator[list[np.ndarray]]:
    """The runs' items in key order, a piece at a time (each piece's columns; sorted by the caller): every run holds
    a piece topped up to chunk/runs items, and gives what it holds up to the least of the pieces' last keys, which no
    item still on disk passes. Each item is read once; each round hands over about half of what is held when the runs
    interleave, and one run's piece when they do not (a column already in row order)."""
    per = max(1, chunk // max(1, len(runs)))
    for run in runs:
        run.fill(per)
    while live := [run for run in runs if run.held is not None]:
        keys = [run.held[0] for run in live]
        cut = min((k[-1] for k in keys), key=lambda k: k.tobytes() if isinstance(k, np.void) else k)
        taken = []
        for run, k in zip(live, keys, strict=True):
            take = int(np.searchsorted(k, cut, side="right"))
            taken.append([c[:take] for c in run.held])
            run.held = [c[take:] for c in run.held]
            run.fill(per)
        yield [np.concatenate(columns) for columns in zip(*taken, strict=True)]


# --- files ---------------------------------------------------------------------------------------------------------


def _write(stem: str, values: NDArray[np.float64], rows: Ints) -> _Run:
    """A sorted run of values and their row numbers, written to two files."""
    values.tofile(f"{stem}.v")
    rows.astype(np.int64).tofile(f"{stem}.r")
    return _Run(((f"{stem}.v", values.dtype), (f"{stem}.r", np.dtype(np.int64))), values.size)


def _append(path: str, array: np.ndarray) -> None:
    with open(path, "ab") as f:
        np.ascontiguousarray(array).tofile(f)


def _read(path: str, start: int, stop: int, dtype: np.dtype | type = np.int64) -> np.ndarray:
    """Items [start, stop) of a file of `dtype` (read, not mapped: the pages read stay out of this process)."""
    kind = np.dtype(dtype)
    with open(path, "rb") as f:
        f.seek(start * kind.itemsize)
        return np.fromfile(f, kind, max(0, stop - start))


def _gather(path: str, at: Ints) -> Ints:
    """Items at the sorted or reverse-sorted positions `at` of a file of int64: one read of the range they span."""
    low, high = int(at.min()), int(at.max())
    return _read(path, low, high + 1)[at - low]


def _pieces(path: str, size: int, chunk: int) -> Iterator[Ints]:
    for start in range(0, size, chunk):
        yield _read(path, start, min(start + chunk, size))


def _remove(path: str) -> None:
    Path(path).unlink(missing_ok=True)
