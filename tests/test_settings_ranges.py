"""Every setting's one range (core.settings) is enforced alike by the command line, the library and a link.

For each setting, values just inside and just outside its range go to all three surfaces: the command line (exit
status 0 or 2), the library call that takes the setting (returns or raises InputError) and the app's link parser
(ui.params.link_value: used or ignored with a notice). A surface that took a value the others refuse fails. (A
declared response bound must also be certifiable for the data's n and d, which a link cannot know: that refusal
comes from n and d at load time, tests/test_fit_exact.py.)
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable

import numpy as np
import pytest

from core.cli import main
from core.errors import InputError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import make_rng, prepare, prepare_model, run_private
from core.methods.compare import compare
from core.privacy.accounting import split_budget
from core.privacy.gaussian import check_total_budget
from core.settings import RANGES
from ui.params import PARAMS, link_value

RELEASE = ["release", "--synthetic", "--n", "400", "--d", "2", "--sample-seed", "1", "--coordinate", "0"]
BUDGET = ["--epsilon", "4", "--delta", "1e-6"]


def cli(*args: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(args))


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (400, 2))
    return prepare(X, X @ np.array([0.5, -0.5]) + rng.laplace(size=400))


def library(name: str, problem) -> Callable[[float], object]:
    budget = split_budget(4.0, 1e-6)
    return {
        "epsilon": lambda v: check_total_budget(v, 1e-6),
        "delta": lambda v: check_total_budget(4.0, v),
        "split": lambda v: split_budget(4.0, 1e-6, (v, 1.0, 1.0)),
        "level": lambda v: run_private(problem, 0, budget, make_rng(0), level=v),
        "seed": make_rng,
        "lam_reg": lambda v: ModelSpec("robust", lam_reg=v).resolve(2),
        "response_bound": lambda v: prepare_model(problem.X, problem.y, ModelSpec("robust", response_bound=v)),
        "trials": lambda v: compare(problem, 0, budget, v, make_rng(0), ["oracle"]),
    }[name]


def command(name: str, value: str) -> list[str]:
    return {
        "epsilon": [*RELEASE, "--epsilon", value, "--delta", "1e-6"],
        "delta": [*RELEASE, "--epsilon", "4", "--delta", value],
        "split": [*RELEASE, *BUDGET, "--split", f"{value},1,1"],
        "level": [*RELEASE, *BUDGET, "--level", value],
        "seed": [*RELEASE, *BUDGET, "--seed", value],
        "lam_reg": [*RELEASE, *BUDGET, "--lambda-reg", value],
        "response_bound": [*RELEASE, *BUDGET, "--response-bound", value],
        "trials": ["compare", *RELEASE[1:], *BUDGET, "--methods", "oracle", "--trials", value],
    }[name]


LINK = {"epsilon": "epsilon", "delta": "delta", "split": "split_a", "level": "level", "seed": "noise_seed",
        "lam_reg": "lam_reg", "response_bound": "response_bound", "trials": "trials"}

CASES = [
    ("epsilon", "0.001", True), ("epsilon", "100", True), ("epsilon", "0.0009", False), ("epsilon", "101", False),
    ("delta", "1e-15", True), ("delta", "0.1", True), ("delta", "1e-16", False), ("delta", "0.2", False),
    ("split", "0.001", True), ("split", "1000", True), ("split", "1e-06", False), ("split", "1001", False),
    ("level", "0.5", True), ("level", "0.99", True), ("level", "0.3", False), ("level", "0.995", False),
    ("seed", "0", True), ("seed", str(2**53 - 1), True), ("seed", str(2**53), False), ("seed", str(2**60), False),
    ("lam_reg", "0", True), ("lam_reg", "100", True), ("lam_reg", "101", False),
    ("response_bound", "1e-06", True), ("response_bound", "1e6", True), ("response_bound", "1e16", False),
    ("trials", "1", True), ("trials", "500", True), ("trials", "0", False), ("trials", "501", False),
]


@pytest.mark.parametrize("name, text, inside", CASES)
def test_every_surface_takes_the_same_values(name, text, inside, problem):
    r = RANGES[name]
    value = int(text) if r.integer else float(text)
    assert r.holds(value) == inside
    assert PARAMS[LINK[name]].bounds == (r.low, r.high)
    _, why = link_value(LINK[name], text)
    assert (why is None) == inside, why
    try:
        library(name, problem)(value)
        took = True
    except InputError:
        took = False
    assert took == inside
    assert (cli(*command(name, text)) == 0) == inside
