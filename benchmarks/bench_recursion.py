"""Stage 1 cold, compiled recursion loops (core.estimator.kernels) against the pure-Python ones, in one run.

Stage 1 is core.mechanisms.certificates.lambda_min_certificate (Algorithm 2): the count N of the recursion (10)
from lambda_min, the boundary chain up to m and the check of R^m at its last point. Cold means
down_recursion's memo is cleared before every call, so the chain is built afresh. The fit is the
robust synthetic one (d = 5, cube); stage 1 reads the data only through lambda_min and n, so n is set
to 10^7 and 10^8 (N about 10^5 and 10^6), as in bench_core.py. Both paths run interleaved with the
same noise, and must give the same certificate. The one-time cost (numba's import, and the compile or
the load of the on-disk cache) is measured apart, in fresh processes.

Run from the repository root:

    python benchmarks/bench_recursion.py               # about half a minute
    python benchmarks/bench_recursion.py --repeats 3   # quicker
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import core.mechanisms.recursion as recursion
from core.data import synthetic
from core.estimator.fit import FitResult
from core.estimator.geometry import Geometry
from core.mechanisms.certificates import RecursiveBound, lambda_min_certificate
from core.mechanisms.pipeline import prepare
from core.privacy.accounting import split_budget

ROOT = Path(__file__).resolve().parents[1]
SEED = 20261122
EPSILON, DELTA = 1.0, 1e-6
CASES = {"N ~ 1e5": 10**7, "N ~ 1e6": 10**8}  # the n given to stage 1
TARGETS_MS = {"N ~ 1e5": 15.0, "N ~ 1e6": 150.0}
TARGET_RATIO = 10.0  # at N ~ 1e5
PYTHON_REPEATS = {"N ~ 1e5": 5, "N ~ 1e6": 3}  # pure-Python calls take about 0.3 s and 3 s

FIRST_CALL = """
import json, sys, time
import core.estimator.geometry, core.estimator.losses
t0 = time.perf_counter()
import core.mechanisms.recursion as R
t1 = time.perf_counter()
from core.estimator.geometry import make_geometry
from core.estimator.losses import ROBUST
rec = R.down_recursion.__wrapped__(make_geometry(ROBUST, "cube", 5), 10**7, 0.0)
rec.count(0.128), rec.inverse(100)
t2 = time.perf_counter()
rec = R.down_recursion.__wrapped__(make_geometry(ROBUST, "cube", 5), 10**7, 0.0)
rec.count(0.128), rec.inverse(100)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_s": t2 - t1, "second_s": t3 - t2, "jit": R.kernels() is not None}))
"""


@contextmanager
def pure_python() -> Iterator[None]:
    """Run core.mechanisms.recursion's pure-Python loops (the PSP_NO_JIT=1 path) inside the block."""
    saved, recursion.kernels = recursion.kernels, lambda wait=False: None
    try:
        yield
    finally:
        recursion.kernels = saved


def robust_fit() -> tuple[FitResult, Geometry]:
    """The robust synthetic fit (20,000 rows, d = 5, cube): lambda_min about 0.13."""
    data = synthetic(n=20_000, d=5, loss="robust", seed=SEED)
    problem = prepare(data.X, data.y, "robust", "cube")
    return problem.fit, problem.geometry


def cold_call(fit: FitResult, g: Geometry) -> tuple[float, RecursiveBound]:
    """Seconds of one stage-1 call with the chain memo cleared, and its certificate (fixed noise)."""
    stage = split_budget(EPSILON, DELTA).lambda_min
    recursion.down_recursion.cache_clear()
    start = time.perf_counter()
    cert = lambda_min_certificate(fit, g, stage.epsilon, stage.delta, np.random.default_rng(SEED))
    return time.perf_counter() - start, cert


def bench_case(fit: FitResult, g: Geometry, repeats: int, python_repeats: int) -> dict:
    """Interleaved cold calls, compiled and pure Python; medians in ms and their ratio."""
    compiled: list[float] = []
    python: list[float] = []
    certs = set()
    cold_call(fit, g)  # the one-time load, measured apart
    for i in range(repeats):
        sec, cert = cold_call(fit, g)
        compiled.append(1e3 * sec)
        certs.add(cert)
        if i < python_repeats:
            with pure_python():
                sec, cert = cold_call(fit, g)
            python.append(1e3 * sec)
            certs.add(cert)
    if len(certs) != 1:
        raise AssertionError("the compiled and the pure-Python certificates differ")
    (cert,) = certs
    return {
        "n": fit.n,
        "N": cert.N,
        "m": cert.m,
        "compiled_ms": compiled,
        "python_ms": python,
        "compiled_median_ms": statistics.median(compiled),
        "python_median_ms": statistics.median(python),
        "ratio": statistics.median(python) / statistics.median(compiled),
    }


def first_calls() -> dict:
    """Fresh processes: numba's first compile (empty cache), then a load from the cache just written.

    import_s is the import of core.mechanisms.recursion after its dependencies: numba and core.estimator.kernels.
    """
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PSP_NO_JIT": "0", "PYTHONPATH": str(ROOT)}
        for label in ("compile", "cache_load"):
            done = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, cwd=ROOT, capture_output=True,
                                  text=True, check=True)
            out[label] = json.loads(done.stdout)
    return out


def environment() -> dict:
    return {"python": sys.version.split()[0], "numpy": np.__version__, "numba": numba.__version__,
            "nproc": os.cpu_count()}


def row(name: str, value: str, target: str = "", met: bool | None = None) -> str:
    verdict = "" if met is None else ("met" if met else "NOT met")
    return f"{name:<34} {value:<22} {target:<10} {verdict}".rstrip()


def table(res: dict) -> str:
    lines = [row("figure", "measured", "target")]
    for name, c in res["cases"].items():
        target = TARGETS_MS[name]
        lines += [
            row(f"{name}: n, N, m", f"{c['n']:.0e}, {c['N']}, {c['m']}"),
            row(f"{name}: compiled median", f"{c['compiled_median_ms']:.2f} ms", f"<= {target:g} ms",
                c["compiled_median_ms"] <= target),
            row(f"{name}: pure Python median", f"{c['python_median_ms']:.1f} ms"),
            row(f"{name}: ratio", f"{c['ratio']:.1f}x", f">= {TARGET_RATIO:g}x" if name == "N ~ 1e5" else "",
                c["ratio"] >= TARGET_RATIO if name == "N ~ 1e5" else None),
        ]
    for label, f in res["first_calls"].items():
        overhead = f["first_s"] - f["second_s"]
        lines.append(row(f"one-time {label}", f"{overhead:.2f} s (+ numba import {f['import_s']:.2f} s)"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=11, help="compiled cold calls per case (default 11)")
    ap.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    if recursion.kernels() is None:
        raise SystemExit("the compiled loops are off (PSP_NO_JIT is set, or numba is missing)")
    fit, g = robust_fit()
    res = {
        "environment": environment(),
        "lambda_min": fit.lambda_min,
        "cases": {
            name: bench_case(dataclasses.replace(fit, n=n), g, args.repeats, min(args.repeats, PYTHON_REPEATS[name]))
            for name, n in CASES.items()
        },
        "first_calls": first_calls(),
    }
    print(table(res))
    if args.json is not None:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return res


if __name__ == "__main__":
    main()
