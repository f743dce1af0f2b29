"""The private regression table (core.mechanisms.table): one release's certificates and test, then the Gaussian step or
the fallback on the whole vector, its simultaneous intervals, the budget k separate releases would each get
(core.privacy.accounting.separate_budget), its privacy audit on a pair one row apart, and its one charge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from audit import audit, count_changing_pair, prepare_sample

from core.data import synthetic
from core.errors import BudgetError, DataError, InputError
from core.estimator.rounding import UNIT
from core.mechanisms import table
from core.mechanisms.curvature import log_error, point_error
from core.mechanisms.full_vector import algorithm3_scale, gaussian_step
from core.mechanisms.pipeline import certificates, prepare, run_private
from core.mechanisms.split import choose_shares, release_event_budget, stand_in
from core.mechanisms.stability import solver_slack
from core.mechanisms.table import row_level
from core.privacy.accounting import RELEASE_SPLIT, make_budget, pld_epsilon, separate_budget, split_budget_pld
from core.privacy.gaussian import DEFAULT_CALIBRATION, normal_quantile, sigma
from core.privacy.ledger import stage_costs


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


B4 = make_budget(4.0, 1e-6, RELEASE_SPLIT)


def test_a_passed_table_is_the_gaussian_step_published_in_part(logistic):
    """Same generator state: the certificates and the test of one release, then Algorithm 3's Gaussian step at the
    release event's budget; each row's half-width z_{1-a/(2k)} s t' + l(lambda_0), alike for every row."""
    t = table.release_table(logistic, "x3,x1", B4, np.random.default_rng(8), level=0.9)
    rng = np.random.default_rng(8)
    lmin, _, test = certificates(logistic, B4, rng)
    eps, dlt = release_event_budget(B4)
    f, g = logistic.fit, logistic.geometry
    vec = gaussian_step("algorithm3", f, lmin, sigma(eps, dlt), algorithm3_scale(lmin.lambda_hat, g, f.n, f.lam_reg),
                        "", eps, dlt, rng)
    assert test.passed and t.status == "released" and t.names == ("x3", "x1") and t.k == 2
    assert t.values == (vec.value[3], vec.value[1]) and t.fallback is None
    half = normal_quantile(1 - 0.1 / 4) * vec.noise_scale + solver_slack(lmin.lambda_hat + f.lam_reg, g)
    assert t.half_widths == (half, half) and t.row_level == pytest.approx(0.95)
    assert all(hi - lo == pytest.approx(2 * half) for lo, hi in t.intervals)


def test_the_intervals_cover_all_at_once(logistic):
    """500 tables of all four coefficients at eps = 1, level 0.9: all four cover theta(P_n) at once in at least 425
    (binomial lower tail below 1e-3 at 0.9), and each row (level 0.975) in at least 465 (below 1e-6)."""
    rng = np.random.default_rng(21)
    b = make_budget(1.0, 1e-6, RELEASE_SPLIT)
    hits, together = np.zeros(4, dtype=int), 0
    for _ in range(500):
        t = table.release_table(logistic, "all", b, rng, level=0.9)
        covers = [lo <= th <= hi for (lo, hi), th in zip(t.intervals, logistic.fit.theta, strict=True)]
        hits += covers
        together += all(covers)
    assert together >= 425 and np.all(hits >= 465), (together, hits)


@pytest.fixture(scope="module")
def failing():
    """Logistic data on which the test (14) fails at eps = 2, as on census data."""
    ds = synthetic(4_000, 3, "logistic", seed=5)
    return prepare(ds.X, ds.y, "logistic", "ball")


def test_a_table_of_one_is_the_single_release_with_fallback(failing):
    """Where the test fails, a one-row table with the fallback is the single release with the fallback, draw for
    draw: the same value and interval from the same generator."""
    b = make_budget(2.0, 1e-6, RELEASE_SPLIT)
    t = table.release_table(failing, "x1", b, np.random.default_rng(3), fallback=True)
    r = run_private(failing, 1, b, np.random.default_rng(3), fallback=True).release
    assert t.status == r.status == "fallback"
    assert t.values == (r.value,) and t.intervals == (r.interval,)


def test_a_failed_table_falls_back_with_one_curvature_bound_per_row(failing):
    """k rows: objective perturbation's coordinates, one step 1 shared by k bounds whose step 2 each has k times one
    bound's Laplace scale at the table's shares; without the fallback, bottom for the test's reason."""
    b = make_budget(2.0, 1e-6, RELEASE_SPLIT)
    t = table.release_table(failing, "x2,x0", b, np.random.default_rng(4), fallback=True)
    fb = t.fallback
    assert t.status == "fallback" and t.values == (fb.point[2], fb.point[0]) and t.vector is None
    c2, c0 = fb.curvatures
    assert c2.lambda_hat == c0.lambda_hat and c2.scale_2 == c0.scale_2 and c2.norm != c0.norm
    share, delta_share, log_share = fb.split.shares  # the split rule's, for k = 2 at the certificates' stand-in
    assert fb.split.shares == choose_shares(failing.geometry, failing.n, 2, fb.split.epsilon, fb.split.delta,
                                            row_level(0.95, 2), failing.fit.lam_reg, "paper",
                                            stand_in(t.lambda_min.lambda_hat, t.probe))
    assert c2.epsilon == pytest.approx(share * fb.split.epsilon)
    assert c2.delta == pytest.approx(delta_share * fb.split.delta)
    g = failing.geometry
    step, m = g.G1 / failing.n, c2.lambda_hat - g.G1 / failing.n
    ridge = failing.fit.lam_reg  # the curvature steps read the problem's own matrix, H(theta_hat) + lam_reg I
    eta = point_error(failing, fb.point, ridge) + 10 * 9 * UNIT * (g.G1 + ridge)
    one_bound = (-math.log1p(-step / c2.lambda_hat) + 2 * log_error(eta, m)) / (log_share * c2.epsilon)
    assert c2.scale_2 == pytest.approx(2 * one_bound, rel=1e-12)
    # capped at 1/lambda_hat, taken as exp(-ln lambda_hat) (within exp's and log's rounding of it)
    assert all(b_ <= math.exp(-math.log(c2.lambda_hat)) for b_ in (c2.bound, c0.bound))
    bottom = table.release_table(failing, "all", b, np.random.default_rng(4))
    assert bottom.status == "bottom" and bottom.values is None and bottom.reason == bottom.test.reason


def test_each_row_on_its_own_moves_only_the_gaussian_step_s_quantile(logistic):
    """coverage "each" where the test passes: the same release from the same generator, each row's half-width at the
    table's level itself (z_{1-a/2} s t' + l(lambda_0)), and its words say so (a table of one row in words of one);
    an unknown coverage is refused before any noise is drawn."""
    together = table.release_table(logistic, "x3,x1", B4, np.random.default_rng(8), level=0.9)
    each = table.release_table(logistic, "x3,x1", B4, np.random.default_rng(8), level=0.9, coverage="each")
    assert each.values == together.values and each.coverage == "each" and each.row_level == 0.9
    f, g = logistic.fit, logistic.geometry
    half = normal_quantile(0.95) * each.vector.noise_scale + solver_slack(each.lambda_min.lambda_hat + f.lam_reg, g)
    assert each.half_widths == (half, half) and half < together.half_widths[0]
    from core.report import table_note

    assert table_note(each).startswith("Each of the 2 intervals covers its coefficient") and "0.8 only" in \
        table_note(each)
    for coverage in table.COVERAGES:  # one row: the two coverages are one
        one = table.release_table(logistic, "x3", B4, np.random.default_rng(8), level=0.9, coverage=coverage)
        assert one.row_level == 0.9
        assert table_note(one).startswith("The interval covers its coefficient of the fit on these rows with "
                                          "probability ≥ 0.9 when")
    rng = np.random.default_rng(8)
    with pytest.raises(InputError, match="together, each"):
        table.release_table(logistic, "x3", B4, rng, coverage="both")
    assert rng.random() == np.random.default_rng(8).random()  # nothing drawn


def test_each_row_s_fallback_is_chosen_and_certified_at_the_level_itself(failing):
    """Where the test fails, coverage "each" gives the fallback's split rule and every curvature interval the table's
    level itself, not 1 - a/k."""
    b = make_budget(2.0, 1e-6, RELEASE_SPLIT)
    t = table.release_table(failing, "x2,x0", b, np.random.default_rng(4), fallback=True, coverage="each")
    fb = t.fallback
    assert t.status == "fallback" and t.row_level == 0.95
    assert fb.split.shares == choose_shares(failing.geometry, failing.n, 2, fb.split.epsilon, fb.split.delta, 0.95,
                                            failing.fit.lam_reg, "paper", stand_in(t.lambda_min.lambda_hat, t.probe))
    assert all(ci is None or ci.level == 0.95 for ci in fb.intervals)


def test_a_budget_solved_by_pld_refuses_the_fallback(failing):
    with pytest.raises(BudgetError, match="basic composition"):
        table.release_table(failing, "all", make_budget(2.0, 1e-6, RELEASE_SPLIT, "pld"), np.random.default_rng(0),
                            fallback=True)


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


@pytest.mark.slow
@pytest.mark.parametrize("eps,draws,branch", [(8.0, 6_000, "released"), (2.0, 2_000, "fallback")])
def test_the_table_audit_stays_under_its_claim(eps, draws, branch):
    """The privacy audit (tests/audit.py) of a two-coefficient table with the fallback on a pair whose stage-1
    counts differ: at eps = 8 the test passes (the Gaussian step), at eps = 2 it fails (objective perturbation and
    two curvature bounds). eps_lb <= the claimed eps (family-wise error 1e-3)."""
    p, q = count_changing_pair(5_000, 2, 20250303)
    b = make_budget(eps, 1e-5, RELEASE_SPLIT)
    samples = []
    for problem, seed in ((prepare_sample(p), 1), (prepare_sample(q), 2)):
        rng = np.random.default_rng(seed)
        draws_ = [table.release_table(problem, "all", b, rng, DEFAULT_CALIBRATION, fallback=True) for _ in range(draws)]
        assert sum(d.status == branch for d in draws_) > 0.9 * draws
        samples.append({
            "lambda_hat": np.array([d.lambda_min.lambda_hat for d in draws_]),
            **{f"v{j}": np.array([math.nan if d.values is None else d.values[j] for d in draws_]) for j in (0, 1)},
            **{f"h{j}": np.array([math.nan if d.values is None else d.half_widths[j] for d in draws_]) for j in (0, 1)},
        })
    result = audit(samples[0], samples[1], ("lambda_hat", "v0", "v1", "h0", "h1"), eps, b.delta_total)
    assert result.eps_lb <= eps, result


# ---------------------------------------------------------------- one plan, one charge, on every surface

TABLE = ["release", "--synthetic", "--n", "50000", "--d", "3", "--loss", "logistic", "--domain", "ball",
         "--epsilon", "2", "--delta", "1e-6"]


def test_the_command_line_releases_a_table_with_one_charge(tmp_path, capsys):
    import json

    from core.cli import main
    from core.privacy.ledger_store import SqliteStore

    ledger = tmp_path / "l.sqlite3"
    assert main([*TABLE, "--coordinates", "all", "--ledger", str(ledger)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["table"]["rows"]] == ["x0", "x1", "x2"]
    assert doc["guarantee"]["epsilon"] == 2.0 and doc["guarantee"]["delta"] == pytest.approx(1e-6, rel=1e-12)
    assert "theta" not in json.dumps(doc["table"])  # neither the fit nor the unpublished vector
    store = SqliteStore(ledger)
    (people,) = store.parts_charged()
    entries = store.entries(people)
    b = make_budget(2.0, 1e-6, RELEASE_SPLIT)
    assert len(entries) == 1 and (entries[0].epsilon, entries[0].delta) == (b.epsilon_total, b.delta_total)
    assert entries[0].details.stages == stage_costs(b)
    assert entries[0].details.coefficient == "x0,x1,x2" and entries[0].details.outcome == "released"
    assert json.loads(entries[0].details.document)["table"]["rows"] == doc["table"]["rows"]


@pytest.mark.parametrize("extra,needle", [
    (["--coordinate", "x0"], "not both"), (["--repeat", "3"], "--repeat"),
    (["--accounting", "pld", "--fallback"], "basic composition"),
])
def test_single_release_options_that_do_not_apply_are_refused_for_a_table(capsys, extra, needle):
    from core.cli import main

    assert main([*TABLE, "--coordinates", "x0,x1", *extra]) == 2
    assert needle in capsys.readouterr().err


def test_the_command_line_prints_a_table_each_row_on_its_own(capsys):
    import json

    from core.cli import main

    assert main([*TABLE, "--coordinates", "x0,x2", "--coverage", "each", "--seed", "5"]) == 0
    whole = json.loads(capsys.readouterr().out)
    doc = whole["table"]
    assert doc["coverage"] == "each" and doc["row_level"] == doc["level"] == 0.95
    assert doc["interval_note"].startswith("Each of the 2 intervals")
    from core.report import plain_table_summary

    assert plain_table_summary(whole, 2.0, 1e-6)[0].endswith("each range holds with probability 95% on its own (not "
                                                             "all 2 together).")
    assert main([*TABLE, "--coordinate", "x0", "--coverage", "each"]) == 2
    assert "--coverage applies to a table: add --coordinates" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:  # argparse's own refusal of a value outside its choices
        main([*TABLE, "--coordinates", "x0,x2", "--coverage", "both"])
    assert exit_.value.code == 2 and "--coverage: invalid choice: 'both'" in capsys.readouterr().err


def test_a_seeded_table_is_never_charged(tmp_path, capsys):
    from core.cli import main

    assert main([*TABLE, "--coordinates", "x1", "--seed", "3", "--ledger", str(tmp_path / "l.sqlite3")]) == 2
    assert "never charged" in capsys.readouterr().err


def test_the_planner_s_table_half_width_is_what_tables_get(logistic):
    """From assumptions only (the fit's eigenvalues as assumed ones), the plan's half-width for a table of all d
    rows is within 2 % of the median of 100 released tables (the certificates' Laplace noise moves lambda_hat a
    little either way)."""
    from core.teaching.planner import Assumptions, plan

    f = logistic.fit
    a = Assumptions(n=f.n, d=f.d, lambda_min=f.lambda_min, lambda_max=f.lambda_max, epsilon=2.0, delta=1e-6,
                    loss="logistic", domain="ball")
    planned = plan(a, probability=False).table_half_width
    rng = np.random.default_rng(4)
    got = np.median([table.release_table(logistic, "all", a.budget(), rng, a.calibration).half_widths[0]
                     for _ in range(100)])
    assert planned == pytest.approx(got, rel=0.02)
