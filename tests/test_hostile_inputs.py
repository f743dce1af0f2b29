"""Hostile input on every surface ends in one clear sentence: the command line, the library and the app's links.

- command line (`core.cli.main`): exit status 2, one stderr line starting "error:", no traceback, no data value;
- library: the project's InputError (DataError, BudgetError), never a bare ValueError, TypeError or MemoryError;
- links: a value the core cannot use falls back to the default with a notice naming it; a value at the edge of
  its range is kept, by the Data page's widgets too.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from apptest import new_app
from streamlit.testing.v1 import AppTest

from core.cli import main
from core.data.spec import AcsSpec, CsvSpec, PumsSpec, SyntheticSpec
from core.data.synthetic import synthetic
from core.errors import BudgetError, DataError, InputError
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.methods.compare import compare
from core.privacy.accounting import make_budget
from core.privacy.gaussian import MAX_DELTA, check_total_budget
from ui import params

SECRET = "8675309.25"  # a cell value that must never appear in a message


# ---------------------------------------------------------------- the command line


def rows(n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (n, 2))
    return X, X @ np.array([0.5, -0.5]) + rng.laplace(size=n)


def csv_text(n: int = 60) -> str:
    X, y = rows(n)
    return "a,b,y\n" + "".join(f"{a:.6f},{b:.6f},{t:.6f}\n" for (a, b), t in zip(X, y, strict=True))


FILES: dict[str, bytes] = {
    "good": csv_text().encode(),
    "latin1": b"a,b,y\n" + "é,1,2\n".encode("latin-1") + csv_text().split("\n", 1)[1].encode(),
    "binary": bytes(range(256)) * 8,
    "empty": b"",
    "header_only": b"a,b,y\n",
    "text_y": csv_text().replace("\n", f"\n0.1,0.2,{SECRET}x\n", 1).encode(),
    "nan_x": csv_text().replace("\n", "\nnan,0.2,0.3\n", 1).encode(),
    "one_column": b"y\n1\n2\n3\n4\n",
    "duplicate_names": b"a,a,y\n1,2,3\n4,5,6\n",
    "no_y": b"a,b,label\n1,2,3\n",
    "ragged": csv_text().replace("\n", "\n0.1,0.2\n", 1).encode(),
    "blank_lines": b"\n\n\n",
    "inf_y": csv_text().replace("\n", "\n0.1,0.2,inf\n", 1).encode(),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, content in FILES.items():
        (root / f"{name}.csv").write_bytes(content)
        paths[name] = str(root / f"{name}.csv")
    return paths


BUDGET = ["--epsilon", "1", "--delta", "1e-6"]


def release(file: str, *extra: str) -> list[str]:
    """A release on a named test file with a valid budget; later flags override earlier ones."""
    return ["release", "--data", f"@{file}", "--coordinate", "0", *BUDGET, *extra]


def synth(*extra: str) -> list[str]:
    return ["release", "--synthetic", "--n", "500", "--coordinate", "0", *BUDGET, *extra]


CLI_CASES = [
    # the cases that ended in a traceback or a wrong answer
    ("latin-1 file", release("latin1"), "not a text CSV file"),
    ("binary file", release("binary"), "not a text CSV file"),
    ("subnormal epsilon", release("good", "--epsilon", "1e-320"), "total epsilon must be from 0.001 to 100"),
    ("huge ball radius", release("good", "--domain", "ball", "--radius", "1e300"), "ball radius must be"),
    ("huge ridge", release("good", "--lambda-reg", "1e300"), "lambda_reg must be a finite number >= 0"),
    ("negative noise seed", release("good", "--seed", "-1"),
     "--seed must be an integer from 0 to 9007199254740991 (2^53 - 1)"),
    ("36 TiB of synthetic rows", synth("--n", "1000000000000"), "n <= 10,000,000"),
    ("no method", ["compare", "--data", "@good", "--coordinate", "0", *BUDGET, "--methods", ""],
     "name at least one method"),
    ("delta near 1", release("good", "--delta", "0.9999"), "total delta must be at most 0.1"),
    # files
    ("missing file", ["release", "--data", "/nonexistent/x.csv", "--coordinate", "0", *BUDGET], "not found"),
    ("empty file", release("empty"), "is empty"),
    ("blank lines only", release("blank_lines"), "is empty"),
    ("header only", release("header_only"), "no data rows"),
    ("text in y", release("text_y"), "holds text, not a number"),
    ("NaN in X", release("nan_x"), "NaN or infinite value"),
    ("inf in y", release("inf_y"), "NaN or infinite value"),
    ("one column", release("one_column"), "at least one feature column"),
    ("duplicate column names", release("duplicate_names"), "repeats the column name"),
    ("no y column", release("no_y"), "no column named 'y'"),
    ("ragged rows", release("ragged"), "a number of values other than the header's"),
    # the problem and the budget
    ("coordinate out of range", release("good", "--coordinate", "2"), "out of range"),
    ("negative coordinate", release("good", "--coordinate", "-1"), "out of range"),
    ("unknown coordinate name", release("good", "--coordinate", "zz"), "no feature named 'zz'"),
    ("split of zeros", release("good", "--split", "0,0,0"), "three weights"),
    ("split with NaN", release("good", "--split", "1,nan,1"), "three weights"),
    ("two split weights", release("good", "--split", "1,1"), "exactly three weights"),
    ("level 1", release("good", "--level", "1"), "--level must be a number from 0.5 to 0.99"),
    ("level NaN", release("good", "--level", "nan"), "--level must be a number from 0.5 to 0.99"),
    ("epsilon NaN", release("good", "--epsilon", "nan"), "epsilon for the total budget must be a positive"),
    ("epsilon infinite", release("good", "--epsilon", "inf"), "epsilon for the total budget must be a positive"),
    ("epsilon huge", release("good", "--epsilon", "1e300"), "total epsilon must be from 0.001 to 100"),
    ("epsilon text", release("good", "--epsilon", "abc"), "invalid float value"),
    ("delta zero", release("good", "--delta", "0"), "delta for the total budget must lie strictly"),
    ("delta NaN", release("good", "--delta", "nan"), "delta for the total budget must lie strictly"),
    ("radius on the cube", release("good", "--radius", "2"), "applies to --domain ball only"),
    ("radius zero", release("good", "--domain", "ball", "--radius", "0"), "ball radius must be"),
    ("radius NaN", release("good", "--domain", "ball", "--radius", "nan"), "ball radius must be"),
    ("negative ridge", release("good", "--lambda-reg", "-1"), "lambda_reg must be"),
    ("ridge NaN", release("good", "--lambda-reg", "nan"), "lambda_reg must be"),
    ("seed past 2^63", release("good", "--seed", str(2**64)), "--seed must be an integer"),
    ("repeat 0", release("good", "--repeat", "0"), "--repeat must be at least 1"),
    ("logistic on real responses", release("good", "--loss", "logistic"), "binary labels"),
    # synthetic data
    ("synthetic d 0", synth("--d", "0"), "n > d >= 1"),
    ("synthetic d 201", synth("--d", "201"), "d <= 200"),
    ("synthetic n <= d", synth("--n", "3", "--d", "5"), "n > d >= 1"),
    ("synthetic cells", synth("--n", "10000000", "--d", "100"), "cells is more than"),
    ("synthetic seed -1", synth("--sample-seed", "-1"), "sample seed must be an integer"),
    ("synthetic norm NaN", synth("--theta-norm", "nan"), "norm of theta*"),
    ("synthetic norm huge", synth("--theta-norm", "1e300"), "norm of theta*"),
    ("synthetic noise inf", synth("--noise-scale", "inf"), "noise scale"),
    ("synthetic noise negative", synth("--noise-scale", "-1"), "noise scale"),
    ("synthetic command n", ["synthetic", "--out", "/nonexistent/x.csv", "--n", "1000000000000"], "n <= 10,000,000"),
    ("census sample n 0", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--n", "0", "--coordinate", "0",
                           *BUDGET], "sample size n must be an integer from 1"),
    ("census sample past the cap", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--with-replacement",
                                    "--n", "100000000000", "--coordinate", "0", *BUDGET], "sample size n"),
    ("compare trials 0", ["compare", "--data", "@good", "--coordinate", "0", *BUDGET, "--trials", "0"],
     "--trials must be an integer from 1 to 500"),
    # a message that names a control names the command line's option (the app names its widget: ui.labels)
    ("census without a state", ["release", "--acs-root", "/nonexistent", "--coordinate", "0", *BUDGET],
     "name at least one state with --state, e.g. CA"),
    ("census file missing", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--coordinate", "0", *BUDGET],
     "or allow downloads (--download)"),
    ("robust loss on census data", ["release", "--acs-root", "/nonexistent", "--state", "CA", "--loss", "robust",
                                    "--coordinate", "0", *BUDGET], "drop --loss or pass --loss logistic"),
    ("split of words", release("good", "--split", "a,b,c"), "--split takes three numbers a,b,c"),
    ("radius on the cube names both options", release("good", "--radius", "2"),
     "--radius applies to --domain ball only"),
    ("missing file names --data", ["release", "--data", "/nonexistent/x.csv", "--coordinate", "0", *BUDGET],
     "check the path passed to --data"),
    ("missing PUMS file names --pums", ["release", "--pums", "/nonexistent/p.csv", "--coordinate", "0", *BUDGET],
     "check the path passed to --pums"),
]


def run_main(argv: list[str], files: dict[str, str], capsys: pytest.CaptureFixture) -> tuple[int, str, str]:
    argv = [files[a[1:]] if a.startswith("@") else a for a in argv]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals (an unparsable number, a missing flag)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,needle", [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES])
def test_cli_refuses_with_one_sentence(argv, needle, files, capsys):
    start = time.monotonic()
    code, out, err = run_main(argv, files, capsys)
    assert code == 2, (code, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error:") and needle in lines[0], lines[0]
    assert SECRET not in err  # no cell of the data is quoted
    assert time.monotonic() - start < 30  # refused before allocating or iterating


def test_cli_warns_when_delta_is_not_below_one_over_n(files, capsys):
    code, out, err = run_main(release("good", "--delta", "0.05", "--seed", "1"), files, capsys)
    assert code == 0 and out.startswith("{")
    assert err.strip().splitlines() == [err.strip()] and err.startswith("warning: delta = 0.05 is not below 1/n")
    code, _, err = run_main(release("good", "--seed", "1"), files, capsys)
    assert code == 0 and err == ""


# ---------------------------------------------------------------- the library


X, Y = rows(60)
BAD_DESIGNS = [
    ("complex X", lambda: prepare(X + 1j, Y), "real numbers"),
    ("string X", lambda: prepare(X.astype(str), Y), "real numbers"),
    ("bool X", lambda: prepare(X > 0, Y), "real numbers"),
    ("object X", lambda: prepare(X.astype(object), Y), "real numbers"),
    ("ragged X", lambda: prepare([[1.0, 2.0], [1.0]], [1.0, 2.0]), "rectangular"),
    ("string y", lambda: prepare(X, Y.astype(str)), "real numbers"),
    ("string labels", lambda: prepare(X, np.where(Y > 0, "yes", "no"), loss="logistic"), "real numbers"),
    ("complex y", lambda: prepare(X, Y + 0j), "real numbers"),
    ("NaN in X", lambda: prepare(np.where(np.eye(60, 2) > 0, np.nan, X), Y), "NaN or infinite"),
    ("inf in X", lambda: prepare(np.where(np.eye(60, 2) > 0, np.inf, X), Y), "NaN or infinite"),
    ("NaN in y", lambda: prepare(X, np.where(np.arange(60) == 5, np.nan, Y)), "y contains NaN"),
    ("inf in y", lambda: prepare(X, np.where(np.arange(60) == 5, -np.inf, Y)), "y contains NaN"),
    ("string lam_reg", lambda: prepare(X, Y, lam_reg="0.1"), "lambda_reg"),
    ("bool lam_reg", lambda: prepare(X, Y, lam_reg=True), "lambda_reg"),
    ("huge lam_reg", lambda: prepare(X, Y, lam_reg=1e300), "lambda_reg"),
    ("string radius", lambda: prepare(X, Y, domain="ball", radius="2"), "ball radius"),
    ("bool radius", lambda: prepare(X, Y, domain="ball", radius=True), "ball radius"),
    ("inf radius", lambda: prepare(X, Y, domain="ball", radius=math.inf), "ball radius"),
    ("unknown loss", lambda: prepare(X, Y, loss="hinge"), "unknown loss"),
]


@pytest.mark.parametrize("call,needle", [c[1:] for c in BAD_DESIGNS], ids=[c[0] for c in BAD_DESIGNS])
def test_prepare_refuses_bad_designs(call, needle):
    with pytest.raises(DataError) as err:
        call()
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.fixture(scope="module")
def problem():
    return prepare(X, Y)


BUDGET_1 = make_budget(1.0, 1e-6)
BAD_RUNS = [
    ("coordinate True", dict(u=True), DataError, "coordinate"),
    ("coordinate 2.0", dict(u=2.0), DataError, "entries"),
    ("unknown name", dict(u="zz"), DataError, "no feature named"),
    ("complex direction", dict(u=np.array([1j, 1.0])), DataError, "real numbers"),
    ("string direction", dict(u=np.array(["1", "0"])), DataError, "real numbers"),
    ("NaN direction", dict(u=np.array([np.nan, 1.0])), DataError, "finite"),
    ("subnormal epsilon", dict(budget=make_budget(1e-320, 1e-6)), BudgetError, "from 0.001 to 100"),
    ("level 1", dict(level=1.0), DataError, "interval level"),
    ("unknown calibration", dict(calibration="laplace"), BudgetError, "unknown calibration"),
]


@pytest.mark.parametrize("kwargs,kind,needle", [c[1:] for c in BAD_RUNS], ids=[c[0] for c in BAD_RUNS])
def test_run_private_refuses_bad_settings(problem, kwargs, kind, needle):
    args = dict(u=0, budget=BUDGET_1, rng=make_rng(0)) | kwargs
    with pytest.raises(kind) as err:
        run_private(problem, **args)
    assert needle in str(err.value)


@pytest.mark.parametrize("epsilon,delta,needle", [(1.0, 0.9999, "at most 0.1"), (1.0, 0.11, "at most 0.1"),
                                                  (1e-320, 1e-6, "from 0.001 to 100"), (True, 1e-6, "positive finite"),
                                                  ("1", 1e-6, "positive finite"), (1.0, "1e-6", "strictly"),
                                                  (10**400, 1e-6, "positive finite"), (1.0, -10**400, "strictly")])
def test_the_total_budget_check_shared_by_the_command_line_and_the_app(epsilon, delta, needle):
    with pytest.raises(BudgetError, match=needle):
        check_total_budget(epsilon, delta)
    check_total_budget(1.0, MAX_DELTA)  # the largest delta is accepted


def test_a_feature_name_is_a_coordinate(problem):
    by_name = run_private(problem, "x1", BUDGET_1, make_rng(3))
    by_index = run_private(problem, 1, BUDGET_1, make_rng(3))
    assert by_name.u.tolist() == by_index.u.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("seed", [-1, 2**64, "7", True, 1.5])
def test_noise_seeds_are_non_negative_integers(seed):
    with pytest.raises(InputError, match="noise seed must be an integer from 0 to 9007199254740991"):
        make_rng(seed)


@pytest.mark.parametrize("methods,trials,needle", [([], 2, "name at least one method"),
                                                   (["local"], "2", "trials"), (["local"], True, "trials"),
                                                   (["nope"], 2, "unknown method")])
def test_compare_refuses_bad_settings(problem, methods, trials, needle):
    with pytest.raises(InputError, match=needle):
        compare(problem, 0, BUDGET_1, trials, make_rng(0), methods)


SPECS = [
    ("rows past the cap", lambda: SyntheticSpec("robust", 10**12, 5).load(), "n <= 10,000,000"),
    ("cells past the cap", lambda: SyntheticSpec("robust", 2_000_000, 200).load(), "cells is more than"),
    ("string n", lambda: SyntheticSpec("robust", "100", 5).load(), "integers n > d"),
    ("bool d", lambda: SyntheticSpec("robust", 100, True).load(), "integers n > d"),
    ("d 201", lambda: SyntheticSpec("robust", 1000, 201).load(), "d <= 200"),
    ("string norm", lambda: SyntheticSpec("robust", 100, 5, theta_norm="1").load(), "norm of theta*"),
    ("NaN norm", lambda: SyntheticSpec("robust", 100, 5, theta_norm=math.nan).load(), "norm of theta*"),
    ("negative noise", lambda: SyntheticSpec("robust", 100, 5, noise_scale=-1.0).load(), "noise scale"),
    ("negative seed", lambda: SyntheticSpec("robust", 100, 5, sample_seed=-1).load(), "sample seed"),
    ("text content", lambda: CsvSpec.from_bytes("x.csv", "a,y\n1,2\n"), "must be bytes"),
    ("binary content", lambda: CsvSpec.from_bytes("x.csv", b"\xff\xfe\x00").load(b"\xff\xfe\x00"), "not a text CSV"),
    ("census n negative", lambda: AcsSpec(("CA",), n=-5), "sample size n"),
    ("census n float", lambda: AcsSpec(("CA",), n=1.5), "sample size n"),
    ("census seed negative", lambda: AcsSpec(("CA",), n=5, sample_seed=-1), "sample seed"),
    ("census year text", lambda: AcsSpec(("CA",), year="2018x"), "survey year"),
    ("PUMS n past the cap", lambda: PumsSpec.from_bytes("p.csv", b"PINCP\n1\n", n=10**12), "sample size n"),
]


@pytest.mark.parametrize("call,needle", [c[1:] for c in SPECS], ids=[c[0] for c in SPECS])
def test_spec_loaders_refuse_bad_settings(call, needle):
    start = time.monotonic()
    with pytest.raises(InputError) as err:  # DataError, or InputError for a seed
        call()
    assert needle in str(err.value)
    assert time.monotonic() - start < 5  # refused before any allocation


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


# ---------------------------------------------------------------- links


def open_link(page: str | None = None, **query: str) -> AppTest:
    at = new_app(120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


CHEAP = {"source": "upload"}  # nothing is loaded or fitted: the link's values are all that is checked
# key: (a value outside the range the core supports, a value at the edge of it, kept)
EDGES = {
    "n": ("10000001", "10000000"), "d": ("201", "200"), "theta_norm": ("1001", "1000"),
    "noise_scale": ("-1", "0"), "sample_seed": ("-1", str(2**53 - 1)), "year": ("2013", "2100"),
    "acs_n": ("0", "10000000"), "lam_reg": ("1e300", "100"), "radius": ("1e300", "0.01"),
    "epsilon": ("1e-320", "0.001"), "delta": ("0.9999", "0.1"), "split_a": ("0", "1000"),
    "split_b": ("1e-4", "0.001"), "split_c": ("inf", "1000"), "level": ("1", "0.5"),
    "noise_seed": ("-1", str(2**53 - 1)), "trials": ("501", "1"),
}


def test_every_numeric_setting_has_a_range():
    numeric = {k for k, p in params.PARAMS.items() if p.choices is None and isinstance(p.default, (int, float))}
    numeric |= {"acs_n", "radius", "noise_seed"}  # optional numbers (default None)
    assert numeric - {"download", "with_replacement", "present"} == set(EDGES)  # booleans
    assert all(params.PARAMS[k].bounds is not None for k in EDGES)


def assert_fallback(at: AppTest, key: str, raw: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == params.PARAMS[key].default
    notice = " ".join(w.value for w in at.sidebar.warning)
    assert f"{key}={raw}" in notice and "default" in notice, notice


@pytest.mark.parametrize("key", sorted(EDGES))
def test_out_of_range_and_nan_fall_back_with_a_notice(key):
    out = EDGES[key][0]
    assert_fallback(open_link(**CHEAP, **{key: out}), key, out)
    assert_fallback(open_link(**CHEAP, **{key: "nan"}), key, "nan")


@pytest.mark.parametrize("key", sorted(EDGES))
def test_values_at_the_edge_are_kept(key):
    edge = EDGES[key][1]
    at = open_link(**CHEAP, **{key: edge})
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[key] == params.PARAMS[key].parse(edge) != params.PARAMS[key].default
    assert not at.sidebar.warning


@pytest.mark.parametrize("key,raw", [("domain", "sphere"), ("download", "maybe"), ("mode", "admin"),
                                     ("n", "1e6"), ("d", "five"), ("calibration", "")])
def test_unusable_choices_and_text_fall_back_with_a_notice(key, raw):
    assert_fallback(open_link(**CHEAP, **{key: raw}), key, raw)


@pytest.mark.parametrize("raw", ["", "foo", "local,local", "local,,oracle", ",", "oracle;local", "<b>local</b>"])
def test_unusable_method_lists_fall_back_with_a_notice(raw):
    assert_fallback(open_link(**CHEAP, methods=raw), "methods", raw)


def test_a_very_long_method_list_falls_back_and_is_cut_short_in_the_notice():
    raw = "local," * 20_000
    at = open_link(**CHEAP, methods=raw)
    assert_fallback(at, "methods", raw[:40] + "…")
    assert len(" ".join(w.value for w in at.sidebar.warning)) < 300


def test_a_method_list_is_kept():
    at = open_link(**CHEAP, methods="oracle, algorithm7")
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["methods"] == ["oracle", "algorithm7"]
    assert not at.sidebar.warning


@pytest.mark.parametrize("query", [dict(n="2000000"), dict(n="20000", d="50")])
def test_the_data_page_keeps_a_valid_linked_size(query):
    at = open_link("pages/data.py", **query)
    assert not at.exception, [e.value for e in at.exception]
    for key, value in query.items():
        assert at.session_state[key] == int(value)
        assert at.number_input(key=key).value == int(value)
    assert not at.sidebar.warning
