"""The simulation figures (core.experiments) run through the command line, checked on their numbers."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from core import experiments
from core.cli import main

REQUIRED = ("figure", "panel", "x_name", "x", "method", "metric", "mean", "se", "reps", "release_rate")


def read(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def series(rows: list[dict], panel: str, method: str, metric: str) -> list[tuple[float, float]]:
    sel = [r for r in rows if r["panel"] == panel and r["method"] == method and r["metric"] == metric]
    return sorted((float(r["x"]), float(r["mean"])) for r in sel)


@pytest.fixture(scope="module")
def fig1(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig1")
    argv = ["experiment", "fig1", "--quick", "--reps", "3", "--dims", "5,10", "--seed", "7", "--out", str(out)]
    start = time.perf_counter()
    assert main(argv) == 0
    return out, argv, time.perf_counter() - start


def test_fig1_columns_and_shape(fig1):
    out, _, _ = fig1
    rows = read(out / "fig1.csv")
    assert set(REQUIRED) <= set(rows[0])
    assert {r["panel"] for r in rows} == {"d=5", "d=10"}
    assert {r["metric"] for r in rows} == {"relative_error", "p_zero"}
    assert all(r["figure"] == "fig1" and r["x_name"] == "n/d" and r["reps"] == "3" for r in rows)
    assert len(rows) == 2 * 7 * 2  # panels x grid x metrics, one method
    html = (out / "fig1.html").read_text()
    assert "<html>" in html and "plotly" in html.lower() and "<script src=" not in html


def test_fig1_p_zero_falls_from_one_to_zero(fig1):
    rows = read(fig1[0] / "fig1.csv")
    for panel in ("d=5", "d=10"):
        p = [v for _, v in series(rows, panel, "algorithm2", "p_zero")]
        assert p[0] == 1.0 and p[-1] == 0.0
        assert all(a >= b for a, b in zip(p, p[1:], strict=False))


def test_fig1_relative_error_decreases_with_n(fig1):
    rows = read(fig1[0] / "fig1.csv")
    for panel in ("d=5", "d=10"):
        xs, err = zip(*series(rows, panel, "algorithm2", "relative_error"), strict=True)
        assert err[0] == 1.0  # lambda_hat = 0 at the smallest n/d
        assert all(a >= b - 1e-12 for a, b in zip(err, err[1:], strict=False))
        assert 0 < err[-1] < 0.1
        # once positive, the error falls roughly like 1/n: 4x the data, at least 2.5x less error
        i, j = xs.index(1600), xs.index(6400)
        assert err[j] < err[i] / 2.5


def test_fig1_rerun_hits_the_cache(fig1, monkeypatch, capsys):
    out, argv, first = fig1
    before = (out / "fig1.csv").read_bytes()

    def no_work(task):
        raise AssertionError("the cached task was computed again")

    monkeypatch.setattr(experiments, "run_task", no_work)
    start = time.perf_counter()
    assert main(argv) == 0
    again = time.perf_counter() - start
    assert (out / "fig1.csv").read_bytes() == before
    assert "42 cached, 0 to run" in capsys.readouterr().err
    assert again < first


def test_fresh_data_per_repetition_and_seed():
    p = experiments.plan("fig1", quick=True, reps=3, seed=1, dims=[5], grid=[400])
    assert [t.rep for t in p.tasks] == [0, 1, 2]
    assert len({t.key() for t in p.tasks}) == 3
    a = [experiments.run_task(t)["algorithm2"]["lambda_min"] for t in p.tasks]
    assert len(set(a)) == 3  # three different data sets
    q = experiments.plan("fig1", quick=True, reps=3, seed=2, dims=[5], grid=[400])
    assert experiments.run_task(q.tasks[0])["algorithm2"]["lambda_min"] != a[0]
    assert experiments.run_task(p.tasks[0]) == experiments.run_task(p.tasks[0])  # replayable from the seed


def test_fig2_local_threshold_and_oracle(tmp_path):
    argv = ["experiment", "fig2", "--quick", "--reps", "2", "--dims", "5", "--grid", "1000,100000",
            "--jobs", "2", "--out", str(tmp_path)]
    assert main(argv) == 0
    rows = read(tmp_path / "fig2.csv")
    assert set(REQUIRED) <= set(rows[0])
    assert {r["method"] for r in rows} == {"local", "oracle", "objective_perturbation", "output_perturbation"}
    rate = series(rows, "d=5", "local", "release_rate")
    assert rate[0] == (1000.0, 0.0) and rate[-1][1] > 0
    small = [r for r in rows if r["method"] == "local" and r["x"] == "1000" and r["metric"] == "abs_error_fit"]
    assert small[0]["mean"] == "nan" and small[0]["release_rate"] == "0"  # bottom: no error to average
    oracle = series(rows, "d=5", "oracle", "abs_error_fit")[-1][1]
    objective = series(rows, "d=5", "objective_perturbation", "abs_error_fit")[-1][1]
    assert oracle < objective


def test_bad_arguments(tmp_path, capsys):
    assert main(["experiment", "fig1", "--reps", "0", "--out", str(tmp_path)]) == 2
    assert main(["experiment", "fig1", "--grid", "a,b", "--out", str(tmp_path)]) == 2
    with pytest.raises(SystemExit):
        main(["experiment", "fig9", "--out", str(tmp_path)])


def test_fig4_errors_fall_as_epsilon_grows(tmp_path):
    """Fig. 4 at a reduced size: the noise-driven errors against the fit shrink from eps = 1 to 8 (output
    perturbation's is its ridge's bias, which does not depend on eps)."""
    argv = ["experiment", "fig4", "--quick", "--reps", "2", "--grid", "1,8", "--jobs", "2", "--out", str(tmp_path)]
    assert main(argv) == 0
    rows = read(tmp_path / "fig4.csv")
    assert {r["x_name"] for r in rows} == {"epsilon"}
    for panel in {r["panel"] for r in rows}:
        for method in ("objective_perturbation", "oracle"):
            (e1, err1), (e8, err8) = series(rows, panel, method, "abs_error_fit")
            assert (e1, e8) == (1.0, 8.0) and err8 < err1, (panel, method)
        rate = series(rows, panel, "local", "release_rate")
        assert rate[-1][1] >= rate[0][1]
