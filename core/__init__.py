"""Private release of a single regression parameter (Asi, Duchi & Talwar 2025), stage by stage.

The packages, from the bottom up (tests/test_layers.py keeps every import pointing down):

- `privacy`: whom a guarantee protects and what is spent, by whom (population, unit, marks, gaussian, accounting,
  access, ledger, ledger_store, charge);
- `data`: which data (dataset, synthetic, acs, csvfile, formats, synthetic_pums, spec);
- `estimator`: the estimator (1) and its certified fit (losses, geometry, rounding, model, kernels, fit, problem);
- `mechanisms`: the paper's algorithms and the baselines (recursion, certificates, stability, release, pipeline,
  fallback, curvature, inference, full_vector, table, baselines, dp_sgd, trial);
- `methods`: the compared methods (registry, local_fallback, compare);
- `teaching`: what-ifs, diagnosis, the planner, the attacker's view and the paper's experiments;
- at the top: `settings` (every setting's one range), `plan` (a release plan and the one path of a charged
  release), `report` (the documents), `reproduce` (a run as a script), `cli` (`python -m core`) and `errors`.

The names below are the public API, imported when first used (so `import core` costs nothing). Modules of an
earlier, flat layout (`core.pipeline`, `core.accounting`, ...) still import, as the modules they became: a script
written against them (a downloaded reproduce script) keeps working. Formulas: docs/method.md.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

# Where each public name lives.
API = {
    "ReleasePlan": "core.plan", "TablePlan": "core.plan", "execute": "core.plan", "execute_table": "core.plan",
    "charge_and_execute": "core.plan", "charge_and_certify": "core.plan", "charge_and_finish": "core.plan",
    "charge_and_release_table": "core.plan", "waiting": "core.plan",
    "prepare_spec": "core.mechanisms.pipeline", "prepare": "core.mechanisms.pipeline",
    "run_private": "core.mechanisms.pipeline", "make_rng": "core.mechanisms.pipeline",
    "make_budget": "core.privacy.accounting", "split_budget": "core.privacy.accounting",
    "ModelSpec": "core.estimator.model",
    "SyntheticSpec": "core.data.spec", "AcsSpec": "core.data.spec", "CsvSpec": "core.data.spec",
    "PumsSpec": "core.data.spec",
    "open_ledger": "core.privacy.ledger_store", "open_charged": "core.privacy.charge", "CURATOR": "core.privacy.access",
    "PspError": "core.errors", "InputError": "core.errors", "Refused": "core.errors",
    "LedgerUnavailable": "core.errors",
}

# The flat layout's modules, and the modules they became.
MOVED = {
    "core.population": "core.privacy.population", "core.marks": "core.privacy.marks",
    "core.gaussian": "core.privacy.gaussian", "core.accounting": "core.privacy.accounting",
    "core.access": "core.privacy.access", "core.ledger": "core.privacy.ledger",
    "core.ledger_store": "core.privacy.ledger_store", "core.charge": "core.privacy.charge",
    "core.spec": "core.data.spec",
    "core.losses": "core.estimator.losses", "core.geometry": "core.estimator.geometry",
    "core.rounding": "core.estimator.rounding", "core.model": "core.estimator.model",
    "core.kernels": "core.estimator.kernels", "core.fit": "core.estimator.fit",
    "core.problem": "core.estimator.problem",
    "core.recursion": "core.mechanisms.recursion", "core.certificates": "core.mechanisms.certificates",
    "core.stability": "core.mechanisms.stability", "core.release": "core.mechanisms.release",
    "core.curvature": "core.mechanisms.curvature", "core.inference": "core.mechanisms.inference",
    "core.fallback": "core.mechanisms.fallback", "core.full_vector": "core.mechanisms.full_vector",
    "core.baselines": "core.mechanisms.baselines", "core.dp_sgd": "core.mechanisms.dp_sgd",
    "core.table": "core.mechanisms.table", "core.pipeline": "core.mechanisms.pipeline",
    "core.trial": "core.mechanisms.trial",
    "core.compare": "core.methods.compare", "core.local_fallback": "core.methods.local_fallback",
    "core.whatif": "core.teaching.whatif", "core.diagnosis": "core.teaching.diagnosis",
    "core.planner": "core.teaching.planner", "core.attack": "core.teaching.attack",
    "core.experiments": "core.teaching.experiments",
}


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports a module of the flat layout as the module it became (the same object, so its classes are the same)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(MOVED[spec.name])
        self._own_spec = module.__spec__  # importlib gives the module the alias's spec next; it gets its own back
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._own_spec


if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
    sys.meta_path.append(_Moved())


def __getattr__(name: str) -> Any:
    if name in API:
        return getattr(importlib.import_module(API[name]), name)
    raise AttributeError(f"module 'core' has no attribute {name!r}")


__all__ = sorted(API)
