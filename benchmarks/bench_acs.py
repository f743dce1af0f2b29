"""Timing and memory of the ACS income load against folktables' own reader, in one run.

On a California-size SYNTHETIC person file (core.data.synthetic_pums; no census record), each
measurement runs in a fresh process so that its peak resident memory is its own:

- first load: core.data.acs.load_acs_income(["CA"]) with the processed cache removed
  (census CSV to encoded arrays, cache written);
- peer: folktables' ACSDataSource.get_data(["CA"]) + ACSIncome.df_to_numpy on the same file;
- cached reload: load_acs_income(["CA"]) again, median of several calls in one process.

Repeats of the first two are interleaved; the figure is the ratio of their medians.

    python benchmarks/bench_acs.py                      # generates the file under benchmarks/data
    python benchmarks/bench_acs.py --rows 40000 --repeats 1   # quick smoke run
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_RATIO = 0.1
TARGET_PEAK_GB = 0.75
TARGET_CACHED_S = 0.5
CA_ROWS = 379_776  # the size of the 2018 1-Year California person file


def measure(mode: str, root: str) -> dict:
    """Run inside a fresh process: time one mode and report peak memory (ru_maxrss, in GB)."""
    import resource

    from core.data import acs

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    if mode == "first":
        shutil.rmtree(Path(root) / "processed", ignore_errors=True)
        start = time.perf_counter()
        data = acs.load_acs_income(["CA"], root=root)
        seconds, rows = time.perf_counter() - start, data.n
    elif mode == "cached":
        acs.load_acs_income(["CA"], root=root)  # make sure the cache exists
        times = []
        for _ in range(7):
            start = time.perf_counter()
            data = acs.load_acs_income(["CA"], root=root)
            times.append(time.perf_counter() - start)
        seconds, rows = statistics.median(times), data.n
    else:
        import folktables

        start = time.perf_counter()
        source = folktables.ACSDataSource(survey_year="2018", horizon="1-Year", survey="person", root_dir=root)
        X, _, _ = folktables.ACSIncome.df_to_numpy(source.get_data(states=["CA"], download=False))
        seconds, rows = time.perf_counter() - start, X.shape[0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return dict(mode=mode, seconds=seconds, rows=rows, peak_gb=peak, baseline_gb=base)


def run_child(mode: str, root: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", mode, "--root", root], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def ensure_file(root: Path, rows: int) -> Path:
    """The SYNTHETIC CA-size person file, generated once (seeded)."""
    from core.data.acs import census_path
    from core.data.synthetic_pums import write_synthetic_pums

    path = census_path(root, "CA")
    if not path.is_file() or sum(1 for _ in path.open()) - 1 != rows:
        write_synthetic_pums(root, ["CA"], rows=rows, seed=1)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=str(REPO / "benchmarks" / "data" / "acs"))
    parser.add_argument("--rows", type=int, default=CA_ROWS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--measure", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.root)))
        return
    path = ensure_file(Path(args.root), args.rows)
    ours, peer = [], []
    for _ in range(args.repeats):
        ours.append(run_child("first", args.root))
        peer.append(run_child("folktables", args.root))
    cached = run_child("cached", args.root)
    t_ours = statistics.median(r["seconds"] for r in ours)
    t_peer = statistics.median(r["seconds"] for r in peer)
    figures = dict(
        file=str(path),
        file_mb=path.stat().st_size / 2**20,
        rows_in_file=args.rows,
        filtered_rows=ours[0]["rows"],
        first_load_s=t_ours,
        folktables_s=t_peer,
        ratio=t_ours / t_peer,
        first_load_peak_gb=max(r["peak_gb"] for r in ours),
        folktables_peak_gb=max(r["peak_gb"] for r in peer),
        baseline_gb=ours[0]["baseline_gb"],
        cached_reload_s=cached["seconds"],
        runs=dict(first=ours, folktables=peer, cached=cached),
    )
    rows = [
        ("first load (median s)", f"{t_ours:.3f}", ""),
        ("folktables get_data + df_to_numpy (median s)", f"{t_peer:.3f}", ""),
        ("ratio of medians", f"{figures['ratio']:.3f}", f"<= {TARGET_RATIO}"),
        ("first load peak memory (GB)", f"{figures['first_load_peak_gb']:.3f}", f"<= {TARGET_PEAK_GB}"),
        ("folktables peak memory (GB)", f"{figures['folktables_peak_gb']:.3f}", ""),
        ("cached reload (median s)", f"{cached['seconds']:.4f}", f"<= {TARGET_CACHED_S}"),
    ]
    print(f"{path} ({figures['file_mb']:.0f} MB, {args.rows} rows, {figures['filtered_rows']} after the filter)")
    for name, value, target in rows:
        print(f"  {name:<48} {value:>10}  {target}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
