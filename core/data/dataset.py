"""The common shape every data source returns, with the unit its privacy guarantee protects (core.privacy.unit)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from core.errors import DataError
from core.privacy.marks import NOT_PRIVATE
from core.privacy.unit import PrivacyUnit


@dataclass(frozen=True)
class Dataset:
    """Features X (n x d), responses y, feature names, and a description of where they came from.

    source describes the data in words from public settings only (the source, the survey, the
    file's name, how a sample was drawn); counts holds what was counted on the data themselves,
    such as the census records that pass the filter ("filtered_records"), which is not private and
    never part of source. theta_star is the generating parameter for synthetic data (None
    otherwise). privacy_unit says whom the guarantee protects: one row (the default) or one census
    person, who fills at most privacy_unit.max_rows_per_person rows. X, y and counts are the
    sensitive input itself.
    """

    X: NDArray[np.float64] = field(repr=False, metadata=NOT_PRIVATE)
    y: NDArray[np.float64] = field(repr=False, metadata=NOT_PRIVATE)
    feature_names: tuple[str, ...]
    source: str
    theta_star: NDArray[np.float64] | None = None
    privacy_unit: PrivacyUnit = PrivacyUnit("row", 1)
    counts: Mapping[str, int] = field(default_factory=dict, metadata=NOT_PRIVATE)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def labels(self) -> NDArray[np.float64]:
        """The responses, from which the loss is chosen (core.data.spec.data_loss)."""
        return self.y


def check_more_rows(n: int, d: int) -> None:
    """DataError unless there are more rows than features, n > d (every data source, in memory or in blocks)."""
    if n <= d:
        raise DataError(f"need more rows than features (n > d), got n = {n} and d = {d}")
