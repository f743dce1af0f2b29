import re
import pytest
from test_browser import browser, executable, new_tab, server, settle, text  # noqa: F401

pytestmark = pytest.mark.browser


def test_the_release_card_names_the_probe(browser, server):
    tab = new_tab(browser)
    tab.goto(f"{server}/pipeline?n=20000&epsilon=2&source=synthetic_logistic&fallback=on&noise_seed=1")
    settle(tab)
    caption = text(tab, "The fallback spent ε")
    caption.wait_for()
    words = caption.inner_text()
    print("CAPTION:", words)
    assert "private reading of the data's curvature" in words
    tab.screenshot(path="/tmp/t37/probe_caption.png", full_page=True)
