"""Streamlit caches of the deterministic computations of the Pipeline and the attacker's view: teaching ones (NOT
private) and the budget's privacy profile (public); never noise.

Each is keyed on the data and model settings (ui.loaded.data_spec and model_spec) and on the settings it reads;
the prepared problem itself is passed unhashed (`_problem`), as those keys identify it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st
from numpy.typing import NDArray

from core.data.spec import DataSpec
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import Problem
from core.privacy.accounting import Budget, PrivacyProfile
from core.privacy.accounting import privacy_profile as _privacy_profile
from core.teaching import aids as teaching
from core.teaching import whatif
from core.teaching.aids import Steps

if TYPE_CHECKING:  # the attacker's view's module (and its dp_accounting) is imported only where it runs
    from core.teaching import attack


@st.cache_data(show_spinner=False, max_entries=8)
def lambda_min_path(data: DataSpec, model: ModelSpec, _problem: Problem) -> Steps:
    """The recursion (10) from the true λmin(Pₙ): up to millions of steps, the same for every draw."""
    return teaching.falling_path(_problem, _problem.fit.lambda_min)


@st.cache_data(show_spinner="What-if (not private): the smallest ε…", max_entries=64)
def smallest_epsilon(data: DataSpec, model: ModelSpec, delta: float, split: tuple, _problem: Problem,
                     level: float | None = None) -> float | None:
    """level None: the noise-free point (passes half the time); 0.95: passes with probability >= 0.95."""
    return whatif.smallest_epsilon(_problem, delta, split, level=level)


@st.cache_data(show_spinner="What-if (not private): the smallest n…", max_entries=64)
def smallest_n(data: DataSpec, model: ModelSpec, delta: float, split: tuple, epsilon: float,
               _problem: Problem, level: float | None = None) -> int | None:
    return whatif.smallest_n(_problem, epsilon, delta, split, level=level)


@st.cache_data(show_spinner="What-if (not private): where (14) passes over (n, ε)…", max_entries=16)
def pass_region(data: DataSpec, model: ModelSpec, delta: float, split: tuple,
                _problem: Problem) -> tuple[NDArray, NDArray]:
    """(n grid, passes[n, ε]) on core.teaching.aids.WHATIF_EPS; fixed grids, so an ε change reuses it."""
    ns = teaching.whatif_n_grid(_problem)
    return ns, whatif.pass_region(_problem, delta, split, ns, teaching.WHATIF_EPS)


@st.cache_data(show_spinner="The privacy profile δ(ε)…", max_entries=32)
def privacy_profile(b: Budget) -> PrivacyProfile:
    """δ(ε) of the budget's release (public parameters only, no data, no noise)."""
    return _privacy_profile(b)


Target = int | tuple[float, ...]  # a coordinate, or a custom direction u as a tuple (hashable)


@st.cache_resource(show_spinner="The data without one row, refitted (not private)…", max_entries=4)
def neighbours(data: DataSpec, model: ModelSpec, u: Target, row: int | None, _problem: Problem) -> attack.Neighbours:
    """P and P' for the row (None: the one that moves u^T theta most); a resource, as it holds a second data set."""
    from core.teaching import attack

    return attack.neighbours(_problem, u if isinstance(u, int) else list(u), row)


@st.cache_resource(show_spinner="Every stage's law on both data sets (not private)…", max_entries=16)
def laws(data: DataSpec, model: ModelSpec, u: Target, row: int | None, b: Budget, calibration: str,
         _pair: attack.Neighbours) -> attack.Laws:
    from core.teaching import attack

    return attack.laws(_pair, b, calibration)
