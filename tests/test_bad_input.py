"""Every bad input: a clear exception from the library, exit status 2 and one stderr line from the CLI."""

import io
import json
import pickle
import subprocess
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from core.cli import main as cli_main
from core.data import read_csv
from core.errors import SETTINGS, BudgetError, DataError, InputError
from core.mechanisms.pipeline import prepare
from core.privacy.accounting import parse_split, split_budget
from ui.labels import message


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def good_rows(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = X @ np.array([0.5, -0.5]) + rng.laplace(size=n)
    return X, y


def csv_text(X, y, names=("a", "b")):
    lines = [",".join([*names, "y"])]
    lines += [",".join(f"{v:.6f}" for v in [*row, t]) for row, t in zip(X, y, strict=True)]
    return "\n".join(lines) + "\n"


# --- through the library -------------------------------------------------------------------


def test_missing_file():
    with pytest.raises(DataError, match="data file not found: nope.csv"):
        read_csv("nope.csv")


def test_empty_file_and_header_only(tmp_path):
    with pytest.raises(DataError, match="is empty"):
        read_csv(write(tmp_path, ""))
    with pytest.raises(DataError, match="no data rows"):
        read_csv(write(tmp_path, "a,b,y\n"))


def test_no_y_column(tmp_path):
    with pytest.raises(DataError, match="no column named 'y'"):
        read_csv(write(tmp_path, "a,b,label\n1,2,3\n"))


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf"])
def test_nan_and_inf(tmp_path, cell):
    X, y = good_rows()
    text = csv_text(X, y).replace("\n", f"\n{cell},0.1,0.2\n", 1)
    with pytest.raises(DataError, match="column 'a' holds a NaN or infinite value in data row 1"):
        read_csv(write(tmp_path, text))


def test_nan_through_prepare():
    X, y = good_rows()
    X[3, 1] = np.nan
    with pytest.raises(DataError, match="NaN or infinite values \\(first at row 3, column 1\\)"):
        prepare(X, y)


def test_non_numeric_and_empty_cells(tmp_path):
    X, y = good_rows()
    with pytest.raises(DataError, match="column 'b' holds text, not a number in data row 2") as err:
        read_csv(write(tmp_path, csv_text(X, y).replace("\n", "\n0.1,0.1,0.1\n0.3,red,1\n", 1)))
    assert "red" not in str(err.value)  # no cell of the data is quoted
    with pytest.raises(DataError, match="column 'a' is missing \\(an empty cell\\) in data row 1"):
        read_csv(write(tmp_path, csv_text(X, y).replace("\n", "\n,0.1,0.1\n", 1)))


def test_true_false_labels_are_read(tmp_path):
    data = read_csv(write(tmp_path, "a,y\n0.5,true\n-0.5,False\n0.1,TRUE\n"))
    assert data.y.tolist() == [1.0, 0.0, 1.0]


def test_ragged_rows(tmp_path):
    with pytest.raises(DataError, match="data row 2 has a number of values other than the header's 3"):
        read_csv(write(tmp_path, "a,b,y\n1,2,3\n1,2\n"))


def test_n_not_above_d():
    X, y = good_rows(n=2)
    with pytest.raises(DataError, match="need more rows than features \\(n > d\\), got n = 2 and d = 2"):
        prepare(X, y)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_epsilon(eps):
    with pytest.raises(BudgetError, match="epsilon for the total budget must be a positive finite number"):
        split_budget(eps, 1e-6)


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -0.1])
def test_bad_delta(delta):
    with pytest.raises(BudgetError, match="delta for the total budget must lie strictly between 0 and 1"):
        split_budget(1.0, delta)


def test_bad_split():
    with pytest.raises(BudgetError, match="three weights .* from 0.001 to 1000"):
        split_budget(1.0, 1e-6, (1.0, 0.0, 1.0))
    with pytest.raises(BudgetError, match="exactly three weights"):
        parse_split("1,2")
    with pytest.raises(BudgetError, match="three numbers"):
        parse_split("a,b,c")


def test_non_binary_logistic_labels():
    X, y = good_rows()
    with pytest.raises(DataError, match="logistic regression needs binary labels") as err:
        prepare(X, y, loss="logistic")
    assert f"{y[0]:g}" not in str(err.value) and "40 distinct values" in str(err.value)  # no value is quoted


def test_bad_domain_radius_and_coordinate(robust_problem):
    X, y = good_rows()
    with pytest.raises(DataError, match="--radius applies to --domain ball only"):
        prepare(X, y, radius=2.0)
    with pytest.raises(DataError, match="ball radius must be a positive number"):
        prepare(X, y, domain="ball", radius=-1.0)
    with pytest.raises(DataError, match="unknown domain"):
        prepare(X, y, domain="sphere")
    with pytest.raises(DataError, match="no feature named 'zz'"):
        robust_problem.coordinate("zz")
    with pytest.raises(DataError, match="coordinate 7 is out of range"):
        robust_problem.coordinate(7)


# --- through the command line ----------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """`python -m core ARGS` in this process (its exit status, stdout and stderr): the same main() the command runs,
    without a new interpreter per case."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli_main(list(args))
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def cli_release(path, *extra):
    return run_cli("release", "--data", str(path), "--coordinate", "0", "--epsilon", "1", "--delta", "1e-6", *extra)


def assert_one_line_error(proc, needle):
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and needle in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_cli_errors(tmp_path):
    X, y = good_rows()
    good = write(tmp_path, csv_text(X, y))
    assert_one_line_error(cli_release(tmp_path / "missing.csv"), "data file not found")
    assert_one_line_error(cli_release(write(tmp_path, "", "empty.csv")), "is empty")
    nan = write(tmp_path, csv_text(X, y).replace("\n", "\nnan,0.1,0.2\n", 1), "nan.csv")
    assert_one_line_error(cli_release(nan), "NaN or infinite value")
    text = write(tmp_path, csv_text(X, y).replace("\n", "\nred,0.1,0.2\n", 1), "text.csv")
    assert_one_line_error(cli_release(text), "holds text, not a number in data row 1")
    assert_one_line_error(cli_release(write(tmp_path, csv_text(X[:2], y[:2]), "tiny.csv")), "n > d")
    assert_one_line_error(
        run_cli("release", "--data", str(good), "--coordinate", "0", "--epsilon", "0", "--delta", "1e-6"),
        "epsilon for the total budget must be a positive",
    )
    assert_one_line_error(
        run_cli("release", "--data", str(good), "--coordinate", "0", "--epsilon", "1", "--delta", "1"),
        "delta for the total budget must lie strictly between 0 and 1",
    )
    assert_one_line_error(cli_release(good, "--loss", "logistic"), "binary labels")
    assert_one_line_error(cli_release(good, "--coordinate", "q"), "no feature named 'q'")
    assert_one_line_error(cli_release(good, "--split", "1,1"), "exactly three weights")
    assert_one_line_error(run_cli("release", "--data", str(good)), "required")
    assert_one_line_error(cli_release(good, "--epsilon", "abc"), "invalid float value")


def test_cli_names_the_option_to_change(tmp_path):
    X, y = good_rows()
    good = write(tmp_path, csv_text(X, y))
    assert_one_line_error(cli_release(good, "--split", "1,1"), "--split takes exactly three weights a,b,c")
    assert_one_line_error(cli_release(good, "--radius", "2"), "--radius applies to --domain ball only")
    assert_one_line_error(cli_release(tmp_path / "missing.csv"), "check the path passed to --data")


def test_cli_says_when_most_rows_were_projected(tmp_path):
    """Income and age unscaled: every row is clipped onto the cube, both columns become 1 and the design singular."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.integers(20_000, 120_000, 200), rng.integers(18, 80, 200)]).astype(float)
    y = X[:, 0] / 50_000 - X[:, 1] / 40 + rng.laplace(size=200)
    proc = cli_release(write(tmp_path, csv_text(X, y, ("income", "age"))), "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    (warning,) = proc.stderr.strip().splitlines()
    assert warning.startswith("warning (not private): 200 of 200 rows (100.0%) lay outside the covariate domain")
    assert "(columns with values outside [−1, 1]: income, age): rescale your features to [−1, 1]" in warning
    doc = json.loads(proc.stdout)
    assert doc["clipped_rows"] == 200 and doc["fit"]["status"] == "rank_deficient"
    assert doc["fit"]["diagnosis"].startswith("projection onto the domain made the design rank-deficient")
    assert doc["release"]["status"] == "bottom"


def test_cli_is_silent_about_a_few_projected_rows(tmp_path):
    X, y = good_rows()
    X[0, 0] = 1.5  # one row of 40 outside the cube: counted in clipped_rows, no warning
    proc = cli_release(write(tmp_path, csv_text(X, y)), "--seed", "1")
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["clipped_rows"] == 1


# --- one message, each surface naming the control its own way ---------------------------------


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


@pytest.mark.parametrize(
    ("call", "setting", "app"),
    [
        (lambda: parse_split("1,1"), "split", "“Split a, b, c” on the Pipeline page takes exactly three weights"),
        (lambda: prepare(*good_rows(), radius=2.0), "radius",
         "“Ball radius R” on the Pipeline page applies to “Covariate domain 𝒳” on the Pipeline page ball only"),
        (lambda: read_csv("nope.csv"), "data", "check the path passed to “CSV file” on the Data page"),
    ],
)
def test_errors_carry_the_setting_and_the_app_names_its_widget(call, setting, app):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.setting == setting
    assert app in message(err.value) and "--" not in message(err.value)


def test_projection_is_blamed_only_when_it_made_the_design_singular():
    from core.teaching.diagnosis import fit_diagnosis, projection

    X, y = good_rows(n=100)
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
    from ui.labels import message

    assert message(DataError("no file uploaded yet: choose a CSV on the Data page")).startswith("No file uploaded")
    assert message(DataError("refused: this draw costs")).startswith("Refused:")
    assert message(DataError("people.csv has no column named 'y'")).startswith("people.csv has")  # a file's name
    assert message(DataError("ε = 8 is weak")).startswith("ε = 8")
