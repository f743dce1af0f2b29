"""People, not rows: census samples without replacement by default, group privacy when drawn with it.

The census records here come from the SYNTHETIC files in tests/data (tests/data/README.md).
"""

from __future__ import annotations

import collections
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.cli import main
from core.data import acs, read_csv, synthetic
from core.errors import DataError
from core.mechanisms.pipeline import make_rng, run_private
from core.privacy.accounting import split_budget
from core.privacy.unit import PrivacyUnit
from core.report import private_report, release_document

CA_FILE = Path(__file__).parent / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"


@pytest.fixture
def root(tmp_path):
    dst = acs.census_path(tmp_path, "CA")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CA_FILE, dst)
    return tmp_path


@pytest.fixture(scope="module")
def population():
    return acs.read_pums(CA_FILE)


def drawn_rows(N: int, n: int, seed: int, with_replacement: bool = False) -> np.ndarray:
    """The row numbers the seeded draw picks from a population of N."""
    numbers = np.arange(N)
    idx, _, _ = acs.sample_population(numbers[:, None], numbers, n, seed, with_replacement)
    return idx[:, 0]


def brute_force_k(rows: np.ndarray) -> int:
    return max(collections.Counter(rows.tolist()).values())


def geometric_delta(epsilon: float, delta: float, k: int) -> float:
    return delta * math.fsum(math.exp(j * epsilon) for j in range(k))


def run_cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, (json.loads(out) if status == 0 else None), err


# ---------------------------------------------------------------- group privacy


@pytest.mark.parametrize(("epsilon", "delta"), [(4.0, 1e-6), (0.1, 0.3), (1e-9, 1e-12), (50.0, 1e-6)])
def test_one_row_per_person_keeps_the_guarantee_exactly(epsilon, delta):
    assert PrivacyUnit("person", 1).per_person(epsilon, delta) == (epsilon, delta)
    assert PrivacyUnit("row", 1).per_person(epsilon, delta) == (epsilon, delta)


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(4.0, 1e-6, 2), (4.0, 1e-6, 39), (0.5, 1e-5, 7),
                                                       (1e-8, 1e-6, 100), (4.0, 1e-6, 178)])
def test_k_rows_give_k_eps_and_the_geometric_sum(epsilon, delta, k):
    eps_k, delta_k = PrivacyUnit("person", k).per_person(epsilon, delta)
    assert eps_k == k * epsilon
    assert delta_k == pytest.approx(geometric_delta(epsilon, delta, k), rel=1e-12)


def test_zero_epsilon_gives_k_delta():
    assert PrivacyUnit("person", 5).per_person(0.0, 1e-6) == (0.0, 5 * 1e-6)


@pytest.mark.parametrize(("epsilon", "k"), [(4.0, 1000), (4.0, 10**9), (1.0, 10**6), (800.0, 2)])
def test_overflow_gives_inf_not_an_exception(epsilon, k):
    eps_k, delta_k = PrivacyUnit("person", k).per_person(epsilon, 1e-6)
    assert eps_k == k * epsilon and delta_k == math.inf


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(ValueError, match="max_rows_per_person"):
        PrivacyUnit("person", k)


def test_uploads_and_synthetic_data_are_per_row(tmp_path):
    data = synthetic(500, 3, "robust", 1.0, 1.0, 0)
    assert data.privacy_unit == PrivacyUnit("row", 1)
    path = tmp_path / "rows.csv"
    np.savetxt(path, np.column_stack([data.X, data.y]), delimiter=",", header="a,b,c,y", comments="")
    assert read_csv(path).privacy_unit == PrivacyUnit("row", 1)


# ---------------------------------------------------------------- census samples


def test_whole_population_is_one_row_per_person(root, population):
    data = acs.load_acs_income(["CA"], root=root)
    assert data.n == population.n == 198
    assert data.privacy_unit == PrivacyUnit("person", 1) and population.privacy_unit == PrivacyUnit("person", 1)


@pytest.mark.parametrize("n", [49, 150, 198])
def test_sample_up_to_the_population_is_distinct_people(root, population, n):
    data = acs.load_acs_income(["CA"], root=root, n=n, sample_seed=3)
    assert data.n == n and data.privacy_unit == PrivacyUnit("person", 1)
    assert f"a sample of {n} drawn without replacement (seed 3)" in data.source
    rows = drawn_rows(population.n, n, 3)
    assert np.unique(rows).size == n  # no person twice
    np.testing.assert_array_equal(data.X, population.X[rows])
    np.testing.assert_array_equal(data.y, population.y[rows])
    again = acs.load_acs_income(["CA"], root=root, n=n, sample_seed=3)
    np.testing.assert_array_equal(data.X, again.X)


def test_read_pums_samples_without_replacement(population):
    data = acs.read_pums(CA_FILE, n=100, sample_seed=5)
    assert data.privacy_unit == PrivacyUnit("person", 1) and "drawn without replacement (seed 5)" in data.source
    np.testing.assert_array_equal(data.X, population.X[drawn_rows(population.n, 100, 5)])


def test_more_than_the_population_needs_the_option(root):
    with pytest.raises(DataError, match="198 people") as err:
        acs.load_acs_income(["CA"], root=root, n=199, sample_seed=1)
    assert "--with-replacement" in str(err.value) and "draw with replacement" in str(err.value)
    assert "group privacy" in str(err.value)
    with pytest.raises(DataError, match="--with-replacement"):
        acs.read_pums(CA_FILE, n=5000, sample_seed=1)


@pytest.mark.parametrize(("n", "seed"), [(49, 0), (49, 1), (5000, 3), (5000, 11)])
def test_with_replacement_k_is_the_largest_multiplicity(root, population, n, seed):
    data = acs.load_acs_income(["CA"], root=root, n=n, sample_seed=seed, with_replacement=True)
    rows = drawn_rows(population.n, n, seed, with_replacement=True)
    k = brute_force_k(rows)
    assert data.privacy_unit == PrivacyUnit("person", k)
    np.testing.assert_array_equal(data.X, population.X[rows])
    assert f"drawn with replacement (seed {seed}; up to {k} rows per person)" in data.source
    if n == 5000:
        assert k > 10
    pums = acs.read_pums(CA_FILE, n=n, sample_seed=seed, with_replacement=True)
    assert pums.privacy_unit == PrivacyUnit("person", k)


# ---------------------------------------------------------------- the documents


def test_command_line_reports_the_guarantee_per_person(root, population, capsys):
    base = ["release", "--acs-root", str(root), "--state", "CA", "--loss", "logistic", "--coordinate", "hours",
            "--epsilon", "4", "--delta", "1e-6", "--seed", "1", "--sample-seed", "7"]
    status, _, err = run_cli(capsys, *base, "--n", "2000")
    assert status == 2 and "--with-replacement" in err and len(err.strip().splitlines()) == 1

    status, doc, err = run_cli(capsys, *base, "--n", "2000", "--with-replacement")
    assert status == 0, err
    k = brute_force_k(drawn_rows(population.n, 2000, 7, with_replacement=True))
    unit = doc["privacy_unit"]
    assert unit["unit"] == "person" and unit["max_rows_per_person"] == k > 1
    assert unit["epsilon_per_person"] == k * 4.0
    assert unit["delta_per_person"] == pytest.approx(geometric_delta(4.0, 1e-6, k), rel=1e-12)
    assert doc["budget"]["epsilon_total"] == 4.0  # the per-row total is unchanged

    status, doc, err = run_cli(capsys, *base, "--n", "150")
    assert status == 0, err
    assert doc["privacy_unit"] == dict(unit="person", max_rows_per_person=1, epsilon_per_person=4.0,
                                       delta_per_person=1e-6)


def test_synthetic_command_line_is_per_row(capsys):
    status, doc, err = run_cli(capsys, "release", "--synthetic", "--n", "3000", "--d", "2", "--coordinate", "0",
                               "--epsilon", "2", "--delta", "1e-6", "--seed", "1", "--sample-seed", "1")
    assert status == 0, err
    assert doc["privacy_unit"] == dict(unit="row", max_rows_per_person=1, epsilon_per_person=2.0,
                                       delta_per_person=1e-6)


def test_documents_carry_the_unit_and_write_overflow_as_null(robust_problem):
    budget = split_budget(6.0, 1e-6)
    run = run_private(robust_problem, 0, budget, make_rng(0))
    per_row = dict(unit="row", max_rows_per_person=1, epsilon_per_person=6.0, delta_per_person=1e-6)
    assert release_document(robust_problem, 0, [run], "s")["privacy_unit"] == per_row
    report = private_report(run, "x0", budget, "s", robust_problem.n, robust_problem.d)
    assert report["privacy_unit"] == per_row

    three = PrivacyUnit("person", 3)
    expected = dict(unit="person", max_rows_per_person=3, epsilon_per_person=18.0,
                    delta_per_person=pytest.approx(geometric_delta(6.0, 1e-6, 3), rel=1e-12))
    assert release_document(robust_problem, 0, [run], "s", privacy_unit=three)["privacy_unit"] == expected
    report = private_report(run, "x0", budget, "s", robust_problem.n, robust_problem.d, privacy_unit=three)
    assert report["privacy_unit"] == expected

    many = PrivacyUnit("person", 500)  # 500 * 6 = 3000: e^3000 is beyond a float
    doc = release_document(robust_problem, 0, [run], "s", privacy_unit=many)
    assert doc["privacy_unit"] == dict(unit="person", max_rows_per_person=500, epsilon_per_person=3000.0,
                                       delta_per_person=None)
    json.dumps(doc, allow_nan=False)
    report = private_report(run, "x0", budget, "s", robust_problem.n, robust_problem.d, privacy_unit=many)
    assert report["privacy_unit"]["delta_per_person"] is None
    json.dumps(report, allow_nan=False)
