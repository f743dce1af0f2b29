"""A problem: validated data on its declared domain with the fit of stage 0 (core.mechanisms.pipeline prepares it).

Every module that works on prepared data (the private stages, the baselines, the fallback, the comparisons) takes a
`Problem`; it lives here, below all of them, so none of them needs the orchestrator (core.mechanisms.pipeline) to name
it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from core.data.dataset import check_more_rows
from core.data.encoding import CENTRED_INTERCEPT, PAPER_INTERCEPT, asks_paper_intercept
from core.data.spec import DataSpec
from core.errors import DataError
from core.estimator.fit import FitResult
from core.estimator.geometry import Geometry
from core.estimator.model import ModelSpec
from core.estimator.rows import Rows, rows_digest
from core.privacy.marks import NOT_PRIVATE
from core.privacy.unit import PrivacyUnit


def default_coordinate(names: tuple[str, ...]) -> int:
    """The coordinate a release targets unless told otherwise: the first feature not named "intercept" (or
    CENTRED_INTERCEPT: a constant column's coefficient is rarely the question), or the first feature."""
    return next((i for i, name in enumerate(names) if name not in ("intercept", CENTRED_INTERCEPT)), 0)


@dataclass(frozen=True)
class Problem:
    """Validated data on its declared domain, with the fit (stage 0). Nothing here is private.

    clipped_rows counts the rows that projection onto the domain changed; response_bound is the public bound B
    on |y| the fit's certificate rests on (inf for logistic labels), and clipped_responses counts the responses
    clipped to [-B, B]. model is the resolved
    model spec the geometry and the fit were built from (its radius is the ball's, None on the
    cube); data_spec names the data when the problem was prepared from a spec (None otherwise), and privacy_unit
    whom a release's guarantee protects: the loaded data set's (core.data.dataset), a row unless told otherwise.
    """

    rows: Rows = field(metadata=NOT_PRIVATE, repr=False)
    feature_names: tuple[str, ...]
    geometry: Geometry
    fit: FitResult = field(metadata=NOT_PRIVATE)
    clipped_rows: int = field(metadata=NOT_PRIVATE)
    model: ModelSpec
    data_spec: DataSpec | None = None
    response_bound: float = math.inf
    clipped_responses: int = field(default=0, metadata=NOT_PRIVATE)
    privacy_unit: PrivacyUnit = PrivacyUnit("row", 1)

    @cached_property
    def rows_digest(self) -> str:
        """The SHA-256 of the prepared rows (X and y after projection and clipping, with the features' names): which
        rows certificates were drawn on. A function of the data, not private: the ledger keeps it only to compare
        (docs/privacy.md, "Certify first"), and no document prints it."""
        return rows_digest(self.rows, self.feature_names)

    @property
    def X(self) -> NDArray[np.float64]:
        """The prepared features, for the methods that need every row in memory (the baselines, the comparisons)."""
        return self._arrays()[0]

    @property
    def y(self) -> NDArray[np.float64]:
        return self._arrays()[1]

    def _arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        self.require_memory()
        return self.rows.arrays()

    def require_memory(self) -> None:
        """DataError unless every row is in memory, as the baselines, the comparisons and a neighbouring data set
        need: a folder's rows are read in blocks (core.estimator.blocks)."""
        if self.rows.arrays() is None:
            raise DataError("this needs every row in memory, and this data set is read in blocks: release one "
                            "coefficient or a table (Algorithm 5), or load a sample that fits in memory")

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
                if asks_paper_intercept(key, self.feature_names):  # the same column, another meaning
                    raise DataError(f"no feature named 'intercept' in the centred census encoding, whose intercept is "
                                    f"{PAPER_INTERCEPT}", "encoding") from None
                raise DataError(f"no feature named {key!r}; the features are: {names}") from None
        if not 0 <= key < self.d:
            raise DataError(f"coordinate {key} is out of range: there are {self.d} features (0 to {self.d - 1})")
        return int(key)



def validate_design(X: NDArray, y: NDArray, feature_names: tuple[str, ...] | None) -> tuple[NDArray, tuple[str, ...]]:
    """Real numbers, shapes, finiteness and n > d; default names x0, x1, ..."""
    X = np.ascontiguousarray(real_array(X, "the features X"), dtype=np.float64)
    y = real_array(y, "the labels or responses y")
    if X.ndim != 2:
        raise DataError("the features must form a 2-D array (n rows, d columns)")
    n, d = X.shape
    if np.asarray(y).shape != (n,):
        raise DataError(f"y has {np.asarray(y).size} entries but there are {n} rows of features")
    cell = first_not_finite(X)
    if cell is not None:
        raise not_finite_features(*cell)
    if not np.all(np.isfinite(y)):
        row = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DataError(f"y contains NaN or infinite values (first at row {row}); remove or impute those rows")
    check_more_rows(n, d)
    names = tuple(feature_names) if feature_names is not None else tuple(f"x{j}" for j in range(d))
    if len(names) != d:
        raise DataError(f"{len(names)} feature names for {d} columns")
    return X, names


def first_not_finite(X: NDArray) -> tuple[int, int] | None:
    """The (row, column) of the first feature that is not a finite number, or None."""
    rows, cols = np.nonzero(~np.isfinite(X))
    return (int(rows[0]), int(cols[0])) if rows.size else None


def not_finite_features(row: int, col: int) -> DataError:
    """The refusal of features that are not finite, naming the first such cell by its place (never its value)."""
    return DataError(f"the features contain NaN or infinite values (first at row {row}, column {col}); remove or "
                     "impute those rows")


def real_array(a: NDArray, what: str) -> NDArray:
    """a as an array of real numbers (integer or float dtype); booleans, complex, text and objects are refused."""
    try:
        arr = np.asarray(a)
    except ValueError:  # ragged nested lists
        raise DataError(f"{what} must be a rectangular array of real numbers") from None
    if arr.dtype.kind not in "iuf":
        raise DataError(f"{what} must be an array of real numbers, got dtype {arr.dtype.name}; "
                        "convert the columns to numbers first")
    return arr
