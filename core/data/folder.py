"""A data set larger than memory: a folder of Parquet files, checked to agree, read a range of rows at a time.

core.estimator.blocks cuts the rows into blocks and runs every pass of a release as a task per block.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from core.errors import DataError

Array = NDArray[np.float64]
BLOCK_ROWS = 2**19  # rows per block: 75 MB of 17 features and a response, a few of them per worker in flight


@dataclass(frozen=True)
class Part:
    """One file of a folder: its path, rows, and size and time of change when it was opened (a file that changes
    during the passes is refused)."""

    path: str
    rows: int
    size: int
    changed: int


@dataclass(frozen=True)
class Folder:
    """The Parquet files of a data set in name order, checked to share the columns read: features and a response,
    all numeric."""

    root: str
    parts: tuple[Part, ...]
    features: tuple[str, ...]
    response: str

    @property
    def n(self) -> int:
        return sum(p.rows for p in self.parts)

    def read(self, start: int, stop: int, features: bool = True) -> tuple[Array, Array]:
        """Rows [start, stop) as float64 arrays (X of d columns, or of none when not `features`, and y)."""
        columns = (self.features if features else ()) + (self.response,)
        pieces, offset = [], 0
        for part in self.parts:
            a, b = max(start, offset), min(stop, offset + part.rows)
            if a < b:
                pieces.append(_read_part(part, a - offset, b - offset, columns))
            offset += part.rows
        table = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        return np.ascontiguousarray(table[:, :-1]), np.ascontiguousarray(table[:, -1])


def _read_part(part: Part, start: int, stop: int, columns: tuple[str, ...]) -> Array:
    """Rows [start, stop) of one file, the given columns side by side; DataError if the file changed or vanished."""
    import pyarrow.parquet as pq

    name = Path(part.path).name
    try:
        stat = os.stat(part.path)
        if (stat.st_size, stat.st_mtime_ns) != (part.size, part.changed):
            raise FileNotFoundError
        file = pq.ParquetFile(part.path)
        groups, first, offset = [], None, 0
        for g in range(file.num_row_groups):
            rows = file.metadata.row_group(g).num_rows
            if offset < stop and offset + rows > start:
                groups.append(g)
                first = offset if first is None else first
            offset += rows
        table = file.read_row_groups(groups, columns=list(columns)).slice(start - first, stop - start)
    except (OSError, ValueError) as e:
        raise DataError(f"the file {name} changed, vanished or could not be read while the data set was read "
                        f"({type(e).__name__}); nothing was released: restore it and run again") from None
    out = np.empty((stop - start, len(columns)))
    for j, column in enumerate(columns):
        values = table.column(column)
        if values.null_count:
            raise DataError(f"column {column} of {name} has a missing cell; remove or impute those rows")
        out[:, j] = values.to_numpy()
    return out


def open_folder(root: str | os.PathLike, response: str = "y", features: tuple[str, ...] | None = None) -> Folder:
    """The Parquet files of `root` (its *.parquet, in name order), checked to agree: every file has the response and
    the features (default: every other column of the first file) with the same numeric types."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(root)
    paths = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not paths:
        raise DataError(f"no Parquet files (*.parquet) in {root}; check the folder passed to --folder")
    parts, first = [], None
    for path in paths:
        try:
            schema, rows, stat = pq.read_schema(path), pq.ParquetFile(path).metadata.num_rows, path.stat()
        except (OSError, pa.ArrowException):
            raise DataError(f"{path.name} in {root} is not a readable Parquet file; remove it or write it "
                            "again") from None
        if first is None:
            first = schema
            if response not in schema.names:
                raise DataError(f"{path.name} has no column {response}; name the response column in {{response}}",
                                "response")
            features = tuple(c for c in schema.names if c != response) if features is None else features
            for column in (*features, response):
                _check_column(schema, column, path.name)
        for column in (*features, response):
            if column not in schema.names or schema.field(column).type != first.field(column).type:
                raise DataError(f"the files of {root} disagree: {path.name} lacks column {column} or gives it another "
                                f"type than {paths[0].name}; write every file with the same columns")
        parts.append(Part(str(path), rows, stat.st_size, stat.st_mtime_ns))
    return Folder(str(root), tuple(parts), tuple(features), response)


def _check_column(schema: object, column: str, name: str) -> None:
    import pyarrow as pa

    if column not in schema.names:  # type: ignore[attr-defined]
        raise DataError(f"{name} has no column {column}; check --features")
    kind = schema.field(column).type  # type: ignore[attr-defined]
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        raise DataError(f"column {column} of {name} is not numeric; encode it as numbers first")
