"""The population interval off the logistic model: its coverage of theta_pop on two misspecified populations and on a
well-specified control, beside the same interval with the exact (non-private) model-based or sandwich variance.

    python benchmarks/population_misspecified.py [--N 2000000] [--n 20000 100000] [--epsilon 4 8] [--samples 2000]

Three finite populations of N rows share one design, x uniform on the cube [-1, 1]^3 (seeded), and differ in their
labels:

- misspecified: P(y = 1 | x) = Phi(7 x0 (1 - x0^2) + 0.5 (x1 - x2)), a probit of a cubic, not logistic-linear in x:
  the probability rises steeply near x0 = 0 and falls back towards 1/2 at the cube's faces, where the fitted
  logistic model is most confident and the rows weigh most;
- sine link: P(y = 1 | x) = 1 / (1 + exp(-(4 sin(3 x0) + 0.5 (x1 - x2)))), a logistic link of a sine, which turns back
  past x0 = +-pi/6;
- well-specified (the control): P(y = 1 | x) = 1 / (1 + exp(-x . theta*)), theta* the misspecified population's
  theta_pop, so both have about the same coefficient and the same model-based variance.

theta_pop is the logistic fit on all N rows (core.mechanisms.pipeline.prepare, the cube). On each population, exactly:
the model-based variance u^T H^-1 u and the sandwich u^T H^-1 Sigma H^-1 u (H the fit's Hessian at theta_pop, Sigma
the covariance of the per-row gradient over the N rows, u the target coordinate); their ratio is what the information
equality assumes to be 1.

Then `--samples` simple random samples of n rows (without replacement, as core.data.acs.sample_population draws),
each released once per eps by the publish default (core.mechanisms.pipeline.run_private, make_budget(eps, delta,
RELEASE_SPLIT), fallback on, level 0.95); the same samples serve every eps. Counted over the samples: how many offer a
population interval (`release.population`), how many of those cover u^T theta_pop (with a 95 % Clopper-Pearson
interval), and their median half-width. Two reference rows, NOT PRIVATE, on the same offered draws: the same interval
(the release's value, privacy sd, quantile and bias and slack terms) with its private sampling sd replaced by the
exact sqrt(u^T H^-1 u / n) of the population, or by the exact sandwich sqrt(u^T H^-1 Sigma H^-1 u / n); neither applies
a finite-population correction (the release does not). Seeds fix the populations, the samples and the noise, so a run
repeats. Prints Markdown (docs/experiments.md, "The population interval off the model").
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import expit
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.estimator.losses import get_loss  # noqa: E402
from core.mechanisms.curvature import bound_quantile  # noqa: E402
from core.mechanisms.pipeline import prepare, run_private  # noqa: E402
from core.methods.compare import rate  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget  # noqa: E402
from core.privacy.gaussian import normal_quantile  # noqa: E402

D = 3
KINDS = ("misspecified", "sine link", "well-specified")


def misspecified_probability(X: np.ndarray) -> np.ndarray:
    """P(y = 1 | x) of the misspecified population (module docstring)."""
    x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2]
    return norm.cdf(7.0 * x0 * (1.0 - x0 ** 2) + 0.5 * (x1 - x2))


def sine_probability(X: np.ndarray) -> np.ndarray:
    """P(y = 1 | x) of the sine-link population (module docstring)."""
    x0, x1, x2 = X[:, 0], X[:, 1], X[:, 2]
    return expit(4.0 * np.sin(3.0 * x0) + 0.5 * (x1 - x2))


def labels(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.uniform(size=p.shape[0]) < p, 1.0, -1.0)


@dataclass(frozen=True)
class Population:
    kind: str
    X: np.ndarray
    y: np.ndarray
    theta: np.ndarray  # theta_pop, the logistic fit on all rows
    model_var: float  # u^T H^-1 u
    sandwich_var: float  # u^T H^-1 Sigma H^-1 u

    @property
    def ratio(self) -> float:
        return self.sandwich_var / self.model_var


def exact_variances(X: np.ndarray, y: np.ndarray, theta: np.ndarray, hessian: np.ndarray,
                    j: int) -> tuple[float, float]:
    """u^T H^-1 u and u^T H^-1 Sigma H^-1 u at theta on these rows, u = e_j, Sigma the per-row gradient's covariance."""
    g = X * get_loss("logistic").d1(X @ theta, y)[:, None]
    sigma = np.cov(g, rowvar=False, bias=True)
    a = np.linalg.solve(hessian, np.eye(X.shape[1])[j])
    return float(a[j]), float(a @ sigma @ a)


def populations(N: int, j: int, seed: int) -> list[Population]:
    """The two populations of the module docstring, on one seeded design."""
    X = np.random.default_rng([seed, 0]).uniform(-1.0, 1.0, size=(N, D))
    out = []
    for kind in KINDS:
        if kind == "misspecified":
            y = labels(misspecified_probability(X), np.random.default_rng([seed, 1]))
        elif kind == "sine link":
            y = labels(sine_probability(X), np.random.default_rng([seed, 3]))
        else:
            y = labels(expit(X @ out[0].theta), np.random.default_rng([seed, 2]))
        fit = prepare(X, y, "logistic").fit
        if fit.status != "minimiser":
            raise RuntimeError(f"the {kind} population's fit: {fit.diagnosis}")
        out.append(Population(kind, X, y, fit.theta.copy(), *exact_variances(X, y, fit.theta, fit.hessian, j)))
    return out


def parts(release, level: float) -> tuple[float, float, float]:
    """(the privacy noise's half-width term, the sampling quantile, the terms kept whole) of the release's population
    interval, half = hypot(noise, q sampling_sd) + whole (core.mechanisms.inference): Algorithm 5's q privacy_sd and
    its slack, or the fallback's curvature interval's noise term and the rest of its half-width."""
    p = release.population
    if release.status == "released":
        q = normal_quantile(0.5 + level / 2.0)
        noise = q * p.privacy_sd
        return noise, q, (p.interval[1] - p.interval[0]) / 2.0 - q * math.hypot(p.privacy_sd, p.sampling_sd)
    ci = release.fallback_interval
    return ci.noise, bound_quantile(level), ci.half - ci.noise


@dataclass
class Cell:
    """One (population, n, eps): per offered draw, the value, the interval's half-width and its parts."""

    samples: int = 0
    branches: dict[str, int] = field(default_factory=lambda: {"released": 0, "fallback": 0, "bottom": 0})
    values: list[float] = field(default_factory=list)
    halves: list[float] = field(default_factory=list)
    privacy_sd: list[float] = field(default_factory=list)
    sampling_sd: list[float] = field(default_factory=list)
    extras: list[float] = field(default_factory=list)
    quantiles: list[float] = field(default_factory=list)
    noises: list[float] = field(default_factory=list)

    def add(self, release, level: float) -> None:
        self.samples += 1
        self.branches[release.status] += 1
        p = release.population
        if p is None:
            return
        lo, hi = p.interval
        noise, q, extra = parts(release, level)
        half = (hi - lo) / 2.0
        if abs(math.hypot(noise, q * p.sampling_sd) + extra - half) > 1e-9 * half:
            raise RuntimeError("the population interval's parts do not add up; the parts read here are not its own")
        self.values.append(release.value)
        self.halves.append(half)
        self.privacy_sd.append(p.privacy_sd)
        self.sampling_sd.append(p.sampling_sd)
        self.extras.append(extra)
        self.quantiles.append(q)
        self.noises.append(noise)

    def row(self, target: float, sampling_var_n: float | None = None) -> str:
        """Coverage and median half-width: the release's own, or with the sampling sd replaced (sampling_var_n =
        the exact variance times n, over n)."""
        if not self.values:
            return "0 | – | –"
        if sampling_var_n is None:
            halves = self.halves
        else:
            s = math.sqrt(sampling_var_n)
            terms = zip(self.quantiles, self.noises, self.extras, strict=True)
            halves = [math.hypot(w, q * s) + e for q, w, e in terms]
        covered = sum(abs(v - target) <= h for v, h in zip(self.values, halves, strict=True))
        r = rate(covered, len(halves))
        return (f"{len(halves)} | {covered}/{len(halves)} = {covered / len(halves):.1%} ({r.low:.3f}–{r.high:.3f}) | "
                f"{statistics.median(halves):.4f}")


def study(pop: Population, n: int, epsilons: list[float], samples: int, j: int, delta: float, level: float,
          seed: int) -> tuple[dict[float, Cell], list[float]]:
    """`samples` samples of n rows, each released once per eps; also theta_j(P_n) of every sample (not private)."""
    budgets = [make_budget(eps, delta, RELEASE_SPLIT) for eps in epsilons]
    cells = {eps: Cell() for eps in epsilons}
    fitted = []
    p_index, N = KINDS.index(pop.kind), pop.X.shape[0]
    for k in range(samples):
        idx = np.random.default_rng([seed, 10 + p_index, n, k]).choice(N, size=n, replace=False)
        problem = prepare(pop.X[idx], pop.y[idx], "logistic")
        fitted.append(float(problem.fit.theta[j]))
        for e, (eps, budget) in enumerate(zip(epsilons, budgets, strict=True)):
            rng = np.random.default_rng([seed, 20 + p_index, n, k, e])
            cells[eps].add(run_private(problem, j, budget, rng, level=level, fallback=True).release, level)
    return cells, fitted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, default=2_000_000, help="the populations' size")
    ap.add_argument("--n", type=int, nargs="+", default=[20_000, 100_000], help="the samples' sizes")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[4.0, 8.0])
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--samples", type=int, default=2000, help="samples per (population, n)")
    ap.add_argument("--coordinate", type=int, default=0)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=20261127)
    a = ap.parse_args(argv)
    j, start = a.coordinate, time.perf_counter()
    pops = populations(a.N, j, a.seed)
    print(f"N = {a.N:,} rows, d = {D}, x uniform on the cube [-1, 1]^{D}; target coordinate x{j}; "
          f"(eps, delta) = ({', '.join(f'{e:g}' for e in a.epsilon)}, {a.delta:g}), split {RELEASE_SPLIT}, fallback "
          f"on, level {a.level:g}; {a.samples} samples per n, without replacement\n")
    print("| population | θ_pop | uᵀH⁻¹u | uᵀH⁻¹ΣH⁻¹u | ratio |")
    print("|---|---|---|---|---|")
    for p in pops:
        print(f"| {p.kind} | ({', '.join(f'{t:.4f}' for t in p.theta)}) | {p.model_var:.2f} | {p.sandwich_var:.2f} | "
              f"{p.ratio:.3f} |")
    rows, checks, spread = [], [], []
    for p in pops:
        target = float(p.theta[j])
        for n in a.n:
            cells, fitted = study(p, n, a.epsilon, a.samples, j, a.delta, a.level, a.seed)
            checks.append(f"| {p.kind} | {n:,} | {statistics.stdev(fitted):.4f} | {math.sqrt(p.model_var / n):.4f} | "
                          f"{math.sqrt(p.sandwich_var / n):.4f} | "
                          f"{math.sqrt((1 - n / a.N) * p.sandwich_var / n):.4f} |")
            for eps, c in cells.items():
                if c.values:
                    spread.append(f"| {p.kind} | {n:,} | {eps:g} | {np.std(np.array(c.values) - target):.4f} | "
                                  f"{statistics.median(map(math.hypot, c.privacy_sd, c.sampling_sd)):.4f} | "
                                  f"{statistics.median(c.privacy_sd):.4f} |")
                b = c.branches
                slack = (statistics.median(s * s * n / p.model_var for s in c.sampling_sd) if c.sampling_sd
                         else float("nan"))
                head = f"| {p.kind} | {n:,} | {eps:g} | {b['released']} / {b['fallback']} / {b['bottom']}"
                rows.append(f"{head} | population interval (private; bound/exact model variance {slack:.2f}) | "
                            f"{c.row(target)} |")
                rows.append(f"{head} | exact model-based uᵀH⁻¹u/n, NOT PRIVATE | {c.row(target, p.model_var / n)} |")
                rows.append(f"{head} | exact sandwich uᵀH⁻¹ΣH⁻¹u/n, NOT PRIVATE | "
                            f"{c.row(target, p.sandwich_var / n)} |")
            print(f"... {p.kind}, n = {n:,}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    print("\nThe spread of θ(Pₙ) over the samples (not private) against the two variances' predictions:\n")
    print("| population | n | sd of θ(Pₙ) over the samples | model-based √(uᵀH⁻¹u/n) | sandwich √(uᵀH⁻¹ΣH⁻¹u/n) "
          "| sandwich × √(1 − n/N) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(checks))
    print("\nThe released value's spread around θ_pop over the offered draws, against the sd the population interval "
          "assumes (its two private sds in quadrature; median):\n")
    print("| population | n | ε | sd of T − θ_pop | assumed √(privacy sd² + sampling sd²) | of which privacy sd |")
    print("|---|---|---|---|---|---|")
    print("\n".join(spread))
    print(f"\n{a.samples} samples per row; branch: Algorithm 5 / fallback / ⊥ over the samples; offered: population "
          f"interval given; covers θ_pop (95 % Clopper–Pearson); reference rows on the same offered draws\n")
    print("| population | n | ε | branch | interval | offered | covers θ_pop (95 % CP) | median half-width |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\n{time.perf_counter() - start:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
