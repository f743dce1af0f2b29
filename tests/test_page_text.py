"""What every page says, read off AppTest after a walk through the app: teaching mode with every stage's details
open, a comparison, the planner and the experiments, then a published release and its report.

A help tooltip's button is named for screen readers after its widget's label ("Help for …"), raw, so a label with
a help text must be plain text: LaTeX there is read out as dollar signs and backslashes.
"""

from __future__ import annotations

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

N = 20_000
DETAILS = ("lmin_details", "lmax_details", "test_details", "release_details")
PAGES = ("data", "pipeline", "compare", "planner", "experiments", "report")


def nodes(at: AppTest):
    """Every element and block on the page, the sidebar's included."""
    for root in (at.main, at.sidebar):
        yield from root


def helped_labels(at: AppTest) -> list[str]:
    """The labels of every element that has a help tooltip."""
    return [n.proto.label for n in nodes(at) if getattr(getattr(n, "proto", None), "help", "")]


def snapshot(at: AppTest, where: str, seen: dict[str, list]) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    seen["helped"] += [(where, label) for label in helped_labels(at)]


def click(at: AppTest, label: str) -> AppTest:
    (button,) = [b for b in at.button if b.label == label]
    return button.click().run()


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict[str, list]:
    """(page, text) of what the walk showed; its ledger is a file of its own (conftest's is per test)."""
    found: dict[str, list] = {"helped": []}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PSP_LEDGER", str(tmp_path_factory.mktemp("text") / "ledger.sqlite3"))
        at = new_app(120, n=N, settings_panel=True, **dict.fromkeys(DETAILS, True))
        snapshot(at.run(), "home", found)
        for page in PAGES:
            snapshot(at.switch_page(f"pages/{page}.py").run(), page, found)
            if page == "compare":
                snapshot(click(at, "Run comparison"), "compare, run", found)
        at.session_state["mode"] = "publish"
        snapshot(at.switch_page("pages/pipeline.py").run(), "pipeline, publish", found)
        snapshot(at.button(key="release").click().run(), "pipeline, released", found)
        snapshot(at.switch_page("pages/report.py").run(), "report, released", found)
    return found


def test_the_walk_reaches_the_metrics_with_help(seen):
    labels = {label for _, label in seen["helped"]}
    assert {"Released value T", "λ̂min", "N̂", "κ̂", "σ(ε_c, δ_c)"} <= labels


def test_no_label_with_a_help_tooltip_holds_latex(seen):
    assert [(where, label) for where, label in seen["helped"] if "$" in label] == []
