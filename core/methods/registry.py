"""Every method the project releases or compares, in one table: its name, its label, whether it is private, its
colour, what it releases and whether it states an interval.

Compare (which methods exist, which are vectors, which state intervals), the command line's --methods, the
Experiments figures (which curves are not private) and the app's theme (labels and colours: Okabe-Ito, safe for
colour-blind readers) all read this table. A method is its own module (its mechanism and its runner,
core.mechanisms.trial) and one entry here: core.methods.compare draws every method through the entry's runner.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.mechanisms.baselines import objective_runner, oracle_runner, output_runner
from core.mechanisms.dp_sgd import dp_sgd_runner
from core.mechanisms.full_vector import algorithm3, algorithm7, certified_runner
from core.mechanisms.pipeline import local_runner
from core.mechanisms.trial import Runner
from core.methods.local_fallback import local_fallback_runner

SINGLE, VECTOR, REFERENCE = "single", "vector", "reference"  # u^T theta, the whole theta, a curve drawn for scale


@dataclass(frozen=True)
class Method:
    """One method: name (as in links, documents and CSVs), label (in words), private (its releases are (eps,
    delta)-DP), colour (hex), kind (SINGLE, VECTOR or REFERENCE), interval (it states an interval for u^T theta),
    compared (among Compare's default methods), runner (core.mechanisms.trial: how Compare draws it, from the method's
    own module; None for the Experiments' reference curves, which core.teaching.experiments draws)."""

    name: str
    label: str
    private: bool
    colour: str
    kind: str = SINGLE
    interval: bool = False
    compared: bool = True
    runner: Runner | None = None


REGISTRY: dict[str, Method] = {m.name: m for m in (
    # Okabe-Ito colours: blue for the paper's method, grey for the non-private reference.
    Method("local", "Local (Algorithm 5)", True, "#0072B2", interval=True, runner=local_runner),
    Method("oracle", "Oracle · not private", False, "#999999", interval=True, runner=oracle_runner),
    Method("output_perturbation", "Output perturbation", True, "#E69F00", runner=output_runner),  # orange
    Method("objective_perturbation", "Objective perturbation", True, "#009E73", runner=objective_runner),  # green
    Method("dp_sgd", "DP-SGD", True, "#CC79A7", runner=dp_sgd_runner),  # reddish purple
    Method("local_fallback", "Local with fallback", True, "#56B4E9", interval=True, compared=False,  # sky blue
           runner=local_fallback_runner),
    Method("algorithm3", "Algorithm 3", True, "#0072B2", VECTOR, runner=certified_runner(algorithm3)),
    Method("algorithm7", "Algorithm 7", True, "#D55E00", VECTOR, runner=certified_runner(algorithm7)),  # vermillion
    # The Experiments figures' own curves (core.teaching.experiments): never a Compare method.
    Method("algorithm2", "Algorithm 2 (λ̂min)", True, "#0072B2", REFERENCE, compared=False),
    # Census figures draw these beside local, local_fallback, objective perturbation and the oracle, never beside
    # output perturbation or Algorithm 7: their colours are free there.
    Method("local_fallback_paper", "Local with fallback (paper's split)", True, "#E69F00", REFERENCE,
           compared=False),
    Method("local_fallback_app", "The app's default (Algorithm 5 with fallback)", True, "#D55E00", REFERENCE,
           compared=False),
    Method("score_attack_rate", "Score-attack rate (constant 1)", False, "#000000", REFERENCE, compared=False),
    Method("dp_sgd_tuned", "DP-SGD tuned on the fit", False, "#CC79A7", REFERENCE, compared=False),
)}


def names(*, kind: str | None = None, compared: bool | None = None, interval: bool | None = None,
          private: bool | None = None) -> tuple[str, ...]:
    """The methods with the given properties, in the table's order."""
    return tuple(m.name for m in REGISTRY.values()
                 if (kind is None or m.kind == kind) and (compared is None or m.compared == compared)
                 and (interval is None or m.interval == interval) and (private is None or m.private == private))
