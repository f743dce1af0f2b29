"""Concurrent inverses of one memoised recursion give exactly the sequential results.

Streamlit serves browser sessions from threads of one process, and `down_recursion` is memoised,
so several sessions may extend the same boundary chain at once.
"""

import random
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from core.estimator.geometry import make_geometry
from core.estimator.losses import ROBUST
from core.mechanisms.recursion import down_recursion

THREADS = 8
GEOMETRY = make_geometry(ROBUST, "cube", 5)
N = 10**6


def fresh():
    """A new recursion, bypassing the memo so that its chain starts empty."""
    return down_recursion.__wrapped__(GEOMETRY, N, 0.0)


def requested_counts():
    rng = random.Random(5)
    return sorted({1, 2, 3, 50, 788, 3986, 5586, *(rng.randint(1, 6000) for _ in range(40))})


def test_concurrent_inverses_equal_sequential_ones():
    ms = requested_counts()
    sequential = fresh()
    expected = {m: sequential.inverse(m) for m in ms}

    shared = fresh()
    barrier = threading.Barrier(THREADS)

    def ask(seed):
        order = list(ms)
        random.Random(seed).shuffle(order)
        barrier.wait()
        return {m: shared.inverse(m) for m in order}

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so that an unguarded chain would interleave
    try:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            results = list(pool.map(ask, range(THREADS)))
    finally:
        sys.setswitchinterval(interval)

    for got in results:
        assert got == expected  # exact float equality, every m
    assert shared._chain == sequential._chain[: len(shared._chain)]


def test_the_recursion_stays_hashable_and_comparable():
    a, b = fresh(), fresh()
    hash(a)
    assert a.floor == b.floor and a.scale == b.scale and a.accelerating == b.accelerating
    assert repr(a).startswith("DecreasingRecursion(")
