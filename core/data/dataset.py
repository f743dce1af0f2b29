"""The common shape every data source returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Dataset:
    """Features X (n x d), responses y, feature names, and a description of where they came from.

    theta_star is the generating parameter for synthetic data (None otherwise). Nothing here is
    private: it is the sensitive input itself.
    """

    X: NDArray[np.float64] = field(repr=False)
    y: NDArray[np.float64] = field(repr=False)
    feature_names: tuple[str, ...]
    source: str
    theta_star: NDArray[np.float64] | None = None

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])
