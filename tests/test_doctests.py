"""The examples in the public API's docstrings (`>>>`) run as written: every module below holds some, and each
example is deterministic and fast."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["core.errors", "core.privacy.accounting", "core.privacy.gaussian", "core.privacy.unit", "core.data.spec",
           "core.estimator.model"]


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_run_as_written(name):
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    assert attempted > 0, f"{name} has no examples"
    assert failed == 0, f"{failed} of {attempted} examples in {name} failed (each shown in the captured stdout)"
