"""The paper's simulation (section 4.1; docs/method.md §10), and its logistic counterpart.

theta* = norm * v/||v|| with v ~ N(0, I_d); x_i ~ Uni[-1,1]^d;
robust:   y_i = <theta*, x_i> + noise * Laplace(1);
logistic: y_i = +1 with probability 1/(1 + exp(-<theta*, x_i>)), else -1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import Dataset
from core.errors import DataError, check_seed
from core.privacy.population import seed_words

# Public limits of the generator, checked before anything is allocated: X holds n*d floats and the fit a few
# copies of it, so 2e8 cells (1.6 GB) is what a workstation holds; d past 200 leaves the settings the recursions
# and the exact fit were checked on; a norm or noise scale past 1e3 only pushes y to where the fit needs rescaling.
MAX_ROWS = 10_000_000
MAX_CELLS = 200_000_000
MAX_D = 200
MAX_SCALE = 1e3


def check_size(n: object, d: object) -> None:
    """Raise DataError unless n and d are integers with d from 1 to MAX_D, d < n <= MAX_ROWS and n d <= MAX_CELLS."""
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (n, d))
    if not (ints and 1 <= d <= MAX_D and d < n <= MAX_ROWS):
        raise DataError(f"synthetic data needs integers n > d >= 1 with d <= {MAX_D} and n <= {MAX_ROWS:,}, "
                        f"got n = {n}, d = {d}")
    if n * d > MAX_CELLS:
        raise DataError(f"n * d = {n * d:,} cells is more than the {MAX_CELLS:,} that fit in memory; lower n or d")


def _check_scale(value: object, what: str) -> None:
    real = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    if not (real and 0 <= value <= MAX_SCALE):
        raise DataError(f"{what} must be a number from 0 to {MAX_SCALE:g}, got {value!r}")


def synthetic(
    n: int,
    d: int,
    loss: str = "robust",
    theta_norm: float = 1.0,
    noise: float = 1.0,
    seed: int | None = None,
) -> Dataset:
    """Draw a synthetic sample; `noise` is the Laplace scale (robust only). Seeded for replay."""
    check_size(n, d)
    _check_scale(theta_norm, "the norm of theta*")
    _check_scale(noise, "the noise scale")
    check_seed(seed, "the sample seed")
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(d)
    theta_star = theta_norm * v / np.linalg.norm(v)
    X, y = _draw(rng, n, theta_star, loss, noise)
    names = tuple(f"x{j}" for j in range(d))
    source = f"synthetic {loss} ({seed_words(seed)})"
    return Dataset(X=X, y=y, feature_names=names, source=source, theta_star=theta_star)


FOLDER_MAX_ROWS = 10**10  # a folder is written file by file: only disk bounds it


def write_folder(root: str, n: int, d: int, loss: str = "robust", theta_norm: float = 1.0, noise: float = 1.0,
                 seed: int = 0, file_rows: int = 2**20) -> NDArray[np.float64]:
    """Write the simulation as a folder of Parquet files of `file_rows` rows (part-00000.parquet, ...), columns x0 ..
    x(d-1) and y, file by file (memory: one file); returns theta*. File k is drawn from the seed sequence (seed, k), so
    a folder is the same whatever writes it, but not the rows `synthetic` draws for the same seed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not (isinstance(n, int) and isinstance(d, int) and 1 <= d <= MAX_D and d < n <= FOLDER_MAX_ROWS):
        raise DataError(f"a synthetic folder needs integers n > d >= 1 with d <= {MAX_D} and n <= {FOLDER_MAX_ROWS:,},"
                        f" got n = {n}, d = {d}")
    _check_scale(theta_norm, "the norm of theta*")
    _check_scale(noise, "the noise scale")
    check_seed(seed, "the sample seed")
    v = np.random.default_rng(seed).standard_normal(d)
    theta_star = theta_norm * v / np.linalg.norm(v)
    Path(root).mkdir(parents=True, exist_ok=True)
    names = [f"x{j}" for j in range(d)] + ["y"]
    for k, start in enumerate(range(0, n, file_rows)):
        rows = min(file_rows, n - start)
        X, y = _draw(np.random.default_rng([seed, k]), rows, theta_star, loss, noise)
        table = pa.table(dict(zip(names, [*X.T, y], strict=True)))
        pq.write_table(table, Path(root) / f"part-{k:05d}.parquet", row_group_size=2**17, compression="none")
    return theta_star


def _draw(rng: np.random.Generator, n: int, theta_star: NDArray[np.float64], loss: str,
          noise: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """n rows of the simulation with parameter theta_star (module docstring)."""
    X = rng.uniform(-1.0, 1.0, size=(n, theta_star.size))
    eta = X @ theta_star
    if loss == "robust":
        return X, eta + noise * rng.laplace(size=n)
    if loss == "logistic":
        return X, np.where(rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta)), 1.0, -1.0)
    raise DataError(f"unknown loss {loss!r}; choose 'robust' or 'logistic'")
