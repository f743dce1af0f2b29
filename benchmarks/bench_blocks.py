"""A folder read in blocks against the same rows in memory, in one run: stage 0 (the fit) and one release.

The folder is the paper's logistic simulation written by `python -m core synthetic --folder` (made here when absent).
Each round prepares the problem in memory (every row read first, then core.mechanisms.pipeline.prepare_model) and in
blocks (core.estimator.blocks.prepare_folder), then draws one release on each from the same seed; rounds alternate
the order. Printed: medians, the blocks/memory ratio, seconds per 10^6 rows, whether theta and the release agree.

    python benchmarks/bench_blocks.py --folder /tmp/sim6 --n 1000000 --rounds 3
    python benchmarks/bench_blocks.py --folder /tmp/sim6 --scheduler tcp://127.0.0.1:8786
    python benchmarks/bench_blocks.py --folder /data/sim8 --per-block 8   # one block's costs, for planning a pass

--per-block K times, on K blocks spread over the folder, the three parts of a fit's pass on one block on one core:
reading it, projecting it, and the Newton step's sums (core.estimator.fit._evaluate_block), as medians in seconds.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.data.folder import open_folder  # noqa: E402
from core.data.synthetic import write_folder  # noqa: E402
from core.estimator.blocks import BlockRows, prepare_folder  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.pipeline import make_rng, prepare_model, run_private  # noqa: E402
from core.privacy.accounting import make_budget  # noqa: E402


def _memory(folder, model):
    X, y = folder.read(0, folder.n)
    return prepare_model(X, y, model, folder.features)


def _blocks(folder, model, block_rows, scheduler):
    return prepare_folder(BlockRows(folder, block_rows, None, scheduler), model, folder.features)


def per_block(folder, block_rows: int, k: int) -> dict:
    """Medians over k blocks of reading, preparing and one Newton step's sums, one block at a time on one core."""
    from core.estimator import fit as fitting
    from core.estimator.blocks import Preparation
    from core.estimator.losses import get_loss

    rows = BlockRows(folder, block_rows)
    ranges = rows.ranges()
    picked = [ranges[i * (len(ranges) - 1) // max(k - 1, 1)] for i in range(k)]
    model = ModelSpec("logistic").resolve(rows.d)
    prepare = Preparation(model.geometry(rows.d), np.inf, False)
    res = fitting._Residuals(get_loss("logistic"), prepare.geometry.r, 1.0, rows.d)
    theta = np.full(rows.d, 0.1)
    parts: dict[str, list[float]] = {"read": [], "prepare": [], "sums": []}
    for a, b in picked:
        t0 = time.perf_counter()
        X, y = folder.read(a, b)
        t1 = time.perf_counter()
        X, y = prepare(X, y)
        t2 = time.perf_counter()
        fitting._evaluate_block(res, theta, np.zeros_like(theta), True, theta, False, X, y)
        parts["read"].append(t1 - t0)
        parts["prepare"].append(t2 - t1)
        parts["sums"].append(time.perf_counter() - t2)
    return {name: statistics.median(t) for name, t in parts.items()} | dict(block_rows=block_rows, blocks=k)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folder", required=True)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=17)
    ap.add_argument("--block-rows", type=int, default=2**17)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scheduler", default=None)
    ap.add_argument("--per-block", type=int, default=0, metavar="K")
    args = ap.parse_args(argv)
    if not Path(args.folder).is_dir():
        write_folder(args.folder, args.n, args.d, "logistic", 2.0, 1.0, 8, 2**18)
    folder = open_folder(args.folder)
    if args.per_block:
        print(json.dumps(per_block(folder, args.block_rows, args.per_block), indent=1))
        return 0
    model, budget = ModelSpec("logistic"), make_budget(1.0, 1e-9)
    times: dict[str, list[float]] = {"memory": [], "blocks": []}
    agree = []
    for k in range(args.rounds):
        order = ("memory", "blocks") if k % 2 == 0 else ("blocks", "memory")
        done = {}
        for route in order:
            start = time.perf_counter()
            problem = _memory(folder, model) if route == "memory" else _blocks(folder, model, args.block_rows,
                                                                                   args.scheduler)
            run = run_private(problem, 1, budget, make_rng(k), fallback=True)
            times[route].append(time.perf_counter() - start)
            done[route] = (problem.fit.theta, run.release.status, run.release.value, run.lambda_min.m)
        (ta, *a), (tb, *b) = done["memory"], done["blocks"]
        agree.append(dict(theta_relative=float(np.max(np.abs(ta - tb)) / np.max(np.abs(ta))), same_release=a == b))
    med = {route: statistics.median(t) for route, t in times.items()}
    print(json.dumps(dict(
        machine=f"{platform.machine()}, {platform.python_version()}", n=folder.n, d=len(folder.features),
        block_rows=args.block_rows, scheduler=args.scheduler or "threads", seconds=times,
        median=med, ratio_blocks_to_memory=med["blocks"] / med["memory"],
        seconds_per_million_rows={route: m * 1e6 / folder.n for route, m in med.items()}, agree=agree,
    ), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
