"""What every page says, read off AppTest after a walk through the app: teaching mode with every stage's details
open, a comparison, the planner and the experiments, then a published release and its report; and a walk through
settings and a file that core refuses, whose messages are core's (lower-case by design, to compose).

A help tooltip's button is named for screen readers after its widget's label ("Help for …"), raw, so a label with
a help text must be plain text: LaTeX there is read out as dollar signs and backslashes. Every message and caption
is a sentence: it starts with a capital, a number, a symbol or a name in backticks.
"""

from __future__ import annotations

import re

import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from ui.labels import capitalised

N = 20_000
DETAILS = ("lmin_details", "lmax_details", "test_details", "release_details")
PAGES = ("data", "pipeline", "compare", "attacker", "planner", "experiments", "report")
MESSAGES = ("error", "warning", "info", "success", "caption", "toast")
JUNK = b"\x00\x01 not a table \xff"


def nodes(at: AppTest):
    """Every element and block on the page, the sidebar's included."""
    for root in (at.main, at.sidebar):
        yield from root


def helped_labels(at: AppTest) -> list[str]:
    """The labels of every element that has a help tooltip."""
    return [n.proto.label for n in nodes(at) if getattr(getattr(n, "proto", None), "help", "")]


def messages(at: AppTest) -> list[str]:
    """The text of every alert, caption and toast."""
    shown = [n for n in nodes(at) if getattr(n, "type", None) in MESSAGES] + list(at.toast)
    return [n.value for n in shown]


def starts_lower(text: str) -> bool:
    """Whether text starts with a plain lower-case word; a variable of a formula ("n = 20,000") is not one."""
    first = text.split(" ", 1)[0].rstrip(":;,")
    return first[:1].islower() and first.isalpha() and not re.match(r"\w [=<>≤≥∈]", text)


def snapshot(at: AppTest, where: str, seen: dict[str, list]) -> None:
    assert not at.exception, (where, [e.value for e in at.exception])
    seen["helped"] += [(where, label) for label in helped_labels(at)]
    seen["messages"] += [(where, text) for text in messages(at)]


def click(at: AppTest, label: str) -> AppTest:
    (button,) = [b for b in at.button if b.label == label]
    return button.click().run()


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict[str, list]:
    """(page, text) of what the walk showed; its ledger is a file of its own (conftest's is per test)."""
    found: dict[str, list] = {"helped": [], "messages": []}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PSP_LEDGER", str(tmp_path_factory.mktemp("text") / "ledger.sqlite3"))
        mp.setattr("ui.access._on_this_machine", lambda: True)  # conftest's, for a fixture of this module's scope
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


def test_no_label_with_a_help_tooltip_holds_a_badge_s_markup(seen):
    """A label marked not private says so in words: a badge's markup would be its help button's name."""
    assert [(where, label) for where, label in seen["helped"] if re.search(r":\w+-badge\[", label)] == []
    assert any(label.endswith(" · not private") for _, label in seen["helped"])


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> list[tuple[str, str]]:
    """(page, text) of the messages shown for a budget and a file that core refuses."""
    found: dict[str, list] = {"helped": [], "messages": []}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PSP_LEDGER", str(tmp_path_factory.mktemp("refused") / "ledger.sqlite3"))
        at = new_app(120, n=N, epsilon=-1.0)
        snapshot(at.run(), "home, ε < 0", found)
        for page in ("pipeline", "compare", "planner"):
            snapshot(at.switch_page(f"pages/{page}.py").run(), f"{page}, ε < 0", found)
        at.session_state["epsilon"] = 4.0
        at.session_state["source"] = "upload"
        at.switch_page("pages/data.py").run()
        at.file_uploader(key="upload_file").set_value(("junk.csv", JUNK, "text/csv"))
        snapshot(at.run(), "data, junk file", found)
        for page in ("pipeline", "compare", "planner", "report"):
            snapshot(at.switch_page(f"pages/{page}.py").run(), f"{page}, junk file", found)
    return found["messages"]


def test_the_walks_reach_errors_and_captions(seen, refused):
    kinds = {text for _, text in seen["messages"] + refused}
    assert any(text.startswith("Full run: ") for text in kinds)  # the Experiments page's recorded runs
    assert len([where for where, _ in refused if where.endswith("ε < 0")]) >= 4
    assert [where for where, _ in refused if where.startswith("data, junk")]


def test_every_message_starts_as_a_sentence(seen, refused):
    assert [(where, text) for where, text in seen["messages"] + refused if starts_lower(text)] == []


@pytest.mark.parametrize("text, expected", [
    ("full run: 25 repetitions", "Full run: 25 repetitions"),
    ("not loaded: the file", "Not loaded: the file"),
    ("a file of one's own", "A file of one's own"),
    ("n = 20,000, d = 5", "n = 20,000, d = 5"),  # a variable keeps its case
    ("people.csv has no column", "people.csv has no column"),  # a file's name
    ("ε = 8 is weak", "ε = 8 is weak"),
    ("`x0` is not a feature", "`x0` is not a feature"),
    ("x0 is not a feature", "x0 is not a feature"),
])
def test_capitalised_starts_a_sentence_and_leaves_names_alone(text, expected):
    assert capitalised(text) == expected
