"""A data set larger than memory: a folder of Parquet files, read in blocks of rows, every pass a Dask task per block.

The rows are cut into blocks of `block_rows` rows (a multiple of SUM_BLOCK), the last block taking the rest, whatever
the files: a block may span two files. Each pass of the fit and of the private stages (core.estimator.fit) runs a
task on every block where the block is read (core.data.passes.map_blocks), and adds the tasks' few sums in block
order on the caller, so memory is a few blocks per worker whatever n: on this machine's threads, or on the
dask.distributed cluster at `scheduler` ("tcp://host:8786"), whose workers must see the same folder.

Stage 0 reads the data three times before the fit: the response column (its values, for the loss), then every
row (finite, how many lie outside the domain or beyond the response bound), as prepare_model does in memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import check_more_rows
from core.data.folder import Folder, OnFolder
from core.data.passes import binary_labels, block_ranges, map_blocks, response_values
from core.errors import InputError
from core.estimator.fit import fit_rows
from core.estimator.geometry import Geometry, project
from core.estimator.losses import get_loss
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem, first_not_finite, not_finite_features
from core.estimator.rounding import SUM_BLOCK
from core.privacy.marks import NOT_PRIVATE

Array = NDArray[np.float64]
T = TypeVar("T")
MAX_BLOCK_ROWS = 2**24


@dataclass(frozen=True)
class Preparation:
    """What stage 0 does to every block, from public settings only: logistic labels coded 0/1 become -1/+1,
    responses are clipped to the public bound, rows projected onto the domain (core.mechanisms.pipeline.prepare_model
    in memory)."""

    geometry: Geometry
    bound: float
    zero_one: bool

    def __call__(self, X: Array, y: Array) -> tuple[Array, Array]:
        y = 2.0 * y - 1.0 if self.zero_one else y
        if np.any(np.abs(y) > self.bound):
            y = np.clip(y, -self.bound, self.bound)
        return project(X, self.geometry)[0], y


def _prepared(prepare: Preparation, task: Callable[[Array, Array], T], X: Array, y: Array) -> T:
    return task(*prepare(X, y))


@dataclass(frozen=True, eq=False)
class BlockRows(OnFolder):
    """Rows read in blocks (core.estimator.rows.Rows): `block_rows` rows each, the last block the rest."""

    folder: Folder = field(metadata=NOT_PRIVATE)
    block_rows: int
    prepare: Preparation | None = None
    scheduler: str | None = None

    def ranges(self) -> list[tuple[int, int]]:
        return block_ranges(self.n, self.block_rows)

    def _task(self, task: Callable[[Array, Array], T]) -> Callable[[Array, Array], T]:
        return task if self.prepare is None else functools.partial(_prepared, self.prepare, task)

    def map(self, task: Callable[[Array, Array], T], features: bool = True) -> list[T]:
        return map_blocks(self.folder, self.ranges(), self.scheduler, self._task(task), features)

    def blocks(self) -> Iterator[tuple[Array, Array]]:
        for a, b in self.ranges():
            X, y = self.folder.read(a, b)
            yield (X, y) if self.prepare is None else self.prepare(X, y)

    def arrays(self) -> None:
        return None


def check_block_rows(rows: int) -> int:
    """A block size: a multiple of SUM_BLOCK (so the gradient's sums are those of the rows in memory), at most
    MAX_BLOCK_ROWS."""
    if isinstance(rows, bool) or not isinstance(rows, int) or not (SUM_BLOCK <= rows <= MAX_BLOCK_ROWS) \
            or rows % SUM_BLOCK:
        raise InputError(f"--block-rows must be a multiple of {SUM_BLOCK} from {SUM_BLOCK} to {MAX_BLOCK_ROWS:,}, "
                         f"got {rows}")
    return rows


@dataclass(frozen=True)
class _Scan:
    """What stage 0 counts on one block: its first row and column with a feature that is not finite, the rows outside
    the domain and the responses beyond the bound."""

    bad_x: tuple[int, int] | None
    clipped_rows: int
    clipped_responses: int


def _scan(geometry: Geometry, bound: float, X: Array, y: Array) -> _Scan:
    cell = first_not_finite(X)
    if cell is not None:
        return _Scan(cell, 0, 0)
    return _Scan(None, project(X, geometry)[1], int(np.count_nonzero(np.abs(y) > bound)))


def prepare_folder(rows: BlockRows, model: ModelSpec, feature_names: tuple[str, ...], data_spec: object = None,
                   values: Array | None = None) -> Problem:
    """Stage 0 on rows read in blocks, as prepare_model in memory: resolve the model for (n, d), count the rows
    outside the domain and the responses beyond the bound, fit theta(P_n) with every block projected and clipped as
    it is read. values are the response's distinct values (response_values), read again when not given."""
    n, d = rows.n, rows.d
    check_more_rows(n, d)
    resolved = model.resolve(d)
    h = get_loss(resolved.loss)
    values = response_values(rows.folder, rows.block_rows, rows.scheduler) if values is None else values
    binary_labels(values, h.name, rows.folder.response)
    labels = h.labels(values)
    bound = resolved.bound_for(n, d)
    g = resolved.geometry(d)
    scans = rows.map(functools.partial(_scan, g, bound))
    for (start, _), scan in zip(rows.ranges(), scans, strict=True):
        if scan.bad_x is not None:
            raise not_finite_features(start + scan.bad_x[0], scan.bad_x[1])
    prepare = Preparation(g, bound, h.name == "logistic" and not np.array_equal(labels, values))
    prepared = BlockRows(rows.folder, rows.block_rows, prepare, rows.scheduler)
    return Problem(rows=prepared, feature_names=feature_names, geometry=g,
                   fit=fit_rows(prepared, h, resolved.lam_reg, radius=g.r),
                   clipped_rows=sum(s.clipped_rows for s in scans), model=resolved, data_spec=data_spec,
                   response_bound=bound, clipped_responses=sum(s.clipped_responses for s in scans))
