"""The one table of methods (core.methods) is what every surface reads, and every method in it can run."""

from __future__ import annotations

import numpy as np

from core import compare, experiments
from core.accounting import split_budget
from core.dp_sgd import DPSGDConfig
from core.methods import REFERENCE, REGISTRY, VECTOR, names
from core.pipeline import prepare
from ui import theme


def test_compare_and_the_theme_read_the_table():
    singles = [m for m in REGISTRY.values() if m.kind not in (VECTOR, REFERENCE)]
    assert set(compare.METHODS) | set(compare.EXTRA_METHODS) == {m.name for m in singles}
    assert set(compare.FULL_VECTOR_METHODS) == {m.name for m in REGISTRY.values() if m.kind == VECTOR}
    assert set(compare.INTERVAL_METHODS) == {m.name for m in REGISTRY.values() if m.interval}
    assert theme.METHOD_LABELS == {n: m.label for n, m in REGISTRY.items()}
    assert theme.METHOD_COLORS == {n: m.colour for n, m in REGISTRY.items()}
    assert set(experiments.NOT_PRIVATE_METHODS) == set(names(private=False)) == {"oracle", experiments.RATE,
                                                                                experiments.TUNED}


def test_every_compared_method_has_a_runner_and_no_runner_is_unlisted():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2_000, 2))
    problem = prepare(X, X @ np.array([0.5, -0.5]) + rng.laplace(size=2_000))
    runners = compare._runners(problem, np.array([1.0, 0.0]), split_budget(4.0, 1e-6), "paper",
                               DPSGDConfig(batch_size=200, steps=50), 0.95)
    listed = set(names()) - set(names(kind=REFERENCE))
    assert set(runners) == listed
    for name in listed:
        runners[name](np.random.default_rng(1))  # each runs once on real data


def test_labels_say_when_a_method_is_not_private():
    for m in REGISTRY.values():
        if not m.private and m.kind != REFERENCE:
            assert "not private" in m.label, m
