"""The attacker's view (core.teaching.attack): its exact laws against the real pipeline's draws, its privacy loss
against closed forms and the claim, and the membership game against the privacy audit's numbers.

Statistical tests state their error rate: each fails with probability at most 1e-3 on correct code."""

from __future__ import annotations

import math

import numpy as np
import pytest
from audit import count_changing_pair, prepare_sample
from scipy import stats

from core.data import synthetic
from core.mechanisms.certificates import lambda_min_certificate
from core.mechanisms.pipeline import prepare, run_private
from core.privacy.accounting import split_budget
from core.teaching import attack

ERROR = 1e-3


@pytest.fixture(scope="module")
def default_pair():
    ds = synthetic(20_000, 3, "robust", seed=7)
    return attack.neighbours(prepare(ds.X, ds.y, "robust", "cube"), 0)


@pytest.fixture(scope="module")
def counting_pair():
    """P, P' whose stage-1 counts differ (tests/audit.py's builder), as the attacker's view holds them."""
    p, q = count_changing_pair(5_000, 2, 20250303)
    P, Q = prepare_sample(p), prepare_sample(q)
    u = np.array([1.0, 0.0])
    shift = sum(Q.fit.along(u)) - sum(P.fit.along(u))
    return attack.Neighbours(P, Q, u, 0, 0, shift, shift)


def test_the_row_found_moves_the_coefficient_most_and_the_estimate_is_first_order(default_pair):
    pair = default_pair
    s = attack.influences(pair.P, pair.u)
    assert pair.row == int(np.argmax(np.abs(s)))
    assert pair.partner in (int(np.argmin(s)), int(np.argmax(s))) and pair.partner != pair.row
    assert np.array_equal(pair.P_prime.X[pair.row], pair.P.X[pair.partner])
    assert np.array_equal(np.delete(pair.P_prime.X, pair.row, 0), np.delete(pair.P.X, pair.row, 0))
    # One Newton step from theta(P): exact to second order in a move of about 1/n.
    assert pair.shift == pytest.approx(pair.influence, rel=1e-3)
    other = attack.neighbours(pair.P, 0, row=5)
    assert other.row == 5 and abs(other.shift) < abs(pair.shift)


def test_a_count_law_is_the_real_stage_one(counting_pair):
    """m of Algorithm 2, drawn 20,000 times by core.mechanisms.certificates on each data set, against the exact law
    (chi-square on the likeliest cells, the rest pooled)."""
    b = split_budget(2.0, 1e-5, (1.0, 1.0, 1.0))
    laws = attack.laws(counting_pair, b)
    law = laws.stage1
    assert law.N != law.N_prime and abs(law.N - law.N_prime) == 1
    assert np.exp(law.log_p).sum() == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(11)
    for problem, log_pmf in ((counting_pair.P, law.log_p), (counting_pair.P_prime, law.log_q)):
        f, g = problem.fit, problem.geometry
        m = np.array([lambda_min_certificate(f, g, law.epsilon, law.delta, rng).m for _ in range(20_000)])
        p = np.exp(log_pmf)
        big = p * m.size >= 20
        observed = np.array([np.sum(m == v) for v in law.m[big]] + [np.sum(~np.isin(m, law.m[big]))])
        expected = np.append(p[big], 1.0 - p[big].sum()) * m.size
        assert stats.chisquare(observed, expected).pvalue > ERROR


def test_a_count_stage_never_shows_a_ratio_above_its_epsilon(counting_pair):
    b = split_budget(2.0, 1e-5, (1.0, 1.0, 1.0))
    law = attack.laws(counting_pair, b).stage1
    # m is floor(N_hat - k): post-processing of a Laplace count of sensitivity 1, so every ratio is at most e^eps;
    # one count apart, the m's between the two centres reach it.
    assert law.ratio <= law.epsilon * (1 + 1e-12)
    assert law.ratio == pytest.approx(law.epsilon, rel=1e-6)


def test_the_release_law_is_the_real_release_on_its_branch(default_pair):
    """With certificates at eps 30 each, every draw takes the likeliest branch; T then is N(mean, sd) exactly
    (Kolmogorov-Smirnov on 2,000 draws from run_private on each data set)."""
    b = split_budget(90.0, 1e-5, (1.0, 1.0, 1.0))
    laws = attack.laws(default_pair, b)
    assert laws.test.passed
    r = laws.release
    rng = np.random.default_rng(5)
    for problem, mean, sd in ((default_pair.P, r.mean, r.sd), (default_pair.P_prime, r.mean_prime, r.sd_prime)):
        runs = [run_private(problem, default_pair.u, b, rng) for _ in range(2_000)]
        assert all(x.lambda_min.m == laws.stage1.mode and x.lambda_max.m == laws.stage2.mode for x in runs)
        assert stats.kstest([x.release.value for x in runs], "norm", args=(mean, sd)).pvalue > ERROR


def test_the_binned_release_loss_is_the_gaussian_mechanism_s(default_pair):
    """Equal deviations: the pair's delta(eps) must be the Gaussian mechanism's closed form (Balle & Wang 2018),
    Phi(-eps s/D + D/(2 s)) - e^eps Phi(-eps s/D - D/(2 s)), to the binning and dp_accounting's rounding."""
    law = attack.GaussianLaw(0.0, 0.3, 1.0, 1.0)
    loss = attack.privacy_loss([law.log_bins()], 1.0, 1e-5)
    d, s = 0.3, 1.0
    exact = stats.norm.cdf(-loss.epsilons * s / d + d / (2 * s)) - np.exp(loss.epsilons) * stats.norm.cdf(
        -loss.epsilons * s / d - d / (2 * s))
    # Binning (bins of 0.006 sd) can only lower it; the loss's pessimistic rounding (1e-3) raises it.
    assert np.all(np.abs(loss.deltas - exact) <= 0.02 * exact + 3e-4)
    assert loss.tv == pytest.approx(2 * stats.norm.cdf(d / 2) - 1, abs=3e-4)


@pytest.mark.parametrize("epsilon", [1.0, 4.0])
def test_every_pair_meets_the_claim(default_pair, counting_pair, epsilon):
    for pair in (default_pair, counting_pair):
        b = split_budget(epsilon, 1e-5, (1.0, 1.0, 18.0))
        loss = attack.laws(pair, b).loss
        assert loss.delta_at_epsilon <= b.delta_total
        assert loss.epsilon_at_delta <= b.epsilon_total
        assert np.all(np.diff(loss.deltas) <= 1e-12)  # delta(eps) falls


def test_the_guarantee_s_region_and_best_guess():
    eps, delta = 1.0, 0.01
    fpr = np.linspace(0, 1, 101)
    top = attack.max_tpr(fpr, eps, delta)
    assert top[0] == pytest.approx(delta) and top[-1] == 1.0
    assert np.all(top <= math.e * fpr + delta + 1e-15) and np.all(1 - fpr <= math.e * (1 - top) + delta + 1e-12)
    # The best balanced accuracy is where the two bounds cross.
    acc = np.max((top + 1 - fpr) / 2)
    assert acc == pytest.approx(attack.best_accuracy(eps, delta), abs=1e-2)
    assert attack.best_accuracy(eps, 0.0) == pytest.approx(math.e / (1 + math.e))
    assert attack.best_accuracy(800.0, 0.0) == 1.0


def test_the_game_agrees_with_the_exact_laws_and_the_audit(counting_pair):
    """The computer's likelihood-ratio guesses over 4,000 rounds of the real pipeline: its share right is the exact
    (1 + TV)/2 of the release's two laws (binomial test), and the epsilon its guesses prove by the audit's bound is
    at most the pair's exact epsilon at the claimed delta (so at most the claim)."""
    b = split_budget(90.0, 1e-5, (1.0, 1.0, 1.0))  # certain certificates: one branch, as the laws assume
    laws = attack.laws(counting_pair, b)
    r = laws.release
    assert r is not None
    rng = np.random.default_rng(3)
    rounds = []
    for _ in range(4_000):
        drawn = attack.draw_round(counting_pair, b, rng)
        rounds.append(attack.Round(drawn.with_row, drawn.value, attack.likelihood_guess(r, drawn.value)))
    s = attack.score(rounds, b.epsilon_total, b.delta_total)
    alone = attack.privacy_loss([r.log_bins()], b.epsilon_total, b.delta_total)  # the guesser reads T only
    assert 0.2 < alone.tv < 0.6  # a game worth playing: neither a coin nor a certainty
    assert stats.binomtest(s.tp + s.tn, s.rounds, (1 + alone.tv) / 2).pvalue > ERROR
    assert 0 < s.epsilon_lb <= alone.epsilon_at_delta <= laws.loss.epsilon_at_delta <= b.epsilon_total
    # The same counts through the audit's bound, order by order.
    assert s.epsilon_lb == max(attack.epsilon_bound(s.tp, s.tp + s.fn, s.fp, s.fp + s.tn, s.delta, attack.ALPHA / 2),
                               attack.epsilon_bound(s.tn, s.fp + s.tn, s.fn, s.tp + s.fn, s.delta, attack.ALPHA / 2))


def test_a_game_of_coin_flips_proves_nothing():
    rng = np.random.default_rng(1)
    rounds = [attack.Round(bool(rng.integers(2)), 0.0, bool(rng.integers(2))) for _ in range(400)]
    s = attack.score(rounds, 1.0, 1e-5)
    assert s.rounds == 400 and s.epsilon_lb < 0.5
    assert attack.score([], 1.0, 1e-5).epsilon_lb == -math.inf


def test_the_baselines_are_paired_draws_of_the_compare_methods(default_pair):
    b = split_budget(4.0, 1e-5, (1.0, 1.0, 18.0))
    pairs = attack.baseline_pairs(default_pair, b, ("output_perturbation", "local"), 6, seed=3)
    p, q = pairs["output_perturbation"]
    assert p.shape == q.shape == (6,)
    # Output perturbation adds the same noise to u^T theta_lam of each: paired differences are one constant.
    assert np.ptp(p - q) < 1e-9 * max(1.0, np.abs(p).max())
    again = attack.baseline_pairs(default_pair, b, ("output_perturbation", "local"), 6, seed=3)
    assert all(np.array_equal(a, c, equal_nan=True) for k in pairs for a, c in zip(pairs[k], again[k], strict=True))
