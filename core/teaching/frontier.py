"""The width frontier, measured: per state, sample size and coefficient of SYNTHETIC census files, the smallest ε at
which at least 90 % of publish-default releases certify the curvature and the median released half-width is within
twice the non-private 1.96·SE (benchmarks/certify_frontier.py writes it; docs/experiments.md, "The width frontier").

A measurement on made-up records, shown beside the Planner's plans, never computed from anyone's data. The file is
read and checked here; a bad one is refused with one message, never drawn.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError

COLUMNS = ("state", "n", "coefficient", "epsilon_needed", "certified_share", "median_ratio", "draws")
MAX_POINTS = 1_000  # the study writes a few dozen rows
GRID_TOP = 16.0  # the largest ε the study tries: a cell it does not serve needs more


@dataclass(frozen=True)
class FrontierPoint:
    """One measured cell. epsilon_needed is None where no ε of the study's grid met both conditions; certified_share
    and median_ratio are at epsilon_needed (else at the grid's largest ε); median_ratio is None where no release
    there was certified (the study then writes it empty)."""

    state: str
    n: int
    coefficient: str
    epsilon_needed: float | None
    certified_share: float
    median_ratio: float | None
    draws: int


def read_frontier(path: Path) -> tuple[FrontierPoint, ...]:
    """The frontier's rows from its CSV, checked: the columns above, n and draws positive integers, shares in [0, 1],
    ε and ratios positive and finite where given (raises InputError naming the file and the row)."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"the width frontier {path.name} could not be read: {exc}") from None
    if not rows or set(COLUMNS) - set(rows[0]) or len(rows) > MAX_POINTS:
        raise InputError(f"{path.name} is not the width frontier: it needs the columns {', '.join(COLUMNS)} and "
                         f"1 to {MAX_POINTS} rows")
    return tuple(_point(row, i + 2, path.name) for i, row in enumerate(rows))


def _point(row: dict, line: int, name: str) -> FrontierPoint:
    try:
        eps, ratio = (float(row[k]) if row[k].strip() else None for k in ("epsilon_needed", "median_ratio"))
        p = FrontierPoint(row["state"].strip(), int(row["n"]), row["coefficient"].strip(), eps,
                          float(row["certified_share"]), ratio, int(row["draws"]))
    except (TypeError, ValueError):
        raise InputError(f"{name}, line {line}: a value is not a number where one is expected") from None
    if not (p.state and p.coefficient and p.n > 0 and p.draws > 0 and 0 <= p.certified_share <= 1
            and all(v is None or (math.isfinite(v) and v > 0) for v in (p.epsilon_needed, p.median_ratio))):
        raise InputError(f"{name}, line {line}: a value is out of its range")
    return p
