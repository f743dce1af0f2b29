"""The ACS income path on SYNTHETIC census-format files (tests/data/README.md): no census record here."""

import json
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace

import folktables
import numpy as np
import pandas as pd
import pytest
import requests

from core.data import acs
from core.data.synthetic_pums import PLANTED_THETA, write_synthetic_pums
from core.errors import DataError
from core.mechanisms.pipeline import prepare

DATA = Path(__file__).parent / "data"
FIXTURES = {"CA": DATA / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv", "MI": DATA / "SYNTHETIC_psam_p26_MI_2018_1-Year.csv"}
EDGE_OCCP = (10, 960, 1005, 1555, 1980, 2001, 2920, 3000, 3550, 3601, 4655, 4700, 5940, 6005, 7640, 7700, 9830, 9920)


@pytest.fixture
def root(tmp_path):
    """A census folder laid out as folktables expects (it creates folders, so a copy in tmp)."""
    for state, src in FIXTURES.items():
        dst = acs.census_path(tmp_path, state)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dst)
    return tmp_path


def folktables_frame(root, states):
    """The real folktables loader, through root_dir, with ACSIncome's own filter."""
    source = folktables.ACSDataSource(survey_year="2018", horizon="1-Year", survey="person", root_dir=str(root))
    return folktables.acs.adult_filter(source.get_data(states=states, download=False))


def reference_encoding(df):
    """docs/method.md §10 written out column by column with pandas, independently of core.data.acs."""
    occ = df["OCCP"]
    groups = [(10, 960), (1005, 1980), (2001, 2920), (3000, 3550), (3601, 4655), (4700, 5940), (6005, 7640)]
    cols = [
        np.ones(len(df)),
        df["AGEP"].between(18, 60),
        2 * (df["WKHP"] - 1) / 98 - 1,
        (2 * (df["SCHL"] - 1) / 23 - 1).fillna(-1.0),
        df["RAC1P"] == 1,
        *[occ.between(lo, hi) for lo, hi in groups],
        df["MAR"] == 1,
        df["SEX"] == 2,
        df["COW"].isin([3, 4, 5]),
        df["COW"].isin([6, 7]),
        df["COW"].isin([8, 9]) | df["COW"].isna(),
    ]
    X = np.column_stack([np.asarray(c, dtype=float) for c in cols])
    return X, np.where(df["PINCP"] > 40000, 1.0, -1.0)


@pytest.mark.parametrize("states", [["CA"], ["CA", "MI"]])
def test_matches_the_real_folktables_loader(root, states):
    df = folktables_frame(root, states)
    X_ref, y_ref = reference_encoding(df)
    data = acs.load_acs_income(states, root=root)
    assert data.X.shape == (len(df), 17) and data.feature_names == acs.FEATURE_NAMES
    np.testing.assert_array_equal(data.X, X_ref)
    np.testing.assert_array_equal(data.y, y_ref)
    assert data.X.min() >= -1 and data.X.max() <= 1
    for j in range(1, 17):  # every feature varies: the design is usable
        assert np.unique(data.X[:, j]).size > 1, acs.FEATURE_NAMES[j]


def test_feature_names_in_order():
    assert acs.FEATURE_NAMES[:5] == ("intercept", "working_age", "hours", "schooling", "white")
    assert acs.FEATURE_NAMES[12:] == ("married", "female", "cow_government", "cow_self_employed", "cow_unknown")
    assert len(acs.FEATURE_NAMES) == 17


def test_fixtures_carry_every_edge_code():
    for path in FIXTURES.values():
        df = folktables.acs.adult_filter(pd.read_csv(path))
        present = set(df["OCCP"].dropna().astype(int))
        assert set(EDGE_OCCP) <= present, set(EDGE_OCCP) - present
        assert df["OCCP"].isna().any()
        assert "SYNTHETIC" in path.name


def person(**over):
    base = dict(AGEP=30, COW=1, SCHL=16, MAR=1, OCCP=10, WKHP=40, SEX=1, RAC1P=1, PINCP=50000, PWGTP=10)
    base.update(over)
    return base


def test_encoding_of_edge_codes_by_hand():
    rows = [person(OCCP=c) for c in EDGE_OCCP] + [person(OCCP=np.nan)]
    X, _ = acs.encode_acs_income(pd.DataFrame(rows).astype(float))
    group = X[:, 5:12].argmax(axis=1) + 1
    group[X[:, 5:12].sum(axis=1) == 0] = 0  # 0: no indicator (reference group, other or missing)
    assert group.tolist() == [1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0, 0, 0, 0]
    assert (X[:, 5:12].sum(axis=1) <= 1).all()


def test_encoding_of_each_column_by_hand():
    rows = [
        person(AGEP=17, WKHP=1, SCHL=1, RAC1P=2, MAR=5, SEX=2, COW=3, PINCP=40000),
        person(AGEP=18, WKHP=99, SCHL=24, COW=5, PINCP=40001),
        person(AGEP=60, WKHP=50, SCHL=np.nan, COW=6),
        person(AGEP=61, COW=7),
        person(COW=8),
        person(COW=9),
        person(COW=np.nan),
        person(COW=2),
    ]
    X, y = acs.encode_acs_income(pd.DataFrame(rows).astype(float))
    assert X[:, 0].tolist() == [1.0] * 8
    assert X[:, 1].tolist() == [0, 1, 1, 0, 1, 1, 1, 1]
    assert X[:3, 2].tolist() == [-1.0, 1.0, 2 * 49 / 98 - 1]
    assert X[:3, 3].tolist() == [-1.0, 1.0, -1.0]  # SCHL 1, 24, missing
    assert X[:2, 4].tolist() == [0.0, 1.0]
    assert X[:2, 12].tolist() == [0.0, 1.0] and X[:2, 13].tolist() == [1.0, 0.0]
    assert X[:, 14].tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert X[:, 15].tolist() == [0, 0, 1, 1, 0, 0, 0, 0]
    assert X[:, 16].tolist() == [0, 0, 0, 0, 1, 1, 1, 0]
    assert y[:2].tolist() == [-1.0, 1.0]  # PINCP > 40000, strictly


def test_filter_drops_each_failing_condition():
    rows = [person(), person(AGEP=16), person(PINCP=100), person(WKHP=np.nan), person(WKHP=0), person(PWGTP=0)]
    X, _ = acs.encode_acs_income(pd.DataFrame(rows).astype(float))
    assert X.shape == (1, 17)


@pytest.mark.slow
def test_planted_coefficients_are_recovered(tmp_path):
    write_synthetic_pums(tmp_path, ["CA"], rows=150_000, seed=7, model="common")
    data = acs.load_acs_income(["CA"], root=tmp_path)
    fit = prepare(data.X, data.y, "logistic", "cube", feature_names=data.feature_names).fit
    assert np.max(np.abs(fit.theta - PLANTED_THETA)) < 0.2, np.round(fit.theta - PLANTED_THETA, 3)


def test_sampling_is_seeded_and_without_replacement_by_default(root):
    population = acs.load_acs_income(["CA", "MI"], root=root)
    a = acs.load_acs_income(["CA", "MI"], root=root, n=300, sample_seed=3)
    b = acs.load_acs_income(["CA", "MI"], root=root, n=300, sample_seed=3)
    c = acs.load_acs_income(["CA", "MI"], root=root, n=300, sample_seed=4)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    assert a.privacy_unit.max_rows_per_person == 1 and "drawn without replacement (seed 3)" in a.source
    # the same seeded draw on the row numbers: 300 distinct people, whose records are the sample
    idx, _, k = acs.sample_population(np.arange(population.n)[:, None], np.arange(population.n), 300, 3)
    assert k == 1 and np.unique(idx[:, 0]).size == 300
    np.testing.assert_array_equal(a.X, population.X[idx[:, 0]])
    np.testing.assert_array_equal(a.y, population.y[idx[:, 0]])
    with pytest.raises(DataError, match="positive integer"):
        acs.load_acs_income(["CA"], root=root, n=0)


def test_sampling_with_replacement_is_seeded_and_asked_for(root):
    population = acs.load_acs_income(["CA", "MI"], root=root)
    with pytest.raises(DataError, match="--with-replacement"):
        acs.load_acs_income(["CA", "MI"], root=root, n=5000, sample_seed=3)
    a = acs.load_acs_income(["CA", "MI"], root=root, n=5000, sample_seed=3, with_replacement=True)
    b = acs.load_acs_income(["CA", "MI"], root=root, n=5000, sample_seed=3, with_replacement=True)
    c = acs.load_acs_income(["CA", "MI"], root=root, n=5000, sample_seed=4, with_replacement=True)
    assert a.n == 5000 > population.n  # with replacement: n may exceed the population
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    rows = {tuple(r) + (t,) for r, t in zip(population.X, population.y, strict=True)}
    assert all(tuple(r) + (t,) in rows for r, t in zip(a.X[:200], a.y[:200], strict=True))
    k = a.privacy_unit.max_rows_per_person
    assert a.privacy_unit.unit == "person" and k > 1 and f"up to {k} rows per person" in a.source


def test_second_load_reads_no_csv_and_a_changed_file_is_reread(root, monkeypatch):
    first = acs.load_acs_income(["CA"], root=root)
    assert (root / "processed" / "acs_income_2018_1-Year_CA.npz").is_file()

    def refuse(*_, **__):
        raise AssertionError("the census CSV was read again")

    with monkeypatch.context() as m:
        m.setattr(acs, "read_person_columns", refuse)
        again = acs.load_acs_income(["CA"], root=root)
    np.testing.assert_array_equal(first.X, again.X)
    path = acs.census_path(root, "CA")
    df = pd.read_csv(path)
    df.iloc[: len(df) // 2].to_csv(path, index=False)
    assert acs.load_acs_income(["CA"], root=root).n < first.n


def test_missing_file_without_downloads_names_the_path(tmp_path):
    expected = tmp_path / "2018" / "1-Year" / "psam_p26.csv"
    with pytest.raises(DataError) as err:
        acs.load_acs_income(["MI"], root=tmp_path)
    assert str(expected) in str(err.value) and "csv_pmi.zip" in str(err.value)
    assert "make a SYNTHETIC census sample (--census-sample)" in str(err.value)  # offline too


def watch_the_probe(monkeypatch, wait: bool) -> list[tuple[threading.Thread, float | None, bool]]:
    """The census site's probe thread, as acs starts it: each (thread, the timeout the caller joined it with, whether
    it was still running after the join). wait=False ends every join at once, as if its timeout had passed."""
    joins = []

    class Probe(threading.Thread):
        def join(self, timeout=None):
            if wait:
                super().join(timeout)
            joins.append((self, timeout, self.is_alive()))

    monkeypatch.setattr(acs, "threading", SimpleNamespace(**{**vars(threading), "Thread": Probe}))
    return joins


def test_unreachable_site_fails_fast_with_the_path(tmp_path, monkeypatch, capsys):
    asked = []

    def refuse(url, **kwargs):
        asked.append(kwargs)
        raise requests.ConnectionError("no route to host")

    def download(*_, **__):
        raise AssertionError("a download was tried")

    monkeypatch.setattr(requests, "head", refuse)
    monkeypatch.setattr(requests, "get", download)
    joins = watch_the_probe(monkeypatch, wait=True)
    with pytest.raises(DataError, match="could not be reached \\(ConnectionError\\)") as err:
        acs.load_acs_income(["CA"], root=tmp_path, download=True)
    # one request, its answer taken as soon as it came (the probe had ended when the join returned), no download
    assert asked == [dict(timeout=acs.PROBE_SECONDS, allow_redirects=True)]
    assert [(timeout, running) for _, timeout, running in joins] == [(acs.PROBE_SECONDS, False)]
    assert str(tmp_path / "2018" / "1-Year" / "psam_p06.csv") in str(err.value)
    assert "corrupted" not in capsys.readouterr().out + str(err.value)


def test_hanging_site_is_abandoned_after_the_probe_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(acs, "PROBE_SECONDS", 1.0)
    answer = threading.Event()
    monkeypatch.setattr(requests, "head", lambda *_, **__: answer.wait(30))  # a site that answers only when told
    joins = watch_the_probe(monkeypatch, wait=False)
    try:
        with pytest.raises(DataError, match="no answer within 1 s"):
            acs.load_acs_income(["CA"], root=tmp_path, download=True)
    finally:
        answer.set()  # the abandoned probe ends
    # the caller waited for the probe PROBE_SECONDS at most, and gave up on it while it still hung, in a daemon
    # thread that cannot keep the process alive
    ((probe, timeout, running),) = joins
    assert timeout == 1.0 and running and probe.daemon


def test_failed_download_is_reported_without_the_corrupted_note(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(acs, "_unreachable", lambda url: None)  # the probe passes, the download fails

    def broken(*_, **__):
        raise requests.ConnectionError("connection reset")

    monkeypatch.setattr(requests, "get", broken)
    with pytest.raises(DataError, match="downloading .*csv_pca.zip failed .*connection reset"):
        acs.load_acs_income(["CA"], root=tmp_path, download=True)
    assert "corrupted" not in capsys.readouterr().out


def publish(site: Path, state: str, members: dict[str, bytes] | None = None, raw: bytes | None = None) -> Path:
    """The census site's 2018 1-Year zip of a state: raw bytes, or a zip of these members (default: the state's
    SYNTHETIC fixture under its census name)."""
    path = site / "2018" / "1-Year" / f"csv_p{state.lower()}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        path.write_bytes(raw)
        return path
    members = members or {acs.census_path(".", state).name: FIXTURES[state].read_bytes()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, content in members.items():
            zipped.writestr(name, content)
    return path


def test_a_download_tells_the_bytes_as_they_arrive(tmp_path, census_site, monkeypatch):
    """From a census site on this machine: the zip in chunks, each reported, then the person file taken out of it."""
    monkeypatch.setattr(acs, "CHUNK_BYTES", 4096)
    size = publish(census_site, "CA").stat().st_size
    told: list[tuple[int, int | None]] = []
    path = acs.ensure_census_file(tmp_path / "census", "CA", download=True, progress=lambda *t: told.append(t))
    assert path.read_bytes() == FIXTURES["CA"].read_bytes()
    assert len(told) == -(-size // 4096) > 2 and told[-1] == (size, size)
    assert [done for done, _ in told] == sorted({done for done, _ in told})  # growing, one report per chunk
    assert sorted(p.name for p in path.parent.iterdir()) == ["psam_p06.csv"]  # no partial file left
    data = acs.load_acs_income(["CA"], root=tmp_path / "census", download=True)  # the file is there: no download
    assert data.n == 198


@pytest.mark.parametrize("zipped, why", [
    (dict(raw=b"not a zip archive"), "BadZipFile"),
    (dict(members={"psam_p99.csv": b"x"}), "KeyError"),
])
def test_a_broken_download_leaves_no_file(tmp_path, census_site, zipped, why):
    publish(census_site, "CA", **zipped)
    folder = tmp_path / "census" / "2018" / "1-Year"
    with pytest.raises(DataError, match=f"downloading .*csv_pca.zip failed \\({why}") as err:
        acs.ensure_census_file(tmp_path / "census", "CA", download=True)
    assert "psam_p06.csv is missing" in str(err.value) and list(folder.iterdir()) == []


def test_a_site_without_the_file_answers_before_any_download(tmp_path, census_site):
    with pytest.raises(DataError, match="could not be reached \\(it answered HTTP 404\\)"):
        acs.ensure_census_file(tmp_path / "census", "MI", download=True)
    assert not (tmp_path / "census").exists()


def test_bad_state_year_and_horizon(tmp_path):
    with pytest.raises(DataError, match="unknown state 'XX'"):
        acs.load_acs_income(["XX"], root=tmp_path)
    with pytest.raises(DataError, match="2014 and later"):
        acs.load_acs_income(["CA"], year=2012, root=tmp_path)
    with pytest.raises(DataError, match="horizon must be"):
        acs.load_acs_income(["CA"], horizon="3-Year", root=tmp_path)
    with pytest.raises(DataError, match="at least one state"):
        acs.load_acs_income([], root=tmp_path)


def test_own_pums_file_from_path_and_bytes():
    from_path = acs.read_pums(FIXTURES["MI"])
    from_bytes = acs.read_pums(FIXTURES["MI"].read_bytes(), name="upload.csv")
    np.testing.assert_array_equal(from_path.X, from_bytes.X)
    assert from_path.feature_names == acs.FEATURE_NAMES and "upload.csv" in from_bytes.source


def test_malformed_person_files(tmp_path):
    good = pd.read_csv(FIXTURES["CA"])
    with pytest.raises(DataError, match="column\\(s\\) OCCP, PINCP are missing"):
        acs.read_pums(good.drop(columns=["OCCP", "PINCP"]).to_csv(index=False).encode())
    text = good.astype({"WKHP": object})
    text.loc[5, "WKHP"] = "forty"
    message = "column WKHP must be numeric but holds a non-numeric value \\(data row 6\\)"
    with pytest.raises(DataError, match=message) as err:
        acs.read_pums(text.to_csv(index=False).encode())
    assert "forty" not in str(err.value)  # no cell of the data is quoted
    with pytest.raises(DataError, match="is empty"):
        acs.read_pums(b"")
    with pytest.raises(DataError, match="file not found"):
        acs.read_pums(tmp_path / "none.csv")
    with pytest.raises(DataError, match="not a text CSV"):
        acs.read_pums(b"\xff\xfe\x00\x81binary")


@pytest.mark.slow
def test_command_line_on_census_files(root):
    base = [sys.executable, "-m", "core", "release", "--loss", "logistic", "--epsilon", "4", "--delta", "1e-6"]
    args = ["--acs-root", str(root), "--state", "CA", "--state", "MI", "--coordinate", "female", "--seed", "1"]
    proc = subprocess.run([*base, *args, "--n", "3000", "--sample-seed", "2", "--with-replacement"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["feature_names"] == ["intercept_at_centre", *acs.FEATURE_NAMES[1:]] and doc["n"] == 3000
    assert doc["d"] == 17
    assert doc["coordinate"] == {"index": 13, "name": "female"}
    assert doc["privacy_unit"]["unit"] == "person" and doc["privacy_unit"]["max_rows_per_person"] > 1
    proc = subprocess.run([*base, "--pums", str(FIXTURES["CA"]), "--coordinate", "2"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["coordinate"]["name"] == "hours"
    missing = subprocess.run([*base, "--acs-root", str(root), "--state", "TX", "--coordinate", "0"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "psam_p48.csv is missing" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_compare_command_on_census_files(root):
    args = [sys.executable, "-m", "core", "compare", "--acs-root", str(root), "--state", "CA", "--state", "MI",
            "--n", "20000", "--sample-seed", "1", "--with-replacement", "--loss", "logistic",
            "--coordinate", "schooling",
            "--epsilon", "4", "--delta", "1e-6", "--trials", "2", "--seed", "1"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["coordinate"] == {"index": 3, "name": "schooling"} and doc["d"] == 17
    assert set(doc["methods"]) == {"local", "oracle", "output_perturbation", "objective_perturbation", "dp_sgd"}
    assert all(len(m["values"]) == 2 for m in doc["methods"].values())
    assert doc["targets"]["u_theta_star"] is None and "vs_truth" not in doc["methods"]["local"]["errors"]


def test_the_default_coordinate_of_census_data_is_not_the_intercept():
    from core.data.acs import FEATURE_NAMES
    from core.estimator.problem import default_coordinate

    assert FEATURE_NAMES[0] == "intercept" and FEATURE_NAMES[default_coordinate(FEATURE_NAMES)] == "working_age"
    assert default_coordinate(("x0", "x1")) == 0 and default_coordinate(("intercept",)) == 0
