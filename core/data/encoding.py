"""The census income encodings: the paper's 17 features (docs/method.md §10), and the same features centred.

Every sensitivity of the pipeline grows with the radius r of the ball that holds the rows (G0 = sup|h'| r,
G1 = ||h''|| r^2, section 2.1.1), and the ball is centred at 0. The paper's encoding puts its indicators in
{0, 1}, so a row's ||x||_2^2 reaches 1 + 4 + 2 + 1 + 1 = 9 (r = 3). Subtracting a public constant from each
column moves every block of columns to the centre of its smallest enclosing ball:

- a lone indicator (working_age, white, married, female) to {-1/2, 1/2}: 1/4 each instead of 1;
- a group of k indicators of which at most one is 1 (7 occupations, 3 classes of worker, each beside a
  reference level of zeros) by 1/k each: the ball about (1/k) 1 holds the k unit vectors at squared distance
  (k - 1)/k and the reference level at 1/k, so the group adds (k - 1)/k (6/7 and 2/3) instead of 1;
- hours and schooling already lie in [-1, 1], and the intercept stays 1.

Then ||x||_2^2 <= 1 + 2 + 4/4 + 6/7 + 2/3 = 116/21 (r = 2.3503, rounded up), so G0 falls by 22 % and G1 by
39 %. The map is fixed and row by row: a row's neighbour stays its neighbour, and the radius is a public fact.
A column less a constant has the same coefficient in a model with an intercept (the intercept absorbs the
constant), so for the unregularised fit (lambda_reg = 0, the default; a ridge also shrinks the intercept, and then
every coefficient moves) every coefficient but the intercept is the paper's; the intercept becomes the log-odds at the
centre of the encoding (each indicator at its centre, hours and schooling at the middle of their ranges), named
`intercept_at_centre` so that it is never read as the paper's.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from core.errors import DataError

FEATURE_NAMES = (
    "intercept",
    "working_age",
    "hours",
    "schooling",
    "white",
    "occ_management_business_financial",
    "occ_computer_engineering_science",
    "occ_education_legal_community_arts_media",
    "occ_healthcare_practitioners",
    "occ_service",
    "occ_sales_office",
    "occ_natural_resources_construction_maintenance",
    "married",
    "female",
    "cow_government",
    "cow_self_employed",
    "cow_unknown",
)
CENTRED_INTERCEPT = "intercept_at_centre"
LONE = ("working_age", "white", "married", "female")
GROUPS = (FEATURE_NAMES[5:12], FEATURE_NAMES[14:17])  # occupations, classes of worker: at most one 1 in each
# What the centred encoding subtracts from each column, in FEATURE_NAMES' order.
CENTRES = tuple(0.5 if name in LONE else next((1.0 / len(g) for g in GROUPS if name in g), 0.0)
                for name in FEATURE_NAMES)
ENCODINGS = ("centred", "paper")
# The app's, the command line's and the link's default. A census spec built without one keeps the paper's encoding
# (LIBRARY_ENCODING), so that code written against the paper's encoding, such as a downloaded script, rebuilds the
# same rows.
DEFAULT_ENCODING = "centred"
LIBRARY_ENCODING = "paper"
# The public bound on ||x||_2 under each encoding: 3 (the paper's), sqrt(116/21) = 2.35028... rounded up, so that no
# row lies outside by a rounding of its norm.
RADII = {"paper": 3.0, "centred": math.ceil(math.sqrt(116 / 21) * 1e4) / 1e4}
# Both radii in words, for the controls and options that say what an empty radius means on census data.
RADII_WORDS = f"{RADII['centred']:g} in the centred encoding, {RADII['paper']:g} in the paper's"
# What asking centred data for the paper's "intercept" means ({encoding}: the control that chooses the encoding).
PAPER_INTERCEPT = (f"{CENTRED_INTERCEPT}, the log-odds at its centre; choose the paper's encoding ({{encoding}}) for "
                   "the paper's intercept")
ENCODING_WORDS = {
    "centred": (f"the centred encoding (each indicator less a public constant: a census row lies in ‖x‖₂ ≤ "
                f"{RADII['centred']:g}; the intercept is the log-odds at the encoding's centre, {CENTRED_INTERCEPT})"),
    "paper": f"the paper's encoding (indicators in {{0, 1}}: a census row lies in ‖x‖₂ ≤ {RADII['paper']:g})",
}


def check_encoding(encoding: object) -> None:
    """A DataError naming the control unless encoding is one of ENCODINGS."""
    if encoding not in ENCODINGS:
        raise DataError(f"the census encoding is one of {', '.join(ENCODINGS)}, got {encoding!r}; change {{encoding}}",
                        "encoding")


def asks_paper_intercept(key: object, names: tuple[str, ...]) -> bool:
    """Whether `key` asks centred census data (features `names`) for the paper's intercept, which they do not have."""
    return key == "intercept" and CENTRED_INTERCEPT in names


def feature_names(encoding: str) -> tuple[str, ...]:
    """The features' names under `encoding`: the intercept is renamed where its meaning changes."""
    return FEATURE_NAMES if encoding == "paper" else (CENTRED_INTERCEPT, *FEATURE_NAMES[1:])


def encode(X: NDArray[np.float64], encoding: str) -> NDArray[np.float64]:
    """The paper's encoded rows X under `encoding` (a new array for the centred one; X itself for the paper's)."""
    return X if encoding == "paper" else X - np.asarray(CENTRES)
