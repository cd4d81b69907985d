"""A run as its events arrive: what the client keeps, what is held, who is answering, what is charged."""

from __future__ import annotations

from gateway.pipeline.choices import Run, runs_of
from gateway.pipeline.fallback import Abandoned, Finished, Summary, Text
from tests.gateway.pipeline.fakes import chat

LP = {"token": "A", "logprob": -0.1, "bytes": None, "top_logprobs": []}


def test_a_stream_continues_an_abandoned_tiers_text_and_a_whole_answer_starts_over():
    for continue_partial, text, logprobs in ((True, ["A", "B"], [LP, LP]), (False, ["B"], [LP])):
        run = Run(0, chat(), continue_partial, logprobs=[])
        run.apply(Text("A", "big", "tiny", "r1", (LP,)))
        run.apply(Abandoned("big", "lil", "failed", streamed=True, kept=("big", 5, 1) if continue_partial else None))
        run.apply(Text("B", "lil", "tiny", None, (LP,)))
        assert run.text == text and run.take_logprobs() == logprobs and run.take_logprobs() == []
        # who is answering now; the replica seen last is kept (a tier without replicas names none)
        assert (run.tier, run.replica, run.fallbacks) == ("lil", "r1", [("big", "lil", "failed")])
        assert run.charges == (tuple(run.kept)) and run.served_by is None  # cut short: the kept text's charge
    summary = Summary("lil", "tiny", charges=(("big", 5, 1), ("lil", 5, 1)), completion_tokens=2)
    run.apply(Finished(summary))
    assert run.finished and run.served_by == "lil" and run.charges == summary.charges and run.completion_tokens == 2


def test_a_skipped_tier_changes_no_text_and_logprobs_only_come_when_asked():
    run = Run(0, chat())
    run.apply(Text("A", "big", "tiny", None, (LP,)))
    run.apply(Abandoned("lil", "none", "unavailable"))
    assert run.text == ["A"] and run.take_logprobs() is None and run.fallbacks == [("lil", "none", "unavailable")]


def test_runs_number_choices_and_spread_seeds():
    runs = runs_of([chat(n=2, seed=7, stream=True)], text_api=False)
    assert [(r.index, r.chat.seed, r.continue_partial, r.prefix) for r in runs] == [(0, 7, True, ""), (1, 8, True, "")]
