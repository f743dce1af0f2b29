"""The Pipeline page, driven through Streamlit's AppTest from the app's entry point."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from apptest import new_app
from streamlit.testing.v1 import AppTest

import ui.loaded
import ui.release
from core.data import synthetic
from core.data.spec import AcsSpec, SyntheticSpec
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.privacy.accounting import RELEASE_SPLIT, split_budget
from core.privacy.charge import charge
from core.privacy.gaussian import DEFAULT_CALIBRATION
from core.privacy.ledger_store import open_ledger
from core.privacy.population import Population
from ui.keys import PUBLISHED, TEACHING_RUN
from ui.loaded import Upload
from ui.release import PublishedRelease, TeachingRun

N = 20_000  # small enough to keep every run fast
REFUSED = "Refused:"
OFF = "Release is off:"


DETAILS = ("lmin_details", "lmax_details", "test_details", "release_details")


def start(details: bool = True, **settings: object) -> AppTest:
    """The Pipeline page with n = N and the given registry settings in the session (after the Start page's run);
    with details, the stages' intermediates open."""
    at = new_app(60)
    at.session_state["n"] = N
    at.session_state["settings_panel"] = True  # the coordinate's and the model's widgets exist only when open
    for key in DETAILS if details else ():
        at.session_state[key] = True
    for key, value in settings.items():
        at.session_state[key] = value
    at.run()
    return at.switch_page("pages/pipeline.py").run()


def figures(at: AppTest) -> list[str]:
    """The titles of the SVG figures (ui.svg) on the page, in order."""
    return [re.search(r"<title>(.*?)</title>", m.value).group(1) for m in at.main.markdown
            if m.value.startswith('<div class="psp-figure">')]


def metrics(at: AppTest, label_start: str) -> list[str]:
    """The shown values of every metric whose label starts with label_start."""
    return [m.value for m in at.main.metric if m.label.startswith(label_start)]


def metric(at: AppTest, label_start: str) -> str:
    (value,) = metrics(at, label_start)
    return value


def page_text(at: AppTest) -> str:
    """Every piece of text the page shows: titles, markdown, captions, alerts, metrics, expander labels."""
    main = at.main
    parts = [e.value for kind in ("title", "markdown", "caption", "info", "success", "warning", "error")
             for e in getattr(main, kind)]
    parts += [f"{m.label} {m.value}" for m in main.metric]
    parts += [e.label for e in main.expander]
    return "\n".join(parts)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def charges(at: AppTest) -> list[tuple[float, float]]:
    """(ε, δ) of every charge on the people of the default synthetic data with n = N."""
    population = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()
    return [(e.epsilon, e.delta) for e in open_ledger().entries(population)]


def release(at: AppTest) -> AppTest:
    return at.button(key="release").click().run()


def release_off(at: AppTest) -> str:
    """The notice of a draw the ledger would refuse, shown before any click; the Release button is then off."""
    assert at.button(key="release").disabled
    (notice,) = [w.value for w in at.warning if w.value.startswith(OFF)]
    return notice


def core_run(epsilon: float, seed: int, j: int):
    data = synthetic(N, 5, "robust", 1.0, 1.0, 0)
    problem = prepare(data.X, data.y, "robust", "cube", None, 0.0, data.feature_names)
    budget = split_budget(epsilon, 1e-6, RELEASE_SPLIT)
    return run_private(problem, j, budget, make_rng(seed), DEFAULT_CALIBRATION, 0.95)


# ---------------------------------------------------------------- teaching mode


def test_teaching_page_renders_every_stage():
    at = start(epsilon=8.0, noise_seed=1)
    assert_clean(at)
    assert not at.error
    titles = [m.value for m in at.main.markdown if m.value.startswith("####")]
    assert [t.split(" · ")[0] for t in titles] == ["#### Stage 0", "#### Stage 1", "#### Stage 2", "#### Stage 3",
                                                   "#### Stage 4", "#### Budget"]
    assert figures(at) == ["The fit θ(Pn) of (1), by feature, not private", "Stability test (14): passes",
                           "The release T: its density, this draw and the two intervals"]
    assert not at.main.get("plotly_chart")  # the recursions and the what-if's region wait in expanders


def test_the_recursions_are_drawn_when_their_expanders_open():
    """The two staircases and number lines appear once their expanders are open."""
    at = start(epsilon=8.0, noise_seed=1)
    assert_clean(at)
    at.session_state["lmin_steps"] = True
    at.session_state["lmax_steps"] = True
    at.run()
    assert_clean(at)
    assert len({c.proto.id for c in at.main.get("plotly_chart")}) == 2  # the staircases
    assert figures(at)[1:3] == ["λmin(Pn) (not private) and its certified bound λ̂min",
                                "λmax(Pn) (not private) and its certified bound λ̂max"]


def test_released_value_matches_core():
    seed, eps = 7, 8.0
    at = start(epsilon=eps, noise_seed=seed, coordinate="x2")
    assert_clean(at)
    run = core_run(eps, seed, 2)
    assert run.release.status == "released"
    assert float(metric(at, "Released value")) == pytest.approx(run.release.value, rel=1e-5)
    lo, hi = run.release.interval
    assert metric(at, "95% interval (privacy noise only)") == f"[{lo:.6g}, {hi:.6g}]"


def test_seed_replays_and_fresh_noise_draws_anew():
    at = start(epsilon=8.0, noise_seed=3)
    first = metric(at, "Gaussian draw")
    at.run()
    assert metric(at, "Gaussian draw") == first
    at.button(key="fresh_noise").click().run()  # with a seed: a new random seed, shown in the seed box
    assert at.session_state["noise_seed"] != 3
    at.number_input(key="noise_seed").set_value(None).run()
    first = metrics(at, "Laplace draw")
    at.button(key="fresh_noise").click().run()
    assert_clean(at)
    assert metrics(at, "Laplace draw") != first
    assert at.session_state["noise_seed"] is None


def test_not_private_numbers_are_marked():
    at = start(noise_seed=1, epsilon=8.0)
    marked = {m.label.removesuffix(" · not private") for m in at.main.metric if "not private" in m.label}
    plain = {m.label for m in at.main.metric if "not private" not in m.label}
    assert {
        "N", "Laplace draw", "λmin(Pₙ)", "κ", "ω(u | Pₙ)", "Δ(Pₙ, u)",
        "uᵀθ(Pₙ)", "95% oracle interval", "Gaussian draw Z",
        "smallest ε that passes (noise-free, about 50 %)", "smallest n that passes (noise-free, about 50 %)",
    } <= marked
    assert {
        "N̂", "m", "λ̂min", "Threshold of (14)", "Released value T",
        "95% interval (privacy noise only)",
    } <= plain


def test_epsilon_changes_threshold():
    at = start(noise_seed=1)
    before = metric(at, "Threshold of (14)")
    at.select_slider(key="epsilon").set_value(2.0).run()
    assert_clean(at)
    assert metric(at, "Threshold of (14)") != before


def test_epsilon_off_the_grid_stays_selectable():
    at = start(epsilon=3.7, delta=3e-7)
    assert_clean(at)
    assert not at.error
    assert at.select_slider(key="epsilon").value == 3.7
    assert "ε = 3.7 and δ = 3e-07" in page_text(at)


def test_teaching_run_is_kept_apart_and_never_published():
    at = start(noise_seed=1, coordinate="x1")
    rec = at.session_state[TEACHING_RUN.key]
    assert isinstance(rec, TeachingRun) and rec.plan.seed == 1
    assert rec.plan.name == "x1" and rec.plan.level == 0.95 and rec.plan.calibration == DEFAULT_CALIBRATION
    assert rec.plan.data.n == N and rec.plan.budget.epsilon_total == 4.0
    at.text_input(key="direction").input("1, -1, 0, 0, 0").run()
    assert_clean(at)
    rec = at.session_state[TEACHING_RUN.key]
    assert rec.plan.name == "custom u"
    assert rec.run.u == pytest.approx([2**-0.5, -(2**-0.5), 0, 0, 0])
    assert PUBLISHED.key not in at.session_state and "last_release" not in at.session_state
    assert charges(at) == []  # teaching charges nothing


def test_teaching_snapshot_is_labelled_on_its_face(downloads):
    at = start(noise_seed=7, epsilon=8.0, coordinate="x2")
    assert_clean(at)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Save teaching snapshot"  # then the reproduce-this-run downloads (ui.export)
    name, data = downloads["text/markdown"]
    text = data.decode()
    assert name == "teaching_snapshot_x2.md"
    assert text.startswith("TEACHING — NOT PRIVATE, NOT CHARGED, noise seed 7\n")
    assert "noise seed 7" in text
    run = at.session_state[TEACHING_RUN.key].run
    assert f"- value = {run.release.value:.6g}\n" in text  # the released value, unmarked
    assert f"- u_theta = {run.release.u_theta:.6g} [NOT PRIVATE]" in text  # the non-private numbers, marked
    assert f"- noise = {run.lambda_min.noise:.6g} [NOT PRIVATE]" in text
    assert "- z = " in text and "oracle_interval = [" in text
    assert "theta = [" in text
    # Not the report's format: no guarantee section, no differential-privacy claim.
    assert "guarantee" not in text.lower() and "differentially private" not in text
    assert "Download" not in text and "private_release" not in name


def test_unseeded_teaching_snapshot_says_fresh_noise(downloads):
    at = start(epsilon=8.0, direction="1, -1, 0, 0, 0")
    assert_clean(at)
    name, data = downloads["text/markdown"]
    assert data.decode().startswith("TEACHING — NOT PRIVATE, NOT CHARGED, fresh OS noise\n")
    assert name == "teaching_snapshot_custom_u.md"


def test_snapshot_download_does_not_redraw(downloads):
    """Saving the snapshot (or the script and notebook) keeps the numbers on screen: no download reruns the page."""
    at = start(epsilon=8.0)
    buttons = at.get("download_button")
    assert buttons and all(b.proto.ignore_rerun for b in buttons)


def test_private_settings_do_not_refit(monkeypatch):
    calls = []
    real = ui.loaded.prepare_spec

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ui.loaded, "prepare_spec", counting)
    st.cache_resource.clear()
    at = start(noise_seed=1)
    assert calls == [1]
    at.select_slider(key="epsilon").set_value(6.3).run()
    at.select_slider(key="delta").set_value(1e-8).run()
    at.number_input(key="split_a").set_value(2.0).run()
    at.selectbox(key="coordinate").set_value("x3").run()
    at.slider(key="level").set_value(0.9).run()
    at.radio(key="calibration").set_value("analytic").run()
    at.number_input(key="noise_seed").set_value(2).run()
    assert_clean(at)
    assert calls == [1]
    at.number_input(key="lam_reg").set_value(0.01).run()
    assert calls == [1, 1]


@pytest.mark.parametrize(
    "settings",
    [
        dict(direction="1,abc"),
        dict(direction="1, 2"),  # d = 5 numbers needed
        dict(direction="0, 0, 0, 0, 0"),
        dict(epsilon=0.0),
        dict(epsilon=0.01, delta=0.9, split_a=100.0),  # stage-1 delta above 1/2
    ],
)
def test_bad_settings_show_an_error(settings):
    at = start(**settings)
    assert_clean(at)
    assert len(at.error) == 1 and at.error[0].value
    assert not any(m.value.startswith("#### Stage 1") for m in at.main.markdown)


def test_bad_direction_typed_in_shows_an_error():
    at = start()
    at.text_input(key="direction").input("1,abc").run()
    assert_clean(at)
    assert "comma-separated numbers" in at.error[0].value


def test_data_error_points_to_the_data_page():
    at = start(source="upload")
    assert_clean(at)
    assert "No file uploaded" in at.error[0].value
    assert at.main.get("page_link")
    at = start(d=40, n=30)  # n <= d
    assert_clean(at)
    assert "n > d" in at.error[0].value


def test_small_sample_is_bottom_without_stage_2():
    at = start(n=2_000, epsilon=1.0)  # N = 12 against k = 45: λ̂_min = 0 unless the Laplace draw passes 33
    assert_clean(at)
    assert metric(at, "Status") == "⊥"
    assert any("Not reached" in i.value for i in at.info)


@pytest.mark.parametrize(
    "settings",
    [
        dict(source="synthetic_logistic", lam_reg=0.001),
        dict(domain="ball", radius=3.0, calibration="analytic"),
        dict(accounting="pld", epsilon=8.0),
        dict(split_c=0.5),  # the what-if's search up to ε = 1000 overflows in core: a warning, not a crash
    ],
)
def test_other_settings_render(settings):
    at = start(**settings)
    assert_clean(at)
    assert not at.error


def test_pld_total_on_request_or_under_pld_accounting():
    at = start(noise_seed=1)
    assert not metrics(at, "ε total (PLD")
    at.toggle(key="pld_total").set_value(True).run()
    assert metric(at, "ε total (PLD at δ = 1e-06)") == "4"
    at = start(noise_seed=1, accounting="pld")
    assert float(metric(at, "ε total (PLD at δ = 1e-06)")) == pytest.approx(4.0, rel=1e-3)
    assert not at.main.get("toggle")


def test_cube_drops_the_ball_radius():
    at = start(domain="ball", radius=3.0)
    at.radio(key="domain").set_value("cube").run()
    assert_clean(at)
    assert not at.error
    assert at.session_state["radius"] == 3.0  # kept for the ball; the cube's fit ignores it


# ---------------------------------------------------------------- publish mode


FORBIDDEN = ("not private", "Stage 0", "θ(P", "λmin", "λ_min(P_n)", "λ_max(P_n)", "N̂ −", "Laplace draw",
             "oracle", "What-if", "u^T θ", "seed")


def test_publish_shows_only_what_is_released():
    at = start(mode="publish", epsilon=8.0, noise_seed=3)
    assert_clean(at)
    assert any("Nothing released yet" in i.value for i in at.info)
    assert not metrics(at, "")  # nothing drawn before the click
    release(at)
    assert_clean(at)
    text = page_text(at)
    for word in FORBIDDEN:
        assert word not in text, word
    labels = {m.label for m in at.main.metric}
    assert labels == {
        "λ̂min", "λ̂max", "Status", "Released value T",
        "95% interval (privacy noise only)", "ε total (basic composition)", "δ total (basic composition)",
    }
    assert metric(at, "Status") == "released"
    assert "(ε, δ)-differentially private with ε = 8 and δ = 1e-06" in text
    assert not at.main.get("number_input") or all(w.key != "noise_seed" for w in at.main.number_input)


def curator_cap(monkeypatch, epsilon: float, delta: float = 1e-5) -> None:
    """The default cap a new ledger file starts with: the deployment's, never a widget's."""
    monkeypatch.setenv("PSP_CAP_EPSILON", str(epsilon))
    monkeypatch.setenv("PSP_CAP_DELTA", str(delta))


def test_publish_release_spends_and_refuses_beyond_the_cap(monkeypatch):
    curator_cap(monkeypatch, 10.0)
    at = start(mode="publish", epsilon=8.0)
    stale = start(mode="publish", epsilon=8.0)  # another session, drawn before the spend: its button is on
    assert not stale.button(key="release").disabled and not any(w.value.startswith(OFF) for w in stale.warning)
    release(at)
    assert_clean(at)
    assert not at.error
    shown = metric(at, "Released value")
    assert charges(at) == [(8.0, 1e-6)]
    (published,) = at.session_state[PUBLISHED.key].values()
    assert isinstance(published, PublishedRelease)
    assert f"{published.run.release.value:.6g}" == shown
    # Before any click, the button is off and says why, in the sidebar's figures (8 of 10 spent).
    notice = release_off(at)
    assert "this draw costs each person ε = 8, δ = 1e-06" in notice
    assert "remains of the cap on these people is ε = 2" in notice
    assert "Lower “Total ε”" in notice
    release(stale)  # a click on a page drawn before the spend: the rerun finds the button off and ignores it
    assert_clean(stale)
    assert not stale.error and release_off(stale) == notice
    assert PUBLISHED.key not in stale.session_state
    assert charges(at) == [(8.0, 1e-6)]
    (kept,) = at.session_state[PUBLISHED.key].values()
    assert kept is published  # nothing else was recorded
    at.run()
    assert metric(at, "Released value") == shown and not at.error  # the past release stays on screen


def test_the_ledgers_charge_refuses_even_when_the_page_checks_are_passed(monkeypatch):
    """Both of the page's checks (the notice and release_once's) skipped, as a click racing another session's spend
    would find them: the ledger's charge itself refuses the draw, records nothing, and the page says so."""
    curator_cap(monkeypatch, 10.0)
    at = start(mode="publish", epsilon=8.0)
    release(at)
    monkeypatch.setattr(ui.release, "refuse_reason", lambda *args: None)
    at.run()
    assert not at.button(key="release").disabled
    release(at)
    assert_clean(at)
    assert at.error[0].value.startswith(REFUSED) and "already spent" in at.error[0].value
    assert charges(at) == [(8.0, 1e-6)] and len(at.session_state[PUBLISHED.key]) == 1


def test_publish_ignores_the_seed(monkeypatch):
    curator_cap(monkeypatch, 100.0, 1e-3)
    at = start(mode="publish", epsilon=8.0, noise_seed=3)
    values = []
    for _ in range(2):
        (rec,) = release(at).session_state[PUBLISHED.key].values()
        values.append(rec.run.release.value)
    assert values[0] != values[1]  # a fresh draw each time: nothing cached
    seeded = core_run(8.0, 3, 0).release.value
    assert seeded not in values
    assert charges(at) == [(8.0, 1e-6)] * 2
    assert TEACHING_RUN.key not in at.session_state


def test_publish_refused_at_once_records_nothing(monkeypatch):
    curator_cap(monkeypatch, 4.0)
    at = start(mode="publish", epsilon=8.0)
    assert_clean(at)
    assert "what remains of the cap on these people is ε = 4" in release_off(at)
    assert PUBLISHED.key not in at.session_state
    assert charges(at) == []
    assert any("Nothing released yet" in i.value for i in at.info)


def test_publish_offers_no_teaching_snapshot():
    at = start(mode="publish", epsilon=8.0)
    release(at)
    assert_clean(at)
    # Only the released picture (private values) downloads: no snapshot, no code with a seed.
    assert [b.key for b in at.get("download_button")] == ["release_line_svg"]


def test_publish_sidebar_describes_the_data_without_raw_counts():
    at = new_app(60)
    at.session_state["n"] = N
    at.session_state["mode"] = "publish"
    at.run()  # app.py draws the sidebar on every page
    assert_clean(at)
    captions = " ".join(c.value for c in at.sidebar.caption)
    # the public description of the data (core.data.spec), never a count read off the data
    assert f"n = {N:,}, d = 5 · {SyntheticSpec('robust', N, 5, 1.0, 1.0, 0).describe()}" in captions


def separable_upload() -> Upload:
    """A logistic CSV whose labels the line x0 = 0 separates: the fit has no minimiser."""
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (2_000, 2))
    X[:, 0] = np.where(np.abs(X[:, 0]) < 1e-3, 0.5, X[:, 0])
    y = (X[:, 0] > 0).astype(int)
    rows = "\n".join(f"{a:.6f},{b:.6f},{c}" for (a, b), c in zip(X, y, strict=True))
    return Upload.of("separable.csv", f"x0,x1,y\n{rows}\n".encode())


def test_data_without_a_minimiser_is_explained_in_teaching_and_bottom_in_publish():
    at = start(source="upload", upload=separable_upload(), upload_loss="logistic", noise_seed=1)
    assert_clean(at)
    assert not at.error
    text = page_text(at)
    assert "No certified minimiser" in text and "separable" in text
    assert "⊥" in text
    for fallback, status in (("off", "⊥"), ("auto", "fallback")):  # logistic data fall back by default
        at = start(source="upload", upload=separable_upload(), upload_loss="logistic", mode="publish",
                   fallback=fallback)
        release(at)
        assert_clean(at)
        assert not at.error
        text = page_text(at)
        assert metric(at, "Status") == status and "separable" not in text  # the diagnosis is not private


def test_resampling_or_the_download_flag_keeps_the_census_budget(tmp_path, monkeypatch):
    """The ledger is keyed on the people (states, year, horizon), not on n, the sample seed or I/O flags."""
    folder = tmp_path / "2018" / "1-Year"
    folder.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv",
                folder / "psam_p06.csv")
    curator_cap(monkeypatch, 10.0)
    at = start(source="acs", acs_root=str(tmp_path), acs_n=150, sample_seed=1, mode="publish", epsilon=6.0,
               coordinate="female")
    release(at)
    assert_clean(at)
    people = AcsSpec(("CA",), 2018, "1-Year").population()
    spent = lambda: [(e.epsilon, e.delta) for e in open_ledger().entries(people)]  # noqa: E731
    assert spent() == [(6.0, 1e-6)]
    for change in (dict(sample_seed=2), dict(download=True), dict(acs_n=120)):
        for key, value in change.items():
            at.session_state[key] = value
        at.session_state["mode"] = "publish"
        at.run()
        assert_clean(at)
        assert "remains of the cap on these people is ε = 4" in release_off(at), change  # 6 + 6 > 10, same people
        assert spent() == [(6.0, 1e-6)]


def test_what_remains_is_counted_state_by_state(tmp_path, monkeypatch):
    """CA (cap 10) has spent 8 and MI (cap 5) nothing: a draw on both states may still cost 2 (what CA has left),
    not the smallest cap less the largest spend (0). The notice and the Report's ledger say 2."""
    folder = tmp_path / "2018" / "1-Year"
    folder.mkdir(parents=True)
    for code, name in (("06", "CA"), ("26", "MI")):
        shutil.copy(Path(__file__).resolve().parent / "data" / f"SYNTHETIC_psam_p{code}_{name}_2018_1-Year.csv",
                    folder / f"psam_p{code}.csv")
    ca, mi = (AcsSpec((name,), 2018, "1-Year").population() for name in ("CA", "MI"))
    ledger = open_ledger()
    ledger.set_cap(ca, (10.0, 1e-5))
    ledger.set_cap(mi, (5.0, 1e-5))
    ledger.spend(ca, 8.0, 1e-6)
    at = start(source="acs", acs_root=str(tmp_path), states="CA,MI", acs_n=300, mode="publish", epsilon=4.0,
               coordinate="female")
    assert_clean(at)
    assert "what remains of the cap on these people is ε = 2, δ = 9e-06. Lower" in release_off(at)
    at.session_state["mode"] = "publish"
    at.switch_page("pages/report.py").run()  # the ledger of these people, with nothing released in this session
    assert_clean(at)
    assert "**Remaining** · ε = 2, δ = 9e-06" in page_text(at)


def test_a_failed_test_says_why_in_numbers_in_both_modes():
    """The binding term of (14) against the threshold (private: from the certified bounds only)."""
    at = start(noise_seed=1)
    assert_clean(at)
    assert metric(at, "Status") == "⊥"
    why = [c.value for c in at.caption if c.value.startswith("Why, in numbers:")]
    assert len(why) == 1
    assert why[0].startswith(f"Why, in numbers: n = {N:,} is too small for κ̂ =") and "> the threshold" in why[0]
    at = start(mode="publish")
    release(at)
    assert_clean(at)
    assert any(c.value.startswith("Why, in numbers:") for c in at.caption)


# ---------------------------------------------------------------- noise only when asked, presentation


def draws(at: AppTest) -> list[str]:
    return metrics(at, "Laplace draw") + metrics(at, "Gaussian draw")


def test_unseeded_draw_changes_only_when_asked():
    """Without a seed, display toggles show the same draw; a private setting or "Draw fresh noise" draws anew."""
    at = start(epsilon=8.0)
    assert_clean(at)
    first = draws(at)
    at.toggle(key="pld_total").set_value(True).run()
    at.session_state["present"] = True
    at.run()
    at.session_state["present"] = False
    at.run()
    assert draws(at) == first  # three display changes, one draw (a redraw repeats Laplace noise w.p. 0)
    at.session_state["epsilon"] = 6.3
    at.run()
    second = draws(at)
    assert second != first
    at.button(key="fresh_noise").click().run()
    assert_clean(at)
    assert draws(at) != second


def test_presentation_shows_three_digits_and_no_formulas():
    at = start(epsilon=8.0, noise_seed=1, present=True)
    assert_clean(at)
    value = metric(at, "Released value")
    assert len(value.lstrip("-").replace(".", "").lstrip("0")) == 3, value  # three digits, trailing zeros kept
    assert not [e for e in at.main.expander if e.label.startswith("Formulas")]
    assert not metrics(at, "β")  # the test's symbols are folded away
    at.session_state["present"] = False
    at.run()
    assert len(metric(at, "Released value").lstrip("-").replace(".", "").lstrip("0")) > 3


def test_presentation_is_kept_in_the_link():
    """Turned on, it is written into the link; a link with it opens in presentation mode."""
    at = new_app(60)
    at.run()
    assert "present" not in at.query_params
    at.sidebar.toggle(key="present").set_value(True).run()
    assert_clean(at)
    assert at.query_params["present"] in ("1", ["1"])
    again = new_app(60)
    again.query_params["present"] = "1"
    again.run()
    assert again.session_state["present"] is True


def test_interval_says_what_it_covers():
    at = start(epsilon=8.0, noise_seed=1)
    text = page_text(at)
    assert "95% interval (privacy noise only)" in text
    assert "not a confidence interval for a population parameter" in text


def test_whatif_margin_opens_with_the_95_percent_points():
    """The 95 % points appear once their expander is open, and lie at or beyond the noise-free ones."""
    at = start(epsilon=8.0, noise_seed=1)
    assert not metrics(at, "smallest ε that passes 95 %")
    at.session_state["whatif_margin"] = True
    at.run()
    assert_clean(at)
    eps50 = float(metric(at, "smallest ε that passes (noise-free"))
    eps95 = float(metric(at, "smallest ε that passes 95 %"))
    n50 = int(metric(at, "smallest n that passes (noise-free").replace(",", ""))
    n95 = int(metric(at, "smallest n that passes 95 %").replace(",", ""))
    assert eps95 >= eps50 and n95 >= n50


@pytest.mark.parametrize("accounting", ["basic", "pld"])
def test_budget_rows_add_up_to_the_total(accounting):
    """The counted columns of the Budget card sum to the basic-composition totals shown below it, ε and δ."""
    from core.privacy.accounting import make_budget
    from ui.release_cards import budget_table

    b = make_budget(4.0, 1e-6, (1.0, 2.0, 3.0), accounting)
    table = budget_table(b, True)
    assert table["ε counted"].sum() == pytest.approx(b.epsilon_basic, rel=1e-12)
    assert table["δ counted"].sum() == pytest.approx(b.delta_basic, rel=1e-12)
    if accounting == "basic":  # under PLD the stages' basic δ may pass the total: PLD composes them tighter
        assert b.epsilon_basic <= 4.0 and b.delta_basic <= 1e-6
    assert table["ε counted"].iloc[2] == 2 * table["ε of the stage"].iloc[2]


def test_privacy_profile_is_drawn_once_opened():
    at = start(epsilon=4.0, noise_seed=1)
    keys = lambda: {c.proto.id for c in at.main.get("plotly_chart")}  # noqa: E731
    before = len(keys())
    at.session_state["privacy_profile"] = True
    at.run()
    assert_clean(at)
    assert len(keys()) == before + 1
    assert any("(ε, δ(ε))-differentially private for every ε" in c.value for c in at.main.caption)


def test_every_figure_is_described_in_words():
    """Each SVG figure has its words as its aria label and in the caption below it."""
    at = start(epsilon=8.0, noise_seed=1)
    shown = [m for m in at.main.markdown if m.value.startswith('<div class="psp-figure">')]
    captions = [c.value for c in at.main.caption]
    assert len(shown) == 3
    for m in shown:
        words = html.unescape(re.search(r'aria-label="(.*?)"', m.value).group(1))
        assert "Shown:" in words and any(c.replace("\\", "") == words for c in captions)


def test_the_pass_region_is_drawn_once_opened():
    at = start(epsilon=8.0, noise_seed=1)
    before = len(at.main.get("plotly_chart"))
    at.session_state["whatif_region"] = True
    at.run()
    assert_clean(at)
    assert len(at.main.get("plotly_chart")) == before + 1
    assert any(c.value.startswith("Blue: (14) passes") for c in at.main.caption)


def test_the_stages_intermediates_are_drawn_once_opened():
    """Closed, only each stage's result shows; opened, the count, the test's terms and the release's scale."""
    at = start(details=False, epsilon=8.0, noise_seed=1)
    assert_clean(at)
    assert metrics(at, "λ̂min") and not metrics(at, "Laplace draw")
    assert not metrics(at, "β") and not metrics(at, "Gaussian draw")
    for key in DETAILS:
        at.session_state[key] = True
    at.run()
    assert len(metrics(at, "Laplace draw")) == 2 and metrics(at, "β") and metrics(at, "Gaussian draw")


def test_the_settings_panel_keeps_its_settings_while_folded():
    """Folded, the panel draws no widget, yet its settings hold across runs; opened, its widgets show them."""
    at = start(settings_panel=False, coordinate="x2", level=0.9, epsilon=8.0, noise_seed=1)
    assert_clean(at)
    assert not [w for w in at.main.selectbox if w.key == "coordinate"]
    at.run()
    assert at.session_state["coordinate"] == "x2" and at.session_state["level"] == 0.9
    assert any("`x2`" in m.value for m in at.main.markdown if m.value.startswith("#### Stage 4"))
    assert metrics(at, "90% interval (privacy noise only)")
    at.session_state["settings_panel"] = True
    at.run()
    assert at.selectbox(key="coordinate").value == "x2" and at.slider(key="level").value == 0.9


def test_a_coordinate_of_other_data_goes_back_to_the_first_while_folded():
    """A coordinate no feature of these data has (another data set's, or a link's) is reset even with the settings
    panel folded, so a later data set with a feature of that name cannot pick it up silently."""
    at = start(settings_panel=False, coordinate="zzz", epsilon=8.0, noise_seed=1)
    assert_clean(at)
    assert at.session_state["coordinate"] == "" and "coordinate" not in at.query_params


def test_an_upload_of_the_census_file_spends_the_census_peoples_budget(tmp_path, monkeypatch):
    """The CA persons' cap (epsilon 1) spent through the census folder: the same person file uploaded in the app,
    byte for byte or with a trailing newline, is the same people, and its Release is off."""
    ca = Path(__file__).resolve().parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
    book = open_ledger(tmp_path / "ledger.sqlite3")
    monkeypatch.setenv("PSP_LEDGER", str(tmp_path / "ledger.sqlite3"))
    people = Population.census(("CA",), 2018, "1-Year")
    book.set_default_cap((10.0, 1e-5))
    book.set_cap(people, (1.0, 1e-5))
    charge(book, people, split_budget(1.0, 1e-7), None, None)  # the census folder's release, as the command line
    for content in (ca.read_bytes(), ca.read_bytes() + b"\n"):
        at = start(mode="publish", epsilon=1.0, delta=1e-7, source="upload", upload=Upload.of("mine.csv", content))
        assert not at.exception, [e.value for e in at.exception]
        notice = release_off(at)
        assert "remains of the cap on these people is ε = 0" in notice
    assert book.spent(people) == (1.0, 1e-7)


def test_a_new_session_reads_the_last_paid_for_release_back_and_charges_nothing():
    at = start(mode="publish", epsilon=8.0)
    release(at)
    (published,) = at.session_state[PUBLISHED.key].values()
    fresh = start(mode="publish", epsilon=8.0)  # a reload: a new session with no release of its own
    assert_clean(fresh)
    (caption,) = [c.value for c in fresh.main.caption if "read back from the privacy ledger" in c.value]
    assert f"{published.run.release.value:.6g}" in caption and "charges nothing" in caption
    assert charges(fresh) == [(8.0, 1e-6)]


def test_certify_first_shows_a_private_preview_and_charges_only_what_ran():
    at = start(mode="publish", epsilon=8.0)
    at.button(key="certify").click().run()
    assert_clean(at)
    (spent,) = charges(at)
    assert spent[0] == pytest.approx(0.8)  # 5 % + 5 % of ε = 8 under the default split (1, 1, 18)
    text = " ".join(m.value for m in at.main.markdown)
    assert "Releasing spends the rest, ε = 7.2" in text and "stopping here spends nothing more" in text
    assert "Certified, not yet released" in " ".join(m.value for m in at.main.markdown)
    assert at.button(key="certify").disabled  # one set of certificates at a time
    release(at)
    assert_clean(at)
    (published,) = at.session_state[PUBLISHED.key].values()
    assert [e for e, _ in charges(at)] == pytest.approx([0.8, 7.2])  # the whole budget, in two charges
    fresh = start(mode="publish", epsilon=8.0)  # a reload: the release is read back at its whole budget
    (caption,) = [c.value for c in fresh.main.caption if "read back from the privacy ledger" in c.value]
    assert "at ε = 8, δ = 1e-06" in caption
    population = SyntheticSpec("robust", N, 5, 1.0, 1.0, 0).population()
    assert open_ledger().open_certifications(population) == ()  # the certificates released once
    assert at.button(key="certify").disabled and at.button(key="release").disabled  # 8 of the cap of 10 spent


def test_certificates_bought_survive_a_reload_and_release_once_for_the_rest():
    """Certify first, then a new session (a reload, a new tab, a restart): the preview and Release are there again,
    and releasing charges the release event only: the whole budget once in total."""
    at = start(mode="publish", epsilon=8.0)
    at.button(key="certify").click().run()
    fresh = start(mode="publish", epsilon=8.0)
    assert_clean(fresh)
    assert any("Certified, not yet released" in m.value for m in fresh.main.markdown)
    assert fresh.button(key="release").proto.label.startswith("Release (spends the rest, ε = 7.2")
    release(fresh)
    assert_clean(fresh)
    assert [e for e, _ in charges(fresh)] == pytest.approx([0.8, 7.2])
    release(at)  # the first tab's stale page: its click would be a whole new release, past the cap
    assert [e for e, _ in charges(at)] == pytest.approx([0.8, 7.2])  # nothing charged
    assert at.button(key="release").disabled and at.button(key="release").proto.label == "Release (spends ε, δ)"


def test_certificates_wait_for_their_own_plan_only_and_can_be_closed_unspent():
    at = start(mode="publish", epsilon=8.0)
    at.button(key="certify").click().run()
    at.session_state["epsilon"] = 4.0  # another budget: these certificates do not apply
    at.run()
    assert not any("Certified, not yet released" in m.value for m in at.main.markdown)
    assert at.button(key="release").proto.label == "Release (spends ε, δ)"
    (waiting,) = [i.value for i in at.info if "wait on these people" in i.value]
    assert "at ε = 8" in waiting
    (close,) = [b for b in at.button if b.key.startswith("close_")]
    close.click().run()
    assert_clean(at)
    assert not any("wait on these people" in i.value for i in at.info)
    at.session_state["epsilon"] = 8.0
    at.run()
    assert not any("Certified, not yet released" in m.value for m in at.main.markdown)
    assert charges(at) == [pytest.approx((0.8, charges(at)[0][1]))]  # the first charge stays spent


def test_waiting_certificates_and_a_budget_no_plan_accepts_show_a_message_not_an_error():
    """Certify on logistic data (the fallback on), then switch to PLD accounting, which the fallback refuses: the
    page says so, naming the control, and offers neither button."""
    at = start(mode="publish", epsilon=4.0, source="synthetic_logistic")
    at.button(key="certify").click().run()
    at.session_state["accounting"] = "pld"
    at.run()
    assert_clean(at)
    assert any("“Accounting” on the Pipeline page" in e.value for e in at.error)
    assert at.button(key="certify").disabled and at.button(key="release").disabled


def test_a_fallbacks_budget_card_says_what_ran_and_spent():
    """The Budget card's rows are Algorithm 5's; when the test fails, it says what the fallback ran on them and spent,
    and the parts add up to what the fallback had."""
    from core.data.spec import SyntheticSpec
    from core.estimator.model import ModelSpec
    from core.mechanisms.pipeline import prepare_spec
    from core.mechanisms.split import FallbackBudget
    from core.plan import ReleasePlan, execute
    from core.privacy.accounting import make_budget
    from ui.release_cards import fallback_spent

    spec = SyntheticSpec("logistic", 500, 3, 1.0, 1.0, 11)
    p = prepare_spec(spec.load(), ModelSpec("logistic").resolve(3), spec)
    run = execute(ReleasePlan(data=spec, model=p.model, target=0, name="x0", budget=make_budget(2.0, 1e-6),
                              fallback=True, seed=4), p)
    r = run.release
    assert r.status == "fallback"
    said = fallback_spent(r, run.lambda_max is not None)
    split = FallbackBudget(r.fallback_epsilon, r.fallback_delta, r.fallback_shares, 0.0)
    assert sum(split.op) + sum(split.curvature) == pytest.approx(r.fallback_epsilon + r.fallback_delta)
    assert "Algorithm 5's Gaussian release did not run" in said and "objective perturbation (15) spent" in said
    assert ("stage 2's (not reached)" in said) == (run.lambda_max is None)
    assert ("private reading of the curvature" in said) == (r.fallback_probe is not None)
