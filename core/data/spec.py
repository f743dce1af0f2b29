"""Which data: one frozen, hashable spec per source, the one place that knows how to load each.

- `SyntheticSpec`: the paper's simulation (section 4.1), robust or logistic;
- `AcsSpec`: ACS income from the census person files of some states (section 4.2);
- `SyntheticCensusSpec`: the same problem on a SYNTHETIC census sample (core.data.census_sample): made-up
  records in the census layout, described and keyed as such, never as census data;
- `CsvSpec`: a user's file of rows with a `y` column, by the SHA-256 digest of its bytes: a CSV, or a Parquet,
  Stata, SPSS or SAS file (core.data.formats; its format is its name's extension); or the columns of a formula over
  it and the codebook of their public ranges and levels (core.data.formula);
- `PumsSpec`: an ACS PUMS person file of one's own, by the digest of its bytes.

Each spec has `load()` (the data set), `describe()` (the source and its settings in words,
public: nothing counted on the data, no file contents, no digest), `population()` (who is in the
data: what a privacy ledger is keyed on, `core.privacy.population`) and `fixed_loss` (the loss the source
fixes, or None when the user chooses it). The command line (`core.cli`) and the app build specs
and call these; nothing else dispatches on the kind of source.

A file's spec holds its digest and display name, never its bytes: the bytes of an upload are
passed to `load(content)`, a file named on the command line is read again by `load()`, and either
way the digest is checked, so the data loaded are the population the spec names.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial
from pathlib import Path, PurePosixPath
from typing import TypeAlias

import numpy as np

from core.data.csvfile import canonical, table_dataset
from core.data.dataset import Dataset
from core.data.encoding import ENCODING_WORDS, LIBRARY_ENCODING, RADII, check_encoding, encode, feature_names
from core.data.folder import BLOCK_ROWS, Folder, FolderData, Part, SourceData, open_folder, shown_root
from core.data.folder_key import key_of
from core.data.formats import CSV, format_of, read_dataset, read_table
from core.data.formula import Codebook, apply_formula, model_of
from core.data.passes import binary_labels, response_values
from core.data.rows import check_key, earlier_key, rows_key
from core.data.synthetic import MAX_ROWS, synthetic
from core.errors import DataError, InputError, check_seed, flag
from core.privacy.population import Population, seed_words

_LOG = logging.getLogger(__name__)
SYNTHETIC_N = 100_000  # rows drawn when no n is given
INCOME_TASK = "ACSIncome's filter, y = +1 when income > $40,000"
# What a SYNTHETIC census sample is, in the words every description, report and ledger entry of it begins with.
SYNTHETIC_CENSUS = "SYNTHETIC census-like data (no real person)"
# Records per state of a SYNTHETIC census sample: by default a few seconds to make (a state's full census size, up
# to about 380,000 records for California, takes about a minute); at least enough for ACSIncome's filter to leave
# a fit of 17 features a few hundred rows, at most about the largest state's census file.
SAMPLE_ROWS = 50_000
MIN_SAMPLE_ROWS = 1_000
MAX_SAMPLE_ROWS = 500_000


def _check_sample(n: object, seed: object) -> None:
    """A census sample: n None (everyone) or an integer from 1 to MAX_ROWS (checked before any row is drawn)."""
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ROWS):
        raise DataError(f"the sample size n must be an integer from 1 to {MAX_ROWS:,}, got {n!r}")
    check_seed(seed, "the sample seed")


def _drawn(n: int | None, seed: int | None, with_replacement: bool) -> str:
    """How the rows were drawn from the population, from the settings alone."""
    if n is None:
        return "all filtered records"
    if with_replacement:
        return f"a sample of {n} drawn with replacement ({seed_words(seed)}; a person may fill several rows)"
    return f"a sample of {n} drawn without replacement ({seed_words(seed)})"


@dataclass(frozen=True)
class SyntheticSpec:
    """The paper's simulation: theta* of norm theta_norm, x ~ Uni[-1, 1]^d, robust or logistic responses.

    The generator's settings are public and its rows are their own population, so every field,
    n and the seed included, is part of the identity.

    >>> spec = SyntheticSpec("robust", n=1000, d=3, sample_seed=7)
    >>> data = spec.load()
    >>> data.X.shape, data.feature_names
    ((1000, 3), ('x0', 'x1', 'x2'))
    >>> bool((spec.load().y == data.y).all())  # seeded: every load draws the same rows
    True
    >>> SyntheticSpec("robust", n=10**12, d=3).load()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    core.errors.DataError: synthetic data needs integers n > d >= 1 with d <= 200 and n <= 10,000,000, got n = 1000...
    """

    loss: str = "robust"
    n: int = SYNTHETIC_N
    d: int = 5
    theta_norm: float = 1.0
    noise_scale: float = 1.0
    sample_seed: int | None = 0

    @property
    def fixed_loss(self) -> str:
        """Synthetic data are drawn for one loss and fitted with it."""
        return self.loss

    @property
    def public_radius(self) -> None:
        """No bound on ||x||_2 beyond the cube's: the ball's default radius is sqrt(d)."""
        return None

    default_domain = "cube"

    def load(self) -> Dataset:
        data = synthetic(self.n, self.d, self.loss, self.theta_norm, self.noise_scale, self.sample_seed)
        return replace(data, source=self.describe())

    def describe(self) -> str:
        noise = f", Laplace noise of scale {self.noise_scale:g}" if self.loss == "robust" else ""
        return (f"synthetic {self.loss} data (section 4.1 of the paper): n = {self.n}, d = {self.d}, "
                f"x ~ Uni[−1, 1]ᵈ, ‖θ*‖₂ = {self.theta_norm:g}{noise}, {seed_words(self.sample_seed)}")

    def population(self) -> Population:
        return Population.synthetic(self.loss, self.n, self.d, self.theta_norm, self.noise_scale, self.sample_seed)


class _CensusIncome:
    """What every census source shares: the logistic income problem, its encoding (core.data.encoding) and that
    encoding's bound on ||x||_2, and the words a report uses for its outcome and its indicator features (public: they
    follow from the encoding). Each census spec has an `encoding` field: LIBRARY_ENCODING (the paper's) unless
    chosen; the app and the command line choose DEFAULT_ENCODING (centred) unless told."""

    outcome = "earning over $40,000"
    groups = {"female": ("women", "men"), "married": ("married people", "people who are not married"),
              "white": ("white people", "people of other races"),
              "working_age": ("people aged 18 to 60", "other people")}

    @property
    def fixed_loss(self) -> str:
        """Census income is the logistic problem of the paper's section 4.2."""
        return "logistic"

    encoding: str

    @property
    def public_radius(self) -> float:
        """Every row of the encoding has ||x||_2 at most this (core.data.encoding.RADII), a public fact."""
        return RADII[self.encoding]

    default_domain = "ball"  # the ball of the encoding's radius: tighter than the cube around it (r <= 3 < sqrt(17))

    def _encoded(self, data: Dataset) -> Dataset:
        """The paper's encoded rows under this spec's encoding, described by the spec."""
        return replace(data, X=encode(data.X, self.encoding), feature_names=feature_names(self.encoding),
                       source=self.describe())

    def _encoding_words(self) -> str:
        return ENCODING_WORDS[self.encoding]


@dataclass(frozen=True)
class AcsSpec(_CensusIncome):
    """ACS income for some states and one survey (year, horizon): the population, or a seeded sample of n.

    states are upper-cased, stripped and taken once each, in the order given (the order of the rows,
    and so of a seeded sample). root is the census folder (None: `core.data.acs.default_root()`);
    download lets missing files be fetched. Neither is part of the population, nor are n and the
    sample seed: they choose rows among the same people.
    """

    states: tuple[str, ...]
    year: int = 2018
    horizon: str = "1-Year"
    root: str | None = None
    n: int | None = None
    sample_seed: int | None = None
    download: bool = False
    with_replacement: bool = False
    encoding: str = LIBRARY_ENCODING

    def __post_init__(self) -> None:
        _check_survey(self)
        object.__setattr__(self, "root", None if self.root in (None, "") else os.fspath(self.root))
        _check_sample(self.n, self.sample_seed)
        check_encoding(self.encoding)

    def census_root(self) -> Path:
        """The census folder (root, or `core.data.acs.default_root()`), refused when it holds the SYNTHETIC samples:
        no census file is read from there, nor downloaded into it."""
        from core.data import acs  # folktables and pandas load only for census data

        root = acs.default_root() if self.root is None else Path(self.root)
        if acs.in_sample_root(root):
            raise DataError(f"{root} holds SYNTHETIC census samples, made-up records and no census file: name the "
                            "folder of the census files with {acs_root}, or use the SYNTHETIC sample as such "
                            "({census_sample})", "acs_root")
        return root

    def fetch(self, progress: Callable[[str, int, int | None], None] | None = None) -> None:
        """Download the states' missing census files, as load() would, telling progress (state, bytes so far, total
        bytes or None) as they arrive, so a screen can show a download of tens of megabytes; without download, the
        DataError load() gives."""
        from core.data import acs  # folktables and pandas load only for census data

        for state in self.states:
            told = None if progress is None else partial(progress, state)
            acs.ensure_census_file(self.census_root(), state, self.year, self.horizon, self.download, told)

    def load(self) -> Dataset:
        from core.data import acs  # folktables and pandas load only for census data

        data = acs.load_acs_income(self.states, self.year, self.horizon, self.census_root(), self.n,
                                   self.sample_seed, self.download, with_replacement=self.with_replacement)
        return self._encoded(data)

    def describe(self) -> str:
        states = ", ".join(self.states) or "no state"
        return (f"ACS {self.year} {self.horizon} person files of {states} (section 4.2 of the paper): "
                f"{INCOME_TASK}; {_drawn(self.n, self.sample_seed, self.with_replacement)}; {self._encoding_words()}")

    def population(self) -> Population:
        return Population.census(self.states, self.year, self.horizon)


def _check_survey(spec: AcsSpec | SyntheticCensusSpec) -> None:
    """A census spec's states upper-cased, stripped and taken once each, in the order given (the order of the rows,
    and so of a seeded sample); its year an integer."""
    names = spec.states.split(",") if isinstance(spec.states, str) else spec.states
    object.__setattr__(spec, "states", tuple(dict.fromkeys(s.strip().upper() for s in names if s.strip())))
    if isinstance(spec.year, bool) or not isinstance(spec.year, int):
        raise DataError(f"the survey year must be an integer such as 2018, got {spec.year!r}")


@dataclass(frozen=True)
class SyntheticCensusSpec(_CensusIncome):
    """The income problem on a SYNTHETIC census sample of some states: `rows` made-up records per state in the layout
    of the ACS (year, horizon) person files (core.data.census_sample), then all the filtered records or a sample of n.

    Its description begins with SYNTHETIC_CENSUS and its people are a population of their own
    (Population.census_sample), so nothing published on it can be read as census data, and no charge on it touches
    the budget of the real people of its states. States, n, the sample seed and drawing with replacement are as for
    AcsSpec; rows chooses the made-up population, so it is part of the identity.
    """

    outcome = "earning over $40,000 (in these SYNTHETIC, made-up records)"

    states: tuple[str, ...]
    year: int = 2018
    horizon: str = "1-Year"
    rows: int = SAMPLE_ROWS
    n: int | None = None
    sample_seed: int | None = None
    with_replacement: bool = False
    encoding: str = LIBRARY_ENCODING

    def __post_init__(self) -> None:
        _check_survey(self)
        check_encoding(self.encoding)
        rows = self.rows
        if isinstance(rows, bool) or not isinstance(rows, int) or not MIN_SAMPLE_ROWS <= rows <= MAX_SAMPLE_ROWS:
            raise DataError(f"a SYNTHETIC census sample has from {MIN_SAMPLE_ROWS:,} to {MAX_SAMPLE_ROWS:,} records "
                            f"per state, got {rows!r}; change {{census_sample}}", "census_sample")
        _check_sample(self.n, self.sample_seed)

    def make(self, progress: Callable[[float], None] | None = None) -> Path:
        """The sample's folder, every state's file written in it once (progress told the share written, if any file
        is): later calls, in any session, find the files and write nothing. A file there that does not hold what the
        generator writes for it is refused (DataError), never overwritten."""
        from core.data import census_sample  # the generator, folktables and pandas load only for census data

        return census_sample.make(self.states, self.year, self.horizon, self.rows, progress)

    def load(self) -> Dataset:
        """The sample made where missing, then each state's file read only if it holds what the generator writes for
        it (core.data.census_sample.read): any other file, whoever put it there, is refused before anything is
        charged."""
        from core.data import acs, census_sample  # folktables and pandas load only for census data

        read_state = partial(census_sample.load_state, year=self.year, horizon=self.horizon, rows=self.rows)
        return self._encoded(acs.load_acs_income(self.states, self.year, self.horizon, self.make(), self.n,
                                                 self.sample_seed, with_replacement=self.with_replacement,
                                                 read_state=read_state))

    def describe(self) -> str:
        states = ", ".join(self.states) or "no state"
        return (f"{SYNTHETIC_CENSUS}: {self.rows:,} made-up records per state in the layout of the ACS {self.year} "
                f"{self.horizon} person files of {states}, from a seeded generator; {INCOME_TASK}; "
                f"{_drawn(self.n, self.sample_seed, self.with_replacement)}; {self._encoding_words()}")

    def population(self) -> Population:
        return Population.census_sample(self.states, self.year, self.horizon, self.rows)


def digest(content: bytes) -> str:
    """The SHA-256 hex digest of a file's bytes: the identity of the rows in it."""
    if not isinstance(content, (bytes, bytearray, memoryview)):
        raise DataError(f"a file's content must be bytes, got {type(content).__name__}; read the file in binary mode")
    return hashlib.sha256(content).hexdigest()


def _read(path: str | os.PathLike, missing: str, setting: str | None = None) -> bytes:
    """A file's bytes; DataError(missing, setting) when there is no such file (setting: the control naming it)."""
    if not Path(path).is_file():
        raise DataError(missing, setting)
    return Path(path).read_bytes()


@dataclass(frozen=True)
class _FileSpec:
    """A file by its content: the digest (the identity) and a display name; path only says where to read it."""

    digest: str
    name: str
    path: str | None = field(default=None, compare=False, repr=False)

    def _content(self, content: bytes | None) -> bytes:
        """The file's bytes (given, or read from path), checked against the digest."""
        if content is None:
            if self.path is None:
                raise DataError(f"the content of {self.name} was not given; upload the file again")
            content = _read(self.path, f"file not found: {self.path}")
        if digest(content) != self.digest:
            raise DataError(f"{self.name} has changed since it was chosen; choose it again")
        return content


@dataclass(frozen=True)
class CsvSpec(_FileSpec):
    """A user's file of rows with a response column (`y` unless another is named), every other column a feature: a
    CSV, or any format of core.data.formats, by its name's extension (the class keeps its first format's name); the
    loss is the user's choice (fixed_loss None).

    With a formula and its codebook (core.data.formula) the features are the formula's encoded columns instead, and
    the response is its label. Both are part of the spec's identity, so a cache keyed on the spec tells two models of
    one file apart; the people (population) are still the file's rows as read, whatever the model."""

    # who the rows are: core.data.rows.rows_key of its canonical table ("" when it has none: it cannot be charged)
    key: str = ""
    response: str = "y"  # the label or response column; which one it is does not change who the rows are
    # the key its rows were charged under before the canonical form (core.data.rows.earlier_key)
    earlier: str = field(default="", repr=False)
    formula: str = ""  # a model such as "y ~ age + C(region)"; "" fits every other column as it is
    # the public range or levels of each variable the formula names (compared, so part of the identity; not shown)
    codebook: Codebook | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        """A formula is checked against its codebook before any row is read; its label is the response."""
        if not self.formula and self.codebook is None:
            return
        label = model_of(self.formula, self.codebook).label
        if self.response not in ("y", label):
            raise InputError(f"the formula names the label, {label}, left of ~; drop {{response}} or name {label} "
                             "there", "response")
        object.__setattr__(self, "response", label)

    @classmethod
    def from_bytes(cls, name: str, content: bytes, response: str = "y", formula: str = "",
                   codebook: Codebook | None = None) -> CsvSpec:
        """The spec of an upload; pass the same bytes to load()."""
        checked = digest(content)  # first: it refuses anything but bytes
        key, earlier = _keys(content, name)
        return cls(checked, name, None, key, response, earlier, formula, codebook)

    @classmethod
    def from_path(cls, path: str | os.PathLike, response: str = "y", formula: str = "",
                  codebook: Codebook | None = None) -> CsvSpec:
        """The spec of a file on disk (read once for its digest and key, again by load())."""
        content = _read(path, f"data file not found: {path}; check the path passed to {{data}}", setting="data")
        key, earlier = _keys(content, str(path))
        return cls(digest(content), str(path), os.fspath(path), key, response, earlier, formula, codebook)

    def population(self) -> Population:
        """The rows by their canonical key, whatever the writing (core.data.rows); DataError for a file with none."""
        if not self.key and self.formula:  # it loads under the formula, so loading it would not say why
            raise DataError(f"{self.name} cannot be charged: one of its columns has a missing cell or more than two "
                            "different words, so whose budget a release would spend is unknown; write each "
                            "categorical variable's levels as numbers, in the file and in the codebook", "data")
        return Population.file(check_key(self.key, self.name), self.name, self.earlier)

    @property
    def fixed_loss(self) -> None:
        return None

    @property
    def public_radius(self) -> None:
        """A user's CSV declares no bound on ||x||_2: the ball's default radius is sqrt(d)."""
        return None

    default_domain = "cube"  # with a formula, every row lies in it (core.data.formula)

    @property
    def format(self) -> str:
        """The file's format in words (CSV, Parquet, Stata, SPSS, SAS, SAS XPORT), by its name's extension."""
        return format_of(self.name) or "data"

    def load(self, content: bytes | None = None) -> Dataset:
        content = self._content(content)
        if not self.formula:
            return replace(read_dataset(content, self.name, self.response), source=self.describe())
        X, y, names, _ = apply_formula(read_table(content, self.name), self.formula, self.codebook, self.name)
        return Dataset(X=X, y=y, feature_names=names, source=self.describe())

    def describe(self) -> str:
        if self.formula:
            return (f"{self.format} file {self.name}, model {self.formula} (each numeric variable scaled to [−1, 1] "
                    "by its public range in the codebook)")
        column = "" if self.response == "y" else f", response column {self.response}"
        return f"{self.format} file {self.name}{column}"


@dataclass(frozen=True)
class PumsSpec(_CensusIncome, _FileSpec):
    """An ACS PUMS person file of one's own, encoded as the census data; a seeded sample of n if given."""

    n: int | None = None
    sample_seed: int | None = None
    with_replacement: bool = False
    people: tuple = ()  # (states, year, horizon) of its records (core.data.acs.census_people)
    encoding: str = LIBRARY_ENCODING

    def __post_init__(self) -> None:
        _check_sample(self.n, self.sample_seed)
        check_encoding(self.encoding)

    @classmethod
    def from_bytes(cls, name: str, content: bytes, **sample: int | bool | str | None) -> PumsSpec:
        """The spec of an upload (sample: n, sample_seed, with_replacement, encoding); pass the same bytes to
        load()."""
        return cls(digest(content), name, None, **sample, people=_people(content, name))

    @classmethod
    def from_path(cls, path: str | os.PathLike, **sample: int | bool | str | None) -> PumsSpec:
        """The spec of a file on disk (read once for its digest and its people, again by load())."""
        content = _read(path, f"file not found: {path}; check the path passed to {{pums}}", setting="pums")
        return cls(digest(content), str(path), os.fspath(path), **sample, people=_people(content, str(path)))

    def population(self) -> Population:
        """The census persons of its states and survey, whichever route loads them (not the file's bytes)."""
        if not self.people:
            raise DataError(f"{self.name} names no census persons (its ST and SERIALNO columns); load it for the "
                            "reason", "pums")
        return Population.census(*self.people)

    def load(self, content: bytes | None = None) -> Dataset:
        from core.data import acs  # folktables and pandas load only for census data

        content = self._content(content)
        data = acs.read_pums(content, self.name, self.n, self.sample_seed, self.with_replacement)
        if not self.people:  # nobody could tell whose budget it spends: the reason, as census_people gives it
            acs.census_people(content, self.name)
        return self._encoded(data)

    def describe(self) -> str:
        return (f"ACS PUMS person file {self.name}: {INCOME_TASK}; "
                f"{_drawn(self.n, self.sample_seed, self.with_replacement)}; {self._encoding_words()}")


@dataclass(frozen=True)
class FolderSpec:
    """A data set larger than memory: a folder of Parquet or CSV files read in blocks (core.data.folder,
    core.estimator.blocks), its response column and its features (None: every other column). block_rows and scheduler
    say how it is read, not what."""

    root: str
    response: str = "y"
    features: tuple[str, ...] | None = None
    block_rows: int = field(default=BLOCK_ROWS, compare=False)
    scheduler: str | None = field(default=None, compare=False)
    name: str | None = field(default=None, compare=False)  # a deployment's name for it: then no text shows root

    fixed_loss = None
    public_radius = None
    default_domain = "cube"

    @cached_property
    def keyed(self) -> tuple[str, tuple[Part, ...]]:
        """The key of every row of the folder, every column included: content_key's, formed in blocks
        (core.data.folder_key), so the same rows held as one file have the same key; and the files as they were when
        it was formed. Formed once per spec."""
        folder = open_folder(self.root, None, shown=self._words)
        return _folder_key(folder), folder.parts

    def population(self) -> Population:
        """The rows by their content key, whatever files hold them (core.data.folder_key)."""
        name = self.name or PurePosixPath(shown_root(self.root)).name or shown_root(self.root)
        return Population.file(check_key(self.keyed[0], name), name, holder="folder")

    def check_keyed(self, folder: Folder) -> None:
        """DataError unless the files a release opened (path, rows, size, time of change, a local file's identity) are
        those the key was formed from, and still are (Folder.unchanged): checked before the charge and again before a
        release is recorded, and every read between checks size and time, so the people charged are the rows released
        on."""
        if folder.parts != self.keyed[1] or not folder.unchanged():
            raise DataError(f"the files of {self._words} changed while they were read; nothing was charged or "
                            "released: leave them unchanged and run again")

    def load(self) -> FolderData:
        """The files opened and checked to agree (core.data.folder.open_folder), and one pass over the response for
        its distinct values (core.data.passes.response_values); the rows stay on disk."""
        folder = open_folder(self.root, self.response, self.features, self._words)
        return FolderData(folder, self.describe(), response_values(folder, self.block_rows, self.scheduler))

    @property
    def _words(self) -> str:
        return shown_root(self.root) if self.name is None else f"the curator's folder {self.name}"

    def describe(self) -> str:
        column = "" if self.response == "y" else f", response column {self.response}"
        where = f"the folder {shown_root(self.root)}" if self.name is None else f"the curator's folder “{self.name}”"
        return f"the files of {where}, read in blocks{column}"


FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")  # a name a link may carry


def curated_folders(setting: object) -> dict[str, str]:
    """The folders a deployment offers, by name (its setting `folders`: "name=location" entries separated by ";" or
    new lines, or a table of them), so that a user or a link chooses a name and never a location. Entries that do
    not parse are left out and logged by name only (a location may hold a credential)."""
    if isinstance(setting, Mapping):
        entries = [(str(k), v) for k, v in setting.items()]
    elif isinstance(setting, str):
        entries = [tuple(e.split("=", 1)) if "=" in e else (e, None) for e in re.split(r"[;\n]", setting) if e.strip()]
    else:
        entries = []
    folders = {}
    for name, location in entries:
        name = name.strip()
        if FOLDER_NAME.fullmatch(name) and isinstance(location, str) and location.strip():
            folders.setdefault(name, location.strip())
        else:
            _LOG.warning("a folder entry of the deployment setting folders is not name=location; it is left out: %r",
                         name[:40])
    return folders


@lru_cache(maxsize=4)
def _folder_key(folder: Folder) -> str:
    """A folder's key, formed once per process for the same files (path, rows, size, time of change, tag): forming
    it reads every row twice, and a release asks for its people again when it charges them."""
    return key_of(folder)


DataSpec: TypeAlias = SyntheticSpec | AcsSpec | SyntheticCensusSpec | CsvSpec | PumsSpec | FolderSpec


def _people(content: bytes, name: str) -> tuple:
    """core.data.acs.census_people, or () when the file does not name its people (load() then says why)."""
    from core.data import acs  # folktables and pandas load only for census data

    try:
        return acs.census_people(content, name)
    except DataError:
        return ()


def _keys(content: bytes, name: str) -> tuple[str, str]:
    """A file's people: the key of the canonical table of the Table its format's reader gives (core.data.rows,
    core.data.csvfile.canonical; "" when it has none), and, for a CSV, the key it was charged under before that form
    (no other format was charged then: ""), both from that one reading of the file."""
    csv = format_of(name) == CSV
    try:
        table = read_table(content, name)
    except DataError:  # unreadable, or another format than its name says: no rows to key
        return "", earlier_key(content, None) if csv else ""
    if not csv:
        return rows_key(canonical(table)), ""
    try:
        then = table_dataset(table, name, table.names[0])  # as keyed then: the first column as y
        numbers = np.column_stack([then.X, then.y])
    except DataError:
        numbers = None
    return rows_key(canonical(table)), earlier_key(content, numbers)


def is_pums(content: bytes) -> bool:
    """Whether a CSV's header names PINCP, the income column of an ACS PUMS person file."""
    header = content.split(b"\n", 1)[0].decode("utf-8-sig", "replace").strip()
    return "PINCP" in (h.strip().strip('"') for h in header.split(","))


def file_spec(name: str, content: bytes) -> CsvSpec | PumsSpec:
    """The spec of an uploaded file: a PUMS person file when it is a CSV whose header names PINCP, else a file of rows
    in the format its extension names (core.data.formats; load() refuses an extension no reader takes)."""
    pums = format_of(name) == CSV and is_pums(content)
    return (PumsSpec if pums else CsvSpec).from_bytes(name, content)


def model_loss(spec: DataSpec, chosen: str | None, default: str = "robust") -> str:
    """The loss to fit: the one the source fixes, else the user's choice (default when none).

    A choice that contradicts the source is an InputError (the census data are the logistic income
    problem; synthetic data are fitted with the loss they were drawn for).
    """
    fixed = spec.fixed_loss
    if fixed is None:
        return default if chosen is None else chosen
    if chosen is not None and chosen != fixed:
        census = isinstance(spec, _CensusIncome)
        why = ("census income is the logistic problem of the paper's section 4.2" if census
               else "synthetic data are fitted with the loss they were drawn for")
        raise InputError(f"these data fix the loss to {fixed} ({why}); drop {{loss}} or pass {{loss}} {fixed}",
                         setting="loss")
    return fixed


def data_loss(spec: DataSpec, data: SourceData, chosen: str | None,
              name: Callable[[str], str] = flag) -> tuple[str, str | None]:
    """infer_loss on the data's labels; a folder's (at most three distinct values) refuse a logistic choice over more
    than two values without claiming how many."""
    if isinstance(data, FolderData):
        binary_labels(data.labels, chosen, spec.response)
    return infer_loss(spec, data.labels, chosen, name)


def infer_loss(spec: DataSpec, y: np.ndarray, chosen: str | None,
               name: Callable[[str], str] = flag) -> tuple[str, str | None]:
    """The loss to fit and, when the label chose it, a notice that says so (name words the loss's control, as
    PspError.render does): the loss the source fixes or the user chose (model_loss), else, for a file's rows, logistic
    when its label takes exactly two values and robust otherwise. A logistic loss for a label of more than two values
    is a DataError that names the label."""
    if spec.fixed_loss is not None:
        return model_loss(spec, chosen), None
    label, values = spec.response, np.unique(y).size
    if chosen == "logistic" and values > 2:
        raise DataError(f"the label {label} takes {values} values, but the logistic loss needs binary labels; recode "
                        f"{label} into two values (such as 0 and 1) or pass {{loss}} robust", "loss")
    if chosen is not None:
        return chosen, None
    if values == 2:
        return "logistic", (f"the label {label} takes two values, so the loss is logistic; set {name('loss')} to "
                            "robust to change it")
    return "robust", None
