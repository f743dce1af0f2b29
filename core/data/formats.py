"""The formats a user's file of rows may come in, chosen by its extension and checked against its first bytes: CSV
(core.data.csvfile), Parquet, Stata (.dta), SPSS (.sav, .zsav), SAS (.sas7bdat) and SAS XPORT (.xpt).

Each reader turns the file's bytes into the `core.data.csvfile.Table` a CSV is read into, cell by cell under the
CSV's rules: numbers as numbers; booleans 1/0; strings and categories as a CSV's text cells (a label column's
true/false or yes/no coded 1/0, any other text refused); a numeric column whose two values both carry SPSS or Stata
value labels coded 0/1 through those labels by core.data.rows.canonical_column (yes = 1 whatever its code); a
missing value (NaN, an SPSS or Stata missing code) a missing cell, refused as a CSV's empty cell is. The Dataset and
the people's key are then made by the same functions as a CSV's (table_dataset, canonical), so the same rows in
any of these formats fit the same θ and spend one budget.

Parquet is read by pandas through pyarrow, Stata by pandas.read_stata, SPSS and both SAS formats by pyreadstat; they
are imported only when such a file is read.
"""

from __future__ import annotations

import io
import warnings
from pathlib import PurePath
from typing import Any

import numpy as np

from core.data.csvfile import Table, csv_columns, decode
from core.data.csvfile import header as csv_header
from core.data.dataset import Dataset
from core.data.rows import canonical_column
from core.errors import DataError

CSV, PARQUET, STATA, SPSS, SAS, XPORT = "CSV", "Parquet", "Stata", "SPSS", "SAS", "SAS XPORT"
# A file's format by its extension (a name without one, or a .txt or .tsv, is read as a CSV, as always).
EXTENSIONS = {".csv": CSV, ".tsv": CSV, ".txt": CSV, "": CSV, ".parquet": PARQUET, ".dta": STATA, ".sav": SPSS,
              ".zsav": SPSS, ".sas7bdat": SAS, ".xpt": XPORT}
# What the app's uploader accepts.
UPLOAD_TYPES = ("csv", "parquet", "dta", "sav", "zsav", "sas7bdat", "xpt")
SUFFIX = {CSV: ".csv", PARQUET: ".parquet", STATA: ".dta", SPSS: ".sav", SAS: ".sas7bdat", XPORT: ".xpt"}
SAVE_AS = "save it as CSV, Parquet (.parquet), Stata (.dta), SPSS (.sav), SAS (.sas7bdat) or SAS XPORT (.xpt)"
SAS_MAGIC = bytes.fromhex("c2ea8160b31411cfbd92080009c7318c181f1011")  # bytes 12 to 32 of every SAS7BDAT file


def format_of(name: str) -> str | None:
    """A file's format by its name's extension (any case), or None for an extension no reader takes."""
    return EXTENSIONS.get(PurePath(name).suffix.lower())


def sniff(content: bytes) -> str | None:
    """The binary format a file's first bytes announce, or None (text, or bytes no reader here recognises)."""
    if content[:4] == b"PAR1" and content[-4:] == b"PAR1":
        return PARQUET
    if content[:4] in (b"$FL2", b"$FL3"):
        return SPSS
    if content.startswith(b"<stata_dta>") or (len(content) > 3 and 102 <= content[0] <= 115
                                                and content[1] in (1, 2) and content[2] == 1):
        return STATA
    if content[12:32] == SAS_MAGIC:
        return SAS
    if content.startswith(b"HEADER RECORD*******LIB"):
        return XPORT
    return None


def read_table(content: bytes, name: str, response: str = "y") -> Table:
    """A file's bytes as a Table, by its extension; one-sentence DataError for an extension no reader takes, bytes of
    another format than the extension says, or a file its reader cannot read."""
    fmt = format_of(name)
    if fmt is None:
        raise DataError(f"{name} has an extension that names no format read here; {SAVE_AS}", "data")
    found = sniff(content)
    if fmt == CSV:
        if found is not None:
            raise _misnamed(name, fmt, found)
        return csv_columns(decode(content, name), name, response)
    if found != fmt:
        raise _misnamed(name, fmt, found) if found else DataError(
            f"{name} is not {_a(fmt)} file (its first bytes are not {_a(fmt)} file's); export it again as {fmt}, or "
            "give it the extension of its format", "data")
    try:
        with warnings.catch_warnings():  # a reader's remarks on the file's metadata say nothing the user can act on
            warnings.simplefilter("ignore")
            return _frame_table(*READERS[fmt](content))
    except DataError:
        raise
    except Exception:  # any failure of a third-party reader on a damaged file, in one sentence without a traceback
        raise DataError(f"{name} could not be read as {_a(fmt)} file (it may be damaged or cut short); export it "
                        "again, or save it as CSV", "data") from None


def read_dataset(content: bytes, name: str, response: str = "y") -> Dataset:
    """A file's bytes as a Dataset, whatever its format (core.data.csvfile.table_dataset)."""
    from core.data.csvfile import table_dataset

    return table_dataset(read_table(content, name, response), name, response)


def header(content: bytes, name: str) -> list[str]:
    """A file's column names, read from its header or metadata alone (DataError for a file that cannot be read)."""
    fmt = format_of(name)
    if fmt == CSV and sniff(content) is None:
        return csv_header(content, name)
    if fmt is None or sniff(content) != fmt:
        return list(read_table(content, name).names)  # raises the reason
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [str(c).strip() for c in NAMES[fmt](content)]
    except Exception:
        return list(read_table(content, name).names)  # the reader's sentence for a damaged file


def _misnamed(name: str, fmt: str, found: str) -> DataError:
    return DataError(f"{name} holds {_a(found)} file, not {_a(fmt)} one; give it the extension {SUFFIX[found]} (or "
                     "choose the file you meant)", "data")


def _a(fmt: str) -> str:
    """A format's name with its article, as it is read aloud ("an SPSS", "a SAS")."""
    return f"{'an' if fmt == SPSS else 'a'} {fmt}"


# ---------------------------------------------------------------- the readers: (frame, value labels per column)


def _parquet(content: bytes) -> tuple[Any, dict]:
    import pandas as pd

    return pd.read_parquet(io.BytesIO(content), engine="pyarrow"), {}


def _stata(content: bytes) -> tuple[Any, dict]:
    import pandas as pd

    with pd.read_stata(io.BytesIO(content), iterator=True, convert_categoricals=False) as reader:
        frame = reader.read()
        labelled = bool(reader.value_labels())
    if not labelled:
        return frame, {}
    shown = pd.read_stata(io.BytesIO(content), convert_categoricals=True)  # the same cells, as their labels
    labels = {}
    for column in frame.columns:
        if isinstance(shown[column].dtype, pd.CategoricalDtype):
            pairs = pd.DataFrame({"code": frame[column], "label": shown[column].astype(object)}).dropna()
            labels[column] = dict(zip(pairs["code"], pairs["label"], strict=True))
    return frame, labels


def _spss(content: bytes) -> tuple[Any, dict]:
    import pyreadstat

    frame, meta = pyreadstat.read_sav(io.BytesIO(content))  # user-defined missing codes read as missing
    return frame, meta.variable_value_labels


def _sas(content: bytes) -> tuple[Any, dict]:
    import pyreadstat

    return pyreadstat.read_sas7bdat(io.BytesIO(content))[0], {}


def _xport(content: bytes) -> tuple[Any, dict]:
    import pyreadstat  # not pandas.read_sas: it reads an XPORT file's zeros as 5.4e-79

    return pyreadstat.read_xport(io.BytesIO(content))[0], {}


READERS = {PARQUET: _parquet, STATA: _stata, SPSS: _spss, SAS: _sas, XPORT: _xport}


def _parquet_names(content: bytes) -> list:
    import pyarrow.parquet as pq

    schema = pq.read_schema(io.BytesIO(content))
    index = (schema.pandas_metadata or {}).get("index_columns", [])  # a pandas index is not a column of the frame
    return [n for n in schema.names if n not in index]


def _stata_names(content: bytes) -> list:
    import pandas as pd

    with pd.read_stata(io.BytesIO(content), iterator=True, convert_categoricals=False) as reader:
        return list(reader.read(1).columns)


def _readstat_names(content: bytes, fmt: str) -> list:
    import pyreadstat

    read = {SPSS: pyreadstat.read_sav, SAS: pyreadstat.read_sas7bdat, XPORT: pyreadstat.read_xport}[fmt]
    return list(read(io.BytesIO(content), metadataonly=True)[1].column_names)


# A file's column names from its metadata, without reading its rows (the Data page's choice of the label column).
NAMES = {PARQUET: _parquet_names, STATA: _stata_names, SPSS: lambda c: _readstat_names(c, SPSS),
         SAS: lambda c: _readstat_names(c, SAS), XPORT: lambda c: _readstat_names(c, XPORT)}


def _frame_table(frame: Any, labels: dict) -> Table:
    """A pandas frame as a Table (value labels: {column: {code: label}})."""
    names = tuple(str(c).strip() for c in frame.columns)
    return Table(names, tuple(_column(frame.iloc[:, j], labels.get(frame.columns[j]))
                              for j in range(frame.shape[1])))


def _column(series: Any, labels: dict | None) -> np.ndarray | tuple[str, ...]:
    """One column's cells: numbers (NaN where missing; two labelled values coded by their labels), or text."""
    from pandas.api import types

    if types.is_bool_dtype(series.dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if types.is_numeric_dtype(series.dtype) and not types.is_complex_dtype(series.dtype):
        numbers = series.to_numpy(dtype=np.float64, na_value=np.nan)
        return _labelled(numbers, labels) if labels else numbers
    missing = series.isna().to_numpy()
    return tuple("" if lost else _text(v) for v, lost in zip(series.to_numpy(dtype=object), missing, strict=True))


def _labelled(numbers: np.ndarray, labels: dict) -> np.ndarray:
    """A column of at most two values, each with a value label and none missing, coded 0/1 through its labels as a
    CSV's two words are (canonical_column); any other column keeps its numbers."""
    found = np.unique(numbers)
    if np.isnan(numbers).any() or len(found) > 2 or any(v not in labels for v in found.tolist()):
        return numbers
    coded = canonical_column([_text(labels[v]) for v in found.tolist()])
    return numbers if coded is None else coded[np.searchsorted(found, numbers)]


def _text(value: object) -> str:
    """A cell as text (a SAS file's bytes decoded)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    return str(value)
