"""The whole single-parameter release, stage by stage (Algorithm 5 with Algorithms 2 and 4).

`prepare_spec` (a loaded data set and a `core.model.ModelSpec`) and `prepare` (arrays and loose
settings) do the non-private work once: validation, projection onto the domain, the fit. The
problem carries the resolved model spec, so whatever shows or documents it reads the domain and
radius the fit used from `problem.model`.
`run_private` does the private stages on a prepared problem; call it again for fresh noise
(a new budget, split, coordinate or calibration) without refitting. Noise is never cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from core.accounting import Budget
from core.certificates import RecursiveBound, lambda_max_certificate, lambda_min_certificate
from core.data.dataset import Dataset
from core.errors import DataError, check_seed
from core.fit import FitResult, fit
from core.gaussian import check_total_budget
from core.geometry import Geometry, project
from core.losses import get_loss
from core.marks import NOT_PRIVATE
from core.model import ModelSpec
from core.release import Release, release, unit_direction
from core.spec import DataSpec
from core.stability import StabilityTest, stability_test


@dataclass(frozen=True)
class Problem:
    """Validated data on its declared domain, with the fit (stage 0). Nothing here is private.

    clipped_rows counts the rows that projection onto the domain changed; response_bound is the public bound B
    on |y| the fit's certificate rests on (inf for logistic labels), and clipped_responses counts the responses
    clipped to [-B, B]. model is the resolved
    model spec the geometry and the fit were built from (its radius is the ball's, None on the
    cube); data_spec names the data when the problem was prepared from a spec (None otherwise).
    """

    X: NDArray[np.float64] = field(metadata=NOT_PRIVATE, repr=False)
    y: NDArray[np.float64] = field(metadata=NOT_PRIVATE, repr=False)
    feature_names: tuple[str, ...]
    geometry: Geometry
    fit: FitResult = field(metadata=NOT_PRIVATE)
    clipped_rows: int = field(metadata=NOT_PRIVATE)
    model: ModelSpec
    data_spec: DataSpec | None = None
    response_bound: float = math.inf
    clipped_responses: int = field(default=0, metadata=NOT_PRIVATE)

    @property
    def n(self) -> int:
        return self.fit.n

    @property
    def d(self) -> int:
        return self.fit.d

    def coordinate(self, key: int | str) -> int:
        """A coordinate by 0-based index or feature name."""
        if isinstance(key, bool) or not isinstance(key, (int, np.integer, str)):
            raise DataError(f"a coordinate is a 0-based feature index or a feature name, got {type(key).__name__}")
        if isinstance(key, str):
            if key in self.feature_names:
                return self.feature_names.index(key)
            try:
                key = int(key)
            except ValueError:
                names = ", ".join(self.feature_names)
                raise DataError(f"no feature named {key!r}; the features are: {names}") from None
        if not 0 <= key < self.d:
            raise DataError(f"coordinate {key} is out of range: there are {self.d} features (0 to {self.d - 1})")
        return int(key)


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


def validate_design(X: NDArray, y: NDArray, feature_names: tuple[str, ...] | None) -> tuple[NDArray, tuple[str, ...]]:
    """Real numbers, shapes, finiteness and n > d; default names x0, x1, ..."""
    X = np.ascontiguousarray(_real_array(X, "the features X"), dtype=np.float64)
    y = _real_array(y, "the labels or responses y")
    if X.ndim != 2:
        raise DataError("the features must form a 2-D array (n rows, d columns)")
    n, d = X.shape
    if np.asarray(y).shape != (n,):
        raise DataError(f"y has {np.asarray(y).size} entries but there are {n} rows of features")
    if not np.all(np.isfinite(X)):
        rows, cols = np.nonzero(~np.isfinite(X))
        raise DataError(
            f"the features contain NaN or infinite values (first at row {rows[0]}, column {cols[0]}); "
            "remove or impute those rows"
        )
    if not np.all(np.isfinite(y)):
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DataError(f"y contains NaN or infinite values (first at row {row}); remove or impute those rows")
    if n <= d:
        raise DataError(f"need more rows than features (n > d), got n = {n} and d = {d}")
    names = tuple(feature_names) if feature_names is not None else tuple(f"x{j}" for j in range(d))
    if len(names) != d:
        raise DataError(f"{len(names)} feature names for {d} columns")
    return X, names


def _real_array(a: NDArray, what: str) -> NDArray:
    """a as an array of real numbers (integer or float dtype); booleans, complex, text and objects are refused."""
    try:
        arr = np.asarray(a)
    except ValueError:  # ragged nested lists
        raise DataError(f"{what} must be a rectangular array of real numbers") from None
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{what} must be an array of real numbers, got dtype {arr.dtype.name}; "
                        "convert the columns to numbers first")
    return arr


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


def prepare_spec(dataset: Dataset, model: ModelSpec, data_spec: DataSpec | None = None) -> Problem:
    """Stage 0 for a loaded data set (and the spec it was loaded from, kept on the problem)."""
    return prepare_model(dataset.X, dataset.y, model, dataset.feature_names, data_spec)


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
    return Problem(X=Xp, y=yv, feature_names=names, geometry=g, fit=fit(Xp, yv, h, resolved.lam_reg, radius=g.r),
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
    """Stages 1-4 on a prepared problem with fresh noise from `rng`.

    fallback=True is Algorithm 5 with fallback: when the test (14) fails (lambda_hat_min = 0 included),
    objective perturbation (15) releases instead of bottom, at the release stage's budget
    (2 eps_c, (1 + e^eps_c) delta_c), so the total guarantee is the same (core.fallback,
    docs/privacy.md). The release's status is then "fallback". Off by default: plain Algorithm 5.
    """
    # Any delta < 1 is a valid, if weak, guarantee, and the certificates' failure events are studied at large delta;
    # the command line and the app, where a user sets the budget, refuse a total delta above MAX_DELTA.
    check_total_budget(budget.epsilon_total, budget.delta_total, max_delta=1.0)
    g, f = problem.geometry, problem.fit
    uv = unit_direction(_direction(problem, u), problem.d)
    lmin = lambda_min_certificate(f, g, budget.lambda_min.epsilon, budget.lambda_min.delta, rng)
    lmax = None
    if lmin.lambda_hat > 0:  # Algorithm 4 needs lambda_hat_min > 0
        lmax = lambda_max_certificate(f, g, lmin.lambda_hat, budget.lambda_max.epsilon, budget.lambda_max.delta, rng)
    test = stability_test(
        lmin.lambda_hat,
        None if lmax is None else lmax.lambda_hat,
        g,
        f.n,
        f.lam_reg,
        budget.release.epsilon,
        budget.release.delta,
    )
    rel = release(f, g, uv, test, budget.release.epsilon, budget.release.delta, rng, calibration, level)
    if fallback and not test.passed:  # the branch depends on the private certificates only
        from core.fallback import fallback_release  # imported here: core.fallback builds on core.baselines

        rel = fallback_release(problem, uv, lmin.lambda_hat, rel, budget, rng)
    return PrivateRun(budget=budget, u=uv, lambda_min=lmin, lambda_max=lmax, test=test, release=rel)


def _direction(problem: Problem, u: NDArray | int | str) -> NDArray | int:
    """u as a coordinate index (an integer or a feature name) or a real vector; anything else is refused."""
    if isinstance(u, (str, bool, int, np.integer)):
        return problem.coordinate(u)
    return _real_array(u, "the direction u")


def make_rng(seed: int | None) -> np.random.Generator:
    """A seeded generator for reproducible teaching runs; OS entropy when seed is None."""
    check_seed(seed, "the noise seed")
    return np.random.default_rng(seed)
