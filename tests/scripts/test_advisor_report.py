"""scripts/advisor_report.py without its hour of engines: one workload per branch of the tree, each big
enough for a diagnosis; its report renders a finding, the replayed rows and a healthy workload; a
workload name that does not exist is refused. (The run itself is docs/ADVISOR.md.)"""

from __future__ import annotations

from gateway.advise import MIN_REQUESTS
from tests.support.scripts import load_script

report = load_script("advisor_report")


def test_one_workload_per_branch_each_big_enough_to_judge():
    ws = report.workloads()
    # seeded: one seed draws the same requests every time (no unseeded randomness), another seed others
    assert [w.requests for w in ws] == [w.requests for w in report.workloads(0)]
    assert [w.requests for w in report.workloads(1)] != [w.requests for w in ws]
    assert {w.expect[0] for w in ws if w.expect} == {"ttft", "tpot", "memory", "cost"}
    assert sum(w.expect is None for w in ws) == 1  # the healthy one
    for w in ws:
        assert len(w.requests) >= MIN_REQUESTS, w.name
        assert all(t >= 0 and messages and n > 0 for t, messages, n in w.requests)
    args = report.replay_args(next(w for w in ws if w.name == "kv-exhausted"))
    assert "kv_cache_bytes=67108864" in args and "weight_quant=int8" in args


def test_the_report_renders_findings_and_replays():
    row = lambda rep, findings: {  # noqa: E731
        "workload": "w",
        "what": "a workload",
        "model": "m",
        "engine": {},
        "sent": {"seconds": 1.0, "status": {200: 20}},
        "expected": ("tpot", "bandwidth") if findings else None,
        "diagnosis": {"requests": 20, "findings": findings},
        "named_as_expected": True,
        "replayed": findings[0] if findings else None,
        **(
            {"replay": rep, "replay_command": "python -m gateway.advise --replay R --try weight_quant=int8"}
            if rep
            else {}
        ),
    }
    finding = {
        "symptom": "tpot",
        "cause": "bandwidth-bound: one stream",
        "evidence": {"tpot_p99_s": 0.1},
        "remedy": "quantize",
        "key": "models[].engine.weight_quant: int8",
        "traps": ["a trap"],
        "proposal": {"weight_quant": "int8"},
    }
    side = {"ttft_s": {"p50": 0.1, "p99": 0.2}, "tpot_s": {"p50": 0.04, "p99": 0.08}, "goodput": 0.5}
    side |= {"peak_kv_usage": 0.1, "preemptions": 0, "prefix_cache_hit_rate": 0.0, "output_tokens_per_s": 20.0}
    side |= {"cache_hits": 0, "cost_usd": 0.001, "requests": 20}
    faster = {**side, "goodput": 1.0, "tpot_s": {"p50": 0.02, "p99": 0.08}}
    text = report.markdown([row({"current": side, "proposed": faster}, [finding]), row(None, [])])
    assert (
        "| w | [tpot] bandwidth-bound: one stream | `models[].engine.weight_quant: int8` | yes"
        " | TPOT p50 (ms): 40.0 -> 20.0 | 0.50 -> 1.00 |" in text
    )
    assert "| TPOT p99 (ms) | 80.0 | 80.0 |" in text and "- trap: a trap" in text and "**No finding.**" in text
    assert report.main(["--only", "no-such-workload"]) == 2
