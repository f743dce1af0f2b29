"""The Report page and core.report.private_report: charged publish-mode releases only, private values only."""

from __future__ import annotations

import html as html_module
import json
import math
import re
import uuid
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

import ui.loaded
import ui.release
from core.data import synthetic
from core.data.spec import AcsSpec, SyntheticSpec
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.plan import ReleasePlan
from core.privacy.accounting import split_budget
from core.privacy.ledger_store import open_ledger
from core.privacy.unit import PrivacyUnit
from core.report import plain_summary, private_report
from ui.keys import PUBLISHED, TEACHING_RUN
from ui.loaded import Upload
from ui.release import PublishedRelease

N = 20_000  # small enough to keep every run fast
DATA = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0)  # the app's defaults with n = N
MODEL = ModelSpec("robust", "cube", None, 0.0)
NO_RELEASE = "Nothing has been published on these people yet"
HOW_TO = "switch the sidebar's Mode to Publish, then press Release on the Pipeline page"
DOWNLOADS = ["Download HTML report", "Download JSON", "Script of these settings"]
# Names of everything computed from the data without privacy (core.privacy.marks and the brief of the report).
NON_PRIVATE = {"fit", "theta", "omega", "Delta", "u_theta", "oracle_interval", "z", "N", "noise", "statistic",
               "noise_sd", "covers", "clipped_rows"}


@pytest.fixture(scope="module")
def problem():
    """The app's default data set with n = N, prepared as ui.loaded prepares it."""
    data = synthetic(N, 5, "robust", 1.0, 1.0, 0)
    return prepare(data.X, data.y, "robust", "cube", None, 0.0, data.feature_names)


def release(problem, epsilon: float = 8.0, coordinate: int = 2, fallback: bool = False) -> PublishedRelease:
    """A record as the Pipeline page's publish path stores it (seeded here only so the outcome is fixed)."""
    budget = split_budget(epsilon, 1e-6)
    run = run_private(problem, coordinate, budget, make_rng(7), "paper", 0.95, fallback=fallback)
    plan = ReleasePlan(data=DATA, model=MODEL, target=coordinate, name=problem.feature_names[coordinate],
                       budget=budget, calibration="paper", level=0.95, fallback=fallback)
    return PublishedRelease(plan, run, uuid.uuid4().hex)


def charges(at: AppTest, published: PublishedRelease) -> list[tuple[float, float]]:
    """(ε, δ) of every charge on the people the release was drawn on."""
    return [(e.epsilon, e.delta) for e in open_ledger().entries(published.plan.data.population())]


def open_report(published: PublishedRelease | None = None, **settings: object) -> AppTest:
    at = new_app(60)
    at.session_state["n"] = N
    at.run()  # the first run registers the pages of st.navigation; switch_page needs them
    if published is not None:
        at.session_state[PUBLISHED.key] = {(published.plan.data, published.plan.model): published}
    for key, value in settings.items():
        at.session_state[key] = value
    return at.switch_page("pages/report.py").run()


def download_labels(at: AppTest) -> list[str]:
    """The labels of every download button on the page, sidebar included."""
    return [b.proto.label for b in at.get("download_button")]


def released_value(at: AppTest) -> str:
    (value,) = [m.value for m in at.main.metric if m.label.startswith("Released value")]
    return value


def page_text(at: AppTest) -> str:
    """Every text of the page's main area, markdown escapes removed."""
    main = at.main
    parts = [e.value for kind in ("title", "markdown", "caption", "success", "warning", "info", "error")
             for e in main.get(kind)]
    parts += [f"{m.label} {m.value}" for m in main.metric]
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


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


# ---------------------------------------------------------------- private_report


def test_report_has_every_section(problem):
    rel = release(problem)
    rep = private_report(rel.run, "x2", rel.plan.budget, "synthetic", problem.n, problem.d)
    assert set(rep) == {"data", "coefficient", "release", "interval_coverage", "lambda_min", "lambda_max", "test",
                        "guarantee", "privacy_unit", "assumptions", "method"}
    assert {"status", "reason", "value", "interval", "interval_level", "sigma", "calibration"} <= set(rep["release"])
    assert {"lambda_hat", "N_hat", "m"} <= set(rep["lambda_min"])
    assert {"passed", "value", "threshold", "reason"} <= set(rep["test"])
    json.dumps(rep, allow_nan=False)


def test_report_holds_no_non_private_field(problem):
    for eps in (8.0, 1.0, 0.01):  # released, bottom, and lambda_hat_min = 0
        rel = release(problem, eps)
        rep = private_report(rel.run, "x2", rel.plan.budget, "synthetic", problem.n, problem.d)
        assert not keys(rep) & NON_PRIVATE


def test_report_values_are_the_runs(problem):
    rel = release(problem)
    run, budget = rel.run, rel.plan.budget
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
    rep = private_report(rel.run, "x2", rel.plan.budget, "synthetic", problem.n, problem.d)
    assert rep["release"]["status"] == "bottom"
    assert rep["release"]["value"] is None and rep["release"]["interval"] is None
    assert rep["lambda_max"] is None
    assert rep["release"]["reason"] == rel.run.test.reason


# ---------------------------------------------------------------- the page


def assert_nothing_reported(at: AppTest) -> None:
    """The page says there is no published release and how to make one, and offers no download at all."""
    assert not at.exception, [e.value for e in at.exception]
    (info,) = at.info
    assert NO_RELEASE in info.value and HOW_TO in info.value
    assert [link.proto.page for link in at.main.get("page_link")] == ["pipeline"]  # the Pipeline page's URL path
    assert not at.get("download_button")
    assert not at.main.metric
    assert "differentially private" not in page_text(at)


def test_without_a_release_the_page_says_where_to_make_one():
    assert_nothing_reported(open_report())


def test_an_unreadable_upload_is_an_error_message_not_a_traceback():
    """A release is looked up by the loaded data's settings, whose d needs the file read."""
    at = new_app(60)
    at.session_state["source"] = "upload"
    at.run()
    at.switch_page("pages/data.py").run()
    at.file_uploader(key="upload_file").set_value(("junk.csv", b"\x00\x01 not a table \xff", "text/csv")).run()
    at.switch_page("pages/report.py").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["junk.csv is not a text CSV file"]


@pytest.mark.parametrize("seed", [7, None])
def test_teaching_alone_reports_nothing(seed):
    """Default mode: the Pipeline's teaching runs, seeded or not, are never reported."""
    at = new_app(60)
    at.session_state["n"] = N
    at.session_state["noise_seed"] = seed
    at.run()
    assert at.session_state["mode"] == "teaching"
    at.switch_page("pages/pipeline.py").run()
    assert at.session_state[TEACHING_RUN.key].plan.seed == seed
    at.button(key="fresh_noise").click().run()  # another draw, as a user looking for a pleasing number would
    assert at.get("download_button")  # the Pipeline's teaching snapshot, which is not a report
    at.switch_page("pages/report.py").run()
    assert_nothing_reported(at)
    assert PUBLISHED.key not in at.session_state


def test_a_legacy_teaching_record_is_not_reported(problem):
    """A teaching run in st.session_state, under the old key or the new one, is not a published release."""
    rec = release(problem)
    at = new_app(60)
    at.session_state["n"] = N
    at.run()
    at.session_state["last_release"] = dict(run=rec.run, coordinate=rec.plan.name, data=DATA,
                                            budget=rec.plan.budget, mode="teaching", calibration="paper", level=0.95,
                                            model=MODEL, seed=7)
    at.switch_page("pages/report.py").run()
    assert_nothing_reported(at)


def publish_once(**settings: object) -> tuple[AppTest, PublishedRelease]:
    """A publish-mode release at ε = 8 on the Pipeline page, with the given settings; the app and its record."""
    at = new_app(60)
    at.session_state["n"] = N
    at.session_state["epsilon"] = 8.0
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/pipeline.py")
    # After its first run AppTest runs the page alone, without app.py's sidebar, whose Mode radio then drops its
    # value: the mode is set in st.session_state before every run instead.
    at.session_state["mode"] = "publish"
    at.run()
    at.session_state["mode"] = "publish"
    at.button(key="release").click().run()
    assert not at.exception and not at.error
    (published,) = at.session_state[PUBLISHED.key].values()
    return at, published


def test_publish_release_reaches_the_report_and_teaching_does_not_replace_it(downloads):
    at, published = publish_once()
    assert isinstance(published, PublishedRelease)
    assert published.run.release.status == "released"
    assert charges(at, published) == [(8.0, 1e-6)]  # charged

    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()
    assert not at.exception and not at.error
    shown = released_value(at)
    assert shown == f"{published.run.release.value:.6g}"
    assert download_labels(at) == DOWNLOADS
    assert json.loads(downloads["application/json"][1])["release"]["value"] == published.run.release.value
    before = page_text(at)

    # Back to teaching: seeded and unseeded runs on the same data leave the published record alone.
    at.session_state["mode"] = "teaching"
    at.switch_page("pages/pipeline.py").run()
    for seed in (7, None):
        at.session_state["mode"] = "teaching"
        at.number_input(key="noise_seed").set_value(seed).run()
        at.session_state["mode"] = "teaching"
        at.button(key="fresh_noise").click().run()
        assert not at.exception
        assert at.session_state[TEACHING_RUN.key].plan.seed == at.session_state["noise_seed"]
    teaching = at.session_state[TEACHING_RUN.key].run.release.value
    assert teaching != published.run.release.value
    (kept,) = at.session_state[PUBLISHED.key].values()
    assert kept is published
    assert charges(at, published) == [(8.0, 1e-6)]  # teaching charged nothing

    at.switch_page("pages/report.py").run()
    assert not at.exception
    assert released_value(at) == shown
    assert page_text(at) == before
    assert download_labels(at) == DOWNLOADS
    # the teaching draw is not on the page, unless it rounds to the published value's six digits (about 1 in 2,000)
    assert f"{teaching:.6g}" not in page_text(at) or f"{teaching:.6g}" == shown


def test_a_release_on_other_data_is_not_shown(problem):
    assert_nothing_reported(open_report(release(problem), sample_seed=1))


def test_a_release_under_another_model_is_not_shown(problem):
    assert_nothing_reported(open_report(release(problem), lam_reg=0.01))


def test_release_shows_private_values_only(problem, downloads):
    rel = release(problem)
    run = rel.run
    at = open_report(rel)
    assert not at.exception and not at.error
    assert download_labels(at) == DOWNLOADS
    text = page_text(at)
    assert f"{run.release.value:.6g}" in text
    assert f"{run.lambda_min.lambda_hat:.6g}" in text
    assert "(ε, δ) = (8, 1e-06)-differentially private" in text
    assert "NOT a private release" not in text
    for secret in secrets(run, problem):
        assert secret not in text
    html, doc = downloads["text/html"][1].decode(), json.loads(downloads["application/json"][1])
    assert f"{run.release.value:.6g}" in html
    assert "<script" not in html and "http" not in html  # self-contained
    assert doc["release"]["value"] == run.release.value
    assert doc["guarantee"]["holds"] is True and doc["guarantee"]["warning"] is None
    for secret in secrets(run, problem):
        assert secret not in html
    assert not keys(doc) & NON_PRIVATE


def test_the_interval_is_contrasted_with_a_population_interval(problem, downloads):
    """One sentence on the screen and in the HTML: the interval is for u^T theta(P_n) under the noise only."""
    at = open_report(release(problem))
    assert not at.exception
    sentence = ("This private interval covers uᵀθ(Pₙ), the coefficient fitted on these n rows, and accounts for the "
                "privacy noise only; it is not a confidence interval for a population coefficient, which would also "
                "have to account for the sampling variability of the n rows.")
    assert sentence in page_text(at)
    assert html_module.escape(sentence) in downloads["text/html"][1].decode()


def test_the_script_reruns_the_settings_without_a_seed(problem, downloads):
    """The published release's settings as a script: no seed, fresh noise, a new release outside the ledger."""
    rel = release(problem)
    at = open_report(rel)
    assert not at.exception
    code = downloads["text/x-python"][1].decode()
    compile(code, "reproduce", "exec")
    assert "SEED = None" in code and "FRESH noise from the operating system" in code
    assert "seeded TEACHING" not in code and "replays the run" not in code
    assert "COEFFICIENT = 'x2'" in code and f"SyntheticSpec(loss='robust', n={N}," in code
    assert "make_budget(8.0, 1e-06," in code
    assert "the data are synthetic" in code.lower()


@pytest.mark.parametrize("fallback", [True, False])
def test_the_script_keeps_the_fallback_the_release_was_drawn_with(problem, downloads, fallback):
    """A release that passed (14) with the fallback on (or off): the script says so, whatever the setting is now."""
    rel = release(problem, fallback=fallback)
    assert rel.run.release.status == "released"
    open_report(rel, fallback="off" if fallback else "on")
    assert f"fallback={fallback})" in downloads["text/x-python"][1].decode()


def test_bottom_shows_the_reason(problem):
    rel = release(problem, 1.0)
    assert rel.run.release.status == "bottom"
    at = open_report(rel)
    assert not at.exception
    assert released_value(at) == "⊥"
    assert "condition (14) fails" in at.warning[0].value


def test_report_is_the_same_in_both_modes(problem):
    rel = release(problem)
    teaching = page_text(open_report(rel, mode="teaching"))
    publish = page_text(open_report(rel, mode="publish"))
    assert teaching == publish


# ---------------------------------------------------------------- the privacy unit


def with_unit(monkeypatch, unit: PrivacyUnit) -> None:
    """The loaded data set with another privacy unit, as the census loaders set it."""
    real = ui.loaded.dataset
    monkeypatch.setattr(ui.loaded, "dataset", lambda: replace(real(), privacy_unit=unit))


def test_synthetic_rows_are_the_unit(problem, downloads):
    at = open_report(release(problem))
    assert not at.exception
    wording = ("Privacy unit: a row. The guarantee is per row of the synthetic data; if one person can fill several "
               "rows, it holds per person only by group privacy.")
    assert wording in page_text(at)
    assert wording in downloads["text/html"][1].decode()
    assert json.loads(downloads["application/json"][1])["privacy_unit"] == dict(
        unit="row", max_rows_per_person=1, epsilon_per_person=8.0, delta_per_person=1e-6)


def test_an_uploaded_census_file_protects_each_person(downloads):
    """Released in publish mode on an uploaded PUMS file: its rows are census persons, one row each."""
    pums = Path(__file__).parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
    at = new_app(60)
    settings = dict(source="upload", upload=Upload.of(pums.name, pums.read_bytes()), mode="publish")
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()
    at.session_state["mode"] = "publish"
    at.switch_page("pages/pipeline.py").run()
    at.session_state["mode"] = "publish"
    at.button(key="release").click().run()
    assert not at.exception and not at.error
    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()
    assert not at.exception and not at.error
    wording = "Privacy unit: a person. Each person fills at most one row, so the guarantee above holds per person."
    assert wording in page_text(at)
    assert wording in downloads["text/html"][1].decode()
    assert json.loads(downloads["application/json"][1])["privacy_unit"]["unit"] == "person"


def test_one_row_per_person(problem, monkeypatch, downloads):
    with_unit(monkeypatch, PrivacyUnit("person", 1))
    at = open_report(release(problem))
    assert not at.exception
    wording = "Each person fills at most one row, so the guarantee above holds per person."
    assert wording in page_text(at)
    assert wording in downloads["text/html"][1].decode()


def test_a_person_in_several_rows_is_covered_by_group_privacy(problem, monkeypatch, downloads):
    unit = PrivacyUnit("person", 3)
    with_unit(monkeypatch, unit)
    at = open_report(release(problem))
    assert not at.exception
    eps, delta = unit.per_person(8.0, 1e-6)
    wording = (f"The sample was drawn with replacement: one person fills up to 3 rows, so per person the guarantee "
               f"is (kε, δ_k) = ({eps:g}, {delta:.3g}) by group privacy")
    assert eps == 24.0
    assert wording in page_text(at)
    assert wording in downloads["text/html"][1].decode()
    doc = json.loads(downloads["application/json"][1])
    assert doc["privacy_unit"] == dict(unit="person", max_rows_per_person=3, epsilon_per_person=eps,
                                       delta_per_person=delta)


def test_the_report_states_the_ball_the_fit_used():
    """No radius given: the ball is the smallest around the cube, radius sqrt(d), on screen and in the HTML."""
    at, published = publish_once(domain="ball")
    assert published.plan.model.radius == pytest.approx(5**0.5)
    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()
    assert not at.exception
    assert f"ball ‖x‖₂ ≤ {5**0.5:g}" in page_text(at).replace("\\", "")


def test_a_failed_test_on_logistic_data_falls_back_and_the_report_says_so(downloads):
    """Logistic data at a small n: (14) fails, publish mode falls back by default and says which branch."""
    at, published = publish_once(source="synthetic_logistic", n=5_000, epsilon=2.0)
    assert published.run.release.status == "fallback" and published.run.release.value is not None
    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()
    assert not at.exception
    text = page_text(at)
    assert "released by objective perturbation (15)" in text
    released = json.loads(downloads["application/json"][1])["release"]
    assert released["branch"] == "objective_perturbation"
    # what the interval covers, in words: proven either way, the fit on these rows where the curvature interval was
    # given, else the ridge-regularised fit's coefficient
    assert released["fallback_curvature"]["epsilon"] > 0 and released["interval_proven"]
    assert "approximate 95%" not in text and "to first order" not in text
    assert ("regularised" not in text) == (released["fallback_interval"] is not None)
    # plain Algorithm 5 stays one click away
    at2, plain = publish_once(source="synthetic_logistic", n=5_000, epsilon=2.0, fallback="off")
    assert plain.run.release.status == "bottom"


def test_the_report_shows_the_ledger_of_these_people(downloads):
    """Spent, cap, remaining and the history of charged releases, on screen, in the JSON and the HTML."""
    at, first = publish_once(epsilon=3.0)
    at.session_state["mode"] = "publish"
    at.button(key="release").click().run()
    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()
    assert not at.exception
    doc = json.loads(downloads["application/json"][1])
    ledger = doc["ledger"]
    assert (ledger["spent_epsilon"], ledger["spent_delta"]) == (6.0, 2e-6)  # as it stood when this was published
    assert [h["epsilon"] for h in ledger["history"]] == [3.0, 3.0]
    assert ledger["history"][0]["value"] == first.run.release.value
    assert ledger["history"][0]["outcome"] == first.run.release.status
    html = downloads["text/html"][1].decode()
    assert "Privacy ledger" in html and "Spent on these people when this was published" in html
    assert "Spent on these people when this was published" in page_text(at)
    assert "ε = 4, δ = 8e-06 remains" in page_text(at) and "remains" not in html  # now: apart, and not exported
    # Each charge's time, short and unbroken in print (the JSON keeps the ISO time).
    stamps = [datetime.fromisoformat(h["time"]).strftime("%Y-%m-%d %H:%M UTC") for h in ledger["history"]]
    assert all(f"<th>{stamp}</th>" in html and stamp in page_text(at) for stamp in stamps)
    assert re.search(r"th \{[^}]*white-space: nowrap", html)
    # The document prints both releases' values, so its stated guarantee is their total, not the last one's.
    assert "everything in it is (6, 2e-06)-differentially private" in page_text(at)
    assert "everything in it is (6, 2e-06)-differentially private" in html


def test_a_paid_for_release_survives_a_new_session_without_a_new_charge(downloads):
    """A new session (a reload, a new tab, a restart: the ledger is the file) on the same data shows the last charged
    release, read back from the ledger, with its HTML and JSON; the ledger has exactly the one charge after."""
    at, published = publish_once()
    assert charges(at, published) == [(8.0, 1e-6)]
    downloads.clear()
    fresh = open_report()  # no release in this session
    assert not fresh.exception
    text = page_text(fresh)
    assert "Read back from the privacy ledger" in text and "charges nothing" in text
    assert re.search(r"charged \d{4}-\d\d-\d\d \d\d:\d\d UTC\. ", text)
    assert "Privacy ledger of these people" in text and "ε = 8" in text
    kept = json.loads(downloads["application/json"][1])
    assert kept["release"]["value"] == published.run.release.value
    assert kept["release"]["interval"] == list(published.run.release.interval)
    assert kept["ledger"]["history"][0]["value"] == published.run.release.value
    assert "text/html" in downloads and "text/x-python" not in downloads  # no script without the session's settings
    assert charges(fresh, published) == [(8.0, 1e-6)]  # showing it charged nothing


def _census_rep(value=-0.27, interval=(-0.28, -0.26), population=(-0.30, -0.24), name="female"):
    release = dict(value=value, interval=list(interval), interval_level=0.95, status="fallback", reason="",
                   fallback_curvature=dict(bound=40.0), population=dict(interval=list(population)))
    data = dict(loss="logistic", outcome=AcsSpec.outcome, groups=AcsSpec.groups)
    return dict(release=release, data=data, coefficient=dict(name=name))


def test_the_summary_speaks_in_words_with_an_odds_ratio_and_no_formula():
    lines = plain_summary(_census_rep(), 4.0, 1e-6)
    text = " ".join(lines)
    assert "The whole range is below 0" in lines[1]
    assert (f"the odds of earning over $40,000 for women are {math.exp(-0.27):.3g} (range {math.exp(-0.28):.3g} to "
            f"{math.exp(-0.26):.3g}) times those for men") in text
    assert "For the population these people were sampled from, the 95% range is -0.3 to -0.24" in text
    assert f"at most a factor of {math.exp(4.0):.3g} (ε = 4)" in text
    for formula in ("uᵀ", "θ", "λ", "(14)", "(15)", "Lemma", "^T", "theta", "sigma"):
        assert formula not in text, formula
    straddles = " ".join(plain_summary(_census_rep(0.01, (-0.02, 0.04), (-0.05, 0.07)), 4.0, 1e-6))
    assert straddles.count("The range includes 0") == 2
    other = " ".join(plain_summary(_census_rep(name="hours"), 4.0, 1e-6))
    assert "one more unit of hours (as encoded) multiplies the odds of earning over $40,000" in other


def test_an_extreme_odds_ratio_range_reads_in_words():
    """Ranges of odds ratios past 1/1,000 or 1,000 read in words, and one from below 1/100 to above 100 says it tells
    nothing (never "1.79e-07 to 3.35e+06")."""
    odds = next(line for line in plain_summary(_census_rep(-0.27, (-15.5, 15.0), (-16.0, 16.0)), 4.0, 1e-6)
                if "odds" in line)
    assert "(uninformative: from under 1/1,000 to over 1,000) times those for men" in odds
    assert "e+" not in odds and "e-" not in odds
    assert "(range 0.756 to 0.771)" in " ".join(plain_summary(_census_rep(), 4.0, 1e-6))
