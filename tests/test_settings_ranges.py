"""Every setting's one range (core.settings) is enforced alike by the command line, the library and a link.

For each setting, values just inside and just outside its range (tests/test_bad_input.py, RANGE_CASES) go to all
three surfaces: the command line and the library take the ones inside and refuse the others in one sentence
(tests/test_bad_input.py), and the app's link parser (ui.params.link_value) uses the ones inside and ignores the
others with a notice (here). A surface that took a value the others refuse fails. (A declared response bound must
also be certifiable for the data's n and d, which a link cannot know: that refusal comes from n and d at load time,
tests/test_fit_exact.py.)
"""

from __future__ import annotations

import pytest
from test_bad_input import RANGE_CASES

from core.settings import RANGES
from ui.params import PARAMS, link_value

LINK = {"epsilon": "epsilon", "delta": "delta", "split": "split_a", "level": "level", "seed": "noise_seed",
        "lam_reg": "lam_reg", "response_bound": "response_bound", "trials": "trials"}


@pytest.mark.parametrize("name, text, inside", RANGE_CASES)
def test_a_link_takes_the_values_the_library_and_the_command_line_take(name, text, inside):
    r = RANGES[name]
    assert PARAMS[LINK[name]].bounds == (r.low, r.high)
    _, why = link_value(LINK[name], text)
    assert (why is None) == inside, why
