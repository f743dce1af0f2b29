"""The Report page and core.report.private_report: private values only, whatever the mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from core.accounting import split_budget
from core.data import synthetic
from core.pipeline import make_rng, prepare, run_private
from core.report import private_report

APP = Path(__file__).resolve().parents[1] / "app.py"
N = 20_000  # small enough to keep every run fast
DATA_KEY = ("synthetic_robust", N, 5, 1.0, 1.0, 0)  # the app's defaults with n = N
# Names of everything computed from the data without privacy (core.marks and the brief of the report).
NON_PRIVATE = {"fit", "theta", "omega", "Delta", "u_theta", "oracle_interval", "z", "N", "noise", "statistic",
               "noise_sd", "covers", "clipped_rows"}


@pytest.fixture(scope="module")
def problem():
    """The app's default data set with n = N, prepared as ui.state prepares it."""
    data = synthetic(N, 5, "robust", 1.0, 1.0, 0)
    return prepare(data.X, data.y, "robust", "cube", None, 0.0, data.feature_names)


def release(problem, epsilon: float = 8.0, coordinate: int = 2) -> dict:
    """What the Pipeline page stores after a release."""
    budget = split_budget(epsilon, 1e-6)
    run = run_private(problem, coordinate, budget, make_rng(7), "paper", 0.95)
    return dict(run=run, coordinate=problem.feature_names[coordinate], data_key=DATA_KEY, budget=budget,
                mode="teaching", calibration="paper", level=0.95, model_key=("robust", 0.0, "cube", None), seed=None)


def open_report(**settings: object) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["n"] = N
    at.run()  # the first run registers the pages of st.navigation; switch_page needs them
    if "last_release" in at.session_state:  # the Pipeline page, shown first, may have released
        del at.session_state["last_release"]
    for key, value in settings.items():
        at.session_state[key] = value
    return at.switch_page("pages/report.py").run()


def page_text(at: AppTest) -> str:
    """Every text of the page's main area."""
    main = at.main
    parts = [e.value for kind in ("title", "markdown", "caption", "success", "warning", "info") for e in main.get(kind)]
    parts += [f"{m.label} {m.value}" for m in main.metric]
    return "\n".join(parts)


def keys(value: object) -> set[str]:
    """Every key of a nested document."""
    if isinstance(value, dict):
        return set(value) | set().union(*(keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys(v) for v in value))
    return set()


def secrets(run, problem) -> list[str]:
    """The non-private numbers of a run as the page would print them."""
    r = run.release
    values = [r.u_theta, r.omega, r.Delta, *problem.fit.theta, problem.fit.lambda_min, problem.fit.lambda_max]
    return [f"{v:.6g}" for v in values]


@pytest.fixture
def downloads(monkeypatch):
    """The bytes of every download the page offers, by MIME type."""
    saved: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, data, mimetype, kind, filename=None):
        saved[mimetype] = data.encode() if isinstance(data, str) else data
        return original(self, data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return saved


# ---------------------------------------------------------------- private_report


def test_report_has_every_section(problem):
    rel = release(problem)
    rep = private_report(rel["run"], "x2", rel["budget"], "synthetic", problem.n, problem.d)
    assert set(rep) == {"data", "coefficient", "release", "interval_coverage", "lambda_min", "lambda_max", "test",
                        "guarantee", "method"}
    assert {"status", "reason", "value", "interval", "interval_level", "sigma", "calibration"} <= set(rep["release"])
    assert {"lambda_hat", "N_hat", "m"} <= set(rep["lambda_min"])
    assert {"passed", "value", "threshold", "reason"} <= set(rep["test"])
    json.dumps(rep, allow_nan=False)


def test_report_holds_no_non_private_field(problem):
    for eps in (8.0, 1.0, 0.01):  # released, bottom, and lambda_hat_min = 0
        rel = release(problem, eps)
        rep = private_report(rel["run"], "x2", rel["budget"], "synthetic", problem.n, problem.d)
        assert not keys(rep) & NON_PRIVATE


def test_report_values_are_the_runs(problem):
    rel = release(problem)
    run, budget = rel["run"], rel["budget"]
    assert run.release.status == "released"
    rep = private_report(run, "x2", budget, "synthetic", problem.n, problem.d, feature_names=problem.feature_names,
                         loss="robust", domain="cube", lambda_reg=0.0)
    assert rep["release"]["value"] == run.release.value
    assert rep["release"]["interval"] == list(run.release.interval)
    assert rep["lambda_min"]["lambda_hat"] == run.lambda_min.lambda_hat
    assert rep["lambda_max"]["lambda_hat"] == run.lambda_max.lambda_hat
    assert rep["test"]["passed"] is True
    assert rep["guarantee"] == dict(epsilon=8.0, delta=1e-6, accounting="basic", holds=True, warning=None)
    assert rep["coefficient"] == dict(name="x2", u=[0.0, 0.0, 1.0, 0.0, 0.0])
    assert rep["data"]["n"] == N and rep["data"]["d"] == 5
    assert rep["interval_coverage"] == pytest.approx(0.95 * (1 - budget.lambda_min.delta))


def test_report_of_a_bottom(problem):
    rel = release(problem, 0.01)
    rep = private_report(rel["run"], "x2", rel["budget"], "synthetic", problem.n, problem.d)
    assert rep["release"]["status"] == "bottom"
    assert rep["release"]["value"] is None and rep["release"]["interval"] is None
    assert rep["lambda_max"] is None
    assert rep["release"]["reason"] == rel["run"].test.reason


# ---------------------------------------------------------------- the page


def test_without_a_release_the_page_says_where_to_make_one():
    at = open_report()
    assert not at.exception
    (info,) = at.info
    assert "Pipeline page" in info.value
    assert not at.get("download_button")


def test_a_release_on_other_data_is_not_shown(problem):
    at = open_report(last_release=release(problem), sample_seed=1)
    assert not at.exception
    assert "Pipeline page" in at.info[0].value
    assert not at.main.metric


def test_release_shows_private_values_only(problem, downloads):
    rel = release(problem)
    run = rel["run"]
    at = open_report(last_release=rel)
    assert not at.exception and not at.error
    text = page_text(at)
    assert f"{run.release.value:.6g}" in text
    assert f"{run.lambda_min.lambda_hat:.6g}" in text
    assert "(ε, δ) = (8, 1e-06)-differentially private" in text
    for secret in secrets(run, problem):
        assert secret not in text
    html, doc = downloads["text/html"].decode(), json.loads(downloads["application/json"])
    assert f"{run.release.value:.6g}" in html
    assert "<script" not in html and "http" not in html  # self-contained
    assert doc["release"]["value"] == run.release.value
    for secret in secrets(run, problem):
        assert secret not in html
    assert not keys(doc) & NON_PRIVATE


def test_bottom_shows_the_reason(problem):
    rel = release(problem, 1.0)
    assert rel["run"].release.status == "bottom"
    at = open_report(last_release=rel)
    assert not at.exception
    assert [m.value for m in at.main.metric if m.label.startswith("Released value")] == ["⊥"]
    assert "condition (14) fails" in at.warning[0].value


def test_report_is_the_same_in_both_modes(problem):
    rel = release(problem)
    teaching = page_text(open_report(last_release=rel, mode="teaching"))
    publish = page_text(open_report(last_release={**rel, "mode": "publish"}, mode="publish"))
    assert teaching == publish


def test_a_seeded_run_is_reported_as_not_private(problem):
    seeded = {**release(problem), "seed": 7}
    at = open_report()
    at.session_state["last_release"] = seeded
    at.run()
    assert any("NOT a private release" in e.value for e in at.error)
    assert not any("differentially private" in s.value for s in at.success)
