"""The one table of methods (core.methods.registry) is what every surface reads, and every method in it can run."""

from __future__ import annotations

import numpy as np

from core.mechanisms.dp_sgd import DPSGDConfig
from core.mechanisms.pipeline import prepare
from core.mechanisms.trial import Draw, Trial
from core.methods import compare
from core.methods.registry import REFERENCE, REGISTRY, VECTOR, Method, names
from core.privacy.accounting import split_budget
from core.teaching import experiments
from ui import theme


def test_compare_and_the_theme_read_the_table():
    singles = [m for m in REGISTRY.values() if m.kind not in (VECTOR, REFERENCE)]
    assert set(compare.METHODS) | set(compare.EXTRA_METHODS) == {m.name for m in singles}
    assert set(compare.FULL_VECTOR_METHODS) == {m.name for m in REGISTRY.values() if m.kind == VECTOR}
    assert theme.METHOD_LABELS == {n: m.label for n, m in REGISTRY.items()}
    assert theme.METHOD_COLORS == {n: m.colour for n, m in REGISTRY.items()}
    assert set(experiments.NOT_PRIVATE_METHODS) == set(names(private=False)) == {"oracle", experiments.RATE,
                                                                                experiments.TUNED}


def test_a_method_is_one_entry_whose_runner_compare_draws(monkeypatch):
    """Every entry but the Experiments' curves has a runner that draws on real data; and a new entry, with a runner
    of its own, is all Compare needs to draw it (registered for this test only)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2_000, 2))
    problem = prepare(X, X @ np.array([0.5, -0.5]) + rng.laplace(size=2_000))
    trial = Trial(problem, np.array([1.0, 0.0]), split_budget(4.0, 1e-6), "paper", DPSGDConfig(batch_size=200,
                  steps=50), 0.95)
    for m in REGISTRY.values():
        assert (m.runner is None) == (m.kind == REFERENCE), m.name
        if m.runner is not None:
            assert isinstance(m.runner(trial)(np.random.default_rng(1)), Draw)

    def constant(t: Trial):
        return lambda rng: Draw(0.5, 1.0, True, None, 0.0)

    monkeypatch.setitem(REGISTRY, "half", Method("half", "One half", True, "#000000", runner=constant))
    result = compare.compare(problem, 0, split_budget(4.0, 1e-6), 3, np.random.default_rng(2), ["local", "half"])
    assert result.methods["half"].values == (0.5, 0.5, 0.5) and len(result.methods["local"].values) == 3


def test_labels_say_when_a_method_is_not_private():
    for m in REGISTRY.values():
        if not m.private and m.kind != REFERENCE:
            assert "not private" in m.label, m
