"""Which data and which model the settings name, loaded and fitted once.

Which data and which model are core's identity objects (`core.data.spec`, `core.estimator.model`), built from the
settings by `data_spec()` and `model_spec()`: they are the only keys of the data and fit caches, of the ledger (by
`population()`, the people in the data) and of every staleness check. Synthetic and census data and their fits are
cached per server on those keys (public settings name them); an upload's, in its own session only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.data import Dataset
from core.data.spec import AcsSpec, CsvSpec, DataSpec, PumsSpec, SyntheticCensusSpec, SyntheticSpec, file_spec
from core.errors import DataError, PspError
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem
from core.mechanisms.fallback import falls_back
from core.mechanisms.pipeline import prepare_spec
from ui import keys
from ui.params import get


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
    if source == "acs":
        return AcsSpec(get("states"), get("year"), get("horizon"), get("acs_root") or None, get("acs_n"),
                       get("sample_seed"), get("download"), get("with_replacement"), get("encoding"))
    upload = keys.UPLOAD.get()
    if upload is None:
        raise DataError("no file uploaded yet: choose a CSV on the Data page")
    if isinstance(upload.spec, CsvSpec):
        return replace(upload.spec, response=get("response"))
    return replace(upload.spec, encoding=get("encoding"))


def loss_name() -> str:
    """The loss the source fixes (synthetic, census), else the one chosen for an uploaded CSV."""
    try:
        return data_spec().fixed_loss or get("upload_loss")
    except PspError:
        return get("upload_loss")


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


def dataset() -> Dataset:
    """The loaded data set (cached on its spec); raises InputError with the library's message."""
    spec = data_spec()
    upload = keys.UPLOAD.get()
    if upload is not None and isinstance(spec, CsvSpec | PumsSpec) and spec.digest == upload.spec.digest:
        return _session_cached((spec, None), lambda: spec.load(upload.content))  # any label column of the upload
    fetch_files(spec)
    return _load(spec)


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
