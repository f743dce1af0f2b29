"""The Experiments page (through Streamlit's AppTest from the app's entry point) and its pure helpers.

Every test gets experiments and results directories of its own (PSP_EXPERIMENTS_DIR, PSP_RESULTS_DIR), so no
earlier run and no recorded full run of the repository decides what the page shows.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
from pathlib import Path

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.errors import InputError
from core.teaching.experiments import COLUMNS, FIGURES, NOT_PRIVATE_METHODS, plan, read_rows, write_csv
from ui import experiment_claims as claims
from ui import experiment_figures as plots
from ui import experiment_runs as runs
from ui.labels import AXIS_TITLES
from ui.loaded import WRITES_REFUSED

ROOT = Path(__file__).absolute().parents[1]
APP = ROOT / "app.py"
PAPER = Path("/work/shared/papers/asi-duchi-talwar-2025-single-parameter.md")
FIG1_PHRASE = "while the procedure eventually achieves quite small error"
UPLOAD = "Load a CSV made by the command line"


@pytest.fixture(autouse=True)
def dirs(tmp_path, monkeypatch) -> dict[str, Path]:
    """Directories of the test's own; the quick preset's size left to each test."""
    paths = {"experiments": tmp_path / "experiments", "results": tmp_path / "results"}
    paths["results"].mkdir()
    monkeypatch.setenv("PSP_EXPERIMENTS_DIR", str(paths["experiments"]))
    monkeypatch.setenv("PSP_RESULTS_DIR", str(paths["results"]))
    for name in ("PSP_EXPERIMENTS_QUICK_REPS", "PSP_EXPERIMENTS_DIMS", "PSP_PUBLISH_ONLY"):
        monkeypatch.delenv(name, raising=False)
    return paths


@pytest.fixture
def small_preset(monkeypatch) -> None:
    monkeypatch.setenv("PSP_EXPERIMENTS_QUICK_REPS", "1")
    monkeypatch.setenv("PSP_EXPERIMENTS_DIMS", "5")


def paper_text() -> str:
    if not PAPER.is_file():
        pytest.skip(f"the paper's text is not at {PAPER}")
    return PAPER.read_text(encoding="utf-8")


def open_page(figure: str | None = None) -> AppTest:
    """The page, on the tab of `figure` (the first by default): only the chosen tab's panel runs."""
    at = new_app(120)
    at.session_state["n"] = 2_000  # the sidebar loads the default data set; this page never reads it
    if figure is not None:
        at.session_state["experiments_figure"] = claims.tab_label(figure)
    at.switch_page("pages/experiments.py")
    return at.run()


def choose(at: AppTest, figure: str) -> AppTest:
    at.session_state["experiments_figure"] = claims.tab_label(figure)
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def tab(at: AppTest, figure: str):
    return at.tabs[FIGURES.index(figure)]


def charts(at: AppTest) -> dict[str, dict]:
    """Every plotly chart on the page, by key, as its figure's JSON."""
    return {e.key: json.loads(e.proto.spec) for e in at.get("plotly_chart")}


def row(figure: str = "fig2", method: str = "local", metric: str = "abs_error_fit", x: float = 1000.0,
        mean: float = 0.0123456, panel: str = "d=5", reps: int = 25) -> dict:
    return dict(figure=figure, panel=panel, x_name="n", x=x, method=method, metric=metric, mean=mean, se=0.001,
                reps=reps, released=reps, release_rate=1.0, d=5, n=int(x), epsilon=4.0, delta=1e-6, theta_norm=1.0)


def csv_bytes(rows: list[dict], tmp_path: Path) -> bytes:
    path = tmp_path / "rows.csv"
    write_csv(rows, path)
    return path.read_bytes()


# ---------------------------------------------------------------- the page


def test_every_figure_has_a_panel_that_renders_cleanly():
    at = open_page()
    assert_clean(at)
    assert at.title[0].value == "Experiments"
    assert "nothing here touches your data or your privacy budget" in at.info[0].value
    assert [t.label for t in at.tabs] == [claims.tab_label(f) for f in FIGURES]
    # the first screen runs the first tab's panel only
    assert [bool(t.markdown) for t in at.tabs] == [True] + [False] * (len(FIGURES) - 1)
    for figure in FIGURES:
        panel = tab(choose(at, figure), figure)
        assert_clean(at)
        assert "#### What the paper claims" in [m.value for m in panel.markdown]
        assert any("No full run recorded for this figure" in c.value for c in panel.caption)
        assert any(f"python -m core experiment {figure} --jobs 2 --out DIR" in c.value for c in panel.caption)
        assert at.button(key=f"experiments_quick_{figure}").label == "Run the quick preset"
        assert at.file_uploader(key=f"experiments_upload_{figure}").label == UPLOAD
    assert not at.get("plotly_chart")  # nothing run, recorded or uploaded yet


def test_fig1_quotes_the_paper_verbatim():
    assert FIG1_PHRASE in paper_text()
    quoted = "\n".join(m.value for m in tab(open_page(), "fig1").markdown)
    assert FIG1_PHRASE in quoted


def test_census_figures_state_the_safe_test_and_label_the_hypothesis():
    at = open_page()
    for figure in ("fig6", "fig7"):
        if figure not in FIGURES:
            continue
        said = "\n".join(m.value for m in tab(choose(at, figure), figure).markdown)
        for fact in ("2.3·10⁹", "3.1·10⁸", "292", "4.2·10⁵", "SYNTHETIC", "**HYPOTHESIS, not proven.**"):
            assert fact in said, (figure, fact)


def page_text(at: AppTest) -> list[str]:
    return [e.value for kind in ("title", "info", "markdown", "caption") for e in getattr(at, kind)]


@pytest.mark.slow
def test_publish_only_shows_the_same_page_runs_nothing_and_touches_no_ledger(monkeypatch, small_preset, tmp_path):
    unlocked = page_text(open_page())
    monkeypatch.setenv("PSP_PUBLISH_ONLY", "1")
    at = open_page()
    assert_clean(at)
    assert page_text(at) == unlocked
    quick = at.button(key="experiments_quick_fig1")  # a run writes on the server's disk: not a reader's to start
    assert quick.disabled and quick.help == WRITES_REFUSED
    assert not (tmp_path / "ledger.sqlite3").exists()  # conftest's ledger of this test: never even opened


def test_a_recorded_full_run_is_plotted_with_its_numbers(dirs, tmp_path):
    rows = [row(method=m, x=x, mean=0.0123456 if (m, x) == ("local", 1000.0) else 0.5)
            for m in ("local", "oracle") for x in (1000.0, 10_000.0)]
    (dirs["results"] / "fig2.csv").write_bytes(csv_bytes(rows, tmp_path))
    at = open_page("fig2")
    assert_clean(at)
    panel = tab(at, "fig2")
    assert not any("No full run recorded" in c.value for c in panel.caption)
    assert any(c.value.startswith("Full run: 25 repetitions") for c in panel.caption)
    spec = charts(at)["experiments_chart_full_fig2"]
    assert {t["name"] for t in spec["data"]} == {"Local (Algorithm 5)", "Oracle · not private"}
    table = panel.dataframe[0].value
    assert list(table.columns) == list(plots.TABLE_COLUMNS)
    local = table[(table["method"] == "Local (Algorithm 5)") & (table["x"] == 1000.0)]
    assert local["mean"].tolist() == [pytest.approx(0.0123456)]
    assert "Oracle · not private" in set(table["method"])


def bad_uploads(tmp_path: Path) -> dict[str, bytes]:
    wide = "x" * 200_000  # past the csv module's field limit
    return {
        "binary junk": b"\x00\xff junk",
        "empty file": b"",
        "wrong columns": b"a,b,c\n1,2,3\n",
        "another figure": csv_bytes([row(figure="fig2")], tmp_path),
        "header only": (",".join(COLUMNS) + "\n").encode(),
        "text in a number": csv_bytes([row(figure="fig1")], tmp_path).replace(b"0.0123456", b"lots"),
        "a huge field": (",".join(COLUMNS) + "\n" + wide + "\n").encode(),
        "too many panels": csv_bytes([row(figure="fig1", panel=f"p{i}") for i in range(40)], tmp_path),
    }


@pytest.mark.parametrize("kind", ["binary junk", "empty file", "wrong columns", "another figure", "header only",
                                  "text in a number", "a huge field", "too many panels"])
def test_a_hostile_upload_is_an_error_naming_the_control(kind, tmp_path):
    content = bad_uploads(tmp_path)[kind]
    at = open_page()
    at.file_uploader(key="experiments_upload_fig1").set_value(("mine.csv", content, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in tab(at, "fig1").error]
    assert len(errors) == 1 and errors[0].startswith(f"{UPLOAD} (Fig. 1):"), errors
    assert "experiments_chart_upload_fig1" not in charts(at)
    if kind == "another figure":
        assert "holds the results of Fig. 2" in errors[0]


def test_an_upload_of_the_panel_s_figure_with_odd_numbers_is_drawn(tmp_path):
    rows = [row(figure="fig1", x=100.0, mean=math.nan), row(figure="fig1", x=200.0, mean=1e308),
            row(figure="fig1", x=400.0, mean=0.25)]
    at = open_page()
    at.file_uploader(key="experiments_upload_fig1").set_value(("mine.csv", csv_bytes(rows, tmp_path), "text/csv"))
    at.run()
    assert_clean(at)
    assert "experiments_chart_upload_fig1" in charts(at)
    assert tab(at, "fig1").dataframe[0].value["mean"].tolist()[2] == 0.25


@pytest.mark.slow
def test_quick_preset_runs_shows_its_csv_and_is_kept_on_disk(dirs, small_preset):
    at = open_page()
    at.button(key="experiments_quick_fig1").click().run()
    assert_clean(at)
    written = read_rows(dirs["experiments"] / "fig1" / "fig1.csv")
    assert {r["reps"] for r in written} == {1} and {r["panel"] for r in written} == {"d=5"}
    panel = tab(at, "fig1")
    assert any("Your last quick run, quick preset: 1 repetition, reduced grid" in c.value for c in panel.caption)
    assert "experiments_chart_quick_fig1" in charts(at)
    table = panel.dataframe[0].value
    first = next(r for r in written if r["metric"] == "relative_error" and r["x"] == 6400)
    shown = table[(table["metric"] == AXIS_TITLES["relative_error"]) & (table["x"] == 6400)]["mean"].tolist()
    assert shown == [pytest.approx(first["mean"])]
    assert len(list((dirs["experiments"] / "fig1" / ".cache").glob("*.json"))) == len({r["x"] for r in written})

    again = open_page()  # a reload: the last quick run is read from disk, nothing is run
    assert_clean(again)
    assert not again.get("status")
    assert "experiments_chart_quick_fig1" in charts(again)


def test_a_bad_preset_setting_is_an_error_not_a_traceback(monkeypatch):
    monkeypatch.setenv("PSP_EXPERIMENTS_QUICK_REPS", "many")
    at = open_page()
    at.button(key="experiments_quick_fig1").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("Run the quick preset (Fig. 1):"), errors


def test_a_damaged_last_quick_run_is_an_error(dirs):
    (dirs["experiments"] / "fig3").mkdir(parents=True)
    (dirs["experiments"] / "fig3" / "fig3.csv").write_bytes(b"\xff\xfe not a csv")
    at = open_page("fig3")
    assert not at.exception
    assert [e.value.split(":")[0] for e in tab(at, "fig3").error] == ["Your last quick run cannot be shown"]


# ---------------------------------------------------------------- the quotations and conclusions


def test_every_quotation_is_verbatim_from_the_paper():
    paper = paper_text()
    for figure, claim in claims.CLAIMS.items():
        for passage in ([claim.caption] if claim.caption else []) + list(claim.passages):
            assert passage in paper, (figure, passage[:60])


def test_every_caption_is_the_caption_of_its_figure():
    paper = paper_text()
    for figure, claim in claims.CLAIMS.items():
        if claim.caption is not None:
            at = paper.index(claim.caption)
            assert f"Figure {claim.number}." in paper[at - 20:at], figure


def test_every_figure_and_both_census_figures_have_a_claim_and_a_conclusion():
    assert set(FIGURES) | {"fig6", "fig7"} <= set(claims.CLAIMS)
    for figure, claim in claims.CLAIMS.items():
        assert claim.number == int(figure.removeprefix("fig"))
        assert claim.passages and claim.findings
    for figure in ("fig6", "fig7"):
        verdicts = [f.verdict for f in claims.CLAIMS[figure].findings]
        assert "HYPOTHESIS, not proven" in verdicts
        assert "4·10^5" in "".join(claims.CLAIMS[figure].passages).replace(r"4 \cdot 10^5", "4·10^5")


# ---------------------------------------------------------------- pure helpers


def test_names_of_figures_and_methods():
    assert (claims.figure_number("fig6"), claims.tab_label("fig6")) == (6, "Fig. 6")
    assert (claims.figure_number("fig12"), claims.tab_label("fig12")) == (12, "Fig. 12")  # a figure added later
    assert (claims.figure_number("census"), claims.tab_label("census")) == (None, "census")
    for method in NOT_PRIVATE_METHODS:
        assert plots.method_label(method).endswith("not private")
    assert plots.method_label("local") == "Local (Algorithm 5)"
    assert "not private" not in plots.method_label("algorithm2")
    assert plots.method_label("some_new_method") == "Some new method"


def test_directories_come_from_the_environment():
    env = {"PSP_EXPERIMENTS_DIR": "/x/runs", "PSP_RESULTS_DIR": "/x/results"}
    assert runs.experiments_dir(env) == Path("/x/runs") and runs.quick_dir("fig2", env) == Path("/x/runs/fig2")
    assert runs.results_dir(env) == Path("/x/results")
    assert runs.results_dir({}) == ROOT / "docs" / "results"
    assert runs.experiments_dir({}) == Path.home() / ".cache" / "psp" / "experiments"


@pytest.mark.parametrize("env, expected", [
    ({}, dict(reps=None, dims=None)),
    ({"PSP_EXPERIMENTS_QUICK_REPS": "3", "PSP_EXPERIMENTS_DIMS": "5, 10"}, dict(reps=3, dims=(5, 10))),
    ({"PSP_EXPERIMENTS_QUICK_REPS": " ", "PSP_EXPERIMENTS_DIMS": ""}, dict(reps=None, dims=None)),
])
def test_quick_options(env, expected):
    assert runs.quick_options(env) == expected


@pytest.mark.parametrize("figure", FIGURES)
def test_the_small_preset_is_a_valid_plan_of_every_figure(figure):
    options = runs.preset(figure, {"PSP_EXPERIMENTS_QUICK_REPS": "1", "PSP_EXPERIMENTS_DIMS": "5"})
    assert options["reps"] == 1 and options["dims"] in ((5,), None)
    assert {t.rep for t in plan(figure, quick=True, **options).tasks} == {0}
    assert runs.preset("fig1", {"PSP_EXPERIMENTS_DIMS": "5"})["dims"] == (5,)


@pytest.mark.parametrize("env", [{"PSP_EXPERIMENTS_QUICK_REPS": "1.5"}, {"PSP_EXPERIMENTS_QUICK_REPS": "0"},
                                 {"PSP_EXPERIMENTS_DIMS": "5,,10"}, {"PSP_EXPERIMENTS_DIMS": "-5"}])
def test_bad_quick_options_are_input_errors(env):
    with pytest.raises(InputError, match="PSP_EXPERIMENTS"):
        runs.quick_options(env)


@pytest.mark.parametrize("line, expected", [
    ("[fig1] 12/105 d=5 n/d=100 rep 0: 0.02s (elapsed 1.0s)", (12, 105)),
    ("[fig6] 105/105 eps=4 n=400000 rep 3: 1.50s", (105, 105)),
    ("[fig1] 105 tasks, 0 cached, 105 to run on 2 process(es)", None),
    ("[fig1] 7/0 nonsense", None),
    ("12/105", None),
])
def test_progress_of(line, expected):
    assert runs.progress_of(line) == expected


def test_load_rows_checks_figure_size_and_shape(tmp_path):
    good = csv_bytes([row(figure="fig1")], tmp_path)
    assert runs.load_rows(b"\xef\xbb\xbf" + good, "f", "fig1")[0]["mean"] == pytest.approx(0.0123456)  # with a BOM
    with pytest.raises(InputError, match="holds the results of Fig. 1"):
        runs.load_rows(good, "f", "fig2")
    with pytest.raises(InputError, match="larger than"):
        runs.load_rows(good + b"#" * runs.MAX_BYTES, "f", "fig1")
    with pytest.raises(InputError, match="cannot be read as a CSV"):
        runs.load_rows((",".join(COLUMNS) + "\n" + "x" * 200_000).encode(), "f", "fig1")
    with pytest.raises(InputError, match="13 methods"):
        runs.load_rows(csv_bytes([row(figure="fig1", method=f"m{i}") for i in range(13)], tmp_path), "f", "fig1")


def test_the_quick_preset_is_the_command_line_with_the_deployment_s_options(tmp_path):
    env = {"PSP_EXPERIMENTS_QUICK_REPS": "1", "PSP_EXPERIMENTS_DIMS": "5"}
    cmd = runs.quick_command("fig2", tmp_path, env)
    assert cmd[1:] == ["-m", "core", "experiment", "fig2", "--quick", "--jobs", "2", "--out", str(tmp_path),
                       "--reps", "1", "--dims", "5"]
    assert "--dims" not in runs.quick_command("fig6", tmp_path, env)  # the census figures' d is fixed


def test_a_failed_run_gives_the_command_s_message_not_its_traceback(monkeypatch, tmp_path):
    monkeypatch.setattr(runs, "quick_command", lambda figure, out, env=None: [
        sys.executable, "-c", "import sys; print('[fig1] 1/2 x', file=sys.stderr); "
        "print('error: --grid takes positive numbers', file=sys.stderr); sys.exit(2)"])
    lines = []
    with pytest.raises(InputError, match="^--grid takes positive numbers$"):
        runs.run_quick("fig1", tmp_path, lines.append)
    assert lines == ["[fig1] 1/2 x"]


def test_an_interrupted_run_stops_its_whole_process_group(monkeypatch, tmp_path):
    """A click mid-run stops the page script inside log(): the run and its workers must not outlive it."""
    pid_file = tmp_path / "child.pid"
    monkeypatch.setattr(runs, "quick_command", lambda figure, out, env=None: [
        sys.executable, "-c", "import os, subprocess, sys, time; "
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); "
        "print('[fig1] 1/9 x', file=sys.stderr, flush=True); time.sleep(60)"])

    def interrupt(line):
        raise KeyboardInterrupt  # stands for Streamlit's StopException

    with pytest.raises(KeyboardInterrupt):
        runs.run_quick("fig1", tmp_path, interrupt)
    child = int(pid_file.read_text())
    for _ in range(50):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail("the worker outlived the interrupted run")


def test_read_file_is_none_without_a_file(tmp_path):
    assert runs.read_file(tmp_path / "fig1.csv", "fig1", "f") is None


def test_table_and_figure_name_methods_as_the_app_does():
    rows = [row(method="local"), row(method="oracle"), row(method="oracle", metric="release_rate", mean=1.0)]
    table = plots.table(rows)
    assert list(table.columns) == list(plots.TABLE_COLUMNS)
    assert table["method"].tolist() == ["Local (Algorithm 5)", "Oracle · not private", "Oracle · not private"]
    names = {t.name for t in plots.figure(rows, "t").data}
    assert names == {"Local (Algorithm 5)", "Oracle · not private"}
    assert runs.quick_label(rows).startswith("quick preset: 25 repetitions, reduced grid")
    assert runs.quick_label([row(reps=1)]).startswith("quick preset: 1 repetition,")


def test_written_csv_round_trips_through_load_rows(tmp_path):
    rows = [row(figure="fig4", x=eps, mean=eps / 10) for eps in (1.0, 2.0)]
    loaded = runs.load_rows(csv_bytes(rows, tmp_path), "f", "fig4")
    assert [r["mean"] for r in loaded] == [pytest.approx(0.1), pytest.approx(0.2)]
    assert next(csv.reader(io.StringIO(csv_bytes(rows, tmp_path).decode()))) == list(COLUMNS)


def titles(fig) -> list[str]:
    """Every axis title, subplot title and the legend's title of a figure."""
    axes = [a.title.text for a in (*fig.select_xaxes(), *fig.select_yaxes()) if a.title.text]
    return axes + [a.text for a in fig.layout.annotations] + [fig.layout.legend.title.text]


@pytest.mark.parametrize("figure", FIGURES)
def test_every_recorded_figure_titles_its_axes_in_words(figure):
    rows = runs.read_file(ROOT / "docs" / "results" / f"{figure}.csv", figure, figure)
    fig = plots.figure(rows, "t")
    names = {r["metric"] for r in rows} | {r["x_name"] for r in rows}
    assert names <= set(AXIS_TITLES)  # named by the mapping, not spelled out from a CSV's identifier
    shown = titles(fig)
    assert {AXIS_TITLES[n] for n in names} <= set(shown) and fig.layout.legend.title.text == "Method"
    assert not [t for t in shown if "_" in t or ("=" in t and " = " not in t)], shown
    assert all(a.automargin for a in (*fig.select_xaxes(), *fig.select_yaxes()))  # titles push, not clip


def test_an_unknown_metric_of_an_upload_is_spelled_out():
    fig = plots.figure([row(metric="abs_error_something"), row(metric="abs_error_something", x=2000.0)], "t")
    assert "Abs error something" in titles(fig) and "d = 5" in titles(fig)
    assert plots.table([row()])["metric"].tolist() == [AXIS_TITLES["abs_error_fit"]]
