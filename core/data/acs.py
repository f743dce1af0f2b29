"""ACS income (section 4.2; docs/method.md §10): census person files through folktables, 17 features.

folktables supplies what it does well: the state codes and file locations
(`<root>/<year>/<horizon>/psam_p<FIPS>.csv`) and ACSIncome's filter (AGEP > 16, PINCP > 100,
WKHP > 0, PWGTP >= 1). Its reader goes line by line through all ~290 columns; here only the ten
columns the problem needs are read, with pyarrow's multi-threaded CSV parser, and the encoded arrays
of each state are cached beside the census files, so a second load reads no CSV at all. Its download
holds a whole zip in memory and says nothing until it ends; here the zip is fetched in chunks, so a
screen can show the bytes as they arrive (`ensure_census_file`'s progress), from CENSUS_SITE.

The filtered records of the chosen states are the population; a sample of size n is drawn from it
without replacement (seeded), so each person fills at most one row and the guarantee, stated per
row, is one per person. Drawing with replacement, as in the paper's experiments, must be asked
for explicitly: a person may then fill k rows and is protected only by group privacy for k rows
(`core.privacy.unit.PrivacyUnit`).
"""

from __future__ import annotations

import csv
import importlib
import io
import os
import re
import shutil
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import requests
from folktables import acs as fk_acs

from core.data.dataset import Dataset
from core.data.encoding import FEATURE_NAMES
from core.errors import DataError
from core.privacy.population import seed_words
from core.privacy.unit import PrivacyUnit

# ACSIncome's filter and our features read exactly these columns.
COLUMNS = ("AGEP", "COW", "SCHL", "MAR", "OCCP", "WKHP", "SEX", "RAC1P", "PINCP", "PWGTP")
# Occupation groups 1-7 by OCCP range (docs/method.md §10); 7700-9830 is the reference group.
OCCUPATION_RANGES = ((10, 960), (1005, 1980), (2001, 2920), (3000, 3550), (3601, 4655), (4700, 5940), (6005, 7640))
HORIZONS = ("1-Year", "5-Year")
PROBE_SECONDS = 10.0  # how long an unreachable census site may keep the caller waiting
DOWNLOAD_TIMEOUT = (10.0, 60.0)  # requests' (connect, read) limits during a download
CHUNK_BYTES = 1 << 20  # a download is written, and its progress told, a mebibyte at a time
# Where the Census Bureau publishes the person files: <CENSUS_SITE>/<year>/<horizon>/csv_p<state>.zip. A mirror (or a
# test's local server) is named by setting it.
CENSUS_SITE = "https://www2.census.gov/programs-surveys/acs/data/pums"
Progress = Callable[[int, int | None], None]  # told the bytes downloaded so far and the total, when the site says it

# folktables' package namespace exports a function named load_acs over the module of that name.
fk_load = importlib.import_module("folktables.load_acs")


def _cache() -> Path:
    """The per-user cache folder of this project: $XDG_CACHE_HOME (or ~/.cache)/private-single-parameter."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "private-single-parameter"


def default_root() -> Path:
    """The per-user census folder: $XDG_CACHE_HOME (or ~/.cache)/private-single-parameter/acs."""
    return _cache() / "acs"


def sample_root() -> Path:
    """Where SYNTHETIC census samples are kept (core.data.census_sample): a sibling of the census folder,
    $XDG_CACHE_HOME (or ~/.cache)/private-single-parameter/synthetic-acs, never inside it, so that no made-up file
    lies where census files are read."""
    return _cache() / "synthetic-acs"


def in_sample_root(root: str | os.PathLike) -> bool:
    """Whether a folder is the SYNTHETIC samples' folder or inside it: it holds no census file."""
    where, samples = Path(root).expanduser().resolve(), sample_root().expanduser().resolve()
    return where == samples or samples in where.parents


def _check_source(state: str, year: int, horizon: str) -> None:
    if state not in fk_load.state_list:
        raise DataError(f"unknown state {state!r}; name two-letter codes such as CA or MI with {{state}}", "state")
    if int(year) < 2014:
        raise DataError(f"the ACS person files are read for survey years 2014 and later, got {year}")
    if horizon not in HORIZONS:
        raise DataError(f"horizon must be '1-Year' or '5-Year', got {horizon!r}")


def census_path(root: str | os.PathLike, state: str, year: int = 2018, horizon: str = "1-Year") -> Path:
    """Where folktables keeps a state's person file: <root>/<year>/<horizon>/psam_p<FIPS>.csv (2017+)."""
    _check_source(state, year, horizon)
    code = fk_load._STATE_CODES[state]
    name = f"psam_p{code}.csv" if int(year) >= 2017 else f"ss{str(year)[-2:]}p{state.lower()}.csv"
    return Path(root) / str(year) / horizon / name


def census_url(state: str, year: int = 2018, horizon: str = "1-Year") -> str:
    """The Census Bureau's zip that holds the person file (the address folktables downloads)."""
    return f"{CENSUS_SITE}/{year}/{horizon}/csv_p{state.lower()}.zip"


def _missing_message(path: Path, state: str, year: int, horizon: str) -> str:
    return (
        f"the census file {path} is missing: it is the ACS {year} {horizon} person file for {state}, "
        f"published by the Census Bureau as {census_url(state, year, horizon)} (unzip {path.name} into "
        f"{path.parent}); to try the census path without it, make a SYNTHETIC census sample ({{census_sample}}): "
        "made-up records in the census layout, no real person, kept apart from census files"
    )


def ensure_census_file(
    root: str | os.PathLike, state: str, year: int = 2018, horizon: str = "1-Year", download: bool = False,
    progress: Progress | None = None,
) -> Path:
    """The state's person file, downloaded if allowed (progress told the bytes as they arrive); a clear DataError
    otherwise.

    An unreachable site is detected by a probe that gives up after PROBE_SECONDS, so the caller
    never hangs; the download itself then runs with connect and read timeouts.
    """
    path = census_path(root, state, year, horizon)
    if path.is_file():
        return path
    if not download:
        raise DataError(_missing_message(path, state, year, horizon) + "; or allow downloads ({download})",
                        setting="download")
    url = census_url(state, year, horizon)
    problem = _unreachable(url)
    if problem:
        raise DataError(
            f"the census site could not be reached ({problem}), so {path} could not be downloaded; "
            + _missing_message(path, state, year, horizon)
            + ", or try again when the site is reachable"
        )
    try:
        _download(url, path, progress or (lambda done, total: None))
    except (requests.RequestException, zipfile.BadZipFile, KeyError, OSError) as exc:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise DataError(f"downloading {url} failed ({why}); " + _missing_message(path, state, year, horizon)) from None
    return path


def _download(url: str, path: Path, progress: Progress) -> None:
    """The zip at url, fetched a chunk at a time (progress told the bytes so far), and the person file taken out of it
    into path. Both go through partial files of this process and thread, removed whatever happens: an interrupted
    download leaves no file that would pass for a complete one (a file at path is taken as complete)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = f"{os.getpid()}.{threading.get_ident()}"
    archive, partial = path.with_name(f"{path.name}.{mine}.zip.partial"), path.with_name(f"{path.name}.{mine}.partial")
    try:
        with requests.get(url, stream=True, timeout=DOWNLOAD_TIMEOUT) as response:
            response.raise_for_status()
            total = int(response.headers.get("Content-Length") or 0) or None
            done = 0
            with archive.open("wb") as out:
                for chunk in response.iter_content(CHUNK_BYTES):
                    out.write(chunk)
                    done += len(chunk)
                    progress(done, total)
        with zipfile.ZipFile(archive) as zipped, zipped.open(path.name) as member, partial.open("wb") as out:
            shutil.copyfileobj(member, out, CHUNK_BYTES)
        partial.replace(path)
    finally:
        archive.unlink(missing_ok=True)
        partial.unlink(missing_ok=True)


def _unreachable(url: str) -> str | None:
    """Why the site does not answer a HEAD request within PROBE_SECONDS, or None if it does.

    The probe runs in a daemon thread, so even a stalled name lookup cannot keep the caller waiting.
    """
    answer: list[str | None] = []

    def probe() -> None:
        try:
            status = requests.head(url, timeout=PROBE_SECONDS, allow_redirects=True).status_code
            answer.append(None if status < 400 else f"it answered HTTP {status}")
        except Exception as exc:  # every network failure means "not reachable"
            answer.append(type(exc).__name__)

    worker = threading.Thread(target=probe, daemon=True)
    worker.start()
    worker.join(PROBE_SECONDS)
    return answer[0] if answer else f"no answer within {PROBE_SECONDS:g} s"


def read_person_columns(source: str | os.PathLike | bytes, label: str) -> pd.DataFrame:
    """The ten needed columns of a PUMS person CSV (a path or its bytes), as float64 (NaN = missing).

    Declaring the ten columns float64 lets pyarrow skip type inference and the other ~280
    columns: about a third of the memory and half the time of letting it infer.
    """
    header = _pums_header(source, label)
    options = pa_csv.ConvertOptions(include_columns=list(COLUMNS), column_types=dict.fromkeys(COLUMNS, pa.float64()))
    try:
        table = pa_csv.read_csv(_open(source), convert_options=options)
    except pa.ArrowInvalid as exc:
        raise _explain(str(exc), source, header, label) from None
    return table.to_pandas()


def census_people(source: str | os.PathLike | bytes, label: str) -> tuple[tuple[str, ...], int, str]:
    """Whose records a PUMS person file holds, from its ST and SERIALNO columns: (states, year, horizon).

    The ledger charges people, not files: the persons of California's 2018 survey are the same whether they arrive
    through the census folder, this file, or the same file with a trailing newline or a renamed column. SERIALNO
    begins with the survey year of the record: one year is a 1-Year file, several a 5-Year file ending in the last.
    A file without those columns, or with values that name no state or year, is refused: nobody could tell whose
    budget it spends.
    """
    header = _pums_header(source, label)
    why = (f"{label} cannot be charged to its people: an ACS PUMS person file names them by its ST (state) and "
           "SERIALNO (survey year) columns")
    if "ST" not in header or "SERIALNO" not in header:
        raise DataError(f"{why}, and one of them is missing; use the file as the Census Bureau publishes it",
                        "pums")
    options = pa_csv.ConvertOptions(include_columns=["ST", "SERIALNO"],
                                    column_types={"ST": pa.string(), "SERIALNO": pa.string()})
    try:
        table = pa_csv.read_csv(_open(source), convert_options=options)
    except pa.ArrowInvalid:
        raise DataError(f"{why}, which could not be read", "pums") from None
    by_code = {int(code): state for state, code in fk_load._STATE_CODES.items()}
    try:
        states = {by_code[int(float(code))] for code in set(table.column("ST").to_pylist())}
        years = {int(str(serial)[:4]) for serial in set(table.column("SERIALNO").to_pylist())}
    except (KeyError, ValueError, TypeError):
        raise DataError(f"{why}, and some of their values name no state or survey year", "pums") from None
    if not states or not years or min(years) < 2000:
        raise DataError(f"{why}, and they name no state or survey year", "pums")
    return tuple(sorted(states)), max(years), "1-Year" if len(years) == 1 else "5-Year"


def _pums_header(source: str | os.PathLike | bytes, label: str) -> list[str]:
    """The header of a PUMS person CSV, refused unless it has every column the income problem reads."""
    header = _header(source, label)
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise DataError(
            f"{label} is not an ACS PUMS person file: the column(s) {', '.join(missing)} are missing "
            f"(needed: {', '.join(COLUMNS)})"
        )
    return header


def _open(source: str | os.PathLike | bytes) -> str | io.BytesIO:
    return io.BytesIO(source) if isinstance(source, bytes) else str(source)


def _explain(message: str, source: str | os.PathLike | bytes, header: list[str], label: str) -> DataError:
    """Name the column, the row and the value behind pyarrow's terse conversion error."""
    found = re.search(r"column #(\d+): CSV conversion error to double: invalid value '(.*)'", message)
    # Neither the value nor pyarrow's message (which can quote a whole row) is repeated: an error message
    # must not publish a cell of the data.
    if not found:
        shape = re.search(r"Expected \d+ columns, got \d+", message)
        detail = f" ({shape.group(0)} in a row)" if shape else " (a malformed row or quote)"
        return DataError(f"{label} could not be parsed as CSV{detail}; is this an unmodified PUMS person file?")
    name, value = header[int(found.group(1))], found.group(2)
    cells = pd.read_csv(_open(source), usecols=[name], dtype=str, keep_default_na=False)[name]
    row = int(np.argmax(cells.to_numpy() == value)) + 1
    return DataError(
        f"{label}: column {name} must be numeric but holds a non-numeric value (data row {row}); "
        "is this an unmodified PUMS person file?"
    )


def _header(source: str | os.PathLike | bytes, label: str) -> list[str]:
    """The column names on the first line."""
    if isinstance(source, bytes):
        first = source.split(b"\n", 1)[0]
    else:
        if not Path(source).is_file():
            raise DataError(f"file not found: {source}")
        with open(source, "rb") as f:
            first = f.readline()
    try:
        names = next(csv.reader([first.decode("utf-8-sig").strip()]), [])
    except UnicodeDecodeError:
        raise DataError(f"{label} is not a text CSV file") from None
    if not any(n.strip() for n in names):
        raise DataError(f"{label} is empty; expected an ACS PUMS person CSV with a header line")
    return [n.strip() for n in names]


def encode_acs_income(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """ACSIncome's filter, then the 17 features of docs/method.md §10 and y = +1 iff PINCP > 40000."""
    df = fk_acs.adult_filter(frame)
    col = {c: df[c].to_numpy(dtype=np.float64) for c in COLUMNS}
    return encode_features(col), np.where(col["PINCP"] > 40000, 1.0, -1.0)


def encode_features(col: dict[str, np.ndarray]) -> np.ndarray:
    """The 17 features of docs/method.md §10 from float columns (NaN = missing) of filtered records."""
    n = col["AGEP"].shape[0]
    X = np.zeros((n, len(FEATURE_NAMES)))
    X[:, 0] = 1.0
    X[:, 1] = (col["AGEP"] >= 18) & (col["AGEP"] <= 60)
    X[:, 2] = 2.0 * (col["WKHP"] - 1.0) / 98.0 - 1.0
    schl = col["SCHL"]
    X[:, 3] = np.where(np.isnan(schl), -1.0, 2.0 * (schl - 1.0) / 23.0 - 1.0)
    X[:, 4] = col["RAC1P"] == 1
    occp = col["OCCP"]  # NaN compares false: missing OCCP falls in no group
    for k, (lo, hi) in enumerate(OCCUPATION_RANGES):
        X[:, 5 + k] = (occp >= lo) & (occp <= hi)
    X[:, 12] = col["MAR"] == 1
    X[:, 13] = col["SEX"] == 2
    cow = col["COW"]
    X[:, 14] = np.isin(cow, (3, 4, 5))
    X[:, 15] = np.isin(cow, (6, 7))
    X[:, 16] = np.isin(cow, (8, 9)) | np.isnan(cow)
    return X


def _cache_path(root: Path, state: str, year: int, horizon: str) -> Path:
    return root / "processed" / f"acs_income_{year}_{horizon}_{state}.npz"


def load_state(root: str | os.PathLike, state: str, year: int = 2018, horizon: str = "1-Year",
               download: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One state's encoded population, from the processed cache when the census file is unchanged. Never from the
    SYNTHETIC samples' folder: anyone who can write there could plant a file or a cache, so a sample's files are read
    only through core.data.census_sample, which checks their content."""
    root = Path(root)
    if in_sample_root(root):
        raise DataError(f"{root} holds SYNTHETIC census samples, read only as such, after a check of their content: "
                        "name the folder of the census files with {acs_root}, or use the SYNTHETIC sample as such "
                        "({census_sample})", "acs_root")
    path = ensure_census_file(root, state, year, horizon, download)
    stat = path.stat()
    stamp = np.array([stat.st_size, stat.st_mtime_ns], dtype=np.int64)
    cache = _cache_path(root, state, year, horizon)
    if cache.is_file():
        with np.load(cache) as saved:
            if np.array_equal(saved["stamp"], stamp):
                return saved["X"], saved["y"]
    X, y = encode_acs_income(read_person_columns(path, str(path)))
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp.npz")  # concurrent loaders never share it
    np.savez(tmp, X=X, y=y, stamp=stamp)
    tmp.replace(cache)  # atomic: a reader never sees half a cache
    return X, y


def sample_population(
    X: np.ndarray, y: np.ndarray, n: int | None, seed: int | None, with_replacement: bool = False
) -> tuple[np.ndarray, np.ndarray, int]:
    """n records drawn (seeded) from the population, and k, the most rows any one person fills.

    Without replacement (the default) every person fills at most one row, so k = 1, and n may not
    exceed the population size N. With replacement n is unrestricted and k is the largest
    multiplicity among the drawn indices. n None gives the whole population (k = 1).

    The draw, and so k, depends only on the seed, N and n, never on the records' values; N is
    treated as public here, like n.
    """
    if n is None:
        return X, y, 1
    if isinstance(n, bool) or not (isinstance(n, (int, np.integer)) and n > 0):
        raise DataError(f"the sample size n must be a positive integer, got {n}")
    N = int(X.shape[0])
    rng = np.random.default_rng(seed)
    if not with_replacement:
        if n > N:
            raise DataError(
                f"the population has {N} people after ACSIncome's filter (N is treated as public here, like n), "
                f"so a sample of n = {n} cannot give one row per person: choose n at most {N}, or ask explicitly "
                "to draw with replacement ({with_replacement}), with which a person may fill several rows and "
                "the guarantee holds per person only by group privacy",
                setting="with_replacement",
            )
        idx = rng.choice(N, size=int(n), replace=False)
        return X[idx], y[idx], 1
    idx = rng.integers(0, N, size=int(n))
    return X[idx], y[idx], int(np.bincount(idx).max())


def _drawn(n: int, seed: int | None, with_replacement: bool, k: int) -> str:
    """How the sample was drawn, for a data set's source line."""
    if not with_replacement:
        return f"a sample of {n} drawn without replacement ({seed_words(seed)})"
    return f"a sample of {n} drawn with replacement ({seed_words(seed)}; up to {k} rows per person)"


def load_acs_income(
    states: list[str] | tuple[str, ...],
    year: int = 2018,
    horizon: str = "1-Year",
    root: str | os.PathLike | None = None,
    n: int | None = None,
    sample_seed: int | None = None,
    download: bool = False,
    with_replacement: bool = False,
    read_state: Callable[[str], tuple[np.ndarray, np.ndarray]] | None = None,
) -> Dataset:
    """The paper's income problem for the chosen states: the population, or a seeded sample of n.

    The sample is drawn without replacement unless with_replacement is set; the Dataset's
    privacy_unit is PrivacyUnit("person", k), k the most rows one person fills. read_state gives a state's encoded
    population (default: `load_state` from root); a SYNTHETIC sample's is `core.data.census_sample.load_state`.
    """
    if not states:
        raise DataError("name at least one state with {state}, e.g. CA", setting="state")
    root = Path(root) if root is not None else default_root()
    read = read_state or (lambda s: load_state(root, s, year, horizon, download))
    parts = [read(s) for s in states]
    X = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
    y = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
    if X.shape[0] == 0:
        raise DataError(f"no person record of {', '.join(states)} passes ACSIncome's filter")
    Xs, ys, k = sample_population(X, y, n, sample_seed, with_replacement)
    drawn = "the whole population" if n is None else _drawn(n, sample_seed, with_replacement, k)
    source = f"ACS {year} {horizon} income, {'+'.join(states)}: {drawn}"
    return Dataset(X=Xs, y=ys, feature_names=FEATURE_NAMES, source=source, privacy_unit=PrivacyUnit("person", k),
                   counts={"filtered_records": int(X.shape[0])})


def read_pums(source: str | os.PathLike | bytes, name: str | None = None, n: int | None = None,
              sample_seed: int | None = None, with_replacement: bool = False) -> Dataset:
    """A person's own PUMS person CSV (a path, or the bytes of an upload), encoded the same way.

    Its records, or a seeded sample of n drawn as in `sample_population`, are census persons:
    the Dataset's privacy_unit is PrivacyUnit("person", k).
    """
    label = name or (str(source) if not isinstance(source, bytes) else "the uploaded file")
    X, y = encode_acs_income(read_person_columns(source, label))
    if X.shape[0] == 0:
        raise DataError(f"no person record of {label} passes ACSIncome's filter")
    Xs, ys, k = sample_population(X, y, n, sample_seed, with_replacement)
    source = f"PUMS file {label}"
    if n is not None:
        source += f": {_drawn(n, sample_seed, with_replacement, k)}"
    return Dataset(X=Xs, y=ys, feature_names=FEATURE_NAMES, source=source, privacy_unit=PrivacyUnit("person", k),
                   counts={"filtered_records": int(X.shape[0])})
