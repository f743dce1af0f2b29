"""The Pipeline page in a real browser: an ε change reruns only the private stages yet updates the sidebar and the
link; the presentation mode; and without a seed, a display toggle keeps the draw on screen."""

from __future__ import annotations

import re

import pytest
from test_browser import check_clean, executable, metric_value, new_tab, server, settle, text  # noqa: F401

pytestmark = pytest.mark.browser  # a real browser: the full lane only

LINK = "/pipeline?n=20000&epsilon=8"


def sidebar_budget(tab) -> str:
    return tab.locator('[data-testid="stSidebar"]').get_by_text(re.compile(r"^Budget · ")).first.inner_text()


def press_epsilon(tab, key: str) -> None:
    tab.get_by_role("slider").first.focus()  # the budget's first slider: total ε
    tab.keyboard.press(key)
    settle(tab)


def test_an_epsilon_change_updates_the_stages_the_sidebar_and_the_link(browser, server: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(server + LINK + "&noise_seed=1")
        settle(tab)
        assert sidebar_budget(tab).startswith("Budget · ε = 8,")
        threshold = metric_value(tab, "Threshold of (14)")
        press_epsilon(tab, "ArrowRight")  # the next value of the grid: 10
        tab.wait_for_function("() => location.search.includes('epsilon=10')")
        assert sidebar_budget(tab).startswith("Budget · ε = 10,")
        assert metric_value(tab, "Threshold of (14)") != threshold
        check_clean(tab, "20-pipeline-epsilon")
    finally:
        tab.close()


VALUE_SIZE = """() => parseFloat(getComputedStyle(
    document.querySelector('[data-testid="stMetricValue"] p')).fontSize)"""


def digits(shown: str) -> int:
    """Significant digits of a shown number such as 0.0123 or 1.25e-05."""
    return len(shown.lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0"))


def test_presentation_mode_and_a_kept_draw(browser, server: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(server + LINK)  # no seed: OS noise
        settle(tab)
        tab.get_by_text("The count, its noise and the margin").first.click()  # stage 1's intermediates
        settle(tab)
        laplace = metric_value(tab, "Laplace draw")
        assert digits(laplace) > 3
        tab.get_by_text("Show the PLD total").click()  # a display toggle: the same draw stays on screen
        settle(tab)
        assert metric_value(tab, "Laplace draw") == laplace
        threshold = metric_value(tab, "Threshold of (14)")
        assert digits(threshold) > 3
        plain_size = tab.evaluate(VALUE_SIZE)
        tab.get_by_text("Presentation", exact=True).click()
        settle(tab)
        tab.wait_for_function("() => location.search.includes('present=1')")
        assert not tab.get_by_text(re.compile("^Formulas")).count()
        assert not tab.get_by_text("Laplace draw").count()  # the intermediates fold away
        assert metric_value(tab, "Threshold of (14)") == f"{float(threshold):#.3g}"  # trailing zeros kept
        assert tab.evaluate(VALUE_SIZE) >= 1.3 * plain_size  # numbers large enough for a room
        caption, body = tab.evaluate("""() => [
            parseFloat(getComputedStyle(document.querySelector('[data-testid="stCaptionContainer"]')).fontSize),
            parseFloat(getComputedStyle(document.querySelector('[data-testid="stMarkdownContainer"] p')).fontSize)]""")
        assert caption >= body, (caption, body)  # captions as large as the text around them
        check_clean(tab, "21-pipeline-presentation")
        tab.reload()
        settle(tab)
        text(tab, "Privacy budget").wait_for()
        assert metric_value(tab, "Threshold of (14)") == f"{float(threshold):#.3g}"
    finally:
        tab.close()


DETAILS = re.compile(r"(The count, its noise and the margin|The terms of \(14\)|How the noise was scaled)")
LATEX_NAMES = "() => [...document.querySelectorAll('[aria-label*=\"$\"]')].map(e => e.getAttribute('aria-label'))"


def test_help_buttons_are_named_in_plain_text(browser, server: str):  # noqa: F811
    """A help button is named "Help for <label>" for screen readers: with every stage's details open, no name
    holds a label's LaTeX."""
    tab = new_tab(browser)
    try:
        tab.goto(server + LINK + "&noise_seed=1")
        settle(tab)
        tab.get_by_role("button", name="Help for Released value T").wait_for()  # stage 4 is drawn
        summaries = tab.locator('[data-testid="stExpander"] summary').filter(has_text=DETAILS)
        for i in range(summaries.count()):
            summaries.nth(i).click()
            settle(tab)
        tab.get_by_role("button", name="Help for σ(ε_c, δ_c)").wait_for()  # the release's details are open
        assert tab.evaluate(LATEX_NAMES) == []
        check_clean(tab, "22-pipeline-help-names")
    finally:
        tab.close()
