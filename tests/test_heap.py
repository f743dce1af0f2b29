"""ui.heap: a served app's long-lived objects are frozen once new modules are loaded, and only then."""

from __future__ import annotations

import sys
import types

from ui import heap


def recorded(monkeypatch, served: bool = True) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(heap.gc, "collect", lambda *a: calls.append("collect"))
    monkeypatch.setattr(heap.gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(heap.runtime, "exists", lambda: served)
    monkeypatch.setattr(heap, "_settled", 0)
    return calls


def test_new_modules_are_collected_then_frozen_once(monkeypatch):
    calls = recorded(monkeypatch)
    assert heap.settle()
    assert calls == ["collect", "freeze"]  # garbage is collected first, never frozen
    assert not heap.settle()  # a later run that loaded nothing: no collection, no freeze
    assert calls == ["collect", "freeze"]


def test_a_run_that_loads_a_module_freezes_again(monkeypatch):
    calls = recorded(monkeypatch)
    heap.settle()
    monkeypatch.setitem(sys.modules, "ui_heap_test_module", types.ModuleType("ui_heap_test_module"))
    assert heap.settle()
    assert calls == ["collect", "freeze"] * 2


def test_nothing_is_frozen_outside_a_server(monkeypatch):
    """AppTest (no Runtime) neither collects after a run nor keeps a server's heap: nothing to settle."""
    calls = recorded(monkeypatch, served=False)
    assert not heap.settle()
    assert calls == []
