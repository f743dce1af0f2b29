"""Settings shared by every page: one registry, kept across pages and mirrored in the URL.

Every setting has a key, a default and a parser. `init()` runs first on every rerun: it fills
st.session_state from the URL's query parameters (or the defaults) and re-asserts the values so
that a page's widgets keep them when another page is shown. Widgets use the same keys. `sync_url()`
runs last and writes every non-default setting back into the URL, so a link reproduces the view.
The data set and the fit are cached on the data and model settings only; noise never is.

Which data and which model are core's identity objects (`core.data.spec`, `core.estimator.model`), built from the
settings by `data_spec()` and `model_spec()`: they are the only keys of the data and fit caches, of the
ledger (by `population()`, the people in the data) and of every staleness check.

Session entries outside the settings registry (SESSION lists them; nothing else is stored):
- UPLOAD: `Upload`, the uploaded file (Data page);
- PUBLISHED: {(DataSpec, ModelSpec): PublishedRelease}, made only by `publish()` after the ledger
  charged it (the Report shows nothing else);
- IGNORED: link values that cannot be used (unparsable, not finite, outside their control's range), each replaced
  by the default and named in a notice;
- UPLOADED: the upload's data set and fits, kept in that session only (never a process-wide cache);
- TEACHING_RUN: `TeachingRun`, the Pipeline's last teaching run: never charged, possibly seeded,
  never on the Report; shown again while its private settings hold (noise is drawn only when asked);
- COMPARISON: `ComparisonRecord`, the Compare page's last comparison with the settings it used;
- the widgets' own keys "upload_file", "response_choice" (the upload's label column, copied to the setting
  "response" when chosen), "experiments_upload_<figure>" (the Experiments
  page's uploader, one per figure; the page keeps nothing else in the session), "lmin_steps", "lmax_steps"
  and "formulas: <title>" (whether the Pipeline's recursion and formula expanders are open: their charts and
  formulas are drawn only then), "whatif_margin", "whatif_region" and "privacy_profile" (whether the what-if's 95 %
  points, its pass region and the budget's δ(ε) are open: computed only then), "lmin_details",
  "lmax_details", "test_details" and "release_details" (whether a stage's intermediates are open: drawn only
  then).
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core.data import Dataset
from core.data.spec import AcsSpec, CsvSpec, DataSpec, PumsSpec, SyntheticSpec, file_spec
from core.errors import DataError, PspError
from core.estimator.geometry import MAX_RADIUS, MIN_RADIUS
from core.estimator.model import ModelSpec
from core.estimator.problem import default_coordinate
from core.mechanisms.fallback import FALLBACK_CHOICES, falls_back
from core.mechanisms.pipeline import PrivateRun, Problem, prepare_spec
from core.mechanisms.table import TableRelease
from core.methods.compare import METHODS, Comparison, check_methods
from core.plan import (
    ReleasePlan,
    TablePlan,
    Waiting,
    charge_and_certify,
    charge_and_execute,
    charge_and_finish,
    charge_and_release_table,
    execute_table,
    open_certification,
    table_report,
    waiting,
)
from core.privacy.access import CURATOR, Spender
from core.privacy.accounting import RELEASE_SPLIT, Budget
from core.privacy.charge import default_cap, open_charged, phase_cost
from core.privacy.ledger import Certification, Ledger
from core.privacy.ledger_store import default_ledger_path
from core.settings import RANGES
from core.teaching.attack import GameScore, Round

SOURCES = {
    "synthetic_robust": "Synthetic robust regression",
    "synthetic_logistic": "Synthetic logistic regression",
    "acs": "ACS income (census files)",
    "upload": "Upload a CSV",
}
MODES = {"teaching": "Teaching", "publish": "Publish"}
UPLOAD, PUBLISHED, TEACHING_RUN, COMPARISON = "upload", "published", "teaching_run", "comparison"
ATTACK = "attack"  # the attacker's view's game and baselines, for the settings they were drawn with
TABLE = "table"  # the Pipeline's last regression table (drawn in teaching mode, or charged in publish mode)
UPLOADED = "uploaded"  # the upload's data set and fits, kept in its own session only
IGNORED = "ignored_link_values"  # unusable link values, each replaced by its default (shown once)
SESSION = {  # every session entry outside PARAMS, with its type
    IGNORED: "list[str]", UPLOAD: "Upload", UPLOADED: "dict[(DataSpec, ModelSpec | None), Dataset | Problem]",
    PUBLISHED: "dict[(DataSpec, ModelSpec), PublishedRelease]",
    TEACHING_RUN: "TeachingRun", COMPARISON: "ComparisonRecord", ATTACK: "AttackRecord", TABLE: "TableRecord",
    "table_names": "widget: list[str] (the regression table's coefficients)",
    "upload_file": "widget: UploadedFile",
    "attack_pick": "widget: bool (the attacker's view: pick the row)", "attack_row": "widget: int (its number)",
    "attack_draws": "widget: int (the baselines' draws per data set)",
    "response_choice": "widget: str | None",
    "experiments_upload_<figure>": "widget: UploadedFile",
    "lmin_steps": "widget: bool", "lmax_steps": "widget: bool", "formulas: <title>": "widget: bool",
    "whatif_margin": "widget: bool", "whatif_region": "widget: bool", "privacy_profile": "widget: bool",
    "lmin_details": "widget: bool", "lmax_details": "widget: bool", "test_details": "widget: bool",
    "release_details": "widget: bool", "settings_panel": "widget: bool",
    "<figure>_svg": "widget: an SVG figure's download button (ui.charts.sketch)",
    "planner_<assumption>": "widget: number or choice (the Planner's n, d, loss, curvature, target; no data)",
    "planner_search_pld": "widget: bool", "planner_searched": "tuple: the Planner's last PLD search for ε asked for",
    "analyst": "str: the signed-in analyst's name, never a key (ui.access)",
    "signed_out": "str: why the analyst was signed out or a sign-in failed (shown once)",
    "access_key": "widget: str (the sign-in form's key field, emptied by its own callback)",
    "sign_out": "widget: button", "login": "widget: button (st.login)",
}


def _opt_int(text: str) -> int | None:
    return None if text in ("", "none") else int(text)


def _opt_float(text: str) -> float | None:
    return None if text in ("", "none") else float(text)


def _bool(text: str) -> bool:
    if text.lower() not in ("1", "true", "yes", "0", "false", "no"):
        raise ValueError(text)
    return text.lower() in ("1", "true", "yes")


def _methods(text: str) -> list[str]:
    """Distinct Compare methods, comma-separated: an empty or unknown name raises InputError, a ValueError."""
    names = [name.strip() for name in text.split(",")]
    if len(set(names)) < len(names):
        raise ValueError("a method named twice")  # a mangled link, not a choice
    return list(check_methods(names))


@dataclass(frozen=True)
class Param:
    default: Any
    parse: Callable[[str], Any]
    choices: tuple | None = None
    bounds: tuple[float, float] | None = None  # the closed range a link's value must lie in (the widget's range)


SEED_MAX = RANGES["seed"].high


def _range(name: str) -> tuple[float, float]:
    """A setting's closed range, the one core.settings gives every surface."""
    return RANGES[name].low, RANGES[name].high


PARAMS: dict[str, Param] = {
    # data
    "source": Param("synthetic_robust", str, tuple(SOURCES)),
    "n": Param(100_000, int, bounds=_range("n")),
    "d": Param(5, int, bounds=_range("d")),
    "theta_norm": Param(1.0, float, bounds=_range("scale")),
    "noise_scale": Param(1.0, float, bounds=_range("scale")),
    "sample_seed": Param(0, int, bounds=_range("seed")),
    "states": Param("CA", str),
    "year": Param(2018, int, bounds=(2014, 2100)),
    "horizon": Param("1-Year", str, ("1-Year", "5-Year")),
    "acs_root": Param("", str),
    "acs_n": Param(None, _opt_int, bounds=(1, RANGES["n"].high)),
    "download": Param(False, _bool),
    "with_replacement": Param(False, _bool),
    "upload_loss": Param("logistic", str, ("robust", "logistic")),
    "response": Param("y", str),  # an uploaded CSV's label or response column
    # model
    "lam_reg": Param(0.0, float, bounds=_range("lam_reg")),
    "domain": Param("cube", str, ("cube", "ball")),
    "radius": Param(None, _opt_float, bounds=(MIN_RADIUS, MAX_RADIUS)),
    "response_bound": Param(None, _opt_float, bounds=_range("response_bound")),
    # privacy
    "epsilon": Param(4.0, float, bounds=_range("epsilon")),
    "delta": Param(1e-6, float, bounds=_range("delta")),
    "split_a": Param(RELEASE_SPLIT[0], float, bounds=_range("split")),
    "split_b": Param(RELEASE_SPLIT[1], float, bounds=_range("split")),
    "split_c": Param(RELEASE_SPLIT[2], float, bounds=_range("split")),
    "calibration": Param("paper", str, ("paper", "analytic")),
    "accounting": Param("basic", str, ("basic", "pld")),
    "coordinate": Param("", str),
    "direction": Param("", str),
    "level": Param(0.95, float, bounds=_range("level")),
    "fallback": Param("auto", str, FALLBACK_CHOICES),
    "noise_seed": Param(None, _opt_int, bounds=_range("seed")),
    "mode": Param("teaching", str, tuple(MODES)),
    # display only: never a new draw
    "present": Param(False, _bool),
    # compare
    "trials": Param(20, int, bounds=_range("trials")),
    "methods": Param(list(METHODS), _methods),  # the multiselect's value, a list; never mutated in place
}


def _from_url(key: str, param: Param) -> Any:
    raw = st.query_params.get(key)
    if raw is None:
        return param.default
    value, why = link_value(key, raw)
    return _ignored(key, raw, why) if why is not None else value  # a mangled link never leads to an error page


def link_value(key: str, raw: str) -> tuple[Any, str | None]:
    """A link's text for setting key as its value, or (None, why it cannot be used)."""
    param = PARAMS[key]
    try:
        value = param.parse(raw)
    except (TypeError, ValueError):
        return None, "not a value of this setting"
    if param.choices is not None and value not in param.choices:
        return None, "not one of " + ", ".join(map(str, param.choices))
    if isinstance(value, float) and not math.isfinite(value):
        return None, "not a finite number"
    if param.bounds is not None and value is not None and not param.bounds[0] <= value <= param.bounds[1]:
        lo, hi = (int(b) if param.parse in (int, _opt_int) else b for b in param.bounds)
        return None, f"outside the range {lo:,} to {hi:,}" if isinstance(lo, int) else f"outside {lo:g} to {hi:g}"
    return value, None


STREAMLIT_LINK_KEYS = ("embed", "embed_options")  # Streamlit's own link parameters


def _unknown(key: str, raw: str) -> None:
    """A notice for a link parameter that is no setting of the app, with the closest setting's name."""
    close = difflib.get_close_matches(key, list(PARAMS), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    _ignored(key if len(key) <= 40 else key[:40] + "…", raw, f"not a setting of this app{hint}")


def _ignored(key: str, raw: str, why: str) -> Any:
    """The default of key, with a notice naming the link's value and why it could not be used."""
    shown = raw if len(raw) <= 40 else raw[:40] + "…"  # a hand-made link may carry anything
    st.session_state.setdefault(IGNORED, []).append(f"{key}={shown} ({why})")
    return PARAMS[key].default if key in PARAMS else None


def init() -> None:
    """Fill the session from the URL once, and keep every setting alive across pages (app.py, first)."""
    for key in PARAMS:
        if key in st.session_state:
            # Re-assigning stops Streamlit from dropping a widget's value on pages without it.
            st.session_state[key] = st.session_state[key]
    ensure()


def ensure() -> None:
    """Fill only the missing settings: safe after widgets exist, for a page run without app.py.

    A deployment locked to publish mode forces the mode on every run, whatever the URL or the session say.
    """
    new = not any(key in st.session_state for key in PARAMS)
    if new:  # a new session: its link is read now, once
        for key in st.query_params:
            if key not in PARAMS and key not in STREAMLIT_LINK_KEYS:
                _unknown(key, st.query_params.get(key) or "")
    for key, param in PARAMS.items():
        if key not in st.session_state:
            st.session_state[key] = _from_url(key, param)
    if new and "domain" not in st.query_params:
        follow_the_data()
    if locked():  # nothing a user types, in a widget or a link, reaches these
        st.session_state["mode"] = "publish"
        st.session_state["noise_seed"] = None


def _deployment(name: str, default: Any) -> Any:
    """A deployment setting: the environment variable PSP_<NAME> or the secret <name> (.streamlit/secrets.toml),
    both set by whoever deploys the app, never by its users."""
    raw = os.environ.get(f"PSP_{name.upper()}")
    if raw is not None:
        return raw
    try:
        return st.secrets.get(name, default)
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return default


def locked() -> bool:
    """Whether the deployment is locked to publish mode (PSP_PUBLISH_ONLY or the secret publish_only)."""
    return str(_deployment("publish_only", "")).strip().lower() in ("1", "true", "yes")


def deployment_caps() -> tuple[float, float]:
    """The default cap a new ledger file starts with: core.privacy.charge.default_cap over PSP_CAP_EPSILON,
    PSP_CAP_DELTA or the secrets of the same names, as the command line reads them."""
    return default_cap(lambda name: _deployment(name, None))


def get(key: str) -> Any:
    return st.session_state.get(key, PARAMS[key].default)


def _format(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.12g}"
    if isinstance(value, list):
        return ",".join(value)
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


def fallback() -> bool:
    """Whether a failed test (14) falls back to objective perturbation (core.mechanisms.fallback.falls_back: "auto" for
    logistic data, as on the command line)."""
    return falls_back(get("fallback"), loss_name())


# ------------------------------------------------------------------ which data, which model (core specs)


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
    if source == "acs":
        return AcsSpec(get("states"), get("year"), get("horizon"), get("acs_root") or None, get("acs_n"),
                       get("sample_seed"), get("download"), get("with_replacement"))
    upload = st.session_state.get(UPLOAD)
    if upload is None:
        raise DataError("no file uploaded yet: choose a CSV on the Data page")
    return replace(upload.spec, response=get("response")) if isinstance(upload.spec, CsvSpec) else upload.spec


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
    kept = st.session_state.setdefault(UPLOADED, {})
    if key not in kept:
        if key[0] != next(iter(kept), (None,))[0]:
            kept.clear()  # another file: drop the old one's data
        kept[key] = make()
    return kept[key]


def dataset() -> Dataset:
    """The loaded data set (cached on its spec); raises InputError with the library's message."""
    spec = data_spec()
    upload = st.session_state.get(UPLOAD)
    if upload is not None and isinstance(spec, CsvSpec | PumsSpec) and spec.digest == upload.spec.digest:
        return _session_cached((spec, None), lambda: spec.load(upload.content))  # any label column of the upload
    return _load(spec)


@st.cache_resource(max_entries=3, show_spinner="Fitting θ(Pₙ) (stage 0)…")
def _prepare(spec: DataSpec, model: ModelSpec, _data: Dataset) -> Problem:
    return prepare_spec(_data, model, spec)


def problem() -> Problem:
    """The prepared problem (validated, projected, fitted): cached on the data and model specs only."""
    spec, model, data = data_spec(), model_spec(), dataset()
    if isinstance(spec, (CsvSpec, PumsSpec)):
        return _session_cached((spec, model), lambda: prepare_spec(data, model, spec))
    return _prepare(spec, model, data)


# ------------------------------------------------------------------ the publish-mode ledger


@st.cache_resource(show_spinner=False)
def _ledger(path: str) -> Ledger:
    """The durable ledger at path, shared by every session and tab of this server (and by the command line)."""
    return open_charged(path, deployment_caps())  # a new file: the deployment's default cap


def ledger() -> Ledger:
    """The durable ledger (core.privacy.ledger_store; PSP_LEDGER or the default path): caps are the curator's, read only
    here. An unusable file raises LedgerUnavailable, which refuses every release."""
    return _ledger(str(default_ledger_path()))


def caps() -> tuple[float, float]:
    """The cap on the people of the loaded data."""
    return ledger().cap(data_spec().population())


def spent() -> tuple[float, float]:
    """(epsilon, delta) already spent on the people of the loaded data, by basic sequential composition."""
    return ledger().spent(data_spec().population())


def remaining(spender: Spender = CURATOR) -> tuple[float, float]:
    """What a draw on the people of the loaded data by spender may still cost (core.privacy.ledger: state by state, and
    within an analyst's share), each at least 0."""
    return ledger().remaining(data_spec().population(), spender)


def cost(b: Budget, phase: str = "whole") -> tuple[float, float]:
    """What a release of budget b (or one phase of it) costs a person of the loaded data
    (core.privacy.charge.phase_cost:
    per person; BudgetError when a sample drawn with replacement leaves no guarantee)."""
    return phase_cost(b, dataset().privacy_unit, phase)


def refuse_reason(b: Budget, phase: str, spender: Spender) -> str | None:
    """Why a release of budget b (or one phase of it) by spender would pass the cap on these people or the spender's
    share, or None if it fits."""
    return ledger().refusal(data_spec().population(), *cost(b, phase), spender)


def plan(problem: Problem, b: Budget, seed: int | None = None) -> ReleasePlan:
    """The release the page's settings name (core.plan): the loaded data and model, the target, budget b, the
    calibration, level and fallback, and the noise seed (None: OS entropy)."""
    u, name = target(problem)
    return ReleasePlan(data=data_spec(), model=model_spec(), target=u if isinstance(u, int) else tuple(map(float, u)),
                       name=name, budget=b, calibration=get("calibration"), level=get("level"), fallback=fallback(),
                       seed=seed)


# ------------------------------------------------------------------ published releases and teaching runs


@dataclass(frozen=True)
class RunRecord:
    """One run of the private stages on the Pipeline page, with the data and model it was made on, and the
    release's settings (calibration, level, whether a failed test falls back)."""

    run: PrivateRun
    coordinate: str
    budget: Budget
    calibration: str
    level: float
    fallback: bool
    data: DataSpec
    model: ModelSpec


@dataclass(frozen=True)
class PublishedRelease(RunRecord):
    """A publish-mode release drawn from OS entropy and charged to the ledger: what the Report may show.

    Made by `publish()` only, in the ledger's charge; teaching runs never become one.
    """


@dataclass(frozen=True)
class TeachingRun(RunRecord):
    """The Pipeline's last teaching run: never charged, possibly seeded, never shown on the Report.

    settings holds every private setting it was drawn with (teaching_settings()): while they hold, the page shows
    this same draw again instead of drawing anew, so a display toggle never changes the numbers."""

    seed: int | None
    settings: tuple = ()


@dataclass(frozen=True)
class ComparisonRecord:
    """The Compare page's last comparison and every setting it depends on (shown only while they hold)."""

    settings: tuple
    result: Comparison


@dataclass(frozen=True)
class AttackRecord:
    """The attacker's view's game (guessed rounds, the round waiting for a guess, the computer's score) and its
    baselines (with the draws and seed they were drawn with), for one set of settings (shown only while they hold).
    The secret of a waiting round stays on the server."""

    settings: tuple
    rounds: tuple[Round, ...] = ()
    pending: Round | None = None
    computer: GameScore | None = None
    baselines: tuple[tuple, dict] | None = None


def attack_record(settings: tuple) -> AttackRecord:
    """The kept game and baselines if drawn with these settings, else a fresh record."""
    record = st.session_state.get(ATTACK)
    return record if record is not None and record.settings == settings else AttackRecord(settings)


def keep_attack(record: AttackRecord) -> None:
    st.session_state[ATTACK] = record


def _record(kind: type[RunRecord], run: PrivateRun, coordinate: str, **extra: Any) -> RunRecord:
    return kind(run=run, coordinate=coordinate, budget=run.budget, calibration=get("calibration"),
                level=get("level"), fallback=fallback(), data=data_spec(), model=model_spec(), **extra)


def certify_first(problem: Problem, b: Budget, spender: Spender) -> None:
    """The first phase of a release of budget b with OS noise: charged to spender per person before any noise
    (everything but the release event), refused past the cap; the ledger keeps the certification until its
    release."""
    charge_and_certify(plan(problem, b), problem, ledger(), spender=spender)


def certification(problem: Problem, b: Budget) -> Waiting | None:
    """The open certification of the plan the settings name now, read back from the ledger (none for another plan):
    the same after a reload, in a new tab or after a restart."""
    try:
        return waiting(plan(problem, b), problem, ledger())
    except PspError:  # settings no release can be made with (the page says why): nothing of theirs is waiting
        return None


def other_certifications() -> tuple[Certification, ...]:
    """Every open certification on the people of the loaded data (those of other plans too)."""
    return ledger().open_certifications(data_spec().population())


def close_certification(uid: str) -> None:
    """Close an open certification unspent: what its first phase spent stays spent."""
    ledger().close_certification(uid)


def publish(problem: Problem, b: Budget, spender: Spender) -> PublishedRelease:
    """Release budget b with OS noise — from this plan's open certification (core.plan.charge_and_finish, the release
    event charged, once) or whole (charge_and_execute) — charged to spender per person before any noise, refused
    past the cap or their share (nothing spent), and keep it for the Report."""
    p = plan(problem, b)
    held = open_certification(p, problem, ledger())  # charge_and_finish reads its certificates back
    if held is None:
        run, _ = charge_and_execute(p, problem, ledger(), spender=spender)
    else:
        run, _ = charge_and_finish(p, problem, ledger(), held.uid, spender=spender)
    record = _record(PublishedRelease, run, p.name)
    st.session_state.setdefault(PUBLISHED, {})[(record.data, record.model)] = record
    return record


def published() -> PublishedRelease | None:
    """The last charged release on the loaded data and model, or None."""
    return st.session_state.get(PUBLISHED, {}).get((data_spec(), model_spec()))


def teaching_settings() -> tuple:
    """Every setting a teaching draw depends on: the data, the model, the target, the budget, the release's
    calibration, level and fallback, and the noise seed. Display settings are not among them."""
    return (data_spec(), model_spec(), get("coordinate"), get("direction"), get("epsilon"), get("delta"), split(),
            get("accounting"), get("calibration"), get("level"), fallback(), get("noise_seed"))


def current_teaching_run() -> TeachingRun | None:
    """The kept teaching draw if it was made with the current settings, else None (a new draw is due)."""
    record = st.session_state.get(TEACHING_RUN)
    return record if record is not None and record.settings == teaching_settings() else None


def keep_teaching_run(run: PrivateRun, coordinate: str, seed: int | None) -> TeachingRun:
    """Remember the Pipeline's last teaching run (apart from published releases) and return it."""
    record = _record(TeachingRun, run, coordinate, seed=seed, settings=teaching_settings())
    st.session_state[TEACHING_RUN] = record
    return record


def forget_teaching_run() -> None:
    """Drop the kept teaching draw: the next run of the page draws fresh noise ("Draw fresh noise")."""
    st.session_state.pop(TEACHING_RUN, None)


def keep_comparison(settings: tuple, result: Comparison) -> None:
    st.session_state[COMPARISON] = ComparisonRecord(settings, result)


def comparison(settings: tuple) -> Comparison | None:
    """The last comparison, if it was made on exactly these settings."""
    record = st.session_state.get(COMPARISON)
    return record.result if record is not None and record.settings == settings else None


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
    name = get("coordinate") if get("coordinate") in names else names[default_coordinate(names)]
    return names.index(name), name


# ------------------------------------------------------------------ regression tables


@dataclass(frozen=True)
class TableRecord:
    """The Pipeline's last regression table: its plan, the release, its private document, and whether it was charged
    (publish mode, OS noise) or drawn for teaching (never charged, possibly seeded, never on the Report)."""

    plan: TablePlan
    release: TableRelease
    document: dict
    charged: bool


def table_plan(problem: Problem, names: tuple[str, ...], b: Budget, seed: int | None = None) -> TablePlan:
    """The table the page's settings name: the loaded data and model, the coefficients, the budget, the calibration,
    level and fallback (as one coefficient's release), and the noise seed (None: OS entropy)."""
    idx = tuple(problem.feature_names.index(name) for name in names)
    return TablePlan(data=data_spec(), model=model_spec(), indices=idx, names=tuple(names), budget=b,
                     calibration=get("calibration"), level=get("level"), fallback=fallback(), seed=seed)


def draw_table(problem: Problem, names: tuple[str, ...], b: Budget) -> TableRecord:
    """A teaching table: the noise seed's (or fresh) noise, never charged."""
    return _keep_table(table_plan(problem, names, b, get("noise_seed")), problem, None)


def publish_table(problem: Problem, names: tuple[str, ...], b: Budget, spender: Spender) -> TableRecord:
    """A published table: charged once to spender at its total per person before any noise, refused past the cap or
    their share (nothing spent), recorded in the ledger with its document, and kept for the Report."""
    return _keep_table(table_plan(problem, names, b), problem, spender)


def _keep_table(p: TablePlan, problem: Problem, spender: Spender | None) -> TableRecord:
    if spender is None:
        t = execute_table(p, problem)
        doc = table_report(p, problem, t)
    else:
        t, doc, _ = charge_and_release_table(p, problem, ledger(), spender=spender)
    record = TableRecord(p, t, doc, spender is not None)
    st.session_state[TABLE] = record
    return record


def table_record() -> TableRecord | None:
    """The kept table if it was drawn in this mode on the loaded data and model, else None."""
    record = st.session_state.get(TABLE)
    if record is None or record.charged != is_publish() or (record.plan.data, record.plan.model) != (
            data_spec(), model_spec()):
        return None
    return record
