"""The paper's figures (section 4; docs/method.md §11), reproduced from fresh data sets.

`python -m core experiment {fig1,...,fig7} --out DIR` draws, for every repetition, a fresh data set (seeded
from --seed), runs every method of the figure at the same total (eps, delta) through core's own mechanisms,
and writes DIR/<fig>.csv (tidy: one row per panel, x, method and metric) and DIR/<fig>.html (plotly).

- fig1: Algorithm 2's certificate lambda_hat_min at (eps, delta) = (1, 1e-6), the whole budget given
  to the certificate; relative error |lambda_hat - lambda_min| / lambda_min and p_zero, versus n/d.
- fig2 / fig3: u = e_1 at eps = 4, delta = 1e-6, ||theta*|| = 1 / 5, versus n: Algorithm 5 (local), the
  non-private oracle, objective and output perturbation, DP-SGD and DP-SGD tuned on the fit (not in --quick).
- fig4: u = e_1, d = 10, n = 1e5, versus eps; panels ||theta*|| = 1 and 6.
- fig5: the full vector, same settings, l2 error: Algorithms 3 and 7 and the full-vector baselines.
- fig6 / fig7: logistic regression on a state's census records (CA, `female`; MI, `schooling`), samples of
  n drawn with replacement, panels eps = 2, 4, 8: Algorithm 5, the paper's fallback rule at our budget and
  at its split, the app's default (Algorithm 5 with fallback), objective perturbation and the oracle. Without
  --acs-root the state's file is SYNTHETIC (core.data.synthetic_pums), and every row says so in its `data` column.

Errors are measured against the estimand (theta*, or the population's fit for the census) and against
the sample's fit theta(P_n) (the error the privacy adds). The score-attack rate is added as a reference
row. A method that refuses (bottom) counts in release_rate and is left out of the error means. Every
(figure, panel, x, repetition) is cached as DIR/.cache/<hash>.json, keyed by its whole configuration, so
an interrupted or repeated run resumes where it stopped.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from core.data import synthetic
from core.data.synthetic import MAX_ROWS  # also the census samples' cap: one data set in memory
from core.errors import InputError
from core.mechanisms.certificates import lambda_min_certificate
from core.mechanisms.dp_sgd import DPSGDConfig, dp_sgd_theta
from core.mechanisms.full_vector import release_vector
from core.mechanisms.pipeline import Problem, prepare, run_private
from core.methods.compare import compare
from core.methods.registry import names
from core.privacy.accounting import RELEASE_SPLIT, make_budget

CACHE_VERSION = 1
FIGURES = ("fig1", "fig2", "fig3", "fig4", "fig5", "fig6", "fig7")
COLUMNS = ("figure", "panel", "x_name", "x", "method", "metric", "mean", "se", "reps", "released", "release_rate",
           "d", "n", "epsilon", "delta", "theta_norm", "data")
# Figs. 6-7 (section 4.2): a state's filtered records are the population, the coefficient the paper reports.
CENSUS = {"fig6": ("CA", "female"), "fig7": ("MI", "schooling")}
# Algorithm 5 as such; with the paper's fallback rule (objective perturbation when lambda_hat_min = 0) at our safe
# budget and at the paper's split (half of eps to lambda_hat_min); and the app's default (Algorithm 5 at RELEASE_SPLIT,
# falling back whenever (14) fails, on the unspent budget, with the curvature interval).
CENSUS_METHODS = ("local", "local_fallback", "local_fallback_paper", "local_fallback_app", "objective_perturbation",
                  "oracle")
CENSUS_GRID = (10_000, 30_000, 100_000, 200_000, 400_000, 1_000_000, 2_000_000)  # Figs. 6-7's n
PAPER_SPLIT = (2.0, 1.0, 1.0)  # eps_a : eps_b : 2 eps_c, so that lambda_hat_min gets eps/2 as in section 4.2
RATE = "score_attack_rate"
CAPTION = "mean over repetitions, bars = 2 standard errors (bottom excluded)"
TUNED = "dp_sgd_tuned"  # DP-SGD with batch size and steps picked on the fit, as the paper did: not private
DP_SGD_GRID = tuple(DPSGDConfig(batch_size=b, steps=t) for b in (1000, 4000) for t in (1000, 4000))
# core.methods.registry: the oracle, the score-attack rate, DP-SGD tuned on the fit
NOT_PRIVATE_METHODS = names(private=False)
_NUMBERS = ("x", "mean", "se", "release_rate", "epsilon", "delta", "theta_norm")
DELTA = 1e-6


@dataclass(frozen=True)
class Task:
    """One repetition of one point of one panel: everything that determines its numbers."""

    figure: str
    panel: str
    x_name: str
    x: float
    rep: int
    seed: int
    d: int
    n: int
    epsilon: float
    delta: float
    theta_norm: float
    methods: tuple[str, ...]
    state: str = ""  # census figures: the state whose filtered records are the population
    coordinate: int = 0
    data: str = "synthetic"  # "synthetic", "SYNTHETIC census" (core.data.synthetic_pums) or "census files"
    root: str = field(default="", compare=False)  # where the census files are: not part of what the task is

    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if k != "root"}
        text = json.dumps({"version": CACHE_VERSION, **fields}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Plan:
    """The grid of a figure: its tasks, and what --quick chose."""

    figure: str
    tasks: tuple[Task, ...]
    metrics: tuple[str, ...]


def derived_seed(*parts: object) -> int:
    """A 53-bit seed (every seed's range, core.settings) from the root seed and a configuration, stable across runs
    and platforms."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 11


def _ints(values: Sequence[float]) -> list[int]:
    return [int(round(v)) for v in values]


def plan(figure: str, quick: bool = False, reps: int | None = None, seed: int = 0,
         dims: Sequence[int] | None = None, grid: Sequence[float] | None = None,
         acs_root: str | Path | None = None) -> Plan:
    """The tasks of a figure; dims and grid override the dimensions and the x values. For the census figures
    acs_root says whose files they read (None: SYNTHETIC files); run_figure sets the tasks' root."""
    if figure not in FIGURES:
        raise InputError(f"unknown figure {figure!r}; choose from {', '.join(FIGURES)}")
    if reps is not None and reps < 1:
        raise InputError(f"--reps must be at least 1, got {reps}")
    if grid is not None and not (grid and all(math.isfinite(x) and x > 0 for x in grid)):
        raise InputError("--grid takes positive finite numbers (n/d, n or eps, as the figure's x)")
    if dims is not None and not (dims and all(1 <= d <= 200 for d in dims)):
        raise InputError("--dims takes dimensions from 1 to 200")
    sgd = () if quick else ("dp_sgd", TUNED)
    tasks: list[Task] = []

    def add(panel: str, x_name: str, xs, d: int, n_of, eps_of, norm: float, methods: tuple[str, ...], r: int,
            **census):
        if max(n_of(x) for x in xs) > MAX_ROWS:
            raise InputError(f"--grid asks for data sets of more than {MAX_ROWS:,} rows; choose smaller x values")
        for x in xs:
            for rep in range(r):
                tasks.append(Task(figure, panel, x_name, float(x), rep, seed, d, int(n_of(x)), float(eps_of(x)),
                                  DELTA, norm, methods, **census))

    if figure in CENSUS:
        if dims:
            raise InputError("--dims does not apply to the census figures: their d is the encoding's 17")
        r = reps or (2 if quick else 25)
        ns = grid or ((10_000, 100_000, 400_000) if quick else CENSUS_GRID)
        from core.data.acs import FEATURE_NAMES  # pandas, pyarrow, folktables: the census figures' alone

        state, name = CENSUS[figure]
        where = dict(state=state, coordinate=FEATURE_NAMES.index(name),
                     data="census files" if acs_root else "SYNTHETIC census")
        for eps in (2.0, 4.0, 8.0):
            add(f"eps={eps:g}", "n", _ints(ns), len(FEATURE_NAMES), lambda x: x, lambda x, e=eps: e, 0.0,
                CENSUS_METHODS, r, **where)
        return Plan(figure, tuple(tasks), ("abs_error_population", "abs_error_fit", "release_rate"))

    if figure == "fig1":
        r = reps or (5 if quick else 25)
        ratios = grid or ((100, 200, 400, 800, 1600, 3200, 6400) if quick
                          else (25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800))
        for d in dims or (5, 10, 20):
            add(f"d={d}", "n/d", _ints(ratios), d, lambda x, d=d: x * d, lambda x: 1.0, 1.0, ("algorithm2",), r)
        return Plan(figure, tuple(tasks), ("relative_error", "p_zero"))
    if figure in ("fig2", "fig3"):
        r = reps or (2 if quick else 25)
        ns = grid or ((1_000, 10_000, 30_000, 100_000, 300_000) if quick
                      else (1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000))
        norm = 1.0 if figure == "fig2" else 5.0
        methods = ("local", "oracle", "objective_perturbation", "output_perturbation", *sgd)
        for d in dims or (5, 10, 20):
            add(f"d={d}", "n", _ints(ns), d, lambda x: x, lambda x: 4.0, norm, methods, r)
        return Plan(figure, tuple(tasks), ("abs_error_theta_star", "abs_error_fit", "release_rate"))
    r = reps or (3 if quick else 25)
    eps_grid = grid or ((1.0, 2.0, 4.0, 8.0) if quick else (0.5, 1.0, 2.0, 4.0, 8.0, 16.0))
    d = (dims or (10,))[0]
    if figure == "fig4":
        methods = ("local", "oracle", "objective_perturbation", "output_perturbation", *sgd)
        metrics = ("abs_error_theta_star", "abs_error_fit", "release_rate")
    else:
        methods = ("algorithm3", "algorithm7", "oracle", "objective_perturbation", "output_perturbation", *sgd)
        metrics = ("l2_error_theta_star", "l2_error_fit", "release_rate")
    for norm in (1.0, 6.0):
        add(f"norm={norm:g}", "epsilon", eps_grid, d, lambda x: 100_000, lambda x: x, norm, methods, r)
    return Plan(figure, tuple(tasks), metrics)


def run_task(task: Task) -> dict:
    """The numbers of one task: {method: {"released": bool, metric: value}}; nothing read from the cache."""
    if task.state:
        return _census_task(task)
    data = synthetic(task.n, task.d, "robust", task.theta_norm, 1.0,
                     seed=derived_seed(task.seed, "data", task.d, task.n, task.theta_norm, task.rep))
    rng = np.random.default_rng(derived_seed(task.seed, "noise", task.key()))
    problem = prepare(data.X, data.y, "robust")
    theta_star = np.asarray(data.theta_star)
    out: dict[str, dict] = {}
    if task.methods == ("algorithm2",):
        cert = lambda_min_certificate(problem.fit, problem.geometry, task.epsilon, task.delta, rng)
        lam = problem.fit.lambda_min
        out["algorithm2"] = dict(released=True, relative_error=abs(cert.lambda_hat - lam) / lam,
                                 p_zero=float(cert.lambda_hat == 0.0), lambda_hat=cert.lambda_hat, lambda_min=lam)
        return out
    vector = task.figure == "fig5"
    values = (_vector_values if vector else _coordinate_values)(problem, task, rng)
    targets = (theta_star, problem.fit.theta) if vector else (theta_star[0], problem.fit.theta[0])
    prefix = "l2_error" if vector else "abs_error"
    for name in task.methods:
        v = values[name]
        out[name] = dict(released=False) if v is None else {
            "released": True, f"{prefix}_theta_star": _distance(v, targets[0]),
            f"{prefix}_fit": _distance(v, targets[1])}
    return out


def _distance(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


def _coordinate_values(problem: Problem, task: Task, rng: np.random.Generator) -> dict[str, float | None]:
    """Figs. 2-4: each method's release of u^T theta, u = e_1, at the same total (eps, delta)."""
    plain = tuple(m for m in task.methods if m != TUNED)
    result = compare(problem, 0, make_budget(task.epsilon, task.delta), 1, rng, plain)
    values = {name: trials.values[0] for name, trials in result.methods.items()}
    if TUNED in task.methods:
        values[TUNED] = _tuned(lambda c, r: dp_sgd_theta(problem, task.epsilon, task.delta, r, c)[0][0],
                               problem.fit.theta[0], rng)
    return values


def _vector_values(problem: Problem, task: Task, rng: np.random.Generator) -> dict[str, NDArray | None]:
    """Fig. 5: each method's release of the whole vector theta."""
    values = {m: release_vector(m, problem, task.epsilon, task.delta, rng).value for m in task.methods
              if m != TUNED}
    if TUNED in task.methods:
        values[TUNED] = _tuned(lambda c, r: dp_sgd_theta(problem, task.epsilon, task.delta, r, c)[0],
                               problem.fit.theta, rng)
    return values


def _tuned(run: Callable, fit_value, rng: np.random.Generator):
    """DP-SGD as the paper ran it: every configuration of DP_SGD_GRID at the full budget, keeping the one
    closest to the fit. Choosing by the fit is NOT private (so the method is drawn as a reference)."""
    runs = [run(config, rng) for config in DP_SGD_GRID]
    return min(runs, key=lambda v: _distance(v, fit_value))


@lru_cache(maxsize=4)
def _population(root: str, state: str) -> tuple[NDArray, NDArray, NDArray]:
    """A state's encoded population and the coefficients of its logistic fit (the census figures' target)."""
    from core.data.acs import load_state

    X, y = load_state(root, state)
    return X, y, prepare(X, y, "logistic").fit.theta


def _census_task(task: Task) -> dict:
    """Figs. 6-7: a sample of n drawn with replacement from the state's population (as section 4.2 does), the
    logistic fit on the cube, every method at the same total (eps, delta) on coordinate j."""
    from core.data.acs import sample_population

    X, y, theta_pop = _population(task.root, task.state)
    Xs, ys, _ = sample_population(X, y, task.n, derived_seed(task.seed, "sample", task.state, task.n, task.rep),
                                  with_replacement=True)
    problem = prepare(Xs, ys, "logistic")
    rng = np.random.default_rng(derived_seed(task.seed, "noise", task.key()))
    j = task.coordinate
    if not problem.fit.has_minimiser:  # every method needs the fit; a private run would end in bottom
        return {m: dict(released=False) for m in task.methods}
    budget = make_budget(task.epsilon, task.delta)
    safe = compare(problem, j, budget, 1, rng, ("local", "local_fallback", "objective_perturbation", "oracle"))
    paper = compare(problem, j, make_budget(task.epsilon, task.delta, PAPER_SPLIT), 1, rng, ("local_fallback",))
    values = {name: trials.values[0] for name, trials in safe.methods.items()}
    values["local_fallback_paper"] = paper.methods["local_fallback"].values[0]
    values["local_fallback_app"] = run_private(problem, j, make_budget(task.epsilon, task.delta, RELEASE_SPLIT), rng,
                                               fallback=True).release.value
    out = {}
    for name in task.methods:
        v = values[name]
        out[name] = dict(released=False) if v is None else dict(
            released=True, abs_error_population=abs(v - theta_pop[j]), abs_error_fit=abs(v - problem.fit.theta[j]))
    return out


def _cached_run(task: Task, cache: str) -> tuple[Task, dict, float]:
    path = Path(cache) / f"{task.key()}.json"
    start = time.perf_counter()
    result = run_task(task)
    _write_atomic(path, json.dumps({"task": asdict(task), "result": result}))
    return task, result, time.perf_counter() - start


def _write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: an interrupted run, or a reader in another session of the
    app, never sees half a file."""
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _load(task: Task, cache: Path) -> dict | None:
    path = cache / f"{task.key()}.json"
    try:
        return json.loads(path.read_text())["result"]
    except (OSError, ValueError, KeyError):
        return None


def run_plan(p: Plan, out: Path, jobs: int = 1, log: Callable[[str], None] | None = None) -> dict[Task, dict]:
    """Every task of the plan, from the cache where it has them, the rest in `jobs` processes."""
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    cache = out / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    results: dict[Task, dict] = {}
    todo = []
    for t in p.tasks:
        hit = _load(t, cache)
        if hit is None:
            todo.append(t)
        else:
            results[t] = hit
    total = len(p.tasks)
    log(f"[{p.figure}] {total} tasks, {total - len(todo)} cached, {len(todo)} to run on {jobs} process(es)")
    start = time.perf_counter()

    def done(t: Task, r: dict, secs: float) -> None:
        results[t] = r
        log(f"[{p.figure}] {len(results)}/{total} {t.panel} {t.x_name}={t.x:g} rep {t.rep}: {secs:.2f}s "
            f"(elapsed {time.perf_counter() - start:.1f}s)")

    if jobs <= 1:
        for t in todo:
            done(*_cached_run(t, str(cache)))
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_context()) as pool:
            futures = [pool.submit(_cached_run, t, str(cache)) for t in todo]
            for f in as_completed(futures):
                done(*f.result())
    return results


def _context() -> multiprocessing.context.BaseContext:
    """fork from a single-threaded caller (the command line, a script); spawn from a threaded one (the app's
    server), whose locks fork would copy mid-use. spawn re-imports the caller's main module, so it needs one."""
    return multiprocessing.get_context("fork" if threading.active_count() == 1 else "spawn")


def summarise(p: Plan, results: dict[Task, dict]) -> list[dict]:
    """The tidy rows: mean and standard error over the repetitions where the method released."""
    groups: dict[tuple, list[Task]] = {}
    for t in p.tasks:
        groups.setdefault((t.panel, t.x), []).append(t)
    rows = []
    for ts in groups.values():
        t0 = ts[0]
        for method in t0.methods:
            rs = [results[t][method] for t in ts]
            released = [r for r in rs if r.get("released")]
            rate = len(released) / len(rs)
            for metric in p.metrics:
                if metric == "release_rate":
                    mean, se = rate, math.sqrt(rate * (1 - rate) / len(rs))
                else:
                    vals = np.array([r[metric] for r in released], dtype=float)
                    mean = float(vals.mean()) if len(vals) else math.nan
                    se = float(vals.std(ddof=1) / math.sqrt(len(vals))) if len(vals) > 1 else math.nan
                rows.append(_row(p, t0, method, metric, mean, se, len(rs), len(released), rate))
        rows.extend(_rate_rows(p, t0))
    return rows


def _row(p: Plan, t: Task, method: str, metric: str, mean: float, se: float, reps: int, released: int,
         rate: float) -> dict:
    return dict(figure=p.figure, panel=t.panel, x_name=t.x_name, x=t.x, method=method, metric=metric, mean=mean,
                se=se, reps=reps, released=released, release_rate=rate, d=t.d, n=t.n, epsilon=t.epsilon,
                delta=t.delta, theta_norm=t.theta_norm, data=t.data)


def score_attack_rate(d: int, n: int, epsilon: float, full_vector: bool) -> float:
    """The reference rate of Cai, Wang & Zhang (Thm 3.1): E||theta_hat - theta*||^2 >~ d/n + d^2/(n^2 eps^2),
    with constant 1; its square root for the l2 error, or for one coordinate the root of a d-th of it. A rate,
    not a method: it is drawn dotted and says nothing about constants."""
    square = d / n + d * d / (n * n * epsilon * epsilon)
    return math.sqrt(square if full_vector else square / d)


def _rate_rows(p: Plan, t: Task) -> list[dict]:
    """The score-attack rate beside the errors against the estimand (theta* or the population's fit)."""
    metric = next((m for m in p.metrics if m in ("abs_error_theta_star", "l2_error_theta_star",
                                                   "abs_error_population")), None)
    if metric is None:
        return []
    rate = score_attack_rate(t.d, t.n, t.epsilon, metric.startswith("l2"))
    return [_row(p, t, RATE, metric, rate, math.nan, 0, 0, math.nan)]


def write_csv(rows: list[dict], path: Path) -> None:
    """The tidy rows, written atomically."""
    text = io.StringIO()
    w = csv.DictWriter(text, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow({k: (f"{v:.10g}" if isinstance(v, float) else v) for k, v in row.items()})
    _write_atomic(path, text.getvalue())


def read_rows(source: str | Path | bytes, name: str = "the CSV") -> list[dict]:
    """The rows of a CSV written by write_csv, checked: every required column, numbers where numbers belong,
    a known figure. Anything else raises InputError naming the file and the row, never quoting a value."""
    try:
        text = source.decode("utf-8-sig") if isinstance(source, bytes) else Path(source).read_text("utf-8-sig")
        return _parse_rows(text, name)  # utf-8-sig: a spreadsheet may have added a byte-order mark
    except UnicodeDecodeError:
        raise InputError(f"{name} is not UTF-8 text; give the CSV that `python -m core experiment` wrote") from None
    except csv.Error:  # such as a field past the csv module's size limit
        raise InputError(f"{name} cannot be read as a CSV; give the CSV that `python -m core experiment` wrote") \
            from None


def _parse_rows(text: str, name: str) -> list[dict]:
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{name} is not an experiment CSV: it lacks the column(s) {', '.join(missing)}")
    rows = []
    for i, raw in enumerate(reader, 2):
        row = dict(raw)
        try:
            for c in _NUMBERS:
                row[c] = float(raw[c])
            for c in ("reps", "released", "d", "n"):
                row[c] = int(raw[c])
        except (TypeError, ValueError):
            raise InputError(f"{name}, line {i}: a numeric column holds something that is not a number") from None
        if row["figure"] not in FIGURES or not math.isfinite(row["x"]):
            raise InputError(f"{name}, line {i}: unknown figure or a non-finite x")
        if any(math.isinf(row[c]) for c in _NUMBERS):  # nan is "never released"; infinity is never written
            raise InputError(f"{name}, line {i}: an infinite number, which the command never writes")
        rows.append(row)
    if not rows:
        raise InputError(f"{name} has a header but no rows")
    if len({r["figure"] for r in rows}) > 1:
        raise InputError(f"{name} mixes several figures; give one figure's CSV")
    return rows


def _census_root(state: str, out: Path, acs_root: str | Path | None) -> str:
    """Where the state's file is, checked before any worker starts (a missing file names the path expected)."""
    from core.data.acs import census_path, load_state
    from core.data.synthetic_pums import write_synthetic_pums

    root = Path(acs_root) if acs_root is not None else out / ".census"
    if acs_root is None and not census_path(root, state).is_file():
        write_synthetic_pums(root, [state])
    load_state(root, state)  # encoded once here (a missing file names its path), so workers read the cache
    return str(root)


def run_figure(figure: str, out: str | Path, quick: bool = False, reps: int | None = None, seed: int = 0,
               jobs: int = 1, dims: Sequence[int] | None = None, grid: Sequence[float] | None = None,
               log: Callable[[str], None] | None = None, acs_root: str | Path | None = None) -> dict:
    """Plan, run (or resume), summarise and write a figure; returns where it wrote and how long it took.

    The census figures read the state's file under acs_root; without one they write a SYNTHETIC file
    (core.data.synthetic_pums, the state's planted design, seed 0) under DIR/.census once and use that.
    """
    start = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    p = plan(figure, quick, reps, seed, dims, grid, acs_root)
    if figure in CENSUS:
        p = Plan(p.figure, tuple(replace(t, root=_census_root(CENSUS[figure][0], out, acs_root)) for t in p.tasks),
                 p.metrics)
    results = run_plan(p, out, jobs, log)
    rows = summarise(p, results)
    csv_path = out / f"{figure}.csv"
    write_csv(rows, csv_path)
    return dict(figure=figure, csv=str(csv_path), tasks=len(p.tasks),
                seconds=round(time.perf_counter() - start, 3))
