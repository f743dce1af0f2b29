"""A folder read in blocks against the same rows in memory, in one run: stage 0 (the fit) and one release.

The folder is the paper's logistic simulation written by `python -m core synthetic --folder` (made here when absent).
Each round prepares the problem in memory (every row read first, then core.mechanisms.pipeline.prepare_model) and in
blocks (core.estimator.blocks.prepare_folder), then draws one release on each from the same seed; rounds alternate
the order. Printed: medians, the blocks/memory ratio, seconds per 10^6 rows, whether theta and the release agree.

    python benchmarks/bench_blocks.py --folder /tmp/sim6 --n 1000000 --rounds 3
    python benchmarks/bench_blocks.py --folder /tmp/sim6 --scheduler tcp://127.0.0.1:8786
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--folder", required=True)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=17)
    ap.add_argument("--block-rows", type=int, default=2**17)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scheduler", default=None)
    args = ap.parse_args(argv)
    if not Path(args.folder).is_dir():
        write_folder(args.folder, args.n, args.d, "logistic", 2.0, 1.0, 8, 2**18)
    folder = open_folder(args.folder)
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
