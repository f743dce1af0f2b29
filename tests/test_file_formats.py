"""The same rows as CSV, Parquet, Stata, SPSS or SAS XPORT: one Table, one fit, one people's key
(core.data.formats, core.data.csvfile.table_dataset); bad files refused in one sentence that quotes no cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from core.cli import build_parser, spec_from_args
from core.data.formats import header
from core.data.spec import CsvSpec, file_spec
from core.errors import DataError
from core.estimator.model import ModelSpec
from core.mechanisms.pipeline import prepare_spec

SECRET = 0.123456789  # a cell value no message may quote


def frame(n: int = 300) -> pd.DataFrame:
    """300 rows: three features in the cube, a 0/1 label from a logistic model."""
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, size=(n, 3))
    x[7, 2] = SECRET
    y = (rng.random(n) < 1 / (1 + np.exp(-x @ np.array([1.5, -1.0, 0.5])))).astype(np.int64)
    return pd.DataFrame({"x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2], "y": y})


def write(df: pd.DataFrame, path, **labels) -> bytes:
    """df written in the format its path's extension names (labels: pyreadstat's, for .sav); the bytes."""
    ext = path.suffix
    if ext == ".csv":
        df.to_csv(path, index=False)
    elif ext == ".parquet":
        df.to_parquet(path)
    elif ext == ".dta":
        df.to_stata(path, write_index=False, **labels)
    elif ext == ".sav":
        pyreadstat.write_sav(df, path, **labels)
    elif ext == ".xpt":
        pyreadstat.write_xport(df, path, file_format_version=5)
    return path.read_bytes()


def loaded(name: str, content: bytes):
    spec = file_spec(name, content)
    return spec, prepare_spec(spec.load(content), ModelSpec("logistic"), spec)


def test_the_same_rows_in_every_format_are_one_people_and_one_fit(tmp_path):
    df = frame()
    coded = df.assign(y=df["y"] + 1)  # SPSS and Stata codes 1/2, read as no/yes through their value labels
    files = {
        "rows.csv": write(df, tmp_path / "rows.csv"),
        "rows.parquet": write(df, tmp_path / "rows.parquet"),
        "rows.dta": write(df, tmp_path / "rows.dta"),
        "rows.sav": write(df, tmp_path / "rows.sav", variable_value_labels={"y": {0: "no", 1: "yes"}}),
        "coded.sav": write(coded, tmp_path / "coded.sav", variable_value_labels={"y": {1: "no", 2: "yes"}}),
        "coded.dta": write(coded, tmp_path / "coded.dta", value_labels={"y": {1: "no", 2: "yes"}}),
        "rows.xpt": write(df, tmp_path / "rows.xpt"),
    }
    base_spec, base = loaded("rows.csv", files["rows.csv"])
    assert base_spec.key and base_spec.earlier and base.fit.status == "minimiser"
    for name, content in files.items():
        spec, problem = loaded(name, content)
        assert spec.key == base_spec.key, name
        assert spec.earlier == ("" if name != "rows.csv" else base_spec.earlier)  # other formats were never charged
        assert problem.feature_names == ("x0", "x1", "x2") and header(content, name) == ["x0", "x1", "x2", "y"]
        np.testing.assert_allclose(problem.fit.theta, base.fit.theta, rtol=0, atol=1e-12, err_msg=name)
    assert [file_spec(n, c).describe() for n, c in files.items() if n.startswith("rows")] == [
        "CSV file rows.csv", "Parquet file rows.parquet", "Stata file rows.dta", "SPSS file rows.sav",
        "SAS XPORT file rows.xpt"]
    other = df.copy()
    other.loc[0, "y"] = 1 - other.loc[0, "y"]  # one person's label changed: other rows
    assert file_spec("o.parquet", write(other, tmp_path / "o.parquet")).key != base_spec.key


def test_a_missing_value_reads_as_a_csvs_empty_cell(tmp_path):
    df = frame()
    df.loc[4, "x1"] = np.nan
    want = None
    for ext in (".csv", ".parquet", ".dta", ".sav", ".xpt"):
        content = write(df, tmp_path / f"gap{ext}")
        spec = file_spec(f"gap{ext}", content)
        assert spec.key == ""  # no canonical rows: it cannot be charged
        with pytest.raises(DataError) as err:
            spec.load(content)
        said = str(err.value).replace(f"gap{ext}", "FILE")
        want = want or said
        assert said == want, ext
    assert want == ("FILE has a problem: column 'x1' is missing (an empty cell) in data row 5. To use it, impute or "
                    "remove the rows with missing values")
    # an SPSS user-defined missing code is a missing cell too
    coded = frame()
    coded.loc[4, "x1"] = -99.0
    content = write(coded, tmp_path / "code.sav", missing_ranges={"x1": [-99.0]})
    with pytest.raises(DataError) as err:
        file_spec("code.sav", content).load(content)
    assert str(err.value).replace("code.sav", "FILE") == want


def test_a_text_label_of_three_values_reads_as_a_csvs(tmp_path):
    df = frame(12).assign(y=["a", "b", "c"] * 4)
    said = []
    for ext in (".csv", ".parquet", ".dta", ".sav"):
        content = write(df, tmp_path / f"t{ext}")
        with pytest.raises(DataError) as err:
            file_spec(f"t{ext}", content).load(content)
        said.append(str(err.value).replace(f"t{ext}", "FILE"))
    assert said == [said[0]] * 4 and "column 'y' holds text, not a number in 12 data rows" in said[0]
    words = frame(40).assign(y=np.where(frame(40)["y"] == 1, "yes", "no"))  # a label's yes/no, as in a CSV
    content = write(words, tmp_path / "w.parquet")
    assert set(file_spec("w.parquet", content).load(content).y) == {0.0, 1.0}


@pytest.mark.parametrize(("name", "source", "said"), [
    ("rows.parquet", "rows.sav", "rows.parquet holds an SPSS file, not a Parquet one; give it the extension .sav"),
    ("rows.csv", "rows.parquet", "rows.csv holds a Parquet file, not a CSV one; give it the extension .parquet"),
    ("rows.dta", "rows.csv", "rows.dta is not a Stata file (its first bytes are not a Stata file's)"),
    ("rows.xlsx", "rows.csv", "rows.xlsx has an extension that names no format read here; save it as CSV"),
    ("cut.parquet", "cut", "cut.parquet is not a Parquet file"),
    ("bad.sas7bdat", "bad", "bad.sas7bdat could not be read as a SAS file (it may be damaged or cut short)"),
    ("plain.sas7bdat", "rows.csv", "plain.sas7bdat is not a SAS file"),
])
def test_a_file_of_another_format_or_damaged_is_refused_in_one_sentence(tmp_path, name, source, said):
    df = frame(20)
    for ext in (".csv", ".parquet", ".sav"):
        write(df, tmp_path / f"rows{ext}")
    content = {"cut": (tmp_path / "rows.parquet").read_bytes()[:200],
               "bad": bytes(12) + bytes.fromhex("c2ea8160b31411cfbd92080009c7318c181f1011") + b"\x07" * 600,
               }.get(source) or (tmp_path / source).read_bytes()
    spec = file_spec(name, content)
    assert spec.key == ""
    with pytest.raises(DataError) as err:
        spec.load(content)
    message = str(err.value)
    assert message.startswith(said) and err.value.setting == "data"
    assert "\n" not in message and message.count(". ") == 0 and str(SECRET)[:6] not in message


def test_the_command_line_reads_every_format(tmp_path):
    df = frame()
    csv = write(df, tmp_path / "rows.csv")
    write(df, tmp_path / "rows.dta")
    args = build_parser().parse_args(["release", "--data", str(tmp_path / "rows.dta"), "--coordinate", "0",
                                      "--epsilon", "1", "--delta", "1e-6"])
    spec = spec_from_args(args)
    assert spec.key == CsvSpec.from_bytes("other.csv", csv).key and spec.population().key == (spec.key,)
    assert spec.load().n == 300
