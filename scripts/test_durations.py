"""Per-file test durations from a pytest JUnit XML report -> tests/durations.json (what conftest.py orders by).

    .venv/bin/python -m pytest -n 2 --dist loadfile --junitxml=/tmp/junit.xml
    .venv/bin/python scripts/test_durations.py /tmp/junit.xml            # writes tests/durations.json
    .venv/bin/python scripts/test_durations.py /tmp/compiles             # or from a JAXSERVE_COMPILE_REPORT folder

Why: ``make test`` gives each of two workers whole files (``--dist loadfile``); a worker takes the next file
in the queue when it runs low. Handed out longest first (``tests/conftest.py`` sorts the collection by these
seconds, and ``--no-loadscope-reorder`` keeps xdist from re-sorting by test count), the two workers end
within about one file of each other; handed out by test count, a 4-minute parity module with 26 tests could
start last and run alone. The figures only order the queue: no test reads them, and a file missing from them
(new since the last regeneration) is placed by the median.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support.compile_report
OUT = ROOT / "tests" / "durations.json"


def file_of(classname: str) -> str | None:
    """``tests.gateway.test_load`` (or a class in it) -> ``tests/gateway/test_load.py`` (the longest dotted prefix that is
    a file in this checkout)."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = Path(*parts[:n]).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
    return None


def durations(junit: Path) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = file_of(case.get("classname", ""))
        if path is not None:
            seconds[path] += float(case.get("time") or 0.0)
    return {path: round(s, 1) for path, s in sorted(seconds.items(), key=lambda kv: -kv[1])}


def durations_from_compile_report(folder: Path) -> dict[str, float]:
    """The same table from a run's compile accounting (``JAXSERVE_COMPILE_REPORT``, tests/support/compile_report.py):
    each test's setup + call + teardown seconds, summed per file."""
    from tests.support.compile_report import read_reports  # the same reading as scripts/compile_report.py

    seconds: dict[str, float] = defaultdict(float)
    for nodeid, row in read_reports(folder)[0].items():
        if "::" in nodeid:  # not "(outside tests)"
            seconds[nodeid.split("::")[0]] += row.get("seconds", 0.0)
    return {path: round(s, 1) for path, s in sorted(seconds.items(), key=lambda kv: -kv[1])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "report", type=Path, help="pytest --junitxml report of a whole run, or a JAXSERVE_COMPILE_REPORT folder"
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    table = durations_from_compile_report(args.report) if args.report.is_dir() else durations(args.report)
    args.out.write_text(json.dumps(table, indent=1) + "\n")
    total = sum(table.values())
    print(
        f"{len(table)} files, {total:.0f} s of tests in all; longest: "
        + ", ".join(f"{p} {s:.0f} s" for p, s in list(table.items())[:5])
    )


if __name__ == "__main__":
    main()
