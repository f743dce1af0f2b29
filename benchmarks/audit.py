"""The long empirical privacy audit: every pair, every stage and the joint release.

For each pair of neighbouring data sets of `tests/audit.py` (PAIRS) the script fits both data sets,
draws stage 1 alone (vectorised, checked against the real code) and whole runs of run_private,
and prints one markdown table row per stage: the claimed (epsilon, delta), the audited lower bound
eps_lb, the draws per data set and the seconds the draws and the audit took. Each eps_lb exceeds a
claim that holds with probability at most alpha (default 1e-3; Clopper-Pearson, events chosen on a
held-out half); a row whose eps_lb passes its claim is marked VIOLATED. A pair whose fit raises is
reported as such.

Run from the repository root:

    python benchmarks/audit.py                                   # 1e5 runs and 1e6 stage-1 draws per data set
    python benchmarks/audit.py --draws 10000 --stage1-draws 100000  # about a minute
    python benchmarks/audit.py --pairs "outlier 1e16" tightest
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_auditor() -> ModuleType:
    """tests/audit.py as the module `privacy_audit` (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("privacy_audit", ROOT / "tests" / "audit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


A = load_auditor()


def describe_fits(d) -> str:
    """The non-private facts an attacker who built the pair knows: exact counts and coefficients."""
    parts = []
    for label, prob in zip(("P", "P'"), d.problems, strict=True):
        theta = np.array2string(np.asarray(prob.fit.theta), precision=4, separator=", ")
        parts.append(f"{label}: N = {A.exact_count(prob)}, lambda_min = {prob.fit.lambda_min:.4g}, theta = {theta}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", nargs="*", default=list(A.PAIRS), choices=list(A.PAIRS), metavar="PAIR",
                    help=f"pairs to audit (default: all of {', '.join(A.PAIRS)})")
    ap.add_argument("--draws", type=int, default=100_000, help="whole runs of run_private per data set")
    ap.add_argument("--stage1-draws", type=int, default=1_000_000, help="vectorised stage-1 draws per data set")
    ap.add_argument("--alpha", type=float, default=A.ALPHA, help="family-wise error of each row's bound")
    args = ap.parse_args(argv)

    print(f"# Empirical privacy audit ({platform.python_version()}, numpy {np.__version__}, "
          f"alpha = {args.alpha:g} per row, {A.KEEP} events tested per row)\n")
    print("| pair | stage | claimed eps | claimed delta | eps_lb | draws per data set | seconds | best event |")
    print("|---|---|---|---|---|---|---|---|")
    notes = []
    cache: dict = {}
    start = time.perf_counter()
    for name in args.pairs:
        spec = A.PAIRS[name]
        try:
            d = A.draw_pair(spec, args.draws, args.stage1_draws, cache)
        except Exception as exc:  # a fit that raises is itself a finding: the outcome differs in kind
            print(f"| {name} | all | {spec.epsilon:g} | {spec.delta:g} | — | — | — | "
                  f"prepare raised {type(exc).__name__}: {str(exc)[:90]} |")
            continue
        notes.append(f"- {name}: {describe_fits(d)}")
        for stage in spec.stages:
            t0 = time.perf_counter()
            r = d.audit(stage, alpha=args.alpha)
            spent = time.perf_counter() - t0 + (d.seconds_stage1 if stage.startswith("stage 1 ") else d.seconds_runs)
            n = r.draws[0]
            flag = " **VIOLATED**" if not r.passed else ""
            best = str(r.findings[0]).replace("|", "/") if r.findings else "—"
            print(f"| {name} | {stage} | {r.epsilon:.4g} | {r.delta:.3g} | {r.eps_lb:.3f}{flag} | {n:,} | "
                  f"{spent:.1f} | {best} |", flush=True)
    print(f"\nTotal {time.perf_counter() - start:.0f} s. Seconds: the draws (and fits, for stage 1) on both "
          "data sets plus the audit; draws shared between pairs are counted in each.\n")
    print("Exact (non-private) facts about the pairs:\n")
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
