"""A data set larger than memory: a folder of Parquet files, read in blocks of rows, every pass a Dask task per block.

The rows are cut into blocks of `block_rows` rows (a multiple of SUM_BLOCK), the last block taking the rest, whatever
the files: a block may span two files. Each pass of the fit and of the private stages (core.estimator.fit) runs a
task on every block where the block is read, and adds the tasks' few sums in block order on the caller, so memory is
a few blocks per worker whatever n. The local scheduler (threads, one per core) is the default; `scheduler`
"tcp://host:8786" runs the same tasks on a dask.distributed cluster, whose workers must see the same folder.

Stage 0 reads the data three times before the fit: the response column (its values, for the loss), then every
row (finite, how many lie outside the domain or beyond the response bound), as prepare_model does in memory.
"""

from __future__ import annotations

import asyncio
import functools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import check_more_rows
from core.data.folder import Folder
from core.errors import DataError, InputError
from core.estimator.fit import fit_rows
from core.estimator.geometry import Geometry, project
from core.estimator.losses import NOT_FINITE_RESPONSE, get_loss
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem, first_not_finite, not_finite_features
from core.estimator.rounding import SUM_BLOCK
from core.privacy.marks import NOT_PRIVATE

Array = NDArray[np.float64]
T = TypeVar("T")
MAX_BLOCK_ROWS = 2**24
CONNECT_SECONDS = 10  # how long a scheduler may take to answer


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


def _run(folder: Folder, prepare: Preparation | None, start: int, stop: int, features: bool,
         task: Callable[[Array, Array], T]) -> T:
    X, y = folder.read(start, stop, features)
    return task(*prepare(X, y)) if prepare is not None else task(X, y)


@dataclass(frozen=True, eq=False)
class BlockRows:
    """Rows read in blocks (core.estimator.rows.Rows): `block_rows` rows each, the last block the rest."""

    folder: Folder = field(metadata=NOT_PRIVATE)
    block_rows: int
    prepare: Preparation | None = None
    scheduler: str | None = None

    @property
    def n(self) -> int:
        return self.folder.n

    @property
    def d(self) -> int:
        return len(self.folder.features)

    def ranges(self) -> list[tuple[int, int]]:
        cuts = [k * self.block_rows for k in range(max(1, self.n // self.block_rows))] + [self.n]
        return list(zip(cuts[:-1], cuts[1:], strict=True))

    def map(self, task: Callable[[Array, Array], T], features: bool = True) -> list[T]:
        import dask

        run = dask.delayed(_run, pure=False)
        tasks = [run(self.folder, self.prepare, a, b, features, task) for a, b in self.ranges()]
        if self.scheduler is None:
            return list(dask.compute(*tasks, scheduler="threads", num_workers=os.cpu_count() or 1))
        client = _client(self.scheduler)
        try:
            return list(dask.compute(*tasks, scheduler=client))
        except DataError:
            raise
        except (Exception, asyncio.CancelledError) as e:  # a scheduler or worker lost during the pass
            raise DataError(f"the Dask cluster at {self.scheduler} failed during a pass ({type(e).__name__}); nothing "
                            "was released: check its workers, or drop --scheduler to run on this machine") from None

    def blocks(self) -> Iterator[tuple[Array, Array]]:
        for a, b in self.ranges():
            yield _run(self.folder, self.prepare, a, b, True, lambda X, y: (X, y))

    def arrays(self) -> None:
        return None


_CLIENTS: dict[str, object] = {}


def _client(address: str) -> object:
    """A client of the dask.distributed scheduler at address, kept for the process while it runs; DataError if none
    answers."""
    from distributed import Client

    client = _CLIENTS.get(address)
    if client is not None and client.status == "running":  # type: ignore[attr-defined]
        return client
    try:
        client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        raise DataError(f"no Dask scheduler answered at {address} within {CONNECT_SECONDS} s ({type(e).__name__}); "
                        "start it, or drop --scheduler to run on this machine") from None
    try:  # a scheduler without workers would hold every pass for ever
        client.wait_for_workers(1, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError):
        client.close()
        raise DataError(f"the Dask scheduler at {address} has no worker after {CONNECT_SECONDS} s; start its workers, "
                        "or drop --scheduler to run on this machine") from None
    _CLIENTS[address] = client
    return client


SCHEDULER = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):[0-9]{1,5}")


def check_scheduler(address: object, where: str = "--scheduler") -> str | None:
    """A dask.distributed scheduler's address, tcp:// or tls:// host and port (None: this machine's cores);
    InputError naming where it was set otherwise, without quoting it (a deployment's setting may be mistyped
    secret)."""
    if address is None or (isinstance(address, str) and SCHEDULER.fullmatch(address)):
        return address
    raise InputError(f"{where} must be a scheduler's address such as tcp://host:8786 (tcp:// or tls://, a host and a "
                     "port)")


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


def response_values(rows: BlockRows) -> Array:
    """The distinct values of the response, at most three of them (enough to choose and check the loss); DataError
    if one is not finite."""
    found = rows.map(_few_values, features=False)
    if any(values is None for values in found):
        raise DataError(NOT_FINITE_RESPONSE)
    return np.unique(np.concatenate(found))[:3]


def binary_labels(values: Array, loss: str | None, response: str) -> None:
    """Refuse the logistic loss for a response of more than two values (response_values keeps three at most, so the
    message cannot give the count as the in-memory one does)."""
    if loss == "logistic" and values.size > 2:
        raise DataError(f"the label {response} takes more than two values, but the logistic loss needs binary labels; "
                        f"recode {response} into two values (such as 0 and 1) or pass {{loss}} robust", "loss")


def _few_values(X: Array, y: Array) -> Array | None:
    return np.unique(y)[:3] if np.all(np.isfinite(y)) else None


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
    values = response_values(rows) if values is None else values
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
