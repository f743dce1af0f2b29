"""A data set larger than memory: a folder of Parquet (or CSV) files, checked to agree, read a range of rows at a time.

The folder is on this machine's disk or in object storage (an address pyarrow opens, s3://bucket/prefix?options): both
are read through pyarrow's filesystems, one way. core.estimator.blocks cuts the rows into blocks and runs every pass of
a release as a task per block.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import Dataset, check_more_rows
from core.errors import DataError
from core.privacy.marks import NOT_PRIVATE
from core.privacy.unit import PrivacyUnit

if TYPE_CHECKING:
    from pyarrow.fs import FileInfo, FileSystem

Array = NDArray[np.float64]
BLOCK_ROWS = 2**19  # rows per block: 75 MB of 17 features and a response, a few of them per worker in flight


@dataclass(frozen=True)
class Part:
    """One file of a folder: its path, rows, and size and time of change when it was opened (a file that changes
    during the passes is refused); and the address of its object store ("" on this machine's disk), a string so that
    a worker elsewhere opens the same file."""

    path: str
    rows: int
    size: int
    changed: int
    store: str = field(default="", repr=False)  # the address as given, options and all: never shown
    tag: str = ""  # an object's ETag: a store keeps times of change to the second, a rewrite changes its tag
    # A file's inode and its status change time on this machine's disk: every write sets the latter, and no call can
    # set it back (a modification time can be), so a file swapped and swapped back is told. Compared where the folder
    # was opened, never on a cluster's workers, which may read copies of the files.
    identity: tuple[int, int] = (0, 0)

    @property
    def name(self) -> str:
        """The file's name, for messages: pyarrow's paths are separated by "/" on every system."""
        return self.path.rpartition("/")[2]


@dataclass(frozen=True)
class Folder:
    """The Parquet or CSV files of a data set in name order, checked to share the columns read: features and a
    response, all numeric."""

    root: str
    parts: tuple[Part, ...]
    features: tuple[str, ...]
    response: str

    @property
    def n(self) -> int:
        return sum(p.rows for p in self.parts)

    def read(self, start: int, stop: int, features: bool = True) -> tuple[Array, Array]:
        """Rows [start, stop) as float64 arrays (X of d columns, or of none when not `features`, and y)."""
        table = self.columns(start, stop, (self.features if features else ()) + (self.response,))
        return np.ascontiguousarray(table[:, :-1]), np.ascontiguousarray(table[:, -1])

    def columns(self, start: int, stop: int, names: tuple[str, ...]) -> Array:
        """Rows [start, stop) of the named columns, side by side, as float64."""
        pieces, offset = [], 0
        for part in self.parts:
            a, b = max(start, offset), min(stop, offset + part.rows)
            if a < b:
                pieces.append(_read_part(part, a - offset, b - offset, names))
            offset += part.rows
        return np.concatenate(pieces) if len(pieces) > 1 else pieces[0]

    def unchanged(self) -> bool:
        """Whether every file still has the size, time of change (and an object its tag) it had when the folder was
        opened, as each read checks again, and a file on this machine's disk its identity (Part.identity): a cached
        folder is opened again when not, and a release ends, recorded as failed, before it is shown."""
        try:
            return all(_unchanged(part, _filesystem(part.store)) and (part.store or _identity(part.path) ==
                                                                      part.identity) for part in self.parts)
        except OSError:
            return False


class OnFolder:
    """The shape of whatever stands for a folder's rows: n, its files' rows, and d, its features."""

    folder: Folder

    @property
    def n(self) -> int:
        return self.folder.n

    @property
    def d(self) -> int:
        return len(self.folder.features)


@dataclass(frozen=True)
class FolderData(OnFolder):
    """A data set read in blocks, shaped as core.data.dataset.Dataset where the two meet — n, d, feature names,
    source, unit — but holding its files, never its rows: what needs every row in memory refuses it. labels are the
    response's distinct values, at most three: enough to choose and check the loss (core.data.passes)."""

    folder: Folder = field(metadata=NOT_PRIVATE)
    source: str
    labels: Array = field(repr=False, metadata=NOT_PRIVATE)
    privacy_unit: PrivacyUnit = PrivacyUnit("row", 1)
    theta_star: None = None

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.folder.features


SourceData: TypeAlias = Dataset | FolderData  # what a data spec's load() gives: rows in memory or a folder's files


def _read_part(part: Part, start: int, stop: int, columns: tuple[str, ...]) -> Array:
    """Rows [start, stop) of one file, the given columns side by side; DataError if the file changed or vanished."""
    import pyarrow as pa

    name, text, filesystem = part.name, part.path.endswith(".csv"), _filesystem(part.store)
    try:
        if not _unchanged(part, filesystem):
            raise FileNotFoundError
        table = (_csv_rows if text else _parquet_rows)(filesystem, part.path, start, stop, columns)
    except pa.ArrowInvalid as e:
        if text:  # a cell that is not a number: its column, never its value
            raise DataError(f"column {_csv_column(filesystem, part.path, str(e))} of {name} has a cell that is not "
                            "a number; write it as a number, or leave the column out with --features") from None
        raise _changed(name, e) from None
    except (OSError, ValueError) as e:
        raise _changed(name, e) from None
    out = np.empty((stop - start, len(columns)))
    for j, column in enumerate(columns):
        values = table.column(column)
        if values.null_count:
            raise DataError(f"column {column} of {name} has a missing cell; remove or impute those rows")
        out[:, j] = values.to_numpy()
    return out


def _identity(path: str) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_ino, stat.st_ctime_ns


def _unchanged(part: Part, filesystem: FileSystem) -> bool:
    info = filesystem.get_file_info(part.path)
    same = (info.size, info.mtime_ns) == (part.size, part.changed)
    return same and (not part.store or _tag(filesystem, part.path) == part.tag)


def _tag(filesystem: FileSystem, path: str) -> str:
    """An object's ETag, from one request for its headers ("" where the store gives none)."""
    with filesystem.open_input_file(path) as f:
        return (f.metadata().get("ETag") or b"").decode()


def _changed(name: str, e: Exception) -> DataError:
    return DataError(f"the file {name} changed, vanished or could not be read while the data set was read "
                     f"({type(e).__name__}); nothing was released: restore it and run again")


def _parquet_rows(filesystem: FileSystem, path: str, start: int, stop: int, columns: tuple[str, ...]) -> object:
    """Rows [start, stop) of a Parquet file: the row groups that hold them, sliced."""
    import pyarrow.parquet as pq

    with filesystem.open_input_file(path) as f:
        file = pq.ParquetFile(f)
        groups, first, offset = [], 0, 0
        for g in range(file.num_row_groups):
            rows = file.metadata.row_group(g).num_rows
            if offset < stop and offset + rows > start:
                first = offset if not groups else first
                groups.append(g)
            offset += rows
        return file.read_row_groups(groups, columns=list(columns)).slice(start - first, stop - start)


def _csv_rows(filesystem: FileSystem, path: str, start: int, stop: int, columns: tuple[str, ...]) -> object:
    """Rows [start, stop) of a CSV file with a header, read from its start (a CSV has no index), as float64."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    options = pacsv.ConvertOptions(column_types={c: pa.float64() for c in columns}, include_columns=list(columns))
    pieces, offset = [], 0
    with filesystem.open_input_stream(path) as f:
        for batch in pacsv.open_csv(f, convert_options=options):
            rows = batch.num_rows
            if offset + rows > start:
                a = max(start - offset, 0)
                pieces.append(batch.slice(a, min(stop - offset, rows) - a))
            offset += rows
            if offset >= stop:
                break
    return pa.Table.from_batches(pieces, schema=pa.schema([(c, pa.float64()) for c in columns]))


def _csv_header(filesystem: FileSystem, path: str) -> list[str]:
    with filesystem.open_input_stream(path) as f:
        return next(csv.reader(io.TextIOWrapper(f, encoding="utf-8-sig", newline="")), [])


def _csv_column(filesystem: FileSystem, path: str, error: str) -> str:
    """The name of the column a CSV conversion error points at ("column #k"), or "a column" when it does not say."""
    found = re.search(r"column #(\d+)", error)
    try:
        names = _csv_header(filesystem, path)
    except (OSError, UnicodeDecodeError, csv.Error):
        return "a column"
    return names[int(found.group(1))] if found and int(found.group(1)) < len(names) else "a column"


@functools.lru_cache(maxsize=16)
def _from_uri(address: str) -> tuple[FileSystem, str]:
    """pyarrow's filesystem and base path for an object-storage address, formed once per process and address, so a
    worker reading block after block keeps its connections."""
    from pyarrow.fs import FileSystem

    return FileSystem.from_uri(address)


def _filesystem(store: str) -> FileSystem:
    from pyarrow.fs import LocalFileSystem

    return _from_uri(store)[0] if store else LocalFileSystem()


def shown_root(root: str | os.PathLike) -> str:
    """A folder as messages name it: a local path as given, an address without its query string or user part, which
    may hold an endpoint or a secret (a secret with a "/" in it included)."""
    text = os.fspath(root)
    if "://" not in text:
        return text
    scheme, _, rest = text.partition("?")[0].partition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}"


def _locate(root: str | os.PathLike, shown: str) -> tuple[FileSystem, str, str]:
    """The filesystem of root, its base path there (a local folder's absolute path, which workers on other machines
    read too) and the address the parts keep ("" for a local folder)."""
    import pyarrow as pa
    from pyarrow.fs import LocalFileSystem

    text = os.fspath(root)
    if "://" not in text:
        return LocalFileSystem(), str(Path(text).resolve()), ""
    if "@" in text.partition("?")[0]:
        raise DataError(f"put the credentials for {shown} in the environment (AWS_ACCESS_KEY_ID, "
                        "AWS_SECRET_ACCESS_KEY), never in its address")
    try:
        return *_from_uri(text), text
    except (pa.ArrowException, OSError, ValueError):
        raise DataError(f"pyarrow cannot open {shown} with the options given; give a local folder, or an address "
                        "such as s3://bucket/prefix with options pyarrow reads (endpoint_override, scheme, region)"
                        ) from None


def _listing(filesystem: FileSystem, base: str, shown: str) -> list[FileInfo]:
    """The Parquet files of base (*.parquet, in name order), or its CSV files, with their size and time of change
    taken before any is read (a later change is refused); none when base is not a folder."""
    from pyarrow.fs import FileSelector

    found = _info(filesystem, FileSelector(base, allow_not_found=True), shown)
    kinds = [sorted(p.path for p in found if p.base_name.endswith(ext)) for ext in (".parquet", ".csv")]
    if all(kinds):
        raise DataError(f"{shown} holds both Parquet and CSV files; keep the files of one data set, of one kind")
    if not (paths := kinds[0] or kinds[1]):
        raise DataError(f"no Parquet or CSV files (names ending .parquet or .csv) in {shown}; check {{folder}}",
                        "folder")
    return _info(filesystem, paths, shown)


def _info(filesystem: FileSystem, what: object, shown: str) -> list[FileInfo]:
    """filesystem.get_file_info(what); DataError in one sentence when the store does not answer."""
    try:
        return filesystem.get_file_info(what)
    except NotADirectoryError:  # a file where a folder was named
        return []
    except OSError as e:
        raise DataError(f"could not reach {shown} ({type(e).__name__}); check the address, and that the credentials "
                        "in the environment may list it") from None


def open_folder(root: str | os.PathLike, response: str | None = "y", features: tuple[str, ...] | None = None,
                shown: str | None = None) -> Folder:
    """The Parquet files of `root` (its *.parquet, in name order), or its CSV files (*.csv, each with a header, every
    cell read a number), checked to agree: every file has the response and the features (default: every other column
    of the first file), Parquet's with the same numeric types. With no response, the first file's last column stands
    as one, so that every column is read (as for a key, where no column is singled out).

    root is a local folder or an object-storage address pyarrow opens (s3://bucket/prefix, options such as
    ?endpoint_override=host:port&scheme=http&region=... in its query string); an S3 store takes its credentials from
    the environment, as pyarrow's S3FileSystem reads them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE...).
    Messages name the folder as `shown` (default: root without its query string), such as a deployment's name for
    it, which keeps its location off a page."""
    shown = shown_root(root) if shown is None else shown
    filesystem, base, store = _locate(root, shown)
    infos = _listing(filesystem, base, shown)
    parts, first = [], None
    for info in infos:
        names, types, rows = _describe(filesystem, info, shown)
        twice = next((c for c in names if names.count(c) > 1), None)
        if twice is not None or not names:
            raise DataError(f"{info.base_name} has no header" if not names else
                            f"{info.base_name} names column {twice} twice; give every column its own name")
        if first is None:
            first = types
            response = names[-1] if response is None else response
            if response not in names:
                raise DataError(f"{info.base_name} has no column {response}; name the response column in "
                                "{response}", "response")
            features = tuple(c for c in names if c != response) if features is None else features
            for column in (*features, response):
                _check_column(types, column, info.base_name)
        for column in (*features, response):
            if column not in types or types[column] != first[column]:
                raise DataError(f"the files of {shown} disagree: {info.base_name} lacks column {column} or gives it "
                                f"another type than {infos[0].base_name}; write every file with the same columns")
        try:
            tag, identity = (_tag(filesystem, info.path), (0, 0)) if store else ("", _identity(info.path))
        except OSError as e:
            raise _changed(info.base_name, e) from None
        parts.append(Part(info.path, rows, info.size, info.mtime_ns, store, tag, identity))
    read = Folder(base if not store else shown_root(root), tuple(parts), tuple(features), response)
    check_more_rows(read.n, len(read.features))
    return read


def _describe(filesystem: FileSystem, info: FileInfo, shown: str) -> tuple[list[str], dict[str, object], int]:
    """A file's column names, their types (a CSV's are all numbers, checked as they are read) and its rows. A Parquet
    file's pandas index (its metadata's index_columns, such as __index_level_0__) is left out, as pandas' reading of
    the same file as one data file leaves it out: the same rows, one key."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path, text = info.path, info.path.endswith(".csv")
    try:
        if text:
            names = _csv_header(filesystem, path)
            if not names:
                return [], {}, 0
            options = pacsv.ConvertOptions(column_types={names[0]: pa.string()}, include_columns=names[:1])
            with filesystem.open_input_stream(path) as f:
                rows = sum(batch.num_rows for batch in pacsv.open_csv(f, convert_options=options))
            return names, dict.fromkeys(names, pa.float64()), rows
        with filesystem.open_input_file(path) as f:
            file = pq.ParquetFile(f)
            schema = file.schema_arrow
            index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
            names = [c for c in schema.names if c not in index]  # pandas' index, as pandas reads it: not a column
            return names, {c.name: c.type for c in schema if c.name in names}, file.metadata.num_rows
    except (OSError, UnicodeDecodeError, csv.Error, pa.ArrowException):
        raise DataError(f"{info.base_name} in {shown} is not a readable {'CSV' if text else 'Parquet'} file; remove "
                        "it or write it again") from None


def _check_column(types: dict[str, object], column: str, name: str) -> None:
    import pyarrow as pa

    if column not in types:
        raise DataError(f"{name} has no column {column}; check --features")
    kind = types[column]
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        raise DataError(f"column {column} of {name} is not numeric; encode it as numbers first")
