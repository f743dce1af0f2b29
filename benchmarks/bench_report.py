"""Server time of the Report opened at a publication's permanent address, against the Start page in the same process.

A ledger file holds releases published through `core.plan` (a census coefficient from the SYNTHETIC California file
and a synthetic table, as the command line makes them). Each measured run is a fresh AppTest session (a new browser
tab): `at.run()` of app.py on /report?release=<uid>, the server's side of its first paint, without the network or
the browser's drawing. The peer is the same session's run of the bare Start page (`/`), measured alternately in the
same process. The first run of each pays the imports; the medians are over the runs after it. Target: the
permanent address's median <= 1 s.

    python benchmarks/bench_report.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["PSP_LEDGER"] = str(Path(tempfile.mkdtemp(prefix="psp-bench-report-")) / "ledger.sqlite3")

from streamlit.testing.v1 import AppTest  # noqa: E402

from core.data.spec import PumsSpec  # noqa: E402
from core.estimator.model import ModelSpec  # noqa: E402
from core.mechanisms.pipeline import prepare_spec  # noqa: E402
from core.plan import ReleasePlan, charge_and_execute  # noqa: E402
from core.privacy.access import CURATOR  # noqa: E402
from core.privacy.accounting import make_budget  # noqa: E402
from core.privacy.ledger_store import open_ledger  # noqa: E402

PUMS = ROOT / "tests" / "data" / "SYNTHETIC_psam_p06_CA_2018_1-Year.csv"
TARGET_S = 1.0


def publish() -> str:
    """A census release charged to the ledger; its uid."""
    book = open_ledger()
    book.set_default_cap((100.0, 1e-3))
    spec = PumsSpec.from_path(PUMS)
    problem = prepare_spec(spec.load(PUMS.read_bytes()), ModelSpec("logistic").resolve(17), spec)
    j = problem.feature_names.index("female")
    plan = ReleasePlan(data=spec, model=problem.model, target=j, name="female", budget=make_budget(4.0, 1e-6),
                       fallback=True)
    return charge_and_execute(plan, problem, book, spender=CURATOR)[1].uid


def first_run(query: dict[str, str], page: str | None) -> float:
    """One new session's first run (app.py, then the page when named), in seconds."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    start = time.perf_counter()
    at.run()
    if page is not None:
        at.switch_page(page).run()
    took = time.perf_counter() - start
    assert not at.exception, [e.value for e in at.exception]
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    uid = publish()
    address, start = [], []
    for _ in range(args.runs + 1):
        address.append(first_run({"release": uid}, "pages/report.py"))
        start.append(first_run({}, None))
    a, s = statistics.median(address[1:]), statistics.median(start[1:])
    print(f"| page | first run (cold) | median of {args.runs} new sessions |")
    print("|---|---|---|")
    print(f"| /report?release=<uid> (Start's app.py run, then the Report) | {address[0]:.2f} s | {a:.3f} s |")
    print(f"| / (the Start page) | {start[0]:.2f} s | {s:.3f} s |")
    print(f"\nratio address / Start: {a / s:.2f}; target: the address's median <= {TARGET_S:g} s: "
          f"{'met' if a <= TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
