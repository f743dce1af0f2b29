"""The compiled kernels built in the background (core.estimator.compiled): a server's first request is answered by
the pure-Python loops while a child process builds them, with the same numbers it gives once they are loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from forking import in_forked_child

from core.data.synthetic import synthetic
from core.estimator import compiled
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.mechanisms.table import release_table
from core.privacy.accounting import make_budget

ROOT = Path(__file__).resolve().parents[1]
kernels = pytest.importorskip("core.estimator.kernels")
pytestmark = pytest.mark.skipif(compiled.kernels() is None, reason="the compiled loops are off (PSP_NO_JIT=1)")

DISPATCHERS = ("count", "power", "trajectory", "extend_chain", "affine_power", "affine_trajectory", "gram_rows",
               "residual_rows")


def test_warm_compiles_every_signature_a_release_uses(monkeypatch):
    """After kernels.warm(), releases of both losses (the Gaussian step, the fallback, a table) and a fit large
    enough for the compiled Gram add no signature: the child's build leaves nothing for a request to compile."""
    import core.estimator.fit as fitting

    kernels.warm()
    before = {name: len(getattr(kernels, name).signatures) for name in DISPATCHERS}
    monkeypatch.setattr(fitting, "COMPILED_GRAM_ROWS", 0)
    for loss, n in (("robust", 5_000), ("logistic", 20_000)):
        data = synthetic(n, 3, loss, seed=1)
        problem = prepare(data.X, data.y, loss=loss)
        for eps in (0.5, 8.0):
            run_private(problem, 0, make_budget(eps, 1e-6), make_rng(2), fallback=True)
        release_table(problem, "all", make_budget(4.0, 1e-6), make_rng(3))
    assert {name: len(getattr(kernels, name).signatures) for name in DISPATCHERS} == before


BUILD_SCRIPT = """
import json, time
from core.data.synthetic import synthetic
from core.estimator import compiled
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.privacy.accounting import make_budget

def release():
    data = synthetic(20_000, 3, "logistic", seed=1)
    run = run_private(prepare(data.X, data.y, loss="logistic"), 0, make_budget(2.0, 1e-6), make_rng(5), fallback=True)
    return [run.lambda_min.lambda_hat, run.lambda_max.lambda_hat, run.release.value, list(run.release.interval or ())]

compiled.build_in_background()
during = compiled.kernels() is None
first = release()
for _ in range(1200):
    if compiled.kernels() is not None:
        break
    time.sleep(0.1)
print(json.dumps({"during": during, "built": compiled.kernels() is not None, "first": first, "after": release()}))
"""


@pytest.mark.slow
def test_a_background_build_serves_the_same_numbers_before_and_after(tmp_path):
    """On a machine with no cached machine code (a fresh NUMBA_CACHE_DIR): while the child builds, kernels() is
    None and a release runs on the pure-Python loops; once built, the same release gives the same bits; and an
    eager process (the command line's way) gives them too."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", BUILD_SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["during"] and got["built"]
    assert got["first"] == got["after"]
    assert (tmp_path / "numba" / "psp-kernels.warm").read_text() == compiled.cache_fingerprint()  # the child noted it
    data = synthetic(20_000, 3, "logistic", seed=1)
    here = run_private(prepare(data.X, data.y, loss="logistic"), 0, make_budget(2.0, 1e-6), make_rng(5), fallback=True)
    assert got["after"] == [here.lambda_min.lambda_hat, here.lambda_max.lambda_hat, here.release.value,
                            list(here.release.interval or ())]


class Children:
    """The kernels' children a build would start, recorded instead; each ends when `end` is set."""

    def __init__(self) -> None:
        self.commands: list[list[str]] = []
        self.end = threading.Event()

    def run(self, command: list[str], **_: object) -> None:
        self.commands.append(command)
        self.end.wait(30)


@pytest.fixture
def children(monkeypatch, tmp_path) -> Children:
    """A build from scratch in this process: nothing loaded or building, numba's cache (and the child's note) in
    tmp_path, and no child started for real."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    recorded = Children()
    monkeypatch.setattr(compiled.subprocess, "run", recorded.run)
    monkeypatch.setattr(compiled, "_built", threading.Event())
    monkeypatch.setattr(compiled, "_building", False)
    return recorded


@pytest.mark.parametrize("noted", [True, False])
def test_a_cache_the_child_built_is_loaded_without_a_child(children, tmp_path, noted):
    """With the child's note that the cache is built for this fingerprint, a build loads the kernels on its thread and
    starts no child; without it (or with another fingerprint's), the child runs first."""
    compiled.mark_cache_warm()
    assert compiled.cache_is_warm() and (tmp_path / "psp-kernels.warm").exists()
    if not noted:
        (tmp_path / "psp-kernels.warm").write_text(compiled.cache_fingerprint() + " of another machine")
        assert not compiled.cache_is_warm()
    children.end.set()
    compiled.build_in_background()
    assert compiled.kernels(wait=True) is kernels
    assert len(children.commands) == (0 if noted else 1)


@pytest.mark.parametrize("warm", [True, False])
def test_a_server_start_loads_a_warm_cache_before_its_first_request(children, warm):
    """ui.boot.lifespan: with the child's note, the kernels are loaded before the server takes a request and no child
    starts; without it, the child's build is under way (and nothing waits for it)."""
    import asyncio

    from ui.boot import lifespan

    if warm:
        compiled.mark_cache_warm()

    async def start() -> bool:
        async with lifespan(None):
            return compiled._built.is_set()

    started = []  # on a thread of its own: this process may already run an event loop (Playwright's)
    server = threading.Thread(target=lambda: started.append(asyncio.run(start())))
    server.start()
    server.join(60)
    assert started == [warm]
    children.end.set()
    assert compiled.kernels(wait=True) is kernels  # the child's build ends (here at once) and loads them
    assert len(children.commands) == (0 if warm else 1)


def test_a_child_forked_during_a_build_loads_the_kernels_itself(monkeypatch):
    """A fork copies "building" but not the build's thread: the child must not wait on it forever."""
    monkeypatch.setattr(compiled, "_built", threading.Event())
    monkeypatch.setattr(compiled, "_building", True)
    assert compiled.kernels() is None  # building: the pure-Python loops answer here
    in_forked_child(lambda: compiled.kernels(wait=True) is not None, 60,
                    "the forked child waited for a build that runs in its parent only")


def test_a_child_forked_while_the_build_holds_the_lock_is_not_stuck_on_it(monkeypatch):
    """The build thread holds the module's lock while it loads the kernels; a fork then must not leave the child a
    lock that nobody will release."""
    monkeypatch.setattr(compiled, "_built", threading.Event())
    monkeypatch.setattr(compiled, "_building", True)
    monkeypatch.setattr(compiled, "_lock", threading.Lock())
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with compiled._lock:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    try:
        in_forked_child(lambda: compiled.kernels(wait=True) is not None, 60,
                        "the forked child waited for a lock that only its parent's thread could release")
    finally:
        release.set()
        holder.join()


BROKEN_NUMBA_SCRIPT = """
import json, time
import numpy as np
from core.data.synthetic import synthetic
from core.estimator import compiled
from core.mechanisms.pipeline import make_rng, prepare, run_private
from core.privacy.accounting import make_budget
from core.mechanisms import dp_sgd

eager = compiled.kernels()
compiled._built.clear()
compiled.build_in_background()
start = time.perf_counter()
waited = compiled.kernels(wait=True)
data = synthetic(2_000, 3, "logistic", seed=1)
run = run_private(prepare(data.X, data.y, loss="logistic"), 0, make_budget(2.0, 1e-6), make_rng(5), fallback=True)
idx, offsets = dp_sgd.poisson_batches(np.random.default_rng(0), 1_000, 0.1, 3)  # DP-SGD's loop, in Python
distinct = all(len(set(idx[a:b].tolist())) == b - a for a, b in zip(offsets, offsets[1:]))
print(json.dumps({"eager": eager is None, "waited": waited is None, "seconds": time.perf_counter() - start,
                  "status": run.release.status, "distinct": distinct and offsets[-1] > 0}))
"""


@pytest.mark.slow
def test_a_numba_that_will_not_import_leaves_the_pure_loops_on_and_nobody_waiting(tmp_path):
    """numba installed but broken (here a package that raises ImportError, as a numba does under a NumPy it does not
    support): the kernels are off, a background build ends at once instead of leaving waiters hanging, and a
    release still runs."""
    fake = tmp_path / "fake" / "numba"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("Numba needs NumPy 2.2 or less")\n')
    env = {**os.environ, "PYTHONPATH": f"{fake.parent}{os.pathsep}{ROOT}"}
    out = subprocess.run([sys.executable, "-c", BROKEN_NUMBA_SCRIPT], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["eager"] and got["waited"] and got["seconds"] < 60
    assert got["status"] in ("released", "fallback", "bottom") and got["distinct"]
