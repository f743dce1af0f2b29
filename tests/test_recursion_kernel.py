"""The compiled recursion loops (core.estimator.kernels) give bit for bit the pure-Python reference's numbers.

Every comparison is ==, never approx: the count N, the powers, the trajectories, the boundary points
mu_j of the chain, the inverses (R^m)^{-1}(0) after their safe-side check. The reference is the same
recursion without its kernel (its Python step closure and loops), in this process; the fallback
(PSP_NO_JIT=1) is checked in a subprocess. A one-ulp change of a constant changes these numbers, so
the equalities can fail (test_a_one_ulp_change_is_detected).
"""

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import core.mechanisms.recursion as R
from core.estimator.geometry import make_geometry
from core.estimator.losses import LOSSES, ROBUST
from core.mechanisms.recursion import DecreasingRecursion, c1_threshold, down_recursion, smooth_recursion, up_recursion

kernels = pytest.importorskip("core.estimator.kernels")
pytestmark = pytest.mark.skipif(R.kernels() is None, reason="the compiled loops are off (no numba or PSP_NO_JIT=1)")

ROOT = Path(__file__).resolve().parents[1]
LOSS_NAMES, DOMAINS, DIMS = ("robust", "logistic"), ("cube", "ball"), (1, 5, 17, 50)
NS, LAM_REGS = (10**3, 10**5, 10**7, 10**9), (0.0, 1e-3)
GRID = list(itertools.product(LOSS_NAMES, DOMAINS, DIMS, NS, LAM_REGS))
MAX_REFERENCE_STEPS = 5_000  # per lambda of the grid, to keep the Python reference cheap


def geometry(loss: str, domain: str, d: int):
    return make_geometry(LOSSES[loss], domain, d, 1.5 if domain == "ball" else None)


def reference(rec: DecreasingRecursion) -> DecreasingRecursion:
    """The same recursion without its kernel: the pure-Python loops, with an empty chain of its own."""
    return DecreasingRecursion(step=rec.step, floor=rec.floor, scale=rec.scale, accelerating=rec.accelerating,
                               origin=rec.origin)


def within_reach(rec: DecreasingRecursion, lams: list[float]) -> list[float]:
    """The lambdas whose count is at most MAX_REFERENCE_STEPS (a capped compiled count picks them)."""
    kind, params = rec.kernel
    return [lam for lam in lams if kernels.count(kind, params, float(rec.floor), lam, MAX_REFERENCE_STEPS) > 0]


def lambdas(rec: DecreasingRecursion, g, n: int, lam_reg: float) -> list[float]:
    """0, the (C1) boundary b and its neighbours, b plus 1 to 3000 step lengths, and fixed values far off."""
    b = max(c1_threshold(g, n) - lam_reg / g.rho, 0.0)
    s = (2.0 * g.r * g.G0 + g.G1) / n  # the largest step length of (10), about
    near = [math.nextafter(b, -math.inf), b, math.nextafter(b, math.inf), b * (1 + 1e-12)] if b > 0 else [5e-324]
    far = [b + s, b + 30 * s, b + 1000 * s, b + 3000 * s, 2.0 * b, 0.01, 0.1, 1.0]
    return [0.0, *near, *within_reach(rec, far)]


def compare(rec: DecreasingRecursion, lams: list[float]) -> None:
    """count, power, trajectory and inverse of rec (compiled) and of its reference, all with ==."""
    ref = reference(rec)
    counts = []
    for lam in lams:
        N = rec.count(lam)
        if N > MAX_REFERENCE_STEPS:
            continue
        assert N == ref.count(lam), lam
        assert rec.trajectory(lam) == ref.trajectory(lam), lam
        for k in (0, 1, N // 2, N):
            assert rec.power(lam, k) == ref.power(lam, k), (lam, k)
        counts.append(N)
    top = max(counts)
    assert top > 1
    # Out of order, so that the compiled chain is continued from its tail as well as started afresh.
    ms = (top // 2, 1, 0, top, 2, 3, max(top - 1, 1))
    for m in ms:
        assert rec.inverse(m) == ref.inverse(m), m
    assert rec._chain == ref._chain
    assert len(rec._chain) == max(ms)


@pytest.mark.parametrize("loss, domain, d, n, lam_reg", GRID)
def test_decreasing_recursion_matches_the_reference(loss, domain, d, n, lam_reg):
    g = geometry(loss, domain, d)
    rec = down_recursion.__wrapped__(g, n, lam_reg)
    compare(rec, lambdas(rec, g, n, lam_reg))


@pytest.mark.parametrize("loss, domain, d, n, lam_reg", [s for s in GRID if s[2] in (1, 17)])
def test_smooth_recursion_matches_the_reference(loss, domain, d, n, lam_reg):
    g = geometry(loss, domain, d)
    s = (g.G1 + 2.0 * g.G0) / n
    start = lam_reg + math.sqrt(8.0 * g.G0 * g.G2 / n)  # where the square root of Corollary 6.2 vanishes
    rec = smooth_recursion(g, n, lam_reg)
    compare(rec, [lam_reg, start, *within_reach(rec, [start + s, start + 100 * s, start + 3000 * s, 0.01, 1.0])])


@pytest.mark.parametrize("loss, domain, d, n, lam_reg", GRID[::3])
def test_one_step_matches_the_reference(loss, domain, d, n, lam_reg):
    """R(lam) at 3000 points: log-uniform, and packed around the (C1) boundary and the root arg = 0."""
    g = geometry(loss, domain, d)
    rng = np.random.default_rng(d * 7 + n % 97)
    b = c1_threshold(g, n) - lam_reg / g.rho
    k8 = 8.0 * g.alpha * g.r * g.G0 / n - lam_reg
    xs = [*10.0 ** rng.uniform(-12, 2, 1000), *(abs(b) * (1 + rng.uniform(-1e-9, 1e-9, 1000)))]
    xs += list(abs(k8) * (1 + rng.uniform(-1e-9, 1e-9, 1000)))
    down, smooth = down_recursion.__wrapped__(g, n, lam_reg), smooth_recursion(g, n, lam_reg)
    for x in map(float, xs):
        assert kernels.step(*down.kernel, x) == down.step(x), x
        assert kernels.step(*smooth.kernel, x) == smooth.step(x), x


@pytest.mark.parametrize("loss, domain, d, n, lam_reg", GRID[::5])
def test_affine_trajectory_matches_the_reference(loss, domain, d, n, lam_reg):
    g = geometry(loss, domain, d)
    for lam_hat_min, lam in ((1e-3, 1e-3), (0.05, 0.2), (0.05, 0.0), (0.5, 2.0 * g.G1)):
        try:
            up = up_recursion(lam_hat_min, g, n, lam_reg)
        except ValueError:  # t(lam_hat_min + lam_reg) infinite: (12) does not apply
            continue
        N = up.count(lam)
        if N > MAX_REFERENCE_STEPS:
            continue
        assert up.trajectory(lam) == [up.power(lam, k) for k in range(N + 1)]


def test_conditions_failing_at_once():
    """(C1) fails at lambda: N = 1 and the trajectory is [lambda, 0]; m = 0 gives the floor."""
    g = geometry("robust", "cube", 5)
    rec = down_recursion.__wrapped__(g, 10**5, 0.0)
    below = math.nextafter(c1_threshold(g, 10**5), 0.0)
    for lam in (0.0, 1e-300, below):
        assert rec.count(lam) == reference(rec).count(lam) == 1
        assert rec.trajectory(lam) == [lam, 0.0]
    assert rec.inverse(0) == 0.0 and rec._chain.tolist() == []
    up = up_recursion(0.1, g, 10**5, 0.0)
    assert up.count(up.cap) == 0 and up.trajectory(up.cap) == [up.cap]


@pytest.mark.slow
@pytest.mark.parametrize("lam_reg, n", [(0.0, 10**8), (1e-3, 10**7)])
def test_a_million_steps(lam_reg, n):
    """A count and a chain of about 10^6 steps (10^5 with lam_reg > 0), and inverses near their end."""
    rec = down_recursion.__wrapped__(make_geometry(ROBUST, "cube", 5), n, lam_reg)
    ref = reference(rec)
    N = rec.count(0.128)
    assert N == ref.count(0.128) and N >= (10**6 if lam_reg == 0 else 10**5)
    for m in (N - 40, N - 1):
        assert rec.inverse(m) == ref.inverse(m)
    assert rec._chain == ref._chain


def test_the_step_limit_is_kept(monkeypatch):
    rec = down_recursion.__wrapped__(make_geometry(ROBUST, "cube", 5), 10**5, 0.0)
    ref = reference(rec)
    monkeypatch.setattr(R, "MAX_STEPS", 500)
    for r in (rec, ref):
        with pytest.raises(OverflowError):
            r.count(0.128)
        with pytest.raises(OverflowError):
            r.inverse(501)
    assert rec.inverse(500) == ref.inverse(500)


def test_a_one_ulp_change_is_detected():
    """The equalities above are not tautologies: one ulp in a step changes the chain and the inverses.

    Perturbed on either side: the reference's step rounded one ulp up, or the kernel's r/(2 alpha r)
    one ulp larger. (The counts of the grid's lambdas survive such a change; the boundary points do not.)
    """
    rec = down_recursion.__wrapped__(make_geometry(ROBUST, "cube", 5), 10**6, 0.0)
    ref, step = reference(rec), rec.step
    kind, (c1, reg_over_rho, lam_reg, k8, r_over_2ar, G1_n) = rec.kernel
    bumped = DecreasingRecursion(
        step=step, floor=0.0, scale=rec.scale, accelerating=True,
        kernel=(kind, (c1, reg_over_rho, lam_reg, k8, math.nextafter(r_over_2ar, math.inf), G1_n)),
    )
    perturbed = DecreasingRecursion(
        step=lambda x: math.nextafter(step(x), math.inf) if step(x) > 0 else 0.0,
        floor=0.0, scale=rec.scale, accelerating=True,
    )
    ms = range(1, 2000, 37)
    exact = [rec.inverse(m) for m in ms]
    assert exact == [ref.inverse(m) for m in ms] and rec._chain == ref._chain
    for other in (bumped, perturbed):
        assert sum(a != b for a, b in zip([other.inverse(m) for m in ms], exact, strict=True)) > len(ms) // 2
        assert other._chain != rec._chain


def test_kinds_agree():
    assert (R._DOWN, R._SMOOTH) == (kernels.DOWN, kernels.SMOOTH)


FALLBACK_SCRIPT = """
import json, sys
import core.mechanisms.recursion as R
from core.estimator.geometry import make_geometry
from core.estimator.losses import LOSSES

out = {"jit": R.kernels() is not None}
for loss, domain, d, n, lam_reg, lam in json.loads(sys.argv[1]):
    g = make_geometry(LOSSES[loss], domain, d)
    rec = R.down_recursion(g, n, lam_reg)
    N = rec.count(lam)
    inverses = [rec.inverse(m).hex() for m in (1, N // 2, N - 1, N)]
    path = [x.hex() for x in rec.trajectory(lam)]
    up = R.up_recursion(0.5 * lam, g, n, lam_reg)
    rise = [x.hex() for x in up.trajectory(lam)]
    out[repr((loss, domain, d, n, lam_reg, lam))] = [N, inverses, path, rise]
print(json.dumps(out))
"""
FALLBACK_CASES = [
    ("robust", "cube", 5, 10**6, 0.0, 0.128),
    ("logistic", "ball", 17, 10**7, 1e-3, 0.01),
    ("robust", "ball", 50, 10**5, 1e-3, 0.3),
]


def run_script(no_jit: bool) -> dict:
    env = {**os.environ, "PSP_NO_JIT": "1" if no_jit else "0", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", FALLBACK_SCRIPT, json.dumps(FALLBACK_CASES)],
        env=env, cwd=ROOT, capture_output=True, text=True, check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.slow
def test_the_fallback_gives_the_same_numbers():
    """PSP_NO_JIT=1 in a fresh process (the pure-Python path) against the compiled path in another."""
    fallback, compiled = run_script(no_jit=True), run_script(no_jit=False)
    assert fallback.pop("jit") is False and compiled.pop("jit") is True
    assert fallback == compiled
    assert len(fallback) == len(FALLBACK_CASES) and all(v[0] > 1 for v in fallback.values())
