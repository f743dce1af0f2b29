"""The browser walk of tests/test_browser_walk.py in the dark theme and presentation mode, at 1920 then 1280 wide: a
module of its own, so that the two walks run side by side."""

from __future__ import annotations

import pytest
from test_browser import server  # noqa: F401
from test_browser_walk import WALKS, walk

pytestmark = pytest.mark.browser  # a real browser: the full lane only


def test_every_page_every_figure_dark_presentation(browser, server: str):  # noqa: F811
    walk(browser, server, *WALKS[1])
