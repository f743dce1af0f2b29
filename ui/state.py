"""Settings shared by every page: one registry, kept across pages and mirrored in the URL.

Every setting has a key, a default and a parser. `init()` runs first on every rerun: it fills
st.session_state from the URL's query parameters (or the defaults) and re-asserts the values so
that a page's widgets keep them when another page is shown. Widgets use the same keys. `sync_url()`
runs last and writes every non-default setting back into the URL, so a link reproduces the view.
The data set and the fit are cached on the data and model settings only; noise never is.

Two kinds of run are kept apart: a `PublishedRelease`, made only by `publish()` after it charged the
ledger (the Report shows nothing else), and the Pipeline's last teaching run, a `TeachingRun`, which
is never charged, may be seeded, and never reaches the Report.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

from core.accounting import Budget
from core.data import Dataset, synthetic
from core.data.csvfile import read_csv_bytes
from core.errors import BudgetError, DataError
from core.pipeline import PrivateRun, Problem, prepare

SOURCES = {
    "synthetic_robust": "Synthetic robust regression",
    "synthetic_logistic": "Synthetic logistic regression",
    "acs": "ACS income (census files)",
    "upload": "Upload a CSV",
}
MODES = {"teaching": "Teaching", "publish": "Publish"}


def _opt_int(text: str) -> int | None:
    return None if text in ("", "none") else int(text)


def _opt_float(text: str) -> float | None:
    return None if text in ("", "none") else float(text)


def _bool(text: str) -> bool:
    return text.lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class Param:
    default: Any
    parse: Callable[[str], Any]
    choices: tuple | None = None


PARAMS: dict[str, Param] = {
    # data
    "source": Param("synthetic_robust", str, tuple(SOURCES)),
    "n": Param(100_000, int),
    "d": Param(5, int),
    "theta_norm": Param(1.0, float),
    "noise_scale": Param(1.0, float),
    "sample_seed": Param(0, int),
    "states": Param("CA", str),
    "year": Param(2018, int),
    "horizon": Param("1-Year", str, ("1-Year", "5-Year")),
    "acs_root": Param("", str),
    "acs_n": Param(None, _opt_int),
    "download": Param(False, _bool),
    "with_replacement": Param(False, _bool),
    "upload_loss": Param("logistic", str, ("robust", "logistic")),
    # model
    "lam_reg": Param(0.0, float),
    "domain": Param("cube", str, ("cube", "ball")),
    "radius": Param(None, _opt_float),
    # privacy
    "epsilon": Param(4.0, float),
    "delta": Param(1e-6, float),
    "split_a": Param(1.0, float),
    "split_b": Param(1.0, float),
    "split_c": Param(1.0, float),
    "calibration": Param("paper", str, ("paper", "analytic")),
    "accounting": Param("basic", str, ("basic", "pld")),
    "coordinate": Param("", str),
    "direction": Param("", str),
    "level": Param(0.95, float),
    "noise_seed": Param(None, _opt_int),
    "mode": Param("teaching", str, tuple(MODES)),
    "cap_epsilon": Param(10.0, float),
    "cap_delta": Param(1e-5, float),
    # compare
    "trials": Param(20, int),
}


def _from_url(key: str, param: Param) -> Any:
    raw = st.query_params.get(key)
    if raw is None:
        return param.default
    try:
        value = param.parse(raw)
    except (TypeError, ValueError):
        return param.default  # a mangled link falls back to the default, never to an error page
    if param.choices is not None and value not in param.choices:
        return param.default
    if isinstance(value, float) and not math.isfinite(value):
        return param.default
    return value


def init() -> None:
    """Fill the session from the URL once, and keep every setting alive across pages (app.py, first)."""
    for key in PARAMS:
        if key in st.session_state:
            # Re-assigning stops Streamlit from dropping a widget's value on pages without it.
            st.session_state[key] = st.session_state[key]
    ensure()


def ensure() -> None:
    """Fill only the missing settings: safe after widgets exist, for a page run without app.py."""
    for key, param in PARAMS.items():
        if key not in st.session_state:
            st.session_state[key] = _from_url(key, param)
    st.session_state.setdefault("ledger", {})


def get(key: str) -> Any:
    return st.session_state.get(key, PARAMS[key].default)


def _format(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.12g}"
    return str(value)


def sync_url() -> None:
    """Write every setting that differs from its default into the URL's query parameters."""
    wanted = {k: _format(get(k)) for k, p in PARAMS.items() if get(k) != p.default}
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)


def split() -> tuple[float, float, float]:
    return (get("split_a"), get("split_b"), get("split_c"))


def is_publish() -> bool:
    return get("mode") == "publish"


# ------------------------------------------------------------------ data and fit


def data_key() -> tuple:
    """The identity of the loaded data set: every setting that changes it."""
    source = get("source")
    if source.startswith("synthetic"):
        return (source, get("n"), get("d"), get("theta_norm"), get("noise_scale"), get("sample_seed"))
    if source == "acs":
        return (source, get("states"), get("year"), get("horizon"), get("acs_root"), get("acs_n"),
                get("sample_seed"), get("download"), get("with_replacement"))
    upload = st.session_state.get("upload")
    digest = hashlib.sha256(upload[1]).hexdigest()[:16] if upload else None
    return (source, digest, None if upload is None else upload[0])


def is_pums(content: bytes) -> bool:
    """Whether an uploaded CSV is an ACS PUMS person file (its header names PINCP)."""
    return "PINCP" in content.split(b"\n", 1)[0].decode("utf-8", "replace").strip().split(",")


def loss_name() -> str:
    """Synthetic sources fix the loss; census data are the logistic income problem."""
    source = get("source")
    if source == "synthetic_robust":
        return "robust"
    upload = st.session_state.get("upload")
    if source in ("synthetic_logistic", "acs") or (source == "upload" and upload and is_pums(upload[1])):
        return "logistic"
    return get("upload_loss")


def model_key() -> tuple:
    """The estimator's settings; the radius matters on the ball only."""
    domain = get("domain")
    return (loss_name(), get("lam_reg"), domain, get("radius") if domain == "ball" else None)


@st.cache_resource(max_entries=3, show_spinner="Loading the data…")
def _load(key: tuple, _upload: tuple[str, bytes] | None) -> Dataset:
    source = key[0]
    if source.startswith("synthetic"):
        _, n, d, theta_norm, noise, seed = key
        return synthetic(n, d, "robust" if source == "synthetic_robust" else "logistic", theta_norm, noise, seed)
    from core.data import acs  # folktables loads only for census data

    if source == "acs":
        _, states, year, horizon, root, n, seed, download, with_replacement = key
        names = [s.strip().upper() for s in states.split(",") if s.strip()]
        return acs.load_acs_income(names, year, horizon, root or None, n, seed, download, with_replacement)
    if _upload is None:
        raise DataError("no file uploaded yet: choose a CSV on the Data page")
    name, content = _upload
    if is_pums(content):
        return acs.read_pums(content, name=name)
    return read_csv_bytes(content, name)


def dataset() -> Dataset:
    """The loaded data set (cached on its settings); raises InputError with the library's message."""
    return _load(data_key(), st.session_state.get("upload"))


@st.cache_resource(max_entries=3, show_spinner="Fitting θ(Pₙ) (stage 0)…")
def _prepare(key: tuple, model: tuple, _data: Dataset) -> Problem:
    loss, lam_reg, domain, radius = model
    if domain == "ball" and radius is None:
        radius = math.sqrt(_data.d)  # the smallest ball around the cube: cube-shaped data are not clipped
    return prepare(_data.X, _data.y, loss, domain, radius, lam_reg, _data.feature_names)


def problem() -> Problem:
    """The prepared problem (validated, projected, fitted): cached on data and model settings only."""
    return _prepare(data_key(), model_key(), dataset())


# ------------------------------------------------------------------ the publish-mode ledger


def spent() -> tuple[float, float]:
    """(epsilon, delta) already spent on the loaded data set, by basic sequential composition."""
    entries = st.session_state["ledger"].get(data_key(), [])
    return sum(e for e, _ in entries), sum(d for _, d in entries)


def refuse_reason(epsilon: float, delta: float) -> str | None:
    """Why a draw of (epsilon, delta) would pass the user's cap, or None if it fits."""
    eps_spent, delta_spent = spent()
    cap_e, cap_d = get("cap_epsilon"), get("cap_delta")
    if eps_spent + epsilon > cap_e * (1 + 1e-12) or delta_spent + delta > cap_d * (1 + 1e-12):
        return (
            f"refused: this draw costs (ε, δ) = ({epsilon:g}, {delta:g}); {eps_spent:g} and {delta_spent:g} are "
            f"already spent on these data, and the cap is ({cap_e:g}, {cap_d:g}). Raise the cap only if the "
            "data's owner agrees: every fresh draw on the same data adds to what an observer can learn."
        )
    return None


def spend(epsilon: float, delta: float) -> None:
    st.session_state["ledger"].setdefault(data_key(), []).append((epsilon, delta))


# ------------------------------------------------------------------ published releases and teaching runs


@dataclass(frozen=True)
class RunRecord:
    """One run of the private stages on the Pipeline page, with the settings it was made on."""

    run: PrivateRun
    coordinate: str
    budget: Budget
    calibration: str
    level: float
    data_key: tuple
    model_key: tuple


@dataclass(frozen=True)
class PublishedRelease(RunRecord):
    """A publish-mode release drawn from OS entropy and charged to the ledger: what the Report may show.

    Made by `publish()` only, right after the charge; teaching runs never become one.
    """


@dataclass(frozen=True)
class TeachingRun(RunRecord):
    """The Pipeline's last teaching run: never charged, possibly seeded, never shown on the Report."""

    seed: int | None


PUBLISHED = "published"  # st.session_state key: {(data_key, model_key): PublishedRelease}
TEACHING_RUN = "teaching_run"  # st.session_state key: TeachingRun


def publish(run: PrivateRun, coordinate: str) -> PublishedRelease:
    """Charge a fresh publish-mode run's (ε, δ) to the ledger of the loaded data, then record it for the Report.

    The caller drew the run from OS entropy after `refuse_reason` let it through; the check is repeated
    here, so a release past the cap is never recorded.
    """
    b = run.budget
    refused = refuse_reason(b.epsilon_total, b.delta_total)
    if refused:
        raise BudgetError(refused)
    spend(b.epsilon_total, b.delta_total)
    record = PublishedRelease(run=run, coordinate=coordinate, budget=b, calibration=get("calibration"),
                              level=get("level"), data_key=data_key(), model_key=model_key())
    st.session_state.setdefault(PUBLISHED, {})[(record.data_key, record.model_key)] = record
    return record


def published() -> PublishedRelease | None:
    """The last charged release on the loaded data and model, or None."""
    return st.session_state.get(PUBLISHED, {}).get((data_key(), model_key()))


def keep_teaching_run(run: PrivateRun, coordinate: str, seed: int | None) -> TeachingRun:
    """Remember the Pipeline's last teaching run (apart from published releases) and return it."""
    record = TeachingRun(run=run, coordinate=coordinate, budget=run.budget, calibration=get("calibration"),
                         level=get("level"), data_key=data_key(), model_key=model_key(), seed=seed)
    st.session_state[TEACHING_RUN] = record
    return record


def target(problem: Problem) -> tuple[int | np.ndarray, str]:
    """(u, name) the Pipeline and Compare pages release: the custom direction when given (core
    normalises it), else the chosen coordinate; one not among these data's features means the first."""
    text = get("direction").strip()
    if text:
        try:
            return np.array([float(p) for p in text.split(",")]), "custom u"
        except ValueError:
            raise DataError(
                f"the direction u takes comma-separated numbers such as 1, 0, -1; {text!r} is not such a list"
            ) from None
    names = problem.feature_names
    name = get("coordinate") if get("coordinate") in names else names[0]
    return names.index(name), name
