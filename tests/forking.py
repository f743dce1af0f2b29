"""A check run in a forked child, for tests of what a fork keeps and drops (threads, a background build)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest


def in_forked_child(check: Callable[[], bool], seconds: float, failure: str) -> None:
    """Fork, run check() in the child and fail unless it returns True within `seconds` (the child is killed then:
    a child waiting on a thread that only its parent has would never end)."""
    pid = os.fork()
    if pid == 0:  # the child: exit at once whatever happens, without pytest's teardown
        code = 4
        try:
            code = 0 if check() else 3
        finally:
            os._exit(code)
    for _ in range(int(seconds * 10)):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail(failure)
    assert os.waitstatus_to_exitcode(status) == 0, f"the child's check failed (exit {status})"
