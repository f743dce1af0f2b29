"""The app's settings: one registry (PARAMS), kept across pages and mirrored in the URL.

Every setting has a key, a default and a parser; its range is core.settings's. `ui.session.init()` fills
st.session_state from the link's query parameters (or the defaults) on a session's first run; widgets use the same
keys; `sync_url()` runs last and writes every non-default setting back into the URL, so a link reproduces the view.
A link value that cannot be used is replaced by its default and named in a notice (ui.keys.IGNORED), never an error
page; a notice quotes at most QUOTED characters of a link, and never one that looks like an access key (dropped from
the session and the URL unread). Deployment settings (publish-only, the default cap) are read here too, from the
environment or the secrets.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError, StreamlitWidgetAlreadyInstantiatedError

from core.data.encoding import DEFAULT_ENCODING, ENCODINGS
from core.data.passes import check_scheduler
from core.data.spec import curated_folders
from core.data.synthetic import MAX_CELLS, check_size
from core.errors import DataError
from core.estimator.geometry import MAX_RADIUS, MIN_RADIUS
from core.mechanisms.fallback import FALLBACK_CHOICES
from core.mechanisms.table import COVERAGES, TOGETHER
from core.methods.compare import METHODS, check_methods
from core.privacy.access import trusted_proxies as access_trusted_proxies
from core.privacy.accounting import RELEASE_SPLIT
from core.privacy.charge import default_cap
from core.privacy.gaussian import CALIBRATIONS, DEFAULT_CALIBRATION
from core.settings import RANGES
from ui import keys
from ui.labels import LABELS, control

SOURCES = {
    "synthetic_robust": "Synthetic robust regression",
    "synthetic_logistic": "Synthetic logistic regression",
    "acs": "ACS income (census files)",
    "upload": "Upload a data file",
    "folder": "A curator's folder (read in blocks)",  # offered only where the deployment names folders
}
MODES = {"teaching": "Teaching", "publish": "Publish"}
CENSUS_SAMPLE = "ACS income (a SYNTHETIC census sample: no real person)"  # the census source reading made-up records


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


def _names(text: str) -> list[str]:
    """A regression table's coefficients, comma-separated feature names (none: every coefficient); a name given twice
    is a mangled link. Which of them the loaded data have is checked where the table is drawn."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if len(set(names)) < len(names):
        raise ValueError("a coefficient named twice")
    return names


AUTO_LOSS = "auto"  # an upload's loss chosen by its label: two values, logistic (core.data.spec.infer_loss)


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
    "census_sample": Param(None, _opt_int, bounds=_range("census_sample")),  # records per state of a SYNTHETIC sample
    "encoding": Param(DEFAULT_ENCODING, str, ENCODINGS),  # the census encoding (core.data.encoding)
    "upload_loss": Param(AUTO_LOSS, str, (AUTO_LOSS, "robust", "logistic")),  # auto: from the label (infer_loss)
    "response": Param("y", str),  # an uploaded CSV's label or response column
    "formula": Param("", str),  # an upload's model, y ~ age + C(region) (core.data.formula), with its codebook
    "folder": Param("", str),  # a curator's folder by the name the deployment gives it, never a location
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
    "calibration": Param(DEFAULT_CALIBRATION, str, CALIBRATIONS),
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
    # the Pipeline's regression table: its coefficients ([]: every one), kept apart from its widget (ui.keys.WIDGETS)
    "coordinates": Param([], _names),  # as the command line's release --coordinates
    "coverage": Param(TOGETHER, str, COVERAGES),  # its intervals: all rows at once, or each (release --coverage)
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
RELEASE = "release"  # the Report's permanent address of a publication, /report?release=<its ledger uid>: no setting


QUOTED = 20  # the most characters of a link's text a notice quotes: a hand-made link may carry anything
# An access key (core.privacy.access: psp-<8 hex>-<secret>), or any long token mixing lower case, upper case and
# digits, as a secret does (a census feature name has no digits; a ledger uid has no upper case).
_KEY = re.compile(r"psp-[0-9a-f]{8}", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9_-]{24,}")
KEY_NOTICE = "what looks like an access key: dropped and not shown; sign in from the sidebar instead"
FOLDER_NOTICE = "a folder on this server: this deployment reads census files only from its curator's census folder"


def looks_like_key(text: str) -> bool:
    """Whether a link's text looks like an access key or another secret (never shown, never kept)."""
    if _KEY.search(text):
        return True
    return any(re.search("[a-z]", t) and re.search("[A-Z]", t) and re.search("[0-9]", t) for t in _TOKEN.findall(text))


def shown(text: str) -> str:
    """A link's text as a notice may quote it: at most QUOTED characters, cut with an ellipsis."""
    return text if len(text) <= QUOTED else text[:QUOTED] + "…"


def _unknown(key: str, raw: str) -> None:
    """A notice for a link parameter that is no setting of the app, with the closest setting's name."""
    close = difflib.get_close_matches(key, list(PARAMS), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]}?" if close else ""
    _ignored(shown(key), raw, f"not a setting of this app{hint}")


def _ignored(key: str, raw: str, why: str) -> Any:
    """The default of key, with a notice naming the link's value (cut short), why it could not be used and, for a
    setting with a control of its own (ui.labels), that control."""
    where = f"; set it with {control(key)}" if key in LABELS else ""
    _notice(f"{key}={shown(raw)} ({why}{where})")
    return PARAMS[key].default if key in PARAMS else None


def _notice(text: str) -> None:
    keys.IGNORED.setdefault([]).append(text)


def _withhold_keys() -> None:
    """Drop from the link, before anything reads it, every parameter whose name or value looks like an access key:
    the notice names the parameter (not a key-looking name) and never quotes the value, and nothing logs it."""
    for key in list(st.query_params):
        if looks_like_key(key) or any(looks_like_key(raw) for raw in st.query_params.get_all(key)):
            del st.query_params[key]
            _notice(f"{'a parameter' if looks_like_key(key) else key} ({KEY_NOTICE})")


def keep_alive() -> None:
    """Re-assign every setting in the session: Streamlit would otherwise drop a widget's value on pages without it.
    A setting whose widget this run has already drawn (a later fragment of a run that reruns several) is alive."""
    for key in PARAMS:
        if key in st.session_state:
            try:
                st.session_state[key] = st.session_state[key]
            except StreamlitWidgetAlreadyInstantiatedError:
                continue


def fill() -> bool:
    """Fill only the missing settings, from the link or the defaults (safe after widgets exist), and whether the
    session is new (its link is read now, once). A deployment locked to publish mode forces the mode on every run,
    whatever the link or the session say."""
    new = not any(key in st.session_state for key in PARAMS)
    if new:
        _withhold_keys()
        for key in st.query_params:
            if key not in PARAMS and key not in (*STREAMLIT_LINK_KEYS, RELEASE):
                _unknown(key, st.query_params.get(key) or "")
    for key, param in PARAMS.items():
        if key not in st.session_state:
            st.session_state[key] = _from_url(key, param)
    if locked():  # nothing a user types, in a widget or a link, reaches these
        st.session_state["mode"] = "publish"
        st.session_state["noise_seed"] = None
        if st.session_state["acs_root"]:  # a server folder is the curator's to choose, never a visitor's
            st.session_state["acs_root"] = ""
            if new:
                _notice(f"acs_root ({FOLDER_NOTICE})")
    return new


def check_together() -> None:
    """Link values each in range that no data set takes together — synthetic n not above d, or n·d past MAX_CELLS —
    are replaced, the link's n first (then d), by the default, with the same notice as any other unusable value."""
    if not get("source").startswith("synthetic"):
        return
    for key in ("n", "d"):
        try:
            check_size(get("n"), get("d"))
            return
        except DataError:
            raw = st.query_params.get(key)
            if raw is not None:
                st.session_state[key] = PARAMS[key].default
                _ignored(key, raw, f"synthetic data need d < n and n·d ≤ {MAX_CELLS:,}")


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


TEACHING_ONLY_PAGES = ("compare", "attacker")  # the pages (by URL path) that read the data without privacy: closed in
# publish mode, and left out of a publish-only deployment's menu


def locked() -> bool:
    """Whether the deployment is locked to publish mode (PSP_PUBLISH_ONLY or the secret publish_only)."""
    return str(_deployment("publish_only", "")).strip().lower() in ("1", "true", "yes")


def deployment_caps() -> tuple[float, float]:
    """The default cap a new ledger file starts with: core.privacy.charge.default_cap over PSP_CAP_EPSILON,
    PSP_CAP_DELTA or the secrets of the same names, as the command line reads them."""
    return default_cap(lambda name: _deployment(name, None))


def deployment_folders() -> dict[str, str]:
    """The folders the deployment offers by name: core.data.spec.curated_folders over PSP_FOLDERS or the secret
    folders."""
    return curated_folders(_deployment("folders", None))


def deployment_scheduler() -> str | None:
    """The dask.distributed scheduler a folder's passes run on (PSP_SCHEDULER or the secret scheduler; None: this
    server's cores), checked by core.estimator.blocks.check_scheduler."""
    raw = _deployment("scheduler", None)
    return check_scheduler(raw or None, "the deployment setting scheduler (PSP_SCHEDULER)")


def sources() -> tuple[str, ...]:
    """The sources this deployment offers: a curator's folder only where it names one."""
    return tuple(s for s in SOURCES if s != "folder" or deployment_folders())


def check_folder() -> None:
    """A new session's link naming a curator's folder this deployment does not offer (or the folder source where it
    offers none) is replaced, with the same notice as any other unusable value: a link never names a location."""
    folders = deployment_folders()
    name = get("folder")
    if name and name not in folders:
        st.session_state["folder"] = ""
        _ignored("folder", name, "not a folder this server offers")
    if get("source") == "folder" and not folders:
        st.session_state["source"] = PARAMS["source"].default
        _ignored("source", "folder", "this server offers no curator's folder")


def trusted_proxies() -> tuple:
    """The proxies whose forwarding headers name the browser: core.privacy.access.trusted_proxies over
    PSP_TRUSTED_PROXIES or the secret trusted_proxies."""
    return access_trusted_proxies(lambda name: _deployment(name, None))


def get(key: str) -> Any:
    return st.session_state.get(key, PARAMS[key].default)


def source_name() -> str:
    """The chosen source in words: the census source names a SYNTHETIC sample as such, never as census files."""
    source = get("source")
    return CENSUS_SAMPLE if source == "acs" and get("census_sample") is not None else SOURCES[source]


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
    """Write every setting that differs from its default into the URL's query parameters (a publication's address
    stays)."""
    wanted = {k: _format(get(k)) for k, p in PARAMS.items() if get(k) != p.default}
    if RELEASE in st.query_params:
        wanted[RELEASE] = st.query_params[RELEASE]
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)


def split() -> tuple[float, float, float]:
    return (get("split_a"), get("split_b"), get("split_c"))


def is_publish() -> bool:
    return get("mode") == "publish"
