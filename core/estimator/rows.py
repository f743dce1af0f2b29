"""The rows a fit and the private stages read: in memory as one block, or a data set read block by block.

Every pass over the data is a map and a reduction: a task runs on each block where the block is (`Rows.map`) and
returns a few sums, which the caller adds in block order. The in-memory route is the same passes over one block, so
both routes run the same code on the same kernels (core.estimator.fit); core.estimator.blocks reads a folder of files in
blocks and runs the tasks on Dask.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from core.privacy.marks import NOT_PRIVATE

Array = NDArray[np.float64]
T = TypeVar("T")
Task = Callable[[Array, Array], T]


class Rows(Protocol):
    """n rows of features X (n x d) and responses y, prepared (on the domain, responses clipped)."""

    @property
    def n(self) -> int: ...

    @property
    def d(self) -> int: ...

    def map(self, task: Task[T]) -> list[T]:
        """task(X_b, y_b) for every block b, in block order."""
        ...

    def blocks(self) -> Iterator[tuple[Array, Array]]:
        """The blocks one after another, on the caller."""
        ...

    def arrays(self) -> tuple[Array, Array] | None:
        """(X, y) when every row is in memory, else None."""
        ...


@dataclass(frozen=True, eq=False)
class InMemory:
    """Rows held as two arrays: one block."""

    X: Array = field(metadata=NOT_PRIVATE, repr=False)
    y: Array = field(metadata=NOT_PRIVATE, repr=False)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def map(self, task: Task[T]) -> list[T]:
        return [task(self.X, self.y)]

    def blocks(self) -> Iterator[tuple[Array, Array]]:
        yield self.X, self.y

    def arrays(self) -> tuple[Array, Array]:
        return self.X, self.y


def rows_digest(rows: Rows, feature_names: tuple[str, ...]) -> str:
    """The SHA-256 of the rows (every X block, then every y block, as float64) with the features' names: the same
    bytes whatever the blocks, so both routes give one digest for the same rows."""
    h = hashlib.sha256(repr(((rows.n, rows.d), feature_names)).encode())
    for column in (0, 1):
        for block in rows.blocks():
            h.update(memoryview(np.ascontiguousarray(block[column], dtype=np.float64)).cast("B"))
    return h.hexdigest()
