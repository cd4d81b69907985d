"""scripts/test_durations.py: per-file seconds from a JUnit report, longest first (what conftest.py orders by)."""

from __future__ import annotations

import json

from tests.support.scripts import load_script

test_durations = load_script("test_durations")

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_architecture" name="test_a" time="1.25"/>
<testcase classname="tests.runtime.engine.test_engine" name="test_b" time="30.0"/>
<testcase classname="tests.runtime.engine.test_engine" name="test_c" time="12.5"/>
<testcase classname="tests.gateway.test_faults.TestGroup" name="test_d" time="7.0"/>
<testcase classname="tests.no_such_module" name="test_e" time="99.0"/>
</testsuite></testsuites>
"""


def test_seconds_are_summed_per_file_and_listed_longest_first(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(JUNIT)
    table = test_durations.durations(report)
    assert table == {
        "tests/runtime/engine/test_engine.py": 42.5,
        "tests/gateway/test_faults.py": 7.0,  # a class's tests count for its file
        "tests/test_architecture.py": 1.2,  # rounded to 0.1 s (1.25 -> 1.2: round half to even)
    }
    assert list(table.values()) == sorted(table.values(), reverse=True)


def test_the_committed_table_names_files_that_exist():
    table = json.loads((test_durations.ROOT / "tests" / "durations.json").read_text())
    assert table and all((test_durations.ROOT / path).is_file() for path in table)


def test_a_compile_report_folder_gives_the_same_table(tmp_path):
    """Each worker's JAXSERVE_COMPILE_REPORT file (tests/support/compile_report.py): a test's seconds (its
    setup, call and teardown) summed per file across workers; rows that are not tests are left out."""
    for worker, tests in {
        "gw0": {"tests/a/test_x.py::t1": {"seconds": 3.0, "compile": 2.0}, "(outside tests)": {"compile": 9.0}},
        "gw1": {"tests/a/test_x.py::t2[p]": {"seconds": 1.5}, "tests/test_y.py::t": {"seconds": 10.0}},
    }.items():
        (tmp_path / f"{worker}.json").write_text(json.dumps({"tests": tests, "functions": {}}))
    table = test_durations.durations_from_compile_report(tmp_path)
    assert table == {"tests/test_y.py": 10.0, "tests/a/test_x.py": 4.5}
    assert list(table) == ["tests/test_y.py", "tests/a/test_x.py"]
