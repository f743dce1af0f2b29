"""A regression table in the app: drawn for teaching on the Pipeline (the fit beside it, never charged), released
in publish mode with one charge of its total, and shown on the Report with its downloads."""

from __future__ import annotations

import pytest
from apptest import new_app, on_page

from core.privacy.ledger_store import open_ledger

LOGISTIC = {"n": 200_000, "d": 3, "source": "synthetic_logistic"}


def pipeline(**settings):
    at = on_page("pipeline", **{**LOGISTIC, **settings})
    assert not at.exception, at.exception
    return at


def test_a_teaching_table_shows_the_fit_beside_it_and_charges_nothing():
    at = pipeline()
    at.multiselect(key="table_names").set_value(["x2", "x0"]).run()
    at.button(key="release_table").click().run()
    assert not at.exception, at.exception
    rows = at.table[-1].value
    assert list(rows["coefficient"]) == ["x2", "x0"] and "θ(Pₙ) · not private" in rows.columns
    assert all(rows["low"] < rows["value"]) and all(rows["value"] < rows["high"])
    assert any(c.value.startswith("Regression table: 2 coefficients, one release") for c in at.caption)  # its words
    at.switch_page("pages/report.py").run()
    assert not any("regression table" in i.value for i in at.info)


def test_each_row_on_its_own_is_a_control_and_a_link_setting():
    """The table's intervals: all rows at once by default, each row on its own when chosen (the link keeps it), and
    the table's words and legend say which (a mangled link value: tests/test_hostile_inputs.py)."""
    at = pipeline(coverage="each")
    assert at.segmented_control(key="coverage").value == "each"
    at.button(key="release_table").click().run()
    assert not at.exception, at.exception
    assert any("each on its own" in c.value for c in at.caption)
    assert not any("all at once" in c.value for c in at.caption)
    assert at.query_params["coverage"] in ("each", ["each"])
    assert pipeline().segmented_control(key="coverage").value == "together"


def test_a_published_table_is_one_charge_and_reaches_the_report(tmp_path, monkeypatch):
    monkeypatch.setenv("PSP_LEDGER", str(tmp_path / "ledger.sqlite3"))
    at = pipeline(mode="publish")
    at.button(key="release_table").click().run()
    assert not at.exception, at.exception
    rows = at.table[-1].value
    assert list(rows["coefficient"]) == ["x0", "x1", "x2"] and "θ(Pₙ) · not private" not in rows.columns
    at.switch_page("pages/report.py").run()
    assert not at.exception, at.exception
    assert any("regression table" in i.value for i in at.info)
    assert list(at.table[0].value["coefficient"]) == ["x0", "x1", "x2"]
    ledger = [m.value for m in at.markdown if "Spent on these people" in m.value][0]
    assert "ε = 4, δ = 1e-06" in ledger and ledger.count("released") == 1
    labels = [b.label for b in at.get("download_button")]
    assert {"Download HTML report", "Download JSON", "Figure (SVG)"} <= set(labels)


def test_a_table_is_certified_first_previewed_row_by_row_then_released_once(tmp_path, monkeypatch):
    """Publish mode: Certify the table first charges the certificates only and shows each row's forecast; the page
    drawn again (a reload) still shows it, from the ledger; Release spends the rest from those certificates, once."""
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("PSP_LEDGER", str(path))
    at = pipeline(mode="publish", n=20_000)
    at.button(key="certify_table").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (people,) = open_ledger(path).parts_charged()
    first = open_ledger(path).spent(people)
    assert 0 < first[0] < 4.0 and len(open_ledger(path).entries(people)) == 1
    at = pipeline(mode="publish", n=20_000)  # a reload: the certification is the ledger's, not the session's
    assert any("Table certified, not yet released" in m.value for m in at.markdown)
    (rows,) = [m.value for m in at.markdown if m.value.startswith("| Coefficient | Likely half-width |")]
    assert all(f"| {name} |" in rows for name in ("x0", "x1", "x2"))
    assert at.button(key="certify_table").disabled
    go = at.button(key="release_table")
    assert "spends the rest" in go.label
    go.click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert list(at.table[-1].value["coefficient"]) == ["x0", "x1", "x2"]
    assert not any("Table certified, not yet released" in m.value for m in at.markdown)
    assert open_ledger(path).spent(people)[0] == pytest.approx(4.0, rel=1e-12)  # the two phases: the whole budget
    assert len(open_ledger(path).entries(people)) == 2


def test_the_forest_plot_draws_every_row_and_says_so():
    from ui.svg import forest_figure

    rows = [dict(name=f"x{k}", value=0.1 * k - 0.2, low=0.1 * k - 0.25, high=0.1 * k - 0.15, half_width=0.05)
            for k in range(5)]
    fig = forest_figure(rows, 0.9, {f"x{k}": 0.1 * k - 0.21 for k in range(5)})
    svg = fig.svg(standalone=True)
    assert svg.count("<circle") == 5 and svg.count("<path") == 5 + 1  # the values, the fit's diamonds, the key's
    for k in range(5):  # each row's private value drawn after, so above, the fit's diamond (not private)
        assert svg.index(f"x{k}: θ = ") < svg.index("<circle", svg.index(f"x{k}: θ = "))
    assert fig.alt.startswith("Regression table: 5 coefficients, one release")
    assert "from -0.2 (x0) to 0.2 (x4)" in fig.alt and "90% intervals, all at once, ± 0.05" in fig.alt
    rows[4] |= dict(low=0.1, high=0.3, half_width=0.1)  # the fallback's rows each have their own width
    assert "half-widths of the 90% intervals, all at once: 5 values from 0.05 (x0) to 0.1 (x4)" in forest_figure(
        rows, 0.9).alt


def test_a_table_the_test_refuses_without_the_fallback_says_which_control_to_change():
    at = on_page("pipeline", source="synthetic_robust", n=2_000, d=3, fallback="off")
    at.button(key="release_table").click().run()
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning if w.value.startswith("Nothing was released (⊥)")]
    assert "“When the stability test (14) fails”" in warning and "fall back to objective perturbation" in warning


def test_a_new_session_reads_a_published_table_back_as_a_table(tmp_path, monkeypatch):
    """After a reload the Pipeline names the last charged release: a table of k coefficients, released, not ⊥."""
    monkeypatch.setenv("PSP_LEDGER", str(tmp_path / "ledger.sqlite3"))
    pipeline(mode="publish").button(key="release_table").click().run()
    fresh = pipeline(mode="publish")
    (caption,) = [c.value for c in fresh.main.caption if "read back from the privacy ledger" in c.value]
    assert "a table of 3 coefficients (x0, x1, …) released at ε = 4" in caption and "⊥" not in caption


def test_the_tables_coefficients_are_kept_in_the_link():
    """A chosen subset goes into the link (coordinates=…, as the command line's --coordinates) and a new session on
    that link starts with it; every coefficient chosen leaves the link without it."""
    at = pipeline()
    at.multiselect(key="table_names").set_value(["x2", "x0"]).run()
    assert not at.exception, at.exception
    assert at.query_params["coordinates"] == "x2,x0"
    again = new_app(300, query={"coordinates": "x2,x0", **{k: str(v) for k, v in LOGISTIC.items()}})
    again.run()
    again.switch_page("pages/pipeline.py").run()
    assert again.multiselect(key="table_names").value == ["x2", "x0"]
    at.multiselect(key="table_names").set_value(["x0", "x1", "x2"]).run()
    assert "coordinates" not in at.query_params


def test_a_links_unknown_coefficients_are_named_not_dropped_in_silence():
    at = new_app(300, query={"coordinates": "x9,x0,zz", **{k: str(v) for k, v in LOGISTIC.items()}})
    at.run()
    at.switch_page("pages/pipeline.py").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="table_names").value == ["x0"]
    (said,) = [w.value for w in at.warning if "from the link" in w.value]
    assert "x9, zz from the link are not features of these data" in said
