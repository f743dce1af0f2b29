"""Which data and which model the settings name, loaded and fitted once.

Which data and which model are core's identity objects (`core.data.spec`, `core.estimator.model`), built from the
settings by `data_spec()` and `model_spec()`: they are the only keys of the data and fit caches, of the ledger (by
`population()`, the people in the data) and of every staleness check. Synthetic and census data and their fits are
cached per server on those keys (public settings name them); an upload's, in its own session only.

Loading census data may write or fetch files on the server (a SYNTHETIC sample's, a census download): whether this
browser may is one rule, `write_refusal()`, which every caller asks (loading, from any page or link, and the Data
page's buttons). In a publish-only deployment a reader may not, a link never names a server folder, and no error names
a server path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data import Dataset
from core.data.folder import BLOCK_ROWS, FolderData, Part, SourceData, open_folder
from core.data.formula import Codebook
from core.data.spec import (
    AcsSpec,
    CsvSpec,
    DataSpec,
    FolderSpec,
    PumsSpec,
    SyntheticCensusSpec,
    SyntheticSpec,
    data_loss,
    file_spec,
)
from core.errors import DataError, InputError, PspError
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem
from core.mechanisms.fallback import falls_back
from core.mechanisms.pipeline import prepare_spec
from core.privacy.population import Population
from ui import keys
from ui.labels import control
from ui.params import AUTO_LOSS, deployment_folders, deployment_scheduler, get, locked

UNKEYED = ("Whether anything was published on the people of these files is not known on this server yet: a "
           "curator's folder's rows are keyed here only for a signed-in analyst, since keying writes files on the "
           "server. The Report lists everything published, by folder name.")
WRITES_REFUSED = ("Only a signed-in analyst or the data's curator can write files on this server (make a SYNTHETIC "
                  "census sample, download census files, run an experiment's preset, key a curator's folder's "
                  "people); sign in with the sidebar's Analyst access key, or ask the curator.")


@dataclass(frozen=True)
class Upload:
    """An uploaded file: its name, its bytes and the spec naming it (the digest is computed once)."""

    name: str = field(compare=False)
    content: bytes = field(repr=False, compare=False)
    spec: CsvSpec | PumsSpec

    @classmethod
    def of(cls, name: str, content: bytes) -> Upload:
        return cls(name, content, file_spec(name, content))

    @property
    def is_pums(self) -> bool:
        """Whether the file is an ACS PUMS person file (core.data.spec decided it from the header)."""
        return isinstance(self.spec, PumsSpec)


def follow_the_data() -> None:
    """The domain follows the data when they change (a new session's link, the Data page's source, an upload): the
    data spec's default_domain (core.data.spec: the ball of the census encoding's public radius, else the cube), with
    the radius that goes with it. A link's domain, or a later choice in the Pipeline, overrides it."""
    try:
        domain = data_spec().default_domain
    except PspError:  # no file uploaded yet: nothing to follow
        return
    st.session_state["domain"], st.session_state["radius"] = domain, None


def data_spec() -> DataSpec:
    """Which data the settings name (core.data.spec): the only key of the data cache, the ledger and staleness."""
    source = get("source")
    if source.startswith("synthetic"):
        return SyntheticSpec(source.removeprefix("synthetic_"), get("n"), get("d"), get("theta_norm"),
                             get("noise_scale"), get("sample_seed"))
    if source == "acs" and get("census_sample") is not None:
        return SyntheticCensusSpec(get("states"), get("year"), get("horizon"), get("census_sample"), get("acs_n"),
                                   get("sample_seed"), get("with_replacement"), get("encoding"))
    if source == "acs":  # a publish-only deployment reads its curator's census folder only (core.data.acs.default_root)
        root = None if locked() else get("acs_root") or None
        return AcsSpec(get("states"), get("year"), get("horizon"), root, get("acs_n"), get("sample_seed"),
                       get("download"), get("with_replacement"), get("encoding"))
    if source == "folder":
        return folder_spec()
    upload = keys.UPLOAD.get()
    if upload is None:
        raise DataError("no file uploaded yet: choose a data file on the Data page")
    if isinstance(upload.spec, CsvSpec):
        formula = get("formula").strip()
        if not formula:
            return replace(upload.spec, response=get("response"))
        book = keys.CODEBOOK.get()
        if book is None:
            raise InputError("a formula needs the codebook of its variables' public ranges and levels: choose one "
                             "under “Codebook (CSV)”, or clear {formula}", "formula")
        return replace(upload.spec, response="y", formula=formula, codebook=Codebook.from_csv(book[1], book[0]))
    return replace(upload.spec, encoding=get("encoding"))


def folder_spec() -> FolderSpec:
    """The curator's folder the settings name, by the name the deployment gives it (a link never names a location),
    read on the deployment's scheduler."""
    folders = deployment_folders()
    if not folders:
        raise DataError("this server offers no curator's folder: choose another source on the Data page")
    name = get("folder") or next(iter(folders))
    if name not in folders:
        raise InputError("choose one of this server's folders with {folder}", "folder")
    return FolderSpec(folders[name], get("response"), None, BLOCK_ROWS, deployment_scheduler(), name)


def loss_name() -> str:
    """The loss the source fixes (synthetic, census), else the one chosen for an uploaded file, or, left to the label
    (AUTO_LOSS), the one its label implies (core.data.spec.infer_loss: two values, logistic)."""
    return loss_and_notice()[0]


def loss_and_notice() -> tuple[str, str | None]:
    """loss_name and, where the label chose it, the sentence that says so (None otherwise)."""
    chosen = get("upload_loss")
    try:
        spec = data_spec()
        if spec.fixed_loss:
            return spec.fixed_loss, None
        if chosen != AUTO_LOSS:
            return chosen, None
        return data_loss(spec, dataset(), None, control)
    except PspError:  # no file, or one that cannot be read: loading it says why
        return ("logistic" if chosen == AUTO_LOSS else chosen), None


def model_spec() -> ModelSpec:
    """Which model the settings name (core.estimator.model), resolved on the loaded data (the ball's radius sqrt(d))."""
    domain = get("domain")
    model = ModelSpec(loss_name(), domain, get("radius") if domain == "ball" else None, get("lam_reg"),
                      get("response_bound"))
    return model.resolve(dataset().d, data_spec().public_radius)


@st.cache_resource(max_entries=3, show_spinner="Loading the data…")
def _load(spec: DataSpec) -> Dataset:
    """Synthetic and census data, shared by every session (public settings name them); never an upload."""
    return spec.load()


def _session_cached(key: tuple, make: Callable[[], Any]) -> Any:
    """An uploaded file's data and fits live in its own session: never in a process-wide cache that another
    session could read or evict. One upload at a time is kept."""
    kept = keys.UPLOADED.setdefault({})
    if key not in kept:
        if key[0] != next(iter(kept), (None,))[0]:
            kept.clear()  # another file: drop the old one's data
        kept[key] = make()
    return kept[key]


def dataset() -> SourceData:
    """The loaded data set (cached on its spec); raises InputError with the library's message. Files are written or
    fetched only for a browser the rule lets (write_refusal). A curator's folder is opened, not loaded: its files
    are read again, with its fit, when one has changed since."""
    spec = data_spec()
    upload = keys.UPLOAD.get()
    if upload is not None and isinstance(spec, CsvSpec | PumsSpec) and spec.digest == upload.spec.digest:
        return _session_cached((spec, None), lambda: spec.load(upload.content))  # any label column of the upload
    check_writes(spec)
    try:
        fetch_files(spec)
        data = _load(spec)
        if isinstance(data, FolderData) and not data.folder.unchanged():
            _load.clear()
            _prepare.clear()
            data = _load(spec)
        return data
    except OSError as exc:  # a file system's error, in words (ui.labels.message keeps a server path off the page)
        raise DataError(f"the data could not be read: {exc}") from None


@st.cache_resource(max_entries=8, ttl=300, show_spinner=False)
def _columns(root: str) -> tuple[str, ...]:
    folder = open_folder(root, None)
    return (*folder.features, folder.response)


def folder_columns() -> list[str]:
    """The columns of the curator's folder the settings name, for choosing its label (read again after 5 minutes)."""
    return list(_columns(folder_spec().root))


_KEYED: dict[tuple[FolderSpec, tuple[Part, ...]], Population] = {}  # per server: a folder's people, by its files
_KEYING = threading.Lock()


def people() -> Population:
    """Whose budget a release from the settings' data spends (core.data.spec: `population()`). A curator's folder's key
    is formed by reading every row twice through scratch files on this server, so only a browser the write rule lets
    (write_refusal) forms it; once formed it is kept per server for these files, for every browser."""
    files = _folder_files()
    if files is None:
        return data_spec().population()
    spec = files[0]
    if files not in _KEYED:
        why = write_refusal()
        if why is not None:
            raise DataError(why)
        with _KEYING, st.spinner("Keying the folder's rows, whose budget a release spends (once for these files)…"):
            if files not in _KEYED:
                _KEYED.clear()  # one folder's key at a time: another's, or older files', is formed again if asked
                _KEYED[files] = spec.population()
    return _KEYED[files]


def unkeyed() -> bool:
    """Whether the loaded data's people cannot be named on this server for this browser: a curator's folder not keyed
    here (for these files), which this browser may not key (`people` refuses it). What was published on them is then
    unknown here, never none."""
    files = _folder_files()
    return files is not None and files not in _KEYED and write_refusal() is not None


def _folder_files() -> tuple[FolderSpec, tuple[Part, ...]] | None:
    """A curator's folder's spec and its files as loaded, which its key is kept by (_KEYED); None for other data."""
    spec = data_spec()
    data = dataset() if isinstance(spec, FolderSpec) else None
    return (spec, data.folder.parts) if isinstance(data, FolderData) else None


def write_refusal() -> str | None:
    """Why this browser may not write or fetch files on this server (make a SYNTHETIC census sample, download census
    files, run an experiment's preset), or None: the one rule. Anyone may outside a publish-only deployment; in one,
    only whoever may spend (a signed-in analyst: there the server's own browser is a reader too), and the curator
    from the command line."""
    if not locked():
        return None
    from ui import access  # here, not above: ui.access imports ui.release, which imports this module

    if keys.ANALYST.get() is None and not (access.identity_provider() and st.user.is_logged_in):
        return WRITES_REFUSED  # nobody signed in: a reader, told so without opening (or creating) the ledger

    try:
        return None if access.spend_refusal() is None else WRITES_REFUSED
    except PspError:  # an unusable ledger cannot tell who this is: nobody writes
        return WRITES_REFUSED


def missing_files(spec: DataSpec) -> list[str]:
    """The states whose file a census spec reads and this server does not have yet (a SYNTHETIC sample's, or census
    files); [] for other data. DataError for a state, year or horizon the census does not have."""
    from core.data import acs, census_sample  # folktables loads only for census data

    if isinstance(spec, SyntheticCensusSpec):
        return census_sample.missing(spec.states, spec.year, spec.horizon, spec.rows)
    if isinstance(spec, AcsSpec):
        root = spec.census_root()
        return [s for s in spec.states if not acs.census_path(root, s, spec.year, spec.horizon).is_file()]
    return []


def check_writes(spec: DataSpec) -> None:
    """DataError, before anything is written or fetched, when loading spec would make or download files this browser
    may not (write_refusal); in a publish-only deployment, missing census files are named without their path."""
    if not isinstance(spec, SyntheticCensusSpec | AcsSpec):
        return
    missing = missing_files(spec)
    if not missing:
        return
    why = write_refusal()
    if why is not None:
        raise DataError(why)
    if isinstance(spec, AcsSpec) and not spec.download and locked():
        raise DataError(f"The census files of {', '.join(missing)} (ACS {spec.year} {spec.horizon}) are not on this "
                        "server yet: download them with {download}, or make a SYNTHETIC census sample "
                        "({census_sample}).", "download")


class ProgressBar:
    """A progress bar in a container (the page's by default), drawn at its first report: work already done (a file
    that is there) draws none."""

    def __init__(self, where: DeltaGenerator | None = None) -> None:
        self.where, self.bar = where, None

    @property
    def drawn(self) -> bool:
        return self.bar is not None

    def __call__(self, share: float, text: str) -> None:
        if self.bar is None:
            self.bar = (self.where or st).progress(0.0)
        self.bar.progress(min(max(share, 0.0), 1.0), text=text)

    def empty(self) -> None:
        if self.bar is not None:
            self.bar.empty()


def fetch_files(spec: DataSpec) -> None:
    """The census files a load needs that are not there yet, under a progress bar removed when they are: a SYNTHETIC
    sample's written, census files downloaded (when downloads are allowed) with the megabytes as they arrive. Whoever
    loads first (the sidebar, on any page) shows it; the cached load then reads the files."""
    bar = ProgressBar()
    try:
        if isinstance(spec, SyntheticCensusSpec):
            make_sample(spec, bar)
        elif isinstance(spec, AcsSpec) and spec.download:
            spec.fetch(lambda state, done, total: bar(done / total if total else 0.0, downloaded(state, done, total)))
    finally:
        bar.empty()


def make_sample(spec: SyntheticCensusSpec, bar: ProgressBar) -> None:
    """The SYNTHETIC sample's missing files written, the share written shown on bar (nothing missing: no bar)."""
    spec.make(lambda share: bar(share, f"Making {sample_words(spec)}: {share:.0%}"))


def sample_words(spec: SyntheticCensusSpec) -> str:
    return f"the SYNTHETIC census sample of {', '.join(spec.states) or 'no state'} ({spec.rows:,} records per state)"


def downloaded(state: str, done: int, total: int | None) -> str:
    """A download's progress in words: megabytes so far, of the total when the site gave it."""
    of = "" if total is None else f" of {total / 1e6:.1f}"
    return f"Downloading the census file of {state}: {done / 1e6:.1f}{of} MB"


@st.cache_resource(max_entries=3, show_spinner="Fitting θ(Pₙ) (stage 0)…")
def _prepare(spec: DataSpec, model: ModelSpec, _data: Dataset) -> Problem:
    return prepare_spec(_data, model, spec)


def problem() -> Problem:
    """The prepared problem (validated, projected, fitted): cached on the data and model specs only."""
    spec, model, data = data_spec(), model_spec(), dataset()
    if isinstance(spec, (CsvSpec, PumsSpec)):
        return _session_cached((spec, model), lambda: prepare_spec(data, model, spec))
    return _prepare(spec, model, data)




def fallback() -> bool:
    """Whether a failed test (14) falls back to objective perturbation (core.mechanisms.fallback.falls_back: "auto" for
    logistic data, as on the command line)."""
    return falls_back(get("fallback"), loss_name())
