"""The measured width frontier (core.teaching.frontier): the file read and checked, its figure, and the Planner's
section that shows it once opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_page_planner import open_planner

from core.errors import InputError
from core.teaching.frontier import GRID_TOP, read_frontier
from ui.planner_figures import frontier_figure

GOOD = """state,n,coefficient,epsilon_needed,certified_share,median_ratio,draws
TX,20000,female,6,1.0,1.5,100
TX,132527,female,3,1.0,1.9,100
TX,132527,schooling,,1.0,2.4,100
MI,20000,schooling,,0.0,,100
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "frontier.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_frontier_is_read_with_its_unreached_cells(tmp_path):
    points = read_frontier(write(tmp_path, GOOD))
    assert [(p.state, p.n, p.coefficient, p.epsilon_needed) for p in points] == [
        ("TX", 20_000, "female", 6.0), ("TX", 132_527, "female", 3.0), ("TX", 132_527, "schooling", None),
        ("MI", 20_000, "schooling", None)]
    assert points[-1].median_ratio is None  # nothing certified there: the study writes the ratio empty
    fig = frontier_figure(points, GRID_TOP)
    reached = next(t for t in fig.data if t.name == "TX, female")
    missed = next(t for t in fig.data if t.name.startswith("TX, schooling: not reached"))
    assert list(reached.x) == [20_000, 132_527] and list(reached.y) == [6.0, 3.0]  # one line, ordered by n
    assert list(missed.y) == [GRID_TOP] and "not reached" in missed.name
    # the colour says the target, the dash the state
    lines = {t.name: t.line for t in fig.data if t.mode == "lines+markers"}
    assert lines["TX, female"].color != lines["TX, schooling"].color == lines["MI, schooling"].color
    assert lines["TX, schooling"].dash != lines["MI, schooling"].dash
    assert "SYNTHETIC" in fig.layout.title.text and "measured" in fig.layout.title.text


@pytest.mark.parametrize("text,said", [
    ("state,n\nTX,1\n", "is not the width frontier"),
    (GOOD.replace("20000", "twenty"), "line 2: a value is not a number"),
    (GOOD.replace("1.0,1.5", "1.5,1.5"), "line 2: a value is out of its range"),
    (GOOD.replace(",6,", ",-6,"), "line 2: a value is out of its range"),
    (GOOD.replace(",6,", ",nan,"), "line 2: a value is out of its range"),
])
def test_a_bad_frontier_file_is_refused_with_one_message(tmp_path, text, said):
    with pytest.raises(InputError, match=said):
        read_frontier(write(tmp_path, text))


def test_the_planner_shows_the_frontier_once_opened(tmp_path, monkeypatch):
    monkeypatch.setenv("PSP_RESULTS_DIR", str(tmp_path))
    write(tmp_path, GOOD)
    at = open_planner()
    assert not [c for c in at.get("plotly_chart") if "SYNTHETIC census" in c.proto.spec]  # folded: not drawn
    at = open_planner(planner_frontier=True)
    assert not at.exception
    drawn = [c for c in at.get("plotly_chart") if "SYNTHETIC census" in c.proto.spec]
    assert len(drawn) == 1 and any("made-up records" in c.value for c in at.caption)


def test_without_the_file_the_planner_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PSP_RESULTS_DIR", str(tmp_path))
    at = open_planner(planner_frontier=True)
    assert not at.exception and any("could not be read" in i.value for i in at.info)
