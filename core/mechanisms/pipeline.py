"""The whole single-parameter release, stage by stage (Algorithm 5 with Algorithms 2 and 4).

`prepare_spec` (a loaded data set and a `core.estimator.model.ModelSpec`) and `prepare` (arrays and loose
settings) do the non-private work once: validation, projection onto the domain, the fit. The
problem carries the resolved model spec, so whatever shows or documents it reads the domain and
radius the fit used from `problem.model`.
`run_private` does the private stages on a prepared problem; call it again for fresh noise
(a new budget, split, coordinate or calibration) without refitting. Noise is never cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import Dataset
from core.data.folder import FolderData
from core.data.spec import DataSpec, FolderSpec
from core.errors import BudgetError, InputError, check_seed
from core.estimator.fit import fit_rows
from core.estimator.geometry import project
from core.estimator.losses import get_loss
from core.estimator.model import ModelSpec
from core.estimator.problem import Problem, real_array, validate_design
from core.estimator.rows import InMemory
from core.mechanisms.certificates import RecursiveBound, lambda_max_certificate, lambda_min_certificate
from core.mechanisms.curvature import CurvatureProbe, curvature_probe
from core.mechanisms.fallback import fallback_release
from core.mechanisms.release import Release, interval_half_width, release, unit_direction
from core.mechanisms.split import probe_epsilon
from core.mechanisms.stability import StabilityTest, stability_test
from core.mechanisms.trial import Draw, Trial
from core.privacy.accounting import Budget
from core.privacy.gaussian import check_total_budget, sigma


@dataclass(frozen=True)
class PrivateRun:
    """One draw of the private stages: certificates, test and release, with the budget they used.

    lambda_max is None when stage 2 was not reached (lambda_hat_min = 0); its budget is still
    counted as spent.
    """

    budget: Budget
    u: NDArray[np.float64]
    lambda_min: RecursiveBound
    lambda_max: RecursiveBound | None
    test: StabilityTest
    release: Release


def prepare(
    X: NDArray,
    y: NDArray,
    loss: str = "robust",
    domain: str = "cube",
    radius: float | None = None,
    lam_reg: float = 0.0,
    feature_names: tuple[str, ...] | None = None,
) -> Problem:
    """Stage 0 from arrays and loose settings: `prepare_model` with ModelSpec(loss, domain, radius, lam_reg)."""
    return prepare_model(X, y, ModelSpec(loss, domain, radius, lam_reg), feature_names)


def prepare_spec(dataset: Dataset | FolderData, model: ModelSpec, data_spec: DataSpec | None = None) -> Problem:
    """Stage 0 for a loaded data set (and the spec it was loaded from, kept on the problem); a folder's rows are read
    in blocks, as its spec says (core.estimator.blocks.prepare_folder), with the same fit and stages."""
    if isinstance(dataset, FolderData):
        from core.estimator.blocks import BlockRows, prepare_folder  # Dask loads only for a folder

        if not isinstance(data_spec, FolderSpec):
            raise InputError("a folder's rows are prepared from its spec (core.data.spec.FolderSpec)")
        rows = BlockRows(dataset.folder, data_spec.block_rows, None, data_spec.scheduler)
        return prepare_folder(rows, model, dataset.feature_names, data_spec, dataset.labels)
    return replace(prepare_model(dataset.X, dataset.y, model, dataset.feature_names, data_spec),
                   privacy_unit=dataset.privacy_unit)


def prepare_model(
    X: NDArray,
    y: NDArray,
    model: ModelSpec,
    feature_names: tuple[str, ...] | None = None,
    data_spec: DataSpec | None = None,
) -> Problem:
    """Stage 0: validate, resolve the model for (n, d), project onto the domain and clip the responses to the public
    bound (both counted), fit theta(P_n). A declared response bound the fit cannot certify is refused here, from
    public facts, before anything is computed on the data."""
    X, names = validate_design(X, y, feature_names)
    resolved = model.resolve(X.shape[1], None if data_spec is None else data_spec.public_radius)
    bound = resolved.bound_for(*X.shape)
    h = get_loss(resolved.loss)
    yv = h.labels(y)
    clipped_y = int(np.count_nonzero(np.abs(yv) > bound))
    if clipped_y:
        yv = np.clip(yv, -bound, bound)
    g = resolved.geometry(X.shape[1])
    Xp, clipped = project(X, g)
    rows = InMemory(Xp, yv)
    return Problem(rows=rows, feature_names=names, geometry=g, fit=fit_rows(rows, h, resolved.lam_reg, radius=g.r),
                   clipped_rows=clipped, model=resolved, data_spec=data_spec, response_bound=bound,
                   clipped_responses=clipped_y)


def run_private(
    problem: Problem,
    u: NDArray | int | str,
    budget: Budget,
    rng: np.random.Generator,
    calibration: str = "paper",
    level: float = 0.95,
    fallback: bool = False,
) -> PrivateRun:
    """Stages 1-4 on a prepared problem with fresh noise from `rng`: `finish` after `certify`, the same draws in the
    same order.

    fallback=True is Algorithm 5 with fallback: when the test (14) fails (lambda_hat_min = 0 included),
    objective perturbation (15) releases instead of bottom, on the budget the run has not spent, so the total
    guarantee is the same (core.mechanisms.fallback, docs/privacy.md). The release's status is then "fallback". Off by
    default: plain Algorithm 5.
    """
    return finish(problem, certify(problem, u, budget, rng, fallback), rng, calibration, level, fallback)


@dataclass(frozen=True)
class Certified:
    """Stages 1-3 of one draw, before the release: the certificates and the test (14), all private, with the budget,
    the unit direction and the data and model (`drawn_on`) they were drawn for. `finish` releases from them, on that
    problem only (the release's privacy rests on certificates of its own data); stopping here spends stages 1-2.
    probe : core.mechanisms.split's reading of the curvature, drawn when the fallback will run with lambda_hat_min = 0
    (None otherwise). Private."""

    budget: Budget
    u: NDArray[np.float64]
    lambda_min: RecursiveBound
    lambda_max: RecursiveBound | None
    test: StabilityTest
    probe: CurvatureProbe | None
    drawn_on: tuple[DataSpec | None, ModelSpec, int, int]


def certify(problem: Problem, u: NDArray | int | str, budget: Budget, rng: np.random.Generator,
            fallback: bool = False, released: Counts | None = None) -> Certified:
    """Stages 1-3: Algorithm 2's lambda_hat_min, Algorithm 4's lambda_hat_max when lambda_hat_min > 0, and the test.

    released: the noisy counts of certificates drawn earlier (`counts`), read back without new noise."""
    # Any delta < 1 is a valid, if weak, guarantee, and the certificates' failure events are studied at large delta;
    # the command line and the app, where a user sets the budget, refuse a total delta above MAX_DELTA.
    check_total_budget(budget.epsilon_total, budget.delta_total, max_delta=1.0)
    check_fallback_accounting(fallback, budget.accounting)
    uv = unit_direction(_direction(problem, u), problem.d)
    lmin, lmax, test = certificates(problem, budget, rng, released)
    probe = fallback_probe(problem, budget, lmin.lambda_hat, fallback, rng,
                           None if released is None else tuple(released[2:]))
    return Certified(budget=budget, u=uv, lambda_min=lmin, lambda_max=lmax, test=test, probe=probe,
                     drawn_on=_identity(problem))


# The released counts N_hat of stages 1 and 2 (None: stage 2 not run), and the probe's reading when there was one (a
# certification kept before the probe existed has two entries).
Counts = tuple[float, float | None] | tuple[float, float | None, float | None]


def fallback_probe(problem: Problem, budget: Budget, lambda_hat_min: float, fallback: bool, rng: np.random.Generator,
                   released: tuple[float | None, ...] | None = None) -> CurvatureProbe | None:
    """The probe of core.mechanisms.split, drawn when the fallback will run with nothing certified (lambda_hat_min = 0
    leaves stage 2 unrun, and the test (14) fails), on its share of stage 2's epsilon; with `released` (the counts
    after the first two), read back without new noise. None otherwise, and for a kept certification without one."""
    if not (fallback and lambda_hat_min <= 0):
        return None
    if released is None:
        return curvature_probe(problem, probe_epsilon(budget), rng)
    reading = released[0] if released else None
    return None if reading is None else curvature_probe(problem, probe_epsilon(budget), rng, reading)


def certificates(problem: Problem, budget: Budget, rng: np.random.Generator, released: Counts | None = None
                 ) -> tuple[RecursiveBound, RecursiveBound | None, StabilityTest]:
    """Stages 1-3, which no direction enters: lambda_hat_min (Algorithm 2), lambda_hat_max (Algorithm 4, when
    lambda_hat_min > 0) and the test (14) at the release stage's (eps_c, delta_c); from the `released` counts of an
    earlier draw when given (then no noise is drawn)."""
    g, f = problem.geometry, problem.fit
    n_min, n_max = (None, None) if released is None else released[:2]
    lmin = lambda_min_certificate(f, g, budget.lambda_min.epsilon, budget.lambda_min.delta, rng, n_min)
    lmax = None
    if lmin.lambda_hat > 0:  # Algorithm 4 needs lambda_hat_min > 0
        if released is not None and n_max is None:
            raise InputError("these certificates cannot be read back on these rows; certify again")
        lmax = lambda_max_certificate(f, g, lmin.lambda_hat, budget.lambda_max.epsilon, budget.lambda_max.delta, rng,
                                      n_max)
    test = stability_test(lmin.lambda_hat, None if lmax is None else lmax.lambda_hat, g, f.n, f.lam_reg,
                          budget.release.epsilon, budget.release.delta)
    return lmin, lmax, test


def counts(c: Certified) -> Counts:
    """The released counts of certificates and the probe's reading: their private outputs, from which `certify` reads
    them back."""
    return (c.lambda_min.N_hat, None if c.lambda_max is None else c.lambda_max.N_hat,
            None if c.probe is None else c.probe.reading)


def planned_half_width(problem: Problem, c: Certified, calibration: str = "paper", level: float = 0.95) -> float | None:
    """The half-width Algorithm 5's interval will have when released from `c` (None when the test failed): known
    before the release, as it depends on the certificates and public constants only (core.mechanisms.release)."""
    if not c.test.passed:
        return None
    s = sigma(c.budget.release.epsilon, c.budget.release.delta, calibration)
    return interval_half_width(c.test, problem.geometry, problem.n, s, level)[1]


def finish(problem: Problem, c: Certified, rng: np.random.Generator, calibration: str = "paper", level: float = 0.95,
           fallback: bool = False) -> PrivateRun:
    """Stage 4 from certified stages 1-3: Algorithm 5's release, or bottom, or (fallback) objective perturbation on
    the unspent budget. The branch depends on the private certificates only."""
    check_fallback_accounting(fallback, c.budget.accounting)
    check_certified(problem, c)
    f, g, b = problem.fit, problem.geometry, c.budget
    rel = release(f, g, c.u, c.test, b.release.epsilon, b.release.delta, rng, calibration, level)
    if fallback and not c.test.passed:
        rel = fallback_release(problem, c.u, c.lambda_min.lambda_hat, rel, b, rng, c.probe)
    return PrivateRun(budget=b, u=c.u, lambda_min=c.lambda_min, lambda_max=c.lambda_max, test=c.test, release=rel)


def check_certified(problem: Problem, c: Certified) -> None:
    """Certificates release only on the problem they were drawn on (its public identity)."""
    if c.drawn_on != _identity(problem):
        raise InputError("these certificates were drawn on other data or another model; certify again")


def _identity(problem: Problem) -> tuple[DataSpec | None, ModelSpec, int, int]:
    """Which problem certificates belong to, from public facts: its data spec, model, n and d."""
    return problem.data_spec, problem.model, problem.n, problem.d


def check_fallback_accounting(fallback: bool, accounting: str) -> None:
    """The fallback's guarantee is proven under basic composition only (docs/privacy.md, "Algorithm 5 with
    fallback"): a budget solved by privacy-loss distributions gives its stages more than the basic total allows."""
    if fallback and accounting != "basic":
        raise BudgetError("the fallback's guarantee is proven under basic composition only: choose basic in "
                          "{accounting}, or turn the fallback off in {fallback}", "accounting")


def _direction(problem: Problem, u: NDArray | int | str) -> NDArray | int:
    """u as a coordinate index (an integer or a feature name) or a real vector; anything else is refused."""
    if isinstance(u, (str, bool, int, np.integer)):
        return problem.coordinate(u)
    return real_array(u, "the direction u")


def make_rng(seed: int | None) -> np.random.Generator:
    """A seeded generator for reproducible teaching runs; OS entropy when seed is None."""
    check_seed(seed, "the noise seed")
    return np.random.default_rng(seed)


def local_runner(t: Trial) -> Callable[[np.random.Generator], Draw]:
    """core.methods.registry's runner of Algorithm 5 (the "local" method), with its private interval."""
    def draw(rng: np.random.Generator) -> Draw:
        start = time.perf_counter()
        r = run_private(t.problem, t.u, t.budget, rng, t.calibration, t.level).release
        return Draw(r.value, r.noise_sd, True, t.problem.fit.lam_reg, time.perf_counter() - start, r.interval)

    return draw
