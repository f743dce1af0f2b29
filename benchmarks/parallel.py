"""The benchmarks' jobs on worker processes: one way to spread a list of jobs over the machine's cores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from multiprocessing import get_context
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def map_jobs(task: Callable[[J], R], jobs: Sequence[J], workers: int) -> list[R]:
    """task over jobs, results in the jobs' order: on `workers` spawned processes (fresh interpreters, so nothing of
    this one's state is shared), one job at a time each; in this process when workers is 1."""
    if workers <= 1:
        return [task(j) for j in jobs]
    with get_context("spawn").Pool(workers) as pool:
        return pool.map(task, jobs, chunksize=1)
