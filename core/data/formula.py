"""A model stated the way statisticians state it: a formula `y ~ age + C(region) + hours` (read by formulaic) and a
codebook of public facts about each variable it names: a numeric variable's public range [low, high], or a
categorical variable's listed levels.

From the formula and the codebook alone, never from the data, follow the columns, their names and their scale:

- a numeric variable v with public range [low, high] becomes (2v - low - high) / (high - low), in [-1, 1];
- C(v), v categorical with levels (l0, l1, ..., lk), becomes k indicator columns `C(v)[T.lj]`, treatment coding
  against its first listed level l0 (formulaic's rule; without an intercept the first categorical term has one column
  per level, `C(v)[lj]`);
- an interaction a:b is the product of its factors' columns, so it stays in [-1, 1];
- `Intercept`, the constant 1, unless the formula says `- 1` or `+ 0`.

So every row lies in the cube [-1, 1]^d, d the encoded width, whatever the data hold. A value outside its public
range, a level not listed, a column the data lack, a label of other than two levels: each is refused in one
sentence that names the variable, and nothing is clipped. The label (left of ~) is read as a file's label is
(core.data.csvfile); listed in the codebook as categorical, it takes two levels, coded 0 and 1 in their order.

A codebook is a CSV file with the columns variable, type (numeric or categorical), low, high and levels (separated
by |), or a `Codebook` built in code.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.data.csvfile import Table, decode, table_dataset
from core.errors import DataError, InputError, is_real

NUMERIC, CATEGORICAL = "numeric", "categorical"
CODEBOOK_COLUMNS = ("variable", "type", "low", "high", "levels")
LEVEL_SEPARATOR = "|"
_CATEGORY = re.compile(r"C\(\s*(`[^`]+`|[^\s,()`]+)\s*\)")  # C(v) or C(`a name`), and nothing more


@dataclass(frozen=True)
class Numeric:
    """A numeric variable and its public range [low, high]: every value of it lies there, a fact known without the
    data."""

    name: str
    low: float
    high: float

    def __post_init__(self) -> None:
        if not (is_real(self.low) and is_real(self.high) and self.low < self.high):
            raise InputError(f"the codebook's range for {self.name} must be two finite numbers low < high, got "
                             f"[{self.low}, {self.high}]; correct its row in the codebook")
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))

    def scaled(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """x mapped affinely from [low, high] onto [-1, 1]."""
        return (2.0 * x - self.low - self.high) / (self.high - self.low)


@dataclass(frozen=True)
class Categorical:
    """A categorical variable and its levels, the first the reference of its treatment coding."""

    name: str
    levels: tuple[str, ...]

    def __post_init__(self) -> None:
        levels = tuple(str(v).strip() for v in self.levels)
        if len(levels) < 2 or len(set(levels)) < len(levels) or "" in levels:
            raise InputError(f"the codebook's levels for {self.name} must be two or more distinct names, got "
                             f"{LEVEL_SEPARATOR.join(levels) or 'none'}; correct its row in the codebook")
        object.__setattr__(self, "levels", levels)


Variable = Numeric | Categorical


@dataclass(frozen=True)
class Codebook:
    """The public facts of every variable a formula may name: frozen and compared by content, so a data spec that
    holds one (core.data.spec.CsvSpec) is another spec when any range or level changes.

    >>> book = Codebook.from_csv(b"variable,type,low,high,levels\\nage,numeric,18,90,\\nregion,categorical,,,n|s|w\\n")
    >>> book["age"], book["region"].levels
    (Numeric(name='age', low=18.0, high=90.0), ('n', 's', 'w'))
    """

    variables: tuple[Variable, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "variables", tuple(self.variables))
        names = [v.name for v in self.variables]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f"the codebook lists {', '.join(twice)} more than once; keep one row per variable")

    def get(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    def __getitem__(self, name: str) -> Variable:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def to_csv(self) -> str:
        """The codebook as the CSV `from_csv` reads back to an equal Codebook (a reproduce script carries it so)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CODEBOOK_COLUMNS)
        for v in self.variables:
            if isinstance(v, Numeric):
                writer.writerow([v.name, NUMERIC, repr(v.low), repr(v.high), ""])
            else:
                writer.writerow([v.name, CATEGORICAL, "", "", LEVEL_SEPARATOR.join(v.levels)])
        return out.getvalue()

    @classmethod
    def read(cls, path: str | os.PathLike) -> Codebook:
        """A codebook CSV file on disk."""
        if not Path(path).is_file():
            raise InputError(f"codebook file not found: {path}; check its path")
        return cls.from_csv(Path(path).read_bytes(), str(path))

    @classmethod
    def from_csv(cls, content: bytes | str, name: str = "the codebook") -> Codebook:
        """A codebook CSV (columns variable, type, low, high, levels; any others ignored), one row per variable."""
        text = decode(content, name) if isinstance(content, bytes) else content
        rows = csv.DictReader(io.StringIO(text))
        fields = [f.strip() for f in rows.fieldnames or ()]
        missing = [c for c in CODEBOOK_COLUMNS if c not in fields]
        if missing:
            raise InputError(f"{name} has no column {', '.join(missing)}; give it the header "
                             f"{','.join(CODEBOOK_COLUMNS)}")
        return cls(tuple(_variable({k.strip(): (v or "").strip() for k, v in row.items() if k}, i, name)
                         for i, row in enumerate(rows, start=1) if any((v or "").strip() for v in row.values())))


def _variable(row: dict[str, str], i: int, name: str) -> Variable:
    """One codebook row as a Numeric or a Categorical."""
    variable, kind = row["variable"], row["type"].casefold()
    if not variable:
        raise InputError(f"row {i} of {name} names no variable; fill in its variable column")
    if kind == NUMERIC:
        try:
            low, high = float(row["low"]), float(row["high"])
        except ValueError:
            raise InputError(f"{variable} is numeric in {name} but its low and high are not both numbers; give its "
                             "public range") from None
        return Numeric(variable, low, high)
    if kind == CATEGORICAL:
        return Categorical(variable, tuple(row["levels"].split(LEVEL_SEPARATOR)) if row["levels"] else ())
    raise InputError(f"{variable} has type {row['type']!r} in {name}; write numeric or categorical")


@dataclass(frozen=True)
class Model:
    """A formula read and checked against a codebook: the label, the right-hand side, and the variables it uses in
    the order they first appear."""

    label: str
    rhs: Any  # formulaic's right-hand side, which keeps `- 1` (its text does not)
    numeric: tuple[Numeric, ...]
    categorical: tuple[Categorical, ...]
    label_levels: tuple[str, ...] | None  # the label's two levels when the codebook lists it as categorical


def read_formula(formula: str) -> tuple[str, Any, dict[str, str]]:
    """The label, formulaic's right-hand side and each variable it names with how (NUMERIC for v, CATEGORICAL for
    C(v)); InputError for a formula this model cannot state."""
    from formulaic import Formula, SimpleFormula
    from formulaic.errors import FormulaicError

    if not isinstance(formula, str) or "~" not in formula:
        raise InputError(f"the formula {formula!r} has no ~; write the label, ~ and the terms, such as y ~ age + "
                         "C(region)")
    try:
        parsed = Formula(formula)
    except FormulaicError as exc:
        reason = str(exc).splitlines()[0].rstrip(".")
        raise InputError(f"the formula {formula!r} cannot be read ({reason}); write it as y ~ age + "
                         "C(region)") from None
    if not isinstance(parsed.rhs, SimpleFormula):
        raise InputError(f"the formula {formula!r} has more than one part; write one right-hand side, without |")
    lhs = [factor for term in parsed.lhs for factor in term.factors]
    if len(lhs) != 1 or lhs[0].eval_method.value != "lookup":
        raise InputError(f"the left side of the formula {formula!r} must be one column, the label; write it as "
                         "y ~ ...")
    used: dict[str, str] = {}
    for factor in (f for term in parsed.rhs for f in term.factors):
        method, expr = factor.eval_method.value, factor.expr
        found = _CATEGORY.fullmatch(expr)
        if method == "lookup":
            used.setdefault(expr, NUMERIC)
        elif method == "python" and found:
            used.setdefault(found.group(1).strip("`"), CATEGORICAL)
        elif not (method == "literal" and expr == "1"):
            raise InputError(f"the formula's term {expr} is neither a variable nor C(variable); add what it computes "
                             "to the file as a column, give its public range in the codebook and name it in the "
                             "formula")
    if not list(parsed.rhs):
        raise InputError(f"the formula {formula!r} has no term right of ~; add a variable or the intercept, 1")
    return lhs[0].expr, parsed.rhs, used


def model_of(formula: str, codebook: Codebook | None) -> Model:
    """The formula checked against the codebook, before any data are read (InputError naming the variable)."""
    label, rhs, used = read_formula(formula)
    if not isinstance(codebook, Codebook):
        raise InputError("a formula needs a codebook of each variable's public range or levels; give one with the "
                         "formula")
    for name, how in used.items():
        _check_kind(codebook.get(name), name, how)
    kept = [codebook[name] for name in used]
    return Model(label, rhs, tuple(v for v in kept if isinstance(v, Numeric)),
                 tuple(v for v in kept if isinstance(v, Categorical)), _label_levels(codebook.get(label)))


def _check_kind(found: Variable | None, name: str, how: str) -> None:
    if found is None:
        raise InputError(f"the codebook has no row for {name}; add one with its public range (numeric) or its "
                         "levels (categorical)")
    if how == NUMERIC and isinstance(found, Categorical):
        raise InputError(f"{name} is categorical in the codebook; write C({name}) in the formula, or give it a "
                         "numeric range in the codebook")
    if how == CATEGORICAL and isinstance(found, Numeric):
        raise InputError(f"{name} is numeric in the codebook; write {name} without C() in the formula, or list its "
                         "levels in the codebook")


def _label_levels(found: Variable | None) -> tuple[str, ...] | None:
    if not isinstance(found, Categorical):
        return None
    if len(found.levels) != 2:
        raise InputError(f"the label {found.name} has {len(found.levels)} levels in the codebook, but a label takes "
                         f"two (the logistic loss) or numbers (the robust loss); merge {found.name}'s levels into "
                         "two, or give it a numeric range in the codebook")
    return found.levels


def notices(formula: str, codebook: Codebook) -> tuple[str, ...]:
    """What the formula does to each variable, in words (public: from the formula and the codebook alone)."""
    model = model_of(formula, codebook)
    said = [f"{v.name} is scaled from its public range [{v.low:g}, {v.high:g}] to [−1, 1], so its coefficient is per "
            f"{(v.high - v.low) / 2:g} units of {v.name}" for v in model.numeric]
    said += [f"C({v.name}) is coded against its first listed level, {v.levels[0]}" for v in model.categorical]
    if model.label_levels is not None:
        low, high = model.label_levels
        said.append(f"the label {model.label} is 1 for {high} and 0 for {low}")
    return tuple(said)


def apply_formula(table_or_frame: Table | Any, formula: str, codebook: Codebook, source: str = "the data",
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[str, ...], tuple[str, ...]]:
    """(X, y, feature names, notices): the rows of a Table (core.data.csvfile) or a pandas frame encoded by the
    formula and the codebook, every row of X in [-1, 1]^d. DataError (naming the variable, never a value) for a
    column the data lack, a missing or non-numeric cell, a value outside its public range or a level not listed;
    source names the data in those sentences."""
    import pandas as pd
    from formulaic import model_matrix

    table = table_or_frame if isinstance(table_or_frame, Table) else _frame_table(table_or_frame)
    label, _, used = read_formula(formula)
    _check_columns(table, [label, *used], source)
    model = model_of(formula, codebook)
    rows = table.rows or range(1, table.n + 1)
    codes = {v.name: _codes(table, v, rows, source) for v in model.categorical}
    column = dict(zip(table.names, table.columns, strict=True))
    y_column = (column[label] if model.label_levels is None
                else _codes(table, Categorical(label, model.label_levels), rows, source).astype(np.float64))
    names = (*(v.name for v in model.numeric), label)
    numbers = table_dataset(Table(names, (*(column[v.name] for v in model.numeric), y_column), table.rows,
                                  table.short, table.nan), source, label)
    _check_ranges(numbers.X, numbers.y, model, codebook, rows, source)
    frame = pd.DataFrame({v.name: v.scaled(numbers.X[:, j]) for j, v in enumerate(model.numeric)}
                         | {v.name: pd.Categorical.from_codes(codes[v.name], categories=list(v.levels))
                            for v in model.categorical}, index=pd.RangeIndex(table.n))
    matrix = model_matrix(model.rhs, frame, na_action="raise")
    X = np.ascontiguousarray(matrix.to_numpy(dtype=np.float64))
    return X, numbers.y, tuple(str(c) for c in matrix.columns), notices(formula, codebook)


def _frame_table(frame: Any) -> Table:
    """A pandas frame as a Table: numeric and boolean columns as numbers (NaN where missing), others as text."""
    from pandas.api import types

    columns = []
    for _, series in frame.items():
        if types.is_bool_dtype(series.dtype) or types.is_numeric_dtype(series.dtype):
            columns.append(series.to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            columns.append(tuple("" if lost else str(v) for v, lost in zip(series, series.isna(), strict=True)))
    return Table(tuple(str(c).strip() for c in frame.columns), tuple(columns))


def _check_columns(table: Table, names: list[str], source: str) -> None:
    absent = [n for n in dict.fromkeys(names) if n not in table.names]
    twice = [n for n in dict.fromkeys(names) if table.names.count(n) > 1]
    if twice:
        raise DataError(f"{source} has more than one column named {', '.join(twice)}; give every column a unique "
                        "name")
    if absent:
        which = f"{absent[0]}, which is not a column" if len(absent) == 1 else f"{', '.join(absent)}, not columns"
        raise DataError(f"the formula names {which} of {source} (its columns: {', '.join(table.names)}); correct "
                        "the formula or the column's name in the file")


def _codes(table: Table, v: Categorical, rows: Any, source: str) -> NDArray[np.int64]:
    """Each cell's level, by its index among v's levels: a cell matches a level written the same, or equal as a
    number (a numeric column's 2.0 is the level 2); DataError for a missing cell or a level not listed."""
    cells = table.columns[table.names.index(v.name)]
    numbers = {i: float(x) for i, x in enumerate(v.levels) if _number(x) is not None}
    if isinstance(cells, tuple):
        found, inverse = np.unique(np.array([c.strip() for c in cells], dtype=object), return_inverse=True)
        level = [v.levels.index(c) if c in v.levels else _by_number(_number(c), numbers) if c else -2 for c in found]
    else:
        found, inverse = np.unique(np.asarray(cells, dtype=np.float64), return_inverse=True)
        level = [-2 if math.isnan(x) else _by_number(x, numbers) for x in found.tolist()]
    codes = np.asarray(level, dtype=np.int64)[inverse]
    problems = [f"is missing in {_rows(rows, codes == -2)}" if (codes == -2).any() else "",
                f"has a level not listed in the codebook in {_rows(rows, codes == -1)}" if (codes == -1).any() else ""]
    if any(problems):
        said = " and ".join(p for p in problems if p)
        raise DataError(f"{v.name} in {source} {said}; list every level of {v.name} in the codebook, or impute or "
                        "remove those rows")
    return codes


def _by_number(x: float | None, numbers: dict[int, float]) -> int:
    """The index of the level equal to x as a number, or -1."""
    return next((i for i, level in numbers.items() if x is not None and level == x), -1)


def _check_ranges(X: NDArray[np.float64], y: NDArray[np.float64], model: Model, codebook: Codebook, rows: Any,
                  source: str) -> None:
    """Every numeric variable (and a label listed as numeric) within its public range, or one DataError naming each
    variable outside it; never clipped."""
    found = [(v, X[:, j]) for j, v in enumerate(model.numeric)]
    label = codebook.get(model.label)
    if isinstance(label, Numeric):
        found.append((label, y))
    outside = [f"{v.name} lies outside its public range [{v.low:g}, {v.high:g}] in {_rows(rows, bad)}"
               for v, x in found for bad in [(x < v.low) | (x > v.high)] if bad.any()]
    if outside:
        raise DataError(f"in {source}, {'; '.join(outside)}; widen the range in the codebook to what the variable "
                        "can take, or remove those rows")


def _rows(rows: Any, where: NDArray[np.bool_]) -> str:
    """Which data rows, by their numbers in the file (never their values)."""
    at = np.flatnonzero(where)
    first = rows[int(at[0])]
    return f"data row {first}" if at.size == 1 else f"{at.size} data rows (the first is row {first})"


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


