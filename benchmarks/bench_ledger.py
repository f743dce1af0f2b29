"""What a charge costs on each durable ledger store, in the same run: the SQLite file against PostgreSQL.

200 charges of (0.001, 1e-9) on one population, each through `Ledger.spend` (its cap check, its parts and its entry
in one transaction, the connection each charge opens included), --runs times on a fresh ledger of each store; the
median charge time per run, and the ratio of the medians. PostgreSQL is pgserver's (requirements-dev.txt), started
here in a temporary folder, fsync on (as a deployment runs it), reached over its Unix socket. Prints Markdown
(docs/benchmarks.md, "The ledger's stores").

    python benchmarks/bench_ledger.py [--charges 200] [--runs 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pgserver  # noqa: E402
import psycopg  # noqa: E402

from core.data.spec import AcsSpec  # noqa: E402
from core.privacy.ledger_store import open_ledger  # noqa: E402


def charges(url: str, count: int) -> float:
    """The median time of `count` charges on a fresh ledger at url, in milliseconds."""
    ledger = open_ledger(url)
    people = AcsSpec(("CA",)).population()
    ledger.set_cap(people, (1e6, 1e-2))
    times = []
    for _ in range(count):
        start = time.perf_counter()
        ledger.spend(people, 0.001, 1e-9)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--charges", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="psp-bench-"))
    server = pgserver.get_server(folder / "pg", cleanup_mode="stop")
    rows = []
    try:
        for run in range(args.runs):
            sqlite = charges(str(folder / f"ledger-{run}.sqlite3"), args.charges)
            name = f"bench_{uuid.uuid4().hex[:12]}"
            with psycopg.connect(server.get_uri(), autocommit=True) as db:
                db.execute(f"CREATE DATABASE {name}")
            postgres = charges(server.get_uri(name), args.charges)
            rows.append((sqlite, postgres))
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
    print("| run | SQLite: median charge (ms) | PostgreSQL: median charge (ms) | ratio |")
    print("|---|---|---|---|")
    for i, (s, p) in enumerate(rows, 1):
        print(f"| {i} | {s:.2f} | {p:.2f} | {p / s:.2f} |")
    s, p = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
    print(f"| median | {s:.2f} | {p:.2f} | {p / s:.2f} |")


if __name__ == "__main__":
    main()
