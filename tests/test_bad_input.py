"""Every bad input ends in one clear sentence, on the library and on the command line: one table of cases.

Each case names the surface it is given to, the call, the error it must end in and the words its message must
contain, in that order:

- library: the project's InputError (DataError, BudgetError, or InputError itself), never a bare ValueError,
  TypeError or MemoryError, its message on one line;
- command line (`core.cli.main`): exit status 2, nothing on stdout, one stderr line starting "error: ", no traceback.

On both, no cell of the data is quoted, and the refusal comes before any random draw: every row of data and every
noise draw comes from a generator that numpy.random.default_rng makes, and a refused call never makes one, so a size
past its cap is never allocated and no loop of draws starts. The values just outside each setting's one range
(core.settings.RANGES) are cases too; the values just inside are taken by both surfaces (the app's links take the same
values: tests/test_settings_ranges.py). The app's links: tests/test_hostile_inputs.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from core.cli import main
from core.data import read_csv
from core.data.spec import AcsSpec, CsvSpec, PumsSpec, SyntheticSpec
from core.data.synthetic import synthetic
from core.errors import SETTINGS, BudgetError, DataError, InputError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import make_rng, prepare, prepare_model, run_private
from core.methods.compare import compare
from core.privacy.accounting import make_budget, parse_split, split_budget
from core.privacy.gaussian import MAX_DELTA, check_total_budget
from core.settings import RANGES
from ui.labels import message

SECRET = "8675309.25"  # a cell value that must never appear in a message


def rows(n: int = 60, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """n rows of two features in [-1, 1] and a robust response."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    return X, X @ np.array([0.5, -0.5]) + rng.laplace(size=n)


def csv_text(n: int = 60) -> str:
    X, y = rows(n)
    return "a,b,y\n" + "".join(f"{a:.6f},{b:.6f},{t:.6f}\n" for (a, b), t in zip(X, y, strict=True))


def with_row(text: str) -> str:
    """A file of good rows with `text` as its first data row (or rows)."""
    return csv_text().replace("\n", f"\n{text}\n", 1)


FILES: dict[str, bytes] = {
    "good": csv_text().encode(),
    "latin1": b"a,b,y\n" + "é,1,2\n".encode("latin-1") + csv_text().split("\n", 1)[1].encode(),
    "binary": bytes(range(256)) * 8,
    "empty": b"",
    "header_only": b"a,b,y\n",
    "text_y": with_row(f"0.1,0.2,{SECRET}x").encode(),
    "text_a": with_row("red,0.1,0.2").encode(),
    "text_b": with_row("0.1,0.1,0.1\n0.3,red,1").encode(),
    "empty_a": with_row(",0.1,0.1").encode(),
    "nan_x": with_row("nan,0.2,0.3").encode(),
    "inf_x": with_row("inf,0.1,0.2").encode(),
    "-inf_x": with_row("-inf,0.1,0.2").encode(),
    "one_column": b"y\n1\n2\n3\n4\n",
    "duplicate_names": b"a,a,y\n1,2,3\n4,5,6\n",
    "no_y": b"a,b,label\n1,2,3\n",
    "ragged": with_row("0.1,0.2").encode(),
    "short_second_row": b"a,b,y\n1,2,3\n1,2\n",
    "blank_lines": b"\n\n\n",
    "inf_y": with_row("0.1,0.2,inf").encode(),
    "two_rows": csv_text(2).encode(),
}

_FOLDER = tempfile.TemporaryDirectory(prefix="bad-input-")  # removed when the test process ends


def written(name: str) -> str:
    """The path of the named test file, written on first use."""
    path = Path(_FOLDER.name) / f"{name}.csv"
    if not path.exists():
        path.write_bytes(FILES[name])
    return str(path)


@cache
def problem():
    """A small prepared problem (400 rows, two features): its fit is deterministic, so it is shared."""
    return prepare(*rows(400, seed=0))


def noise() -> np.random.Generator:
    """make_rng(0)'s generator, built without numpy.random.default_rng (which a refused call must never reach)."""
    return np.random.Generator(np.random.PCG64(0))


BUDGET_1 = make_budget(1.0, 1e-6)
X, Y = rows()
X40, Y40 = rows(40, seed=0)
X2, Y2 = rows(2, seed=0)


# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    """One bad input: the surface it is given to, the call (a function for the library, the arguments for the
    command line), the error it must end in (an InputError class, or the command line's exit status) and the words
    its one-line message must contain, in this order.

    absent: text the message must not hold (a value of the data). app: for a message that names a control, the
    setting it names and the app's words for it (ui.labels.message), with no command-line option left in them.
    before_any_draw: the refusal comes before any random generator is made (not asked of a command on synthetic
    data, which may draw its rows before it reads the setting refused).
    """

    surface: str
    call: Callable[[], object] | list[str]
    kind: type[InputError] | int
    words: tuple[str, ...]
    absent: tuple[str, ...] = ()
    app: tuple[str, str] | None = None
    before_any_draw: bool = True


def library(name: str, call: Callable[[], object], kind: type[InputError], *words: str, absent: tuple[str, ...] = (),
            app: tuple[str, str] | None = None):
    return pytest.param(Case("library", call, kind, words, absent, app), id=f"library: {name}")


def command(name: str, argv: list[str], *words: str, before_any_draw: bool = True):
    """A command-line case; "@name" in argv is the path of that test file."""
    return pytest.param(Case("command line", argv, 2, words, before_any_draw=before_any_draw),
                        id=f"command line: {name}")


def with_nan(X: np.ndarray, i: int, j: int) -> np.ndarray:
    X = X.copy()
    X[i, j] = np.nan
    return X


LIBRARY = [
    # files
    library("missing file", lambda: read_csv("nope.csv"), DataError, "data file not found: nope.csv",
            app=("data", "check the path passed to “Data file” on the Data page")),
    library("empty file", lambda: read_csv(written("empty")), DataError, "is empty"),
    library("header only", lambda: read_csv(written("header_only")), DataError, "no data rows"),
    library("no y column", lambda: read_csv(written("no_y")), DataError, "no column named 'y'"),
    *[library(f"{cell} in a cell", lambda cell=cell: read_csv(written(f"{cell}_x")), DataError,
              "column 'a' holds a NaN or infinite value in data row 1") for cell in ("nan", "inf", "-inf")],
    library("text in a cell", lambda: read_csv(written("text_b")), DataError,
            "column 'b' holds text, not a number in data row 2", absent=("red",)),
    library("empty cell", lambda: read_csv(written("empty_a")), DataError,
            "column 'a' is missing (an empty cell) in data row 1"),
    library("ragged rows", lambda: read_csv(written("short_second_row")), DataError,
            "data row 2 has a number of values other than the header's 3"),
    # the design
    library("complex X", lambda: prepare(X + 1j, Y), DataError, "real numbers"),
    library("string X", lambda: prepare(X.astype(str), Y), DataError, "real numbers"),
    library("bool X", lambda: prepare(X > 0, Y), DataError, "real numbers"),
    library("object X", lambda: prepare(X.astype(object), Y), DataError, "real numbers"),
    library("ragged X", lambda: prepare([[1.0, 2.0], [1.0]], [1.0, 2.0]), DataError, "rectangular"),
    library("string y", lambda: prepare(X, Y.astype(str)), DataError, "real numbers"),
    library("string labels", lambda: prepare(X, np.where(Y > 0, "yes", "no"), loss="logistic"), DataError,
            "real numbers"),
    library("complex y", lambda: prepare(X, Y + 0j), DataError, "real numbers"),
    library("NaN in X", lambda: prepare(with_nan(X, 3, 1), Y), DataError,
            "NaN or infinite values (first at row 3, column 1)"),
    library("inf in X", lambda: prepare(np.where(np.eye(60, 2) > 0, np.inf, X), Y), DataError, "NaN or infinite"),
    library("NaN in y", lambda: prepare(X, np.where(np.arange(60) == 5, np.nan, Y)), DataError, "y contains NaN"),
    library("inf in y", lambda: prepare(X, np.where(np.arange(60) == 5, -np.inf, Y)), DataError, "y contains NaN"),
    library("n not above d", lambda: prepare(X2, Y2), DataError,
            "need more rows than features (n > d), got n = 2 and d = 2"),
    library("non-binary logistic labels", lambda: prepare(X40, Y40, loss="logistic"), DataError,
            "logistic regression needs binary labels", "40 distinct values", absent=(f"{Y40[0]:g}",)),
    library("string lam_reg", lambda: prepare(X, Y, lam_reg="0.1"), DataError, "lambda_reg"),
    library("bool lam_reg", lambda: prepare(X, Y, lam_reg=True), DataError, "lambda_reg"),
    library("huge lam_reg", lambda: prepare(X, Y, lam_reg=1e300), DataError, "lambda_reg"),
    library("radius on the cube", lambda: prepare(X, Y, radius=2.0), DataError,
            "--radius applies to --domain ball only",
            app=("radius", "“Ball radius R” on the Pipeline page applies to “Covariate domain 𝒳” on the Pipeline "
                           "page ball only")),
    library("negative radius", lambda: prepare(X, Y, domain="ball", radius=-1.0), DataError,
            "ball radius must be a positive number"),
    library("string radius", lambda: prepare(X, Y, domain="ball", radius="2"), DataError, "ball radius"),
    library("bool radius", lambda: prepare(X, Y, domain="ball", radius=True), DataError, "ball radius"),
    library("inf radius", lambda: prepare(X, Y, domain="ball", radius=math.inf), DataError, "ball radius"),
    library("unknown domain", lambda: prepare(X, Y, domain="sphere"), DataError, "unknown domain"),
    library("unknown loss", lambda: prepare(X, Y, loss="hinge"), DataError, "unknown loss"),
    library("unknown feature name", lambda: problem().coordinate("zz"), DataError, "no feature named 'zz'"),
    library("coordinate out of range", lambda: problem().coordinate(7), DataError, "coordinate 7 is out of range"),
    # the budget
    *[library(f"epsilon {eps}", lambda eps=eps: split_budget(eps, 1e-6), BudgetError,
              "epsilon for the total budget must be a positive finite number")
      for eps in (0.0, -1.0, float("nan"), float("inf"))],
    *[library(f"delta {delta}", lambda delta=delta: split_budget(1.0, delta), BudgetError,
              "delta for the total budget must lie strictly between 0 and 1") for delta in (0.0, 1.0, 1.5, -0.1)],
    library("split with a zero", lambda: split_budget(1.0, 1e-6, (1.0, 0.0, 1.0)), BudgetError,
            "three weights ", " from 0.001 to 1000"),
    library("two split weights", lambda: parse_split("1,1"), BudgetError, "exactly three weights",
            app=("split", "“Split a, b, c” on the Pipeline page takes exactly three weights")),
    library("split of two numbers", lambda: parse_split("1,2"), BudgetError, "exactly three weights"),
    library("split of words", lambda: parse_split("a,b,c"), BudgetError, "three numbers"),
    *[library(f"total budget ({epsilon!r}, {delta!r})", lambda epsilon=epsilon, delta=delta:
              check_total_budget(epsilon, delta), BudgetError, words)
      for epsilon, delta, words in [(1.0, 0.9999, "at most 0.1"), (1.0, 0.11, "at most 0.1"),
                                    (1e-320, 1e-6, "from 0.001 to 100"), (True, 1e-6, "positive finite"),
                                    ("1", 1e-6, "positive finite"), (1.0, "1e-6", "strictly"),
                                    (10**400, 1e-6, "positive finite"), (1.0, -10**400, "strictly")]],
    # a run's settings
    *[library(f"run with {name}", lambda kwargs=kwargs: run_private(**(dict(problem=problem(), u=0, budget=BUDGET_1,
                                                                            rng=noise()) | kwargs)), kind, words)
      for name, kwargs, kind, words in [
          ("coordinate True", dict(u=True), DataError, "coordinate"),
          ("coordinate 2.0", dict(u=2.0), DataError, "entries"),
          ("unknown name", dict(u="zz"), DataError, "no feature named"),
          ("complex direction", dict(u=np.array([1j, 1.0])), DataError, "real numbers"),
          ("string direction", dict(u=np.array(["1", "0"])), DataError, "real numbers"),
          ("NaN direction", dict(u=np.array([np.nan, 1.0])), DataError, "finite"),
          ("subnormal epsilon", dict(budget=make_budget(1e-320, 1e-6)), BudgetError, "from 0.001 to 100"),
          ("level 1", dict(level=1.0), DataError, "interval level"),
          ("unknown calibration", dict(calibration="laplace"), BudgetError, "unknown calibration"),
      ]],
    *[library(f"noise seed {seed!r}", lambda seed=seed: make_rng(seed), InputError,
              "noise seed must be an integer from 0 to 9007199254740991") for seed in (-1, 2**64, "7", True, 1.5)],
    *[library(f"compare {methods} {trials!r}", lambda methods=methods, trials=trials:
              compare(problem(), 0, BUDGET_1, trials, noise(), methods), InputError, words)
      for methods, trials, words in [([], 2, "name at least one method"), (["local"], "2", "trials"),
                                     (["local"], True, "trials"), (["nope"], 2, "unknown method")]],
    # data specs: refused before any row is drawn
    library("rows past the cap", lambda: SyntheticSpec("robust", 10**12, 5).load(), InputError, "n <= 10,000,000"),
    library("cells past the cap", lambda: SyntheticSpec("robust", 2_000_000, 200).load(), InputError,
            "cells is more than"),
    library("string n", lambda: SyntheticSpec("robust", "100", 5).load(), InputError, "integers n > d"),
    library("bool d", lambda: SyntheticSpec("robust", 100, True).load(), InputError, "integers n > d"),
    library("d 201", lambda: SyntheticSpec("robust", 1000, 201).load(), InputError, "d <= 200"),
    library("string norm", lambda: SyntheticSpec("robust", 100, 5, theta_norm="1").load(), InputError,
            "norm of theta*"),
    library("NaN norm", lambda: SyntheticSpec("robust", 100, 5, theta_norm=math.nan).load(), InputError,
            "norm of theta*"),
    library("negative noise", lambda: SyntheticSpec("robust", 100, 5, noise_scale=-1.0).load(), InputError,
            "noise scale"),
    library("negative seed", lambda: SyntheticSpec("robust", 100, 5, sample_seed=-1).load(), InputError,
            "sample seed"),
    library("text content", lambda: CsvSpec.from_bytes("x.csv", "a,y\n1,2\n"), InputError, "must be bytes"),
    library("binary content", lambda: CsvSpec.from_bytes("x.csv", b"\xff\xfe\x00").load(b"\xff\xfe\x00"), InputError,
            "not a text CSV"),
    library("census n negative", lambda: AcsSpec(("CA",), n=-5), InputError, "sample size n"),
    library("census n float", lambda: AcsSpec(("CA",), n=1.5), InputError, "sample size n"),
    library("census seed negative", lambda: AcsSpec(("CA",), n=5, sample_seed=-1), InputError, "sample seed"),
    library("census year text", lambda: AcsSpec(("CA",), year="2018x"), InputError, "survey year"),
    library("PUMS n past the cap", lambda: PumsSpec.from_bytes("p.csv", b"PINCP\n1\n", n=10**12), InputError,
            "sample size n"),
]

BUDGET = ["--epsilon", "1", "--delta", "1e-6"]


def release(file: str, *extra: str) -> list[str]:
    """A release on a named test file with a valid budget; later flags override earlier ones."""
    return ["release", "--data", f"@{file}", "--coordinate", "0", *BUDGET, *extra]


def synth(*extra: str) -> list[str]:
    return ["release", "--synthetic", "--n", "500", "--coordinate", "0", *BUDGET, *extra]


COMMAND_LINE = [
    # the cases that ended in a traceback or a wrong answer
    command("latin-1 file", release("latin1"), "not a text CSV file"),
    command("binary file", release("binary"), "not a text CSV file"),
    command("subnormal epsilon", release("good", "--epsilon", "1e-320"), "total epsilon must be from 0.001 to 100"),
    command("huge ball radius", release("good", "--domain", "ball", "--radius", "1e300"), "ball radius must be"),
    command("huge ridge", release("good", "--lambda-reg", "1e300"), "lambda_reg must be a finite number >= 0"),
    command("negative noise seed", release("good", "--seed", "-1"),
            "--seed must be an integer from 0 to 9007199254740991 (2^53 - 1)"),
    command("36 TiB of synthetic rows", synth("--n", "1000000000000"), "n <= 10,000,000"),
    command("no method", ["compare", "--data", "@good", "--coordinate", "0", *BUDGET, "--methods", ""],
            "name at least one method"),
    command("delta near 1", release("good", "--delta", "0.9999"), "total delta must be at most 0.1"),
    # files
    command("missing file", ["release", "--data", "/nonexistent/x.csv", "--coordinate", "0", *BUDGET],
            "data file not found", "check the path passed to --data"),
    command("empty file", release("empty"), "is empty"),
    command("blank lines only", release("blank_lines"), "is empty"),
    command("header only", release("header_only"), "no data rows"),
    command("text in X", release("text_a"), "holds text, not a number in data row 1"),
    command("text in y", release("text_y"), "holds text, not a number"),
    command("NaN in X", release("nan_x"), "NaN or infinite value"),
    command("inf in y", release("inf_y"), "NaN or infinite value"),
    command("one column", release("one_column"), "at least one feature column"),
    command("duplicate column names", release("duplicate_names"), "repeats the column name"),
    command("no y column", release("no_y"), "no column named 'y'"),
    command("ragged rows", release("ragged"), "a number of values other than the header's"),
    command("two rows, two features", release("two_rows"), "n > d"),
    # the problem and the budget
    command("coordinate out of range", release("good", "--coordinate", "2"), "out of range"),
    command("negative coordinate", release("good", "--coordinate", "-1"), "out of range"),
    command("unknown coordinate name", release("good", "--coordinate", "zz"), "no feature named 'zz'"),
    command("no coordinate", ["release", "--data", "@good"], "required"),
    command("split of zeros", release("good", "--split", "0,0,0"), "three weights"),
    command("split with NaN", release("good", "--split", "1,nan,1"), "three weights"),
    command("two split weights", release("good", "--split", "1,1"), "--split takes exactly three weights a,b,c"),
    command("split of words", release("good", "--split", "a,b,c"), "--split takes three numbers a,b,c"),
    command("level 1", release("good", "--level", "1"), "--level must be a number from 0.5 to 0.99"),
    command("level NaN", release("good", "--level", "nan"), "--level must be a number from 0.5 to 0.99"),
    command("epsilon zero", release("good", "--epsilon", "0"), "epsilon for the total budget must be a positive"),
    command("epsilon NaN", release("good", "--epsilon", "nan"), "epsilon for the total budget must be a positive"),
    command("epsilon infinite", release("good", "--epsilon", "inf"), "epsilon for the total budget must be a positive"),
    command("epsilon huge", release("good", "--epsilon", "1e300"), "total epsilon must be from 0.001 to 100"),
    command("epsilon text", release("good", "--epsilon", "abc"), "invalid float value"),
    command("delta zero", release("good", "--delta", "0"), "delta for the total budget must lie strictly"),
    command("delta one", release("good", "--delta", "1"),
            "delta for the total budget must lie strictly between 0 and 1"),
    command("delta NaN", release("good", "--delta", "nan"), "delta for the total budget must lie strictly"),
    command("radius on the cube", release("good", "--radius", "2"), "--radius applies to --domain ball only"),
    command("radius zero", release("good", "--domain", "ball", "--radius", "0"), "ball radius must be"),
    command("radius NaN", release("good", "--domain", "ball", "--radius", "nan"), "ball radius must be"),
    command("negative ridge", release("good", "--lambda-reg", "-1"), "lambda_reg must be"),
    command("ridge NaN", release("good", "--lambda-reg", "nan"), "lambda_reg must be"),
    command("seed past 2^63", release("good", "--seed", str(2**64)), "--seed must be an integer"),
    command("repeat 0", release("good", "--repeat", "0"), "--repeat must be at least 1"),
    command("logistic on real responses", release("good", "--loss", "logistic"), "binary labels"),
    # synthetic data
    command("synthetic d 0", synth("--d", "0"), "n > d >= 1"),
    command("synthetic d 201", synth("--d", "201"), "d <= 200"),
    command("synthetic n <= d", synth("--n", "3", "--d", "5"), "n > d >= 1"),
    command("synthetic cells", synth("--n", "10000000", "--d", "100"), "cells is more than"),
    command("synthetic seed -1", synth("--sample-seed", "-1"), "sample seed must be an integer"),
    command("synthetic norm NaN", synth("--theta-norm", "nan"), "norm of theta*"),
    command("synthetic norm huge", synth("--theta-norm", "1e300"), "norm of theta*"),
    command("synthetic noise inf", synth("--noise-scale", "inf"), "noise scale"),
    command("synthetic noise negative", synth("--noise-scale", "-1"), "noise scale"),
    command("synthetic command n", ["synthetic", "--out", "/nonexistent/x.csv", "--n", "1000000000000"],
            "n <= 10,000,000"),
    command("census sample n 0", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--n", "0",
                                  "--coordinate", "0", *BUDGET], "sample size n must be an integer from 1"),
    command("census sample past the cap", ["release", "--acs-root", "/nonexistent", "--state", "CA",
                                           "--with-replacement", "--n", "100000000000", "--coordinate", "0", *BUDGET],
            "sample size n"),
    command("compare trials 0", ["compare", "--data", "@good", "--coordinate", "0", *BUDGET, "--trials", "0"],
            "--trials must be an integer from 1 to 500"),
    # a message that names a control names the command line's option (the app names its widget: ui.labels)
    command("census without a state", ["release", "--acs-root", "/nonexistent", "--coordinate", "0", *BUDGET],
            "name at least one state with --state, e.g. CA"),
    command("census file missing", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--coordinate", "0",
                                    *BUDGET], "or allow downloads (--download)"),
    command("robust loss on census data", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--loss",
                                           "robust", "--coordinate", "0", *BUDGET],
            "drop --loss or pass --loss logistic"),
    command("missing PUMS file names --pums", ["release", "--pums", "/nonexistent/p.csv", "--coordinate", "0",
                                               *BUDGET], "check the path passed to --pums"),
]


# ---------------------------------------------------------------- every setting's one range


RANGE_RELEASE = ["release", "--synthetic", "--n", "400", "--d", "2", "--sample-seed", "1", "--coordinate", "0"]
RANGE_BUDGET = ["--epsilon", "4", "--delta", "1e-6"]

# (setting, a value as typed, whether it lies inside the setting's range): each range's edges and a step past them
RANGE_CASES = [
    ("epsilon", "0.001", True), ("epsilon", "100", True), ("epsilon", "0.0009", False), ("epsilon", "101", False),
    ("delta", "1e-15", True), ("delta", "0.1", True), ("delta", "1e-16", False), ("delta", "0.2", False),
    ("split", "0.001", True), ("split", "1000", True), ("split", "1e-06", False), ("split", "1001", False),
    ("level", "0.5", True), ("level", "0.99", True), ("level", "0.3", False), ("level", "0.995", False),
    ("seed", "0", True), ("seed", str(2**53 - 1), True), ("seed", str(2**53), False), ("seed", str(2**60), False),
    ("lam_reg", "0", True), ("lam_reg", "100", True), ("lam_reg", "101", False),
    ("response_bound", "1e-06", True), ("response_bound", "1e6", True), ("response_bound", "1e16", False),
    ("trials", "1", True), ("trials", "500", True), ("trials", "0", False), ("trials", "501", False),
]


def typed(name: str, text: str) -> float | int:
    return int(text) if RANGES[name].integer else float(text)


def takes(name: str, rng: np.random.Generator) -> Callable[[float], object]:
    """The library call that takes the setting, given the value."""
    budget = split_budget(4.0, 1e-6)
    return {
        "epsilon": lambda v: check_total_budget(v, 1e-6),
        "delta": lambda v: check_total_budget(4.0, v),
        "split": lambda v: split_budget(4.0, 1e-6, (v, 1.0, 1.0)),
        "level": lambda v: run_private(problem(), 0, budget, rng, level=v),
        "seed": make_rng,
        "lam_reg": lambda v: ModelSpec("robust", lam_reg=v).resolve(2),
        "response_bound": lambda v: prepare_model(problem().X, problem().y, ModelSpec("robust", response_bound=v)),
        "trials": lambda v: compare(problem(), 0, budget, v, rng, ["oracle"]),
    }[name]


def range_argv(name: str, value: str) -> list[str]:
    """The command line that takes the setting, given the value as typed."""
    return {
        "epsilon": [*RANGE_RELEASE, "--epsilon", value, "--delta", "1e-6"],
        "delta": [*RANGE_RELEASE, "--epsilon", "4", "--delta", value],
        "split": [*RANGE_RELEASE, *RANGE_BUDGET, "--split", f"{value},1,1"],
        "level": [*RANGE_RELEASE, *RANGE_BUDGET, "--level", value],
        "seed": [*RANGE_RELEASE, *RANGE_BUDGET, "--seed", value],
        "lam_reg": [*RANGE_RELEASE, *RANGE_BUDGET, "--lambda-reg", value],
        "response_bound": [*RANGE_RELEASE, *RANGE_BUDGET, "--response-bound", value],
        "trials": ["compare", *RANGE_RELEASE[1:], *RANGE_BUDGET, "--methods", "oracle", "--trials", value],
    }[name]


OUT_OF_RANGE = [
    case
    for name, text, inside in RANGE_CASES if not inside
    for case in (library(f"{name} {text}, out of range", lambda name=name, text=text:
                         takes(name, noise())(typed(name, text)), InputError),
                 command(f"{name} {text}, out of range", range_argv(name, text), before_any_draw=False))
]


# ---------------------------------------------------------------- the test


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """`python -m core ARGV` in this process: its exit status, stdout and stderr ("@name" is that test file)."""
    argv = [written(a[1:]) if a.startswith("@") else a for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals (an unparsable number, a missing flag)
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def forbid_generators(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """Make numpy.random.default_rng fail, and return the calls it sees (to check even if a caller caught the
    failure). The generators of rows (synthetic data, census samples) and of noise (core.mechanisms.pipeline.make_rng)
    all come from it, so a refusal before any allocation of rows and any loop of draws never calls it."""
    made: list[tuple] = []

    def refuse(*args: object, **kwargs: object) -> None:
        made.append(args)
        raise AssertionError("a random generator was made before the bad input was refused")

    monkeypatch.setattr(np.random, "default_rng", refuse)
    return made


def assert_words_in_order(text: str, words: tuple[str, ...]) -> None:
    at = 0
    for word in words:
        found = text.find(word, at)
        assert found >= 0, (word, text)
        at = found + len(word)


@pytest.mark.parametrize("case", [*LIBRARY, *COMMAND_LINE, *OUT_OF_RANGE])
def test_bad_input_ends_in_one_sentence(case: Case, monkeypatch):
    problem()  # the shared problem's rows are drawn first
    made = forbid_generators(monkeypatch) if case.before_any_draw else []
    if case.surface == "library":
        with pytest.raises(case.kind) as err:
            case.call()
        text = str(err.value)
        assert "\n" not in text
    else:
        code, out, err = run_cli(case.call)
        assert code == case.kind, (code, err)
        assert out == ""
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        text = lines[0]
        assert text.startswith("error: "), text
    assert not made
    assert_words_in_order(text, case.words)
    for value in (SECRET, *case.absent):  # no cell of the data is quoted
        assert value not in text
    if case.app is not None:
        setting, words = case.app
        assert err.value.setting == setting
        assert words in message(err.value) and "--" not in message(err.value)


# ---------------------------------------------------------------- what the table does not hold


def test_the_range_cases_straddle_each_range():
    for name, text, inside in RANGE_CASES:
        assert RANGES[name].holds(typed(name, text)) == inside, (name, text)


@pytest.mark.parametrize("name, text", [(name, text) for name, text, inside in RANGE_CASES if inside])
def test_values_inside_a_range_are_taken_by_the_library_and_the_command_line(name, text):
    takes(name, make_rng(0))(typed(name, text))
    code, _, err = run_cli(range_argv(name, text))
    assert code == 0, err


def test_the_largest_total_delta_is_accepted():
    check_total_budget(1.0, MAX_DELTA)


def test_true_false_labels_are_read(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,y\n0.5,true\n-0.5,False\n0.1,TRUE\n")
    assert read_csv(path).y.tolist() == [1.0, 0.0, 1.0]


def test_a_feature_name_is_a_coordinate():
    by_name = run_private(problem(), "x1", BUDGET_1, make_rng(3))
    by_index = run_private(problem(), 1, BUDGET_1, make_rng(3))
    assert by_name.u.tolist() == by_index.u.tolist() == [0.0, 1.0]


def test_cli_warns_when_delta_is_not_below_one_over_n():
    code, out, err = run_cli(release("good", "--delta", "0.05", "--seed", "1"))
    assert code == 0 and out.startswith("{")
    assert err.strip().splitlines() == [err.strip()] and err.startswith("warning: delta = 0.05 is not below 1/n")
    code, _, err = run_cli(release("good", "--seed", "1"))
    assert code == 0 and err == ""


def csv_of(X: np.ndarray, y: np.ndarray, names: tuple[str, ...] = ("a", "b")) -> str:
    lines = [",".join([*names, "y"])]
    lines += [",".join(f"{v:.6f}" for v in [*row, t]) for row, t in zip(X, y, strict=True)]
    return "\n".join(lines) + "\n"


def test_cli_says_when_most_rows_were_projected(tmp_path):
    """Income and age unscaled: every row is clipped onto the cube, both columns become 1 and the design singular."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(20_000, 120_000, 200), rng.integers(18, 80, 200)]).astype(float)
    y = X[:, 0] / 50_000 - X[:, 1] / 40 + rng.laplace(size=200)
    path = tmp_path / "data.csv"
    path.write_text(csv_of(X, y, ("income", "age")))
    code, out, err = run_cli(["release", "--data", str(path), "--coordinate", "0", *BUDGET, "--seed", "1"])
    assert code == 0, err
    (warning,) = err.strip().splitlines()
    assert warning.startswith("warning (not private): 200 of 200 rows (100.0%) lay outside the covariate domain")
    assert "(columns with values outside [−1, 1]: income, age): rescale your features to [−1, 1]" in warning
    doc = json.loads(out)
    assert doc["clipped_rows"] == 200 and doc["fit"]["status"] == "rank_deficient"
    assert doc["fit"]["diagnosis"].startswith("projection onto the domain made the design rank-deficient")
    assert doc["release"]["status"] == "bottom"


def test_cli_is_silent_about_a_few_projected_rows(tmp_path):
    X, y = rows(40, seed=0)
    X[0, 0] = 1.5  # one row of 40 outside the cube: counted in clipped_rows, no warning
    path = tmp_path / "data.csv"
    path.write_text(csv_of(X, y))
    code, out, err = run_cli(["release", "--data", str(path), "--coordinate", "0", *BUDGET, "--seed", "1"])
    assert code == 0 and err == ""
    assert json.loads(out)["clipped_rows"] == 1


@pytest.mark.parametrize("big", [1e15, 1e308, -1e308])
def test_a_huge_response_never_yields_an_uncertified_release(big):
    """One response far out: an error, bottom saying to rescale y, or a release from a certified fit that the
    robust loss kept near the fit without it (the loss is Lipschitz, so one row moves theta by O(1/n))."""
    data = synthetic(20_000, 2, "robust", 1.0, 1.0, 0)
    clean = prepare(data.X, data.y)
    y = data.y.copy()
    y[3] = big
    try:
        hit = prepare(data.X, y)
        run = run_private(hit, 0, make_budget(4.0, 1e-6), make_rng(0))
    except InputError as err:
        assert "rescale" in str(err)
        return
    if run.release.status == "bottom":
        assert "rescale y" in run.release.reason or not hit.fit.has_minimiser
        return
    hit.fit.require_minimiser()  # the release rests on a certified fit
    assert abs(hit.fit.theta - clean.fit.theta).max() < 1e-3
    assert abs(run.release.value - hit.fit.theta[0]) < 0.1


# ---------------------------------------------------------------- one message, each surface its own control names


def test_a_message_names_its_control_per_surface():
    err = DataError("pass {loss} logistic, not {domain} ball; file {x}.csv", setting="loss")
    assert err.setting == "loss"
    assert str(err) == "pass --loss logistic, not --domain ball; file {x}.csv"  # the command line's wording
    assert err.render(str.upper) == "pass LOSS logistic, not DOMAIN ball; file {x}.csv"  # braces not ours stay
    assert message(err) == ("Pass “Loss” on the Data page logistic, not “Covariate domain 𝒳” on the Pipeline page "
                            "ball; file {x}.csv")
    again = pickle.loads(pickle.dumps(err))  # as worker processes send it back
    assert type(again) is DataError and again.setting == "loss" and message(again) == message(err)
    with pytest.raises(ValueError, match="unknown setting"):
        InputError("x", setting="lambda_reg")
    assert "with_replacement" in SETTINGS and str(InputError("{with_replacement}")) == "--with-replacement"


def test_projection_is_blamed_only_when_it_made_the_design_singular():
    from core.teaching.diagnosis import fit_diagnosis, projection

    X, y = rows(100, seed=0)
    twin = np.column_stack([X, X[:, 0]])  # a redundant column in the raw data: projection is not the cause
    twin[:10] *= 1.5  # some rows leave the cube; clipping keeps columns 0 and 2 equal
    problem = prepare(twin, y)
    where = projection(twin, problem)
    assert problem.fit.status == "rank_deficient" and where.rows == int(np.any(np.abs(twin) > 1, axis=1).sum())
    assert not where.collapsed and not where.mostly and where.advice == ""
    assert fit_diagnosis(problem, where) == problem.fit.diagnosis  # "drop redundant columns" is right here
    ball = prepare(X * 2.0, y, domain="ball", radius=1.0)  # rescaling rows onto the ball keeps the rank
    where = projection(X * 2.0, ball)
    expected = int((np.linalg.norm(X * 2.0, axis=1) > 1.0).sum())
    assert where.rows == expected and where.columns == () and not where.collapsed
    assert where.sentence == (f"{expected} of 100 rows ({expected / 100:.1%}) lay outside the covariate domain "
                              "(the ball ‖x‖₂ ≤ 1) and were projected onto it")
    assert where.mostly == (expected > 50)


def test_every_problem_of_a_file_is_reported_at_once_and_no_cell_is_quoted():
    from core.data.csvfile import read_csv_bytes

    text = b"bmi,smoker,y\n22.5,Nein,1\n,Ja,0\n31.0,Nein\n,secret-value,1\n24.0,1,1\n"
    with pytest.raises(DataError) as err:
        read_csv_bytes(text, "health.csv")
    msg = str(err.value)
    assert msg.startswith("health.csv has 3 problems: ")
    assert "column 'smoker' holds text, not a number in 3 data rows (the first is row 1)" in msg
    assert "column 'bmi' is missing (an empty cell) in 2 data rows (the first is row 2)" in msg
    assert "data row 3 has a number of values other than the header's 3" in msg
    assert "impute or remove the rows with missing values and encode categories as 0/1 indicator columns" in msg
    for cell in ("secret-value", "Ja", "Nein", "22.5"):
        assert cell not in msg


def test_app_messages_start_with_a_capital_unless_they_start_with_a_name():
    uploaded = message(DataError("no file uploaded yet: choose a data file on the Data page"))
    assert uploaded.startswith("No file uploaded")
    assert message(DataError("refused: this draw costs")).startswith("Refused:")
    assert message(DataError("people.csv has no column named 'y'")).startswith("people.csv has")  # a file's name
    assert message(DataError("ε = 8 is weak")).startswith("ε = 8")
