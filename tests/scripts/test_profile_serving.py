"""scripts/profile_serving.py's own parts: py-spy's raw lines parsed, the per-thread CPU seconds read from /proc
(this process's, with a thread made busy on purpose) and split into cores, the samples summarized by thread."""

from __future__ import annotations

import os
import threading
import time

from tests.support.scripts import load_script

prof = load_script("profile_serving")


def test_raw_lines_parse():
    text = (
        "thread (12): MainThread;run (a.py:3);select (selectors.py:468) 7\n"
        "thread (13): llm-engine-step;step (b.py:9) 5\n"
        "\n"
        "garbage without a count\n"
    )
    samples = prof.parse_raw(text)
    assert samples == [
        ("thread (12): MainThread", ["run (a.py:3)", "select (selectors.py:468)"], 7),
        ("thread (13): llm-engine-step", ["step (b.py:9)"], 5),
    ]
    s = prof.summarize_samples(samples, top=1)
    assert s["samples"] == 12
    main = s["threads"]["thread (12): MainThread"]
    assert main["samples"] == 7 and main["share"] == round(7 / 12, 4)
    assert main["top_leaf_frames"] == [["select (selectors.py:468)", 7]]


def test_thread_cpu_seconds_see_a_busy_thread():
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(range(1000))

    before = prof.thread_cpu_seconds(os.getpid())
    t = threading.Thread(target=spin)
    t.start()
    t0 = time.perf_counter()
    time.sleep(0.5)
    after = prof.thread_cpu_seconds(os.getpid())
    stop.set()
    t.join()
    wall = time.perf_counter() - t0
    split = prof.cpu_split(before, after, wall)
    busy = [k for k in split if k.endswith(f"({t.native_id})")]
    assert busy, split  # the spinning thread is listed by its native id
    assert 0 < split[busy[0]]["cpu_s"] <= wall + 0.02  # never more CPU than wall time on one thread (10 ms ticks)
    assert "others" in split


def test_cpu_split_arithmetic():
    split = prof.cpu_split({"a (1)": 1.0, "b (2)": 0.0}, {"a (1)": 3.0, "b (2)": 0.05, "c (3)": 1.0}, 10.0)
    assert split["a (1)"] == {"cpu_s": 2.0, "cores": 0.2}
    assert split["c (3)"] == {"cpu_s": 1.0, "cores": 0.1}  # a thread born during the run counts from 0
    assert split["others"] == {"cpu_s": 0.05, "cores": 0.005}  # under 1% of a core
