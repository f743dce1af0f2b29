"""Which compiled loops run: core.estimator.kernels (numba), or None without numba or with PSP_NO_JIT=1, when the
pure-Python loops of core.mechanisms.recursion and core.estimator.fit give the same results, bit for bit."""

from __future__ import annotations

import os
from types import ModuleType


def _load_kernels() -> ModuleType | None:
    """core.estimator.kernels, or None without numba or with PSP_NO_JIT=1: the pure-Python loops then run."""
    if os.environ.get("PSP_NO_JIT", "0") != "0":
        return None
    try:
        from core.estimator import kernels
    except ImportError:
        return None
    return kernels


KERNELS = _load_kernels()
