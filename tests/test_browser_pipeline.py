"""The Pipeline page in a real browser: an ε change reruns only the private stages yet updates the sidebar and the
link; the presentation mode; and without a seed, a display toggle keeps the draw on screen."""

from __future__ import annotations

import re

from test_browser import browser, check_clean, executable, metric_value, new_tab, server, settle, text  # noqa: F401

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


def test_presentation_mode_and_a_kept_draw(browser, server: str):  # noqa: F811
    tab = new_tab(browser)
    try:
        tab.goto(server + LINK)  # no seed: OS noise
        settle(tab)
        laplace = metric_value(tab, "Laplace draw")
        assert len(laplace.lstrip("-").replace(".", "").replace("e", "").lstrip("0")) > 3
        tab.get_by_text("Presentation", exact=True).click()
        settle(tab)
        tab.wait_for_function("() => location.search.includes('present=1')")
        assert not tab.get_by_text(re.compile("^Formulas")).count()
        assert metric_value(tab, "Laplace draw") == f"{float(laplace):.3g}"  # the same draw, to 3 digits
        check_clean(tab, "21-pipeline-presentation")
        tab.reload()
        settle(tab)
        text(tab, "Privacy budget").wait_for()
        shown = metric_value(tab, "Laplace draw")  # a new session's draw, still to 3 digits
        assert shown == f"{float(shown):.3g}"
    finally:
        tab.close()
