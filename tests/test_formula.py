"""A model stated as a formula and a codebook (core.data.formula): the encoding follows from public facts alone, the
fit on Fair's affairs data is statsmodels' Logit, the file's people do not depend on the model, and every refusal is
one sentence naming the variable, before anything is charged."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from core.cli import main
from core.data.formula import Categorical, Codebook, Numeric, apply_formula
from core.data.spec import CsvSpec, SyntheticSpec, infer_loss
from core.errors import DataError, InputError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec

FAIR = "y ~ rate_marriage + age + yrs_married + C(religious)"
FAIR_BOOK = Codebook((Numeric("rate_marriage", 1, 5), Numeric("age", 17.5, 42), Numeric("yrs_married", 0.5, 23),
                      Categorical("religious", ("1", "2", "3", "4"))))
FAIR_BOOK_CSV = ("variable,type,low,high,levels\nrate_marriage,numeric,1,5,\nage,numeric,17.5,42,\n"
                 "yrs_married,numeric,0.5,23,\nreligious,categorical,,,1|2|3|4\n")
FAIR_NAMES = ("Intercept", "rate_marriage", "age", "yrs_married", "C(religious)[T.2]", "C(religious)[T.3]",
              "C(religious)[T.4]")


def fair() -> pd.DataFrame:
    """statsmodels' Fair (1978) affairs data, 6,366 women, with the label y = 1 when affairs > 0."""
    sm = pytest.importorskip("statsmodels.api")
    df = sm.datasets.fair.load_pandas().data
    return df.assign(y=(df["affairs"] > 0).astype(np.int64))


def write(df: pd.DataFrame, path) -> str:
    {".csv": lambda: df.to_csv(path, index=False), ".parquet": lambda: df.to_parquet(path),
     ".dta": lambda: df.to_stata(path, write_index=False), ".sav": lambda: pyreadstat.write_sav(df, path)}[
        path.suffix]()
    return str(path)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def statsmodels_logit(y: np.ndarray, X: np.ndarray) -> np.ndarray:
    sm = pytest.importorskip("statsmodels.api")
    return sm.Logit(y, X).fit(method="newton", tol=1e-14, maxiter=100, disp=0).params


def test_the_fair_encoding_is_the_public_scaling_and_treatment_coding(tmp_path):
    df = fair()
    spec = CsvSpec.from_path(write(df, tmp_path / "fair.csv"), formula=FAIR, codebook=FAIR_BOOK)
    data = spec.load()
    assert data.feature_names == FAIR_NAMES and spec.response == "y"
    r = df["religious"].to_numpy()
    want = np.column_stack([np.ones(len(df)), (df["rate_marriage"] - 3) / 2, (2 * df["age"] - 59.5) / 24.5,
                            (2 * df["yrs_married"] - 23.5) / 22.5, r == 2, r == 3, r == 4]).astype(np.float64)
    np.testing.assert_allclose(data.X, want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(data.y, df["y"].to_numpy(np.float64))
    assert np.abs(data.X).max() == 1.0  # in the cube, and the public ranges are attained here


def test_the_fair_fit_is_statsmodels_logit_from_the_library_and_the_command_line(tmp_path):
    df = fair()
    path = write(df, tmp_path / "fair.csv")
    spec = CsvSpec.from_path(path, formula=FAIR, codebook=FAIR_BOOK)
    data = spec.load()
    want = statsmodels_logit(data.y, data.X)
    problem = prepare_spec(data, ModelSpec("logistic"), spec)
    np.testing.assert_allclose(problem.fit.theta, want, rtol=1e-8, atol=0)
    (tmp_path / "codebook.csv").write_text(FAIR_BOOK_CSV)
    book = str(tmp_path / "codebook.csv")
    code, out, err = run_cli(["release", "--data", path, "--formula", FAIR, "--codebook", book, "--coordinate",
                              "rate_marriage", "--epsilon", "4", "--delta", "1e-6", "--seed", "3"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["loss"] == "logistic" and doc["feature_names"] == list(FAIR_NAMES)
    assert doc["coordinate"] == {"index": 1, "name": "rate_marriage"} and doc["domain"] == "cube"
    np.testing.assert_allclose(doc["fit"]["theta"], want, rtol=1e-8, atol=0)
    assert doc["clipped_rows"] == 0  # nothing projected: every row is in the cube
    assert err.splitlines()[0] == ("note: the label y takes two values, so the loss is logistic; set --loss to robust "
                                   "to change it")


def test_the_same_rows_in_four_formats_are_one_people_and_one_fit_under_any_formula(tmp_path):
    df = fair()
    paths = [write(df, tmp_path / f"fair{ext}") for ext in (".csv", ".parquet", ".dta", ".sav")]
    specs = [CsvSpec.from_path(p, formula=FAIR, codebook=FAIR_BOOK) for p in paths]
    fits = [prepare_spec(s.load(), ModelSpec("logistic"), s).fit.theta for s in specs]
    for spec, theta in zip(specs[1:], fits[1:], strict=True):
        assert spec.key == specs[0].key == spec.population().key[0] != "", spec.name  # the CSV keeps an earlier key too
        np.testing.assert_array_equal(theta, fits[0])
    # The model is part of the spec, not of the people: another formula, another codebook or none is the same people.
    other = CsvSpec.from_path(paths[0], formula="y ~ age + C(religious) - 1", codebook=FAIR_BOOK)
    wider = Codebook((*FAIR_BOOK.variables[:1], Numeric("age", 16, 50), *FAIR_BOOK.variables[2:]))
    rescaled = CsvSpec.from_path(paths[0], formula=FAIR, codebook=wider)
    plain = CsvSpec.from_path(paths[0])
    assert len({specs[0], other, rescaled, plain}) == 4  # four specs, so a cache tells the models apart
    assert {s.population() for s in (specs[0], other, rescaled, plain)} == {plain.population()}
    assert other.load().feature_names == ("age", "C(religious)[1]", "C(religious)[2]", "C(religious)[3]",
                                          "C(religious)[4]")


def test_the_codebook_file_reads_as_the_codebook_in_code(tmp_path):
    (tmp_path / "book.csv").write_text(FAIR_BOOK_CSV.replace("levels\n", "levels,note\n", 1))
    assert Codebook.read(tmp_path / "book.csv") == FAIR_BOOK  # an extra column is ignored
    with pytest.raises(InputError, match=r"^the codebook's range for age must be two finite numbers low < high, "):
        Codebook.from_csv(FAIR_BOOK_CSV.replace("17.5,42", "42,17.5"))
    with pytest.raises(InputError, match=r"^religious has type 'factor' in the codebook; write numeric or categ"):
        Codebook.from_csv(FAIR_BOOK_CSV.replace("religious,categorical", "religious,factor"))


def small(n: int = 240, seed: int = 2) -> pd.DataFrame:
    """Rows with a public range (age 18..90, hours 0..80), a region written as words, a three-valued grade and a 0/1
    label."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 91, n).astype(float), "hours": rng.uniform(0, 80, n),
                         "region": rng.choice(["north", "south", "west"], n), "grade": rng.integers(1, 4, n),
                         "y": rng.integers(0, 2, n)})


SMALL_BOOK = Codebook((Numeric("age", 18, 90), Numeric("hours", 0, 80), Categorical("region", ("west", "north",
                                                                                               "south"))))


def test_words_are_levels_in_the_codebooks_order_and_an_interaction_stays_in_the_cube():
    df = small()
    X, y, names, notices = apply_formula(df, "y ~ age * hours + C(region)", SMALL_BOOK)
    assert names == ("Intercept", "age", "hours", "C(region)[T.north]", "C(region)[T.south]", "age:hours")
    np.testing.assert_array_equal(X[:, 3], (df["region"] == "north").to_numpy(np.float64))  # west is the reference
    np.testing.assert_allclose(X[:, 2], df["hours"] / 40 - 1, rtol=0, atol=1e-15)  # by [0, 80], not the data's range
    np.testing.assert_allclose(X[:, 5], X[:, 1] * X[:, 2], rtol=0, atol=0)
    assert np.abs(X).max() <= 1.0 and set(y) == {0.0, 1.0}
    assert notices[0] == ("age is scaled from its public range [18, 90] to [−1, 1], so its coefficient is per 36 "
                          "units of age")
    assert notices[-1] == "C(region) is coded against its first listed level, west"
    assert apply_formula(df, "y ~ age + 0", SMALL_BOOK)[2] == ("age",)
    # a label listed as categorical is coded 0 for its first level and 1 for its second
    words = df.assign(y=np.where(df["y"] == 1, "stayed", "left"))
    labelled = Codebook((*SMALL_BOOK.variables, Categorical("y", ("left", "stayed"))))
    np.testing.assert_array_equal(apply_formula(words, "y ~ age", labelled)[1], df["y"].to_numpy(np.float64))


def test_a_file_with_a_category_in_words_loads_but_cannot_be_charged(tmp_path):
    path = write(small(), tmp_path / "words.csv")
    spec = CsvSpec.from_path(path, formula="y ~ age + C(region)", codebook=SMALL_BOOK)
    assert spec.load().d == 4
    with pytest.raises(DataError, match=r"cannot be charged: .*write each categorical variable's levels as numbers"):
        spec.population()


def test_the_loss_follows_the_label_unless_chosen():
    spec = CsvSpec("0" * 64, "rows.csv", response="passed")
    two, three = np.array([0.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])
    assert infer_loss(spec, two, None) == ("logistic", "the label passed takes two values, so the loss is logistic; "
                                           "set --loss to robust to change it")
    said = infer_loss(spec, two, None, lambda s: "the Loss menu")[1]
    assert said.endswith("set the Loss menu to robust to change it")
    assert infer_loss(spec, three, None) == ("robust", None)
    assert infer_loss(spec, two, "robust") == ("robust", None)
    with pytest.raises(DataError) as err:
        infer_loss(spec, three, "logistic")
    assert str(err.value) == ("the label passed takes 3 values, but the logistic loss needs binary labels; recode "
                              "passed into two values (such as 0 and 1) or pass --loss robust")
    assert err.value.setting == "loss"
    assert infer_loss(SyntheticSpec("robust", n=10, d=1), two, None) == ("robust", None)  # the source fixes it


GOOD = "y ~ age + hours + C(region)"
BOOK = "variable,type,low,high,levels\nage,numeric,18,90,\nhours,numeric,0,80,\nregion,categorical,,,1|2|3\n"
REFUSALS = [  # (formula, codebook, loss, the refusal's start)
    (GOOD, BOOK.replace("18,90", "30,90"), None,
     "in FILE, age lies outside its public range [30, 90] in "),
    (GOOD, BOOK.replace("1|2|3", "1|2"), None,
     "region in FILE has a level not listed in the codebook in "),
    ("y ~ age + income", BOOK + "income,numeric,0,1e6,\n", None,
     "the formula names income, which is not a column of FILE (its columns: age, hours, region, grade, y); correct"),
    ("grade ~ age + hours", BOOK, "logistic",
     "the label grade takes 3 values, but the logistic loss needs binary labels; recode grade into two values"),
    ("grade ~ age", BOOK + "grade,categorical,,,1|2|3\n", None,
     "the label grade has 3 levels in the codebook, but a label takes two"),
    ("y ~ age + C(hours)", BOOK, None, "hours is numeric in the codebook; write hours without C() in the formula"),
    ("y ~ age + region", BOOK, None, "region is categorical in the codebook; write C(region) in the formula"),
    ("y ~ age + tenure", BOOK, None, "the codebook has no row for tenure; add one"),
    ("y ~ np.log(age)", BOOK, None, "the formula's term np.log(age) is neither a variable nor C(variable)"),
]


@pytest.mark.parametrize(("formula", "book", "loss", "said"), REFUSALS, ids=[r[3][:40] for r in REFUSALS])
def test_each_refusal_is_one_sentence_naming_the_variable_and_nothing_is_charged(tmp_path, formula, book, loss,
                                                                                 said):
    df = small().assign(region=lambda f: f["region"].map({"north": 1, "south": 2, "west": 3}))
    df.loc[5, "age"] = 20.0  # below 30: one of the values outside the narrowed range, never quoted
    df.loc[7, "region"] = 3  # a level the narrowed codebook does not list
    path = write(df, tmp_path / "rows.csv")
    (tmp_path / "book.csv").write_text(book)
    ledger = str(tmp_path / "ledger.sqlite3")
    argv = ["release", "--data", path, "--formula", formula, "--codebook", str(tmp_path / "book.csv"),
            "--coordinate", "age", "--epsilon", "1", "--delta", "1e-6", "--ledger", ledger, *(["--loss", loss] if
                                                                                               loss else [])]
    code, out, err = run_cli(argv)
    assert (code, out) == (2, "") and err.count("\n") == 1
    message = err.removeprefix("error: ").strip().replace(path, "FILE")
    assert message.startswith(said) and ". " not in message and "20.0" not in message
    assert run_cli(["ledger", "show", "--ledger", ledger])[0] == 0
    assert json.loads(run_cli(["ledger", "show", "--ledger", ledger])[1])["populations"] == []
    if said.startswith("in FILE"):  # the same command with the public range charges: the refusal is the range's
        argv[argv.index(str(tmp_path / "book.csv"))] = str(tmp_path / "good.csv")
        (tmp_path / "good.csv").write_text(BOOK)
        assert run_cli(argv)[0] == 0
        assert json.loads(run_cli(["ledger", "show", "--ledger", ledger])[1])["populations"] != []


def test_the_codebooks_example_runs_as_written():
    import doctest

    import core.data.formula

    failed, attempted = doctest.testmod(core.data.formula, report=False)
    assert (failed, attempted) == (0, 2)


def test_the_app_fits_the_formula_and_codebook_as_the_command_line_does():
    """On the Data page: the fair data uploaded, the formula typed and the codebook uploaded: the fit the page shows
    (its teaching view of the same problem) is statsmodels' Logit within 1e-8; cleared, the formula's codebook is
    asked for in one sentence naming the control."""
    from apptest import on_page

    df = fair()
    content = df.to_csv(index=False).encode()
    at = on_page("data", source="upload", upload_loss="logistic")
    at.file_uploader(key="upload_file").set_value(("fair.csv", content, "text/csv")).run()
    at.text_input(key="formula").set_value(FAIR).run()
    assert any(e.value.startswith("A formula needs the codebook") and "“Formula”" in e.value for e in at.error)
    at.file_uploader(key="codebook_file").set_value(("codebook.csv", FAIR_BOOK_CSV.encode(), "text/csv")).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    (problem,) = [v for v in at.session_state["uploaded"].values() if hasattr(v, "fit")]
    assert problem.feature_names == FAIR_NAMES and problem.data_spec.formula == FAIR
    data = CsvSpec.from_bytes("fair.csv", content, formula=FAIR, codebook=FAIR_BOOK).load(content)
    np.testing.assert_allclose(problem.fit.theta, statsmodels_logit(data.y, data.X), rtol=1e-8, atol=0)
    assert any("fair.csv" in c.value and "the model y" in c.value for c in at.caption)  # the model, said
