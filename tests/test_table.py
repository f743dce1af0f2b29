"""The private regression table (core.table): Algorithm 3 published in part, its intervals, the budget k separate
releases would each get (core.accounting.separate_budget), and its privacy audit on a pair one row apart."""

from __future__ import annotations

import math

import numpy as np
import pytest
from audit import audit, count_changing_pair, prepare_sample

from core import table
from core.accounting import RELEASE_SPLIT, pld_epsilon, separate_budget, split_budget_pld
from core.data import synthetic
from core.errors import BudgetError, DataError
from core.full_vector import algorithm3
from core.gaussian import normal_quantile, sigma
from core.pipeline import prepare
from core.stability import solver_slack


@pytest.fixture(scope="module")
def logistic():
    ds = synthetic(200_000, 4, "logistic", seed=3)
    return prepare(ds.X, ds.y, "logistic", "ball")


def test_coordinates_by_name_index_or_all(logistic):
    assert table.coordinates(logistic, "all") == (0, 1, 2, 3)
    assert table.coordinates(logistic, "x2, x0") == (2, 0)
    assert table.coordinates(logistic, ("x1", 3)) == (1, 3)
    assert table.coordinates(logistic, "3,1") == (3, 1)
    for bad in ("", "x0,x0", "x9", "x0,,nope"):
        with pytest.raises(DataError):
            table.coordinates(logistic, bad)


def test_a_table_is_algorithm_3_published_in_part(logistic):
    """Same generator state: the table's values are the chosen coordinates of Algorithm 3's vector, its
    half-width z s t' + l(lambda_0), one for every coefficient."""
    t = table.release_table(logistic, "x3,x1", 4.0, 1e-6, np.random.default_rng(8), level=0.9)
    vec = algorithm3(logistic.fit, logistic.geometry, 4.0, 1e-6, np.random.default_rng(8))
    assert t.status == "released" and t.names == ("x3", "x1") and t.k == 2
    assert t.values == (vec.value[3], vec.value[1])
    lam0 = vec.certificate.lambda_hat + logistic.fit.lam_reg
    assert t.half_width == normal_quantile(0.95) * vec.noise_scale + solver_slack(lam0, logistic.geometry)
    assert all(hi - lo == pytest.approx(2 * t.half_width) for lo, hi in t.intervals)
    assert vec.sigma == sigma(2.0, 5e-7)


def test_every_coefficient_covers_at_the_level(logistic):
    """500 tables of all four coefficients at eps = 1: each coefficient's 90 % interval covers theta_j(P_n) in
    at least 430 (a binomial lower tail of 1e-4 per coefficient at the level)."""
    rng = np.random.default_rng(21)
    hits = np.zeros(4, dtype=int)
    for _ in range(500):
        t = table.release_table(logistic, "all", 1.0, 1e-6, rng, level=0.9)
        hits += [lo <= th <= hi for (lo, hi), th in zip(t.intervals, logistic.fit.theta, strict=True)]
    assert np.all(hits >= 430), hits


def test_bottom_when_no_curvature_is_certified():
    ds = synthetic(300, 4, "robust", seed=1)
    t = table.release_table(prepare(ds.X, ds.y, "robust", "cube"), "all", 0.5, 1e-6, np.random.default_rng(0))
    assert t.status == "bottom" and t.values is None and t.intervals is None and t.half_width is None


def test_separate_releases_share_the_total():
    """k releases at separate_budget, composed k-fold by PLD, meet the total, with every delta share divided by k;
    k = 1 is the single release's own PLD budget."""
    one = separate_budget(4.0, 1e-6, 1, RELEASE_SPLIT)
    assert one == split_budget_pld(4.0, 1e-6, RELEASE_SPLIT)
    shares = []
    for k in (2, 5):
        b = separate_budget(4.0, 1e-6, k, RELEASE_SPLIT)
        a, c = b.lambda_min, b.release
        eps = pld_epsilon(a, b.lambda_max, c, 1e-6, k)
        assert eps <= 4.0
        assert k * (a.delta + b.lambda_max.delta) + b.split[2] * 1e-6 == pytest.approx(1e-6)
        shares.append(c.epsilon)
    assert shares[0] > shares[1]
    with pytest.raises(BudgetError):
        separate_budget(4.0, 1e-6, 0)


def test_the_table_audit_stays_under_its_claim():
    """The privacy audit (tests/audit.py) of a two-coefficient table on a pair whose stage-1 counts differ, 6,000
    draws on each: eps_lb <= the claimed eps (family-wise error 1e-3)."""
    p, q = count_changing_pair(5_000, 2, 20250303)
    P, Q = prepare_sample(p), prepare_sample(q)
    eps, delta = 2.0, 1e-5
    samples = []
    for problem, seed in ((P, 1), (Q, 2)):
        rng = np.random.default_rng(seed)
        draws = [table.release_table(problem, "all", eps, delta, rng) for _ in range(6_000)]
        assert sum(d.status == "released" for d in draws) > 5_000
        samples.append({
            "lambda_hat": np.array([d.vector.certificate.lambda_hat for d in draws]),
            "v0": np.array([math.nan if d.values is None else d.values[0] for d in draws]),
            "v1": np.array([math.nan if d.values is None else d.values[1] for d in draws]),
        })
    result = audit(samples[0], samples[1], ("lambda_hat", "v0", "v1"), eps, delta)
    assert result.eps_lb <= eps, result


# ---------------------------------------------------------------- one plan, one charge, on every surface

TABLE = ["release", "--synthetic", "--n", "50000", "--d", "3", "--loss", "logistic", "--domain", "ball",
         "--epsilon", "2", "--delta", "1e-6"]


def test_the_command_line_releases_a_table_with_one_charge(tmp_path, capsys):
    import json

    from core.cli import main
    from core.ledger_store import SqliteStore

    ledger = tmp_path / "l.sqlite3"
    assert main([*TABLE, "--coordinates", "all", "--ledger", str(ledger)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["table"]["rows"]] == ["x0", "x1", "x2"]
    assert doc["guarantee"] == {"epsilon": 2.0, "delta": 1e-6, "holds": True, "warning": None}
    assert "theta" not in json.dumps(doc["table"])  # neither the fit nor the unpublished vector
    store = SqliteStore(ledger)
    (people,) = store.parts_charged()
    entries = store.entries(people)
    assert len(entries) == 1 and (entries[0].epsilon, entries[0].delta) == (2.0, 1e-6)
    assert entries[0].details.coefficient == "x0,x1,x2" and entries[0].details.outcome == "released"
    assert json.loads(entries[0].details.document)["table"]["rows"] == doc["table"]["rows"]


@pytest.mark.parametrize("extra,needle", [
    (["--coordinate", "x0"], "not both"), (["--split", "1,1,1"], "--split"), (["--fallback"], "--fallback"),
    (["--accounting", "pld"], "--accounting"), (["--repeat", "3"], "--repeat"),
])
def test_single_release_options_are_refused_for_a_table(capsys, extra, needle):
    from core.cli import main

    assert main([*TABLE, "--coordinates", "x0,x1", *extra]) == 2
    assert needle in capsys.readouterr().err


def test_a_seeded_table_is_never_charged(tmp_path, capsys):
    from core.cli import main

    assert main([*TABLE, "--coordinates", "x1", "--seed", "3", "--ledger", str(tmp_path / "l.sqlite3")]) == 2
    assert "never charged" in capsys.readouterr().err


def test_the_planner_s_table_half_width_is_what_tables_get(logistic):
    """From assumptions only (the fit's eigenvalues as assumed ones), the plan's table half-width is within 2 % of
    the median of 100 released tables (their certificates' Laplace noise moves lambda_hat a little either way)."""
    from core.planner import Assumptions, plan

    f = logistic.fit
    a = Assumptions(n=f.n, d=f.d, lambda_min=f.lambda_min, lambda_max=f.lambda_max, epsilon=2.0, delta=1e-6,
                    loss="logistic", domain="ball")
    planned = plan(a, probability=False).table_half_width
    rng = np.random.default_rng(4)
    got = np.median([table.release_table(logistic, "x0", 2.0, 1e-6, rng).half_width for _ in range(100)])
    assert planned == pytest.approx(got, rel=0.02)
