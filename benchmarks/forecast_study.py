"""The preview's forecast against the interval actually released, on SYNTHETIC census files.

After the certificates (stages 1-3) and before the release event, core.mechanisms.forecast.from_certificates states the
half-width the release will likely have as a range [low, high], and warns (`uninformative`) when the interval may be
wider than the coefficient's plausible half-range (ln 100 for the logistic loss). Here each release is drawn as the
preview and the Release button draw it (core.plan.preview, core.mechanisms.pipeline.finish):

    c = certify(problem, j, budget, make_rng(None), True)
    f = from_certificates(problem, c, DEFAULT_CALIBRATION, 0.95, True)  # the preview's rule
    run = finish(problem, c, make_rng(None), DEFAULT_CALIBRATION, 0.95, True)

with budget = make_budget(eps, 1e-6, RELEASE_SPLIT) (split (1, 1, 18), basic composition, the fallback on), and the
released half-width h = (hi - lo)/2 (a bottom is counted and skipped). Data through the project's loader,
core.data.spec.AcsSpec, and model as the app builds it (ui.loaded: ModelSpec("logistic", spec.default_domain, None,
0, None).resolve(d, spec.public_radius), the ball of the default census encoding, ||x||_2 <= 2.3503):

- the whole filtered file: one problem, `--draws` independent releases per (eps, coefficient);
- a sample of `--n` rows drawn without replacement: a fresh sample per draw (sample_seed = --seed + draw index), the
  same sample serving every (eps, coefficient) of that draw index, one release each;
- `--large N ...`: one sample of N rows drawn with replacement from the first state's file (sample_seed = --seed),
  `--large-draws` releases per (`--large-epsilon`, coefficient): sizes where stage 1 certifies lambda_hat_min > 0 and
  the forecast's other branches run.

Counted per cell: releases; the branch; the share with f.low <= h <= f.high (relative tolerance 1e-9) with its 95 %
Clopper-Pearson interval; how many releases had h >= the plausible half-range and how many of those were warned (the
promise: all); the share warned; the median h and the median forecast low and high; how often the curvature was
certified at the released point (release.fallback_curvature.bound is not None). A second table says where h fell
against the range: misses below and above, the smallest h / low and largest h / high, the certification chance the
forecast stated, and the share of h that is the curvature interval's ridge bias (which the forecast leaves out).
The privacy noise comes from the operating system (make_rng(None), as a publish-mode release), so a run does not
replay draw for draw; the samples are seeded. Prints Markdown (docs/experiments.md, "The preview's forecast,
measured").

    python benchmarks/forecast_study.py --root TX=/tmp/tx --root MI=/tmp/mi [--n 20000] [--epsilon 1 4]
        [--coefficients female schooling] [--draws 1000] [--large 600000 1000000 --large-draws 500] [--workers 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from certify_measure import problem_of  # noqa: E402
from parallel import map_jobs  # noqa: E402

from core.data.encoding import DEFAULT_ENCODING  # noqa: E402
from core.mechanisms.forecast import LOGISTIC_PLAUSIBLE, from_certificates  # noqa: E402
from core.mechanisms.pipeline import certify, finish, make_rng  # noqa: E402
from core.methods.compare import rate  # noqa: E402
from core.privacy.accounting import RELEASE_SPLIT, make_budget  # noqa: E402
from core.privacy.gaussian import DEFAULT_CALIBRATION  # noqa: E402

DELTA, LEVEL, CALIBRATION, TOL = 1e-6, 0.95, DEFAULT_CALIBRATION, 1e-9

_PROBLEMS: dict = {}  # a worker's prepared problems that serve many draws (whole files, fixed samples)


def census_problem(state: str, root: str, n: int | None, sample_seed: int | None, with_replacement: bool):
    """The problem as the app prepares it (certify_measure.problem_of, the app's encoding), without its SEs."""
    return problem_of(root, state, n, sample_seed, DEFAULT_ENCODING, with_replacement)[0]


def one_release(problem, coefficient: str, epsilon: float) -> dict:
    """Certificates, the forecast from them, and the release from the same certificates (module docstring)."""
    j = problem.coordinate(coefficient)
    c = certify(problem, j, make_budget(epsilon, DELTA, RELEASE_SPLIT), make_rng(None), True)
    lmax = None if c.lambda_max is None else c.lambda_max.lambda_hat
    f = from_certificates(problem, c, CALIBRATION, LEVEL, True)
    r = finish(problem, c, make_rng(None), CALIBRATION, LEVEL, True).release
    cv = r.fallback_curvature
    out = dict(n=problem.n, status=r.status, forecast_branch=f.branch, low=f.low, high=f.high, wide=f.wide,
               chance=f.certified, warned=f.uninformative, lambda_min=c.lambda_min.lambda_hat, lambda_max=lmax,
               half=None, certified=cv is not None and cv.bound is not None, bias=None, mu=None, step1=None,
               lam=r.fallback_lambda_reg)
    if r.interval is not None:
        out["half"] = (r.interval[1] - r.interval[0]) / 2.0
    if cv is not None:
        out["mu"], out["step1"] = cv.mu, cv.lambda_hat  # mu is NOT private: for the diagnosis only
    if r.fallback_interval is not None:  # the curvature interval was used: what its ridge bias adds
        out["bias"] = r.fallback_interval.bias
    return out


def task(job: tuple) -> list[dict]:
    """One job: (state, root, n or None, with_replacement, fresh, draw indices, sample seed, epsilons, coefficients).
    fresh: a new sample per draw (sample_seed = seed + draw index); else one problem (the whole file, or the sample of
    sample_seed = seed), prepared once per worker."""
    state, root, n, with_replacement, fresh, draws, seed, epsilons, coefficients = job
    out = []
    for i in draws:
        if fresh:
            problem = census_problem(state, root, n, seed + i, with_replacement)
        else:
            key = (state, root, n, with_replacement, seed)
            if key not in _PROBLEMS:
                _PROBLEMS[key] = census_problem(state, root, n, None if n is None else seed, with_replacement)
            problem = _PROBLEMS[key]
        size = ("all" if n is None else f"{n:,} ({'with' if with_replacement else 'without'} replacement; "
                f"{'a fresh sample per draw' if fresh else f'one sample, seed {seed}'})")
        for eps in epsilons:
            for coef in coefficients:
                rec = one_release(problem, coef, eps)
                rec.update(state=state, size=size, epsilon=eps, coefficient=coef, draw=i)
                out.append(rec)
    return out


def inside(h: float, low: float | None, high: float | None) -> bool:
    return low is not None and high is not None and low * (1.0 - TOL) <= h <= high * (1.0 + TOL)


def cp(k: int, m: int) -> str:
    r = rate(k, m)
    return "–" if r is None else f"{k}/{m} = **{k / m:.1%}** ({r.low:.1%}–{r.high:.1%})"


def med(xs: list[float]) -> str:
    return "–" if not xs else f"{statistics.median(xs):.3g}"


def tables(records: list[dict]) -> list[str]:
    cells = defaultdict(list)
    for rec in records:
        cells[(rec["state"], rec["size"], rec["epsilon"], rec["coefficient"])].append(rec)
    lines = ["| state | rows | ε | coefficient | releases (⊥) | branch: Alg. 5 / fallback | λ̂min > 0 | curvature "
             "certified | f.low ≤ h ≤ f.high (95 % CP) | h ≥ ln 100: warned / all | warned, h < ln 100 | median h | "
             "median f.low / f.high |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    parts = ["| state | rows | ε | coefficient | below f.low | above f.high | smallest h / f.low | largest h / f.high "
             "| chance stated (median; releases) | median ridge bias / h (certified) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for key in cells:  # in the order drawn
        rs = cells[key]
        got = [r for r in rs if r["half"] is not None]
        rows = f"{rs[0]['n']:,} (all)" if key[1] == "all" else key[1]
        head = f"| {key[0]} | {rows} | {key[2]:g} | {key[3]} |"
        ok = [r for r in got if inside(r["half"], r["low"], r["high"])]
        wide = [r for r in got if r["half"] >= LOGISTIC_PLAUSIBLE]
        narrow_warned = sum(r["warned"] for r in got if r["half"] < LOGISTIC_PLAUSIBLE)
        branch = f"{sum(r['status'] == 'released' for r in rs)} / {sum(r['status'] == 'fallback' for r in rs)}"
        lines.append(
            f"{head} {len(got)} ({len(rs) - len(got)}) | {branch} | {sum(r['lambda_min'] > 0 for r in rs)} | "
            f"{sum(r['certified'] for r in got)}/{len(got)} | {cp(len(ok), len(got))} | "
            f"{sum(r['warned'] for r in wide)} / {len(wide)} | {narrow_warned} / {len(got) - len(wide)} | "
            f"{med([r['half'] for r in got])} | {med([r['low'] for r in got])} / {med([r['high'] for r in got])} |")
        below = [r for r in got if r["half"] < r["low"] * (1.0 - TOL)]
        above = [r for r in got if r["half"] > r["high"] * (1.0 + TOL)]
        chances = [r["chance"] for r in got if r["chance"] is not None]
        stated = f"{statistics.median(chances):.3f}; {len(chances)}" if chances else "none given; 0"
        parts.append(
            f"{head} {len(below)} | {len(above)} | {_extreme(got, 'low', min)} | {_extreme(got, 'high', max)} | "
            f"{stated} | {med([r['bias'] / r['half'] for r in got if r['bias'] is not None])} |")
    return lines + [""] + parts


def _extreme(got: list[dict], side: str, pick) -> str:
    xs = [r["half"] / r[side] for r in got if r[side]]
    return "–" if not xs else f"{pick(xs):.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", action="append", default=[], metavar="STATE=DIR",
                    help="folktables' root folder of a state's file, repeatable (default TX=/tmp/tx, MI=/tmp/mi)")
    ap.add_argument("--n", type=int, default=20_000, help="the sample's rows (0: no sample cells)")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--coefficients", nargs="+", default=["female", "schooling"])
    ap.add_argument("--draws", type=int, default=1000, help="releases per cell (a fresh sample each, for the samples)")
    ap.add_argument("--large", type=int, nargs="*", default=[],
                    help="also: one sample of this many rows drawn with replacement from the first state's file "
                         "(seed --seed), where stage 1 can certify; repeatable sizes")
    ap.add_argument("--large-epsilon", type=float, nargs="+", default=[4.0])
    ap.add_argument("--large-draws", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20261127, help="the first sample's sample_seed")
    args = ap.parse_args(argv)
    roots = dict(r.split("=", 1) for r in args.root) or {"TX": "/tmp/tx", "MI": "/tmp/mi"}
    eps, coefs = tuple(args.epsilon), tuple(args.coefficients)
    cells = []  # (state, root, n, with_replacement, fresh, draws, epsilons)
    for state, root in roots.items():
        if args.n:
            cells.append((state.upper(), root, args.n, False, True, args.draws, eps))
        cells.append((state.upper(), root, None, False, False, args.draws, eps))
    first = next(iter(roots.items()))
    for n in args.large:
        cells.append((first[0].upper(), first[1], n, True, False, args.large_draws, tuple(args.large_epsilon)))
    jobs = [(state, root, n, repl, fresh, range(a, min(a + args.chunk, draws)), args.seed, e, coefs)
            for state, root, n, repl, fresh, draws, e in cells for a in range(0, draws, args.chunk)]
    t0 = time.perf_counter()
    parts = map_jobs(task, jobs, args.workers)
    records = [r for p in parts for r in p]
    print(f"{len(records)} releases in {time.perf_counter() - t0:.0f} s on {args.workers} worker(s); δ = {DELTA:g}, "
          f"split {RELEASE_SPLIT}, fallback on, level {LEVEL:g}, calibration {CALIBRATION!r}; plausible half-range "
          f"ln 100 = {LOGISTIC_PLAUSIBLE:.3f}\n")
    print("\n".join(tables(records)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
