"""Which compiled loops run: core.estimator.kernels (numba), or None without numba or with PSP_NO_JIT=1.

Two kinds of callers. The recursions (core.mechanisms.recursion) and the fit's residuals (core.estimator.fit) give the
same bits compiled or not, so they take `kernels()`, which never waits: while a background build runs, the
pure-Python loops answer. The fit's Gram, whose compiled sum differs in the last bits, takes `kernels(wait=True)`
from many rows on, so that what it returns never depends on when it was asked; DP-SGD's steps (`jit`) are compiled
in the calling process on their first call.

A numba that is installed but will not import, or kernels that fail to build, leave the pure-Python loops on for
good, as without numba: a failure never stops a release and never leaves a caller waiting.

Compiling the kernels takes a few seconds the first time on a machine (numba then keeps the machine code in
__pycache__). A server calls `build_in_background()` at start: the build runs in a child process, on another core
and off this process's lock, and a first request is served by the pure-Python loops meanwhile. Once a child has
built the cache (`cache_is_warm`), no child is started again: a server (ui.boot.lifespan) loads the kernels before it
takes a request, and `build_in_background` loads them on its thread.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import platform
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

_ROOT = Path(__file__).resolve().parents[2]
_KERNELS = Path(__file__).with_name("kernels.py")
_lock = threading.Lock()
_built = threading.Event()  # set once the kernels are loaded in this process, or known to be off
_kernels: ModuleType | None = None
_building = False


def _off() -> bool:
    """PSP_NO_JIT=1, or no numba to import (found without importing it: a fifth of a second a process)."""
    return os.environ.get("PSP_NO_JIT", "0") != "0" or importlib.util.find_spec("numba") is None


def _load() -> None:
    """Import the kernels in this process (compiling those numba has not cached yet), once; on any failure the
    pure-Python loops stay on."""
    global _kernels
    with _lock:
        if _built.is_set():
            return
        try:
            if not _off():
                from core.estimator import kernels

                kernels.warm()
                _kernels = kernels
        except Exception:  # a numba that will not import (a NumPy it does not support) or will not compile
            logging.getLogger(__name__).exception("the compiled kernels are off: they could not be loaded")
        finally:
            _built.set()


def kernels(wait: bool = False) -> ModuleType | None:
    """The compiled kernels, or None without numba or with PSP_NO_JIT=1; also None while a background build runs,
    unless wait (then the build is awaited). Without a background build, the first call loads them here."""
    if _built.is_set():
        return _kernels
    if _building and not wait:
        return None
    if _building:
        _built.wait()
        return _kernels
    _load()
    return _kernels


class _Compiled:
    """A function numba compiles on its first call (numba imported then, not before), its machine code cached like
    the kernels'; compiled in this process whether or not a background build runs, so its results never depend on
    one."""

    def __init__(self, function: Callable) -> None:
        self._function = function
        self._compiled: Callable | None = None

    def __call__(self, *args: object) -> object:
        if self._compiled is None:
            try:
                import numba

                self._compiled = numba.njit(cache=True, nogil=True)(self._function)
            except ImportError:  # a numba that will not import: the same loop, in Python
                self._compiled = self._function
        return self._compiled(*args)


def jit(function: Callable) -> Callable | None:
    """function compiled by numba when first called, or None when the kernels are off."""
    return None if _off() else _Compiled(function)


def build_in_background() -> None:
    """Start building the kernels in a child process, unless they are loaded, off, or building already; when it
    ends (built or not), load them here (from numba's cache, or compiled here if the child could not cache)."""
    global _building
    if _built.is_set() or _building:  # every run of app.py asks: never wait on the lock a build holds
        return
    with _lock:
        if _built.is_set() or _building or _off():
            return
        _building = True
    threading.Thread(target=_build, name="psp-kernels", daemon=True).start()


def _forked() -> None:
    """A forked child has no build thread: it loads the kernels itself when first asked (numba's cache, if the build
    got that far)."""
    global _building, _lock
    _building = False
    _lock = threading.Lock()  # the parent's build thread may have held it at the fork, and it is not here to free it


os.register_at_fork(after_in_child=_forked)


def _build() -> None:
    if not cache_is_warm():  # a warm cache loads here as fast as in a child, which would only add its own start
        try:
            subprocess.run([sys.executable, "-m", "core.estimator.compiled"], cwd=_ROOT, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        except (OSError, subprocess.SubprocessError):
            pass  # compiled here instead, by _load
    _load()


def _warm_file() -> Path:
    """Beside numba's cache of the kernels: NUMBA_CACHE_DIR when set, else kernels.py's __pycache__."""
    folder = os.environ.get("NUMBA_CACHE_DIR")
    return Path(folder) / "psp-kernels.warm" if folder else _KERNELS.parent / "__pycache__" / "kernels.warm"


def cache_fingerprint() -> str:
    """What numba's cache of the kernels depends on, read without importing numba: kernels.py's stamp (numba's own
    key), numba's install, this Python and this processor. A fingerprint that matches when the cache does not only
    moves the compile into this process: the results are the same bits either way."""
    spec = importlib.util.find_spec("numba")
    numba_file = Path(spec.origin) if spec and spec.origin else None
    cpu = Path("/proc/cpuinfo")
    lines = cpu.read_text(errors="replace").splitlines() if cpu.exists() else []
    processor = [line for line in lines if line.startswith(("model name", "flags"))][:2]
    stamps = [(s.st_mtime_ns, s.st_size) for s in (f.stat() for f in (_KERNELS, numba_file) if f is not None)]
    return repr((stamps, sys.version, platform.machine(), processor))


def cache_is_warm() -> bool:
    """The kernels' child (`python -m core.estimator.compiled`) has built numba's cache for this fingerprint."""
    try:
        return _warm_file().read_text() == cache_fingerprint()
    except OSError:
        return False


def mark_cache_warm() -> None:
    """Noted by the child once every kernel is compiled and cached (whole or not at all, for a server reading it
    meanwhile); a folder it cannot write leaves the child on."""
    warm = _warm_file()
    partial = warm.with_name(f"{warm.name}.{os.getpid()}")
    try:
        partial.write_text(cache_fingerprint())
        os.replace(partial, warm)
    except OSError:
        partial.unlink(missing_ok=True)


if __name__ == "__main__":  # build_in_background's child: compile (or load) every kernel into numba's cache, note it
    from core.estimator import kernels

    kernels.warm()
    mark_cache_warm()
