"""Summarize a suite run's JAX compile accounting (tests/support/compile_report.py) as JSON and tables.

    JAXSERVE_COMPILE_REPORT=/tmp/compiles .venv/bin/python -m pytest -n 2 --dist loadfile --no-loadscope-reorder
    .venv/bin/python scripts/compile_report.py /tmp/compiles [--top 25] [--json out.json]

Prints the totals (test seconds; trace, lower and XLA compile seconds; programs; persistent-cache hits), then
the files, tests and jitted functions that spent the most seconds compiling."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.compile_report import read_reports  # noqa: E402

PHASES = ("trace", "lower", "compile")


def jax_seconds(row) -> float:
    return sum(row.get(p, 0.0) for p in PHASES)


def summarize(tests: dict, functions: dict, top: int) -> dict:
    by_file: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for nodeid, row in tests.items():
        for k, v in row.items():
            by_file[nodeid.split("::")[0]][k] += v
    totals = {k: round(sum(r.get(k, 0.0) for r in tests.values()), 1) for k in ("seconds", *PHASES)}
    totals["programs"] = int(sum(r.get("programs", 0) for r in tests.values()))
    totals["cache_hits"] = int(sum(r.get("cache_hits", 0) for r in tests.values()))
    totals["jax_share_of_test_seconds"] = round(
        sum(jax_seconds(r) for r in tests.values()) / max(totals["seconds"], 1e-9), 3
    )

    def rows(table, n):
        ranked = sorted(table.items(), key=lambda kv: -jax_seconds(kv[1]))[:n]
        return [
            {"name": name, **{k: round(v, 1) for k, v in row.items()}, "jax": round(jax_seconds(row), 1)}
            for name, row in ranked
        ]

    return {
        "cpu": platform.processor() or platform.machine(),
        "totals": totals,
        "files": rows(by_file, top),
        "tests": rows(tests, top),
        "functions": rows(functions, top),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", type=Path, help="also write the summary here")
    args = ap.parse_args()
    summary = summarize(*read_reports(args.folder), args.top)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary["totals"]))
    for section in ("files", "tests", "functions"):
        print(f"\n{section} by JAX seconds (trace + lower + compile):")
        print(f"{'jax s':>8} {'compile':>8} {'lower':>7} {'trace':>7} {'progs':>6} {'test s':>7}  name")
        for r in summary[section]:
            print(
                f"{r['jax']:8.1f} {r.get('compile', 0):8.1f} {r.get('lower', 0):7.1f} {r.get('trace', 0):7.1f}"
                f" {int(r.get('programs', 0)):6d} {r.get('seconds', 0):7.1f}  {r['name']}"
            )


if __name__ == "__main__":
    main()
