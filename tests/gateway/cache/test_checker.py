"""The shipped precision checker (the trained cross-encoder) and conversations through the real cache.

The pairs here were written for these tests, not taken from the evaluation splits or the training data;
the evaluation proper is scripts/eval_cache.py (docs/CACHE_EVAL.md)."""

from __future__ import annotations

import asyncio

import pytest

from gateway.cache import CacheConfig, CacheScope, SemanticCache
from gateway.cache.checker import DEFAULT_MODEL, CrossEncoderChecker, make_checker

pytestmark = pytest.mark.slow

SAME = [
    ("How do I make cold brew coffee at home?", "what's the way to make cold brew coffee at home"),
    ("What's the tallest mountain in Africa?", "Which mountain in Africa is the highest?"),
    ("How can I stop my cat from scratching the couch?", "how do i keep my cat from scratching my sofa"),
    ("What are the symptoms of dehydration?", "What signs show that someone is dehydrated?"),
    ("How long should I boil pasta?", "For how long do you boil pasta?"),
]
DIFFERENT = [
    ("What's the tallest mountain in Africa?", "What's the tallest mountain in Europe?"),
    ("How do I make cold brew coffee at home?", "How do I make iced tea at home?"),
    ("Can dogs eat grapes?", "Can dogs eat carrots?"),
    ("Should I stretch before running?", "Should I stretch after running?"),
    ("How do I install Node.js on Windows?", "How do I uninstall Node.js on Windows?"),
    ("How many calories are in 2 eggs?", "How many calories are in 5 eggs?"),
]


@pytest.fixture(scope="module")
def checker():
    assert DEFAULT_MODEL.is_file(), "the trained checker is committed (scripts/train_cache_checker.py)"
    c = CrossEncoderChecker()
    c.load()
    return c


def test_the_checker_separates_paraphrases_from_look_alikes(checker):
    same = checker.scores(SAME)
    diff = checker.scores(DIFFERENT)
    t = CacheConfig().checker_threshold
    assert (same >= t).sum() >= len(SAME) - 1, list(zip(SAME, same))
    assert (diff < t).sum() >= len(DIFFERENT) - 1, list(zip(DIFFERENT, diff))
    assert float(same.mean()) > float(diff.mean()) + 0.3


def test_the_checker_is_close_to_symmetric_and_never_raises_on_odd_text(checker):
    pairs = SAME + DIFFERENT
    fwd = checker.scores(pairs)
    rev = checker.scores([(b, a) for a, b in pairs])
    assert abs(fwd - rev).max() < 1e-5  # both orders are averaged
    odd = checker.scores([("", "?"), ("!!!", "¿qué?"), ("x" * 5000, "y")])
    assert odd.shape == (3,) and ((odd >= 0) & (odd <= 1)).all()


def test_make_checker_names():
    assert make_checker("none").name == "none" and make_checker("numbers").name == "numbers"
    with pytest.raises(ValueError, match="unknown checker"):
        make_checker("rules")


def conv(topic: str, follow_up: str, reply: str = "Sure, I can help you with your membership.") -> list[dict]:
    return [
        {"role": "user", "content": topic},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": follow_up},
    ]


SEMANTIC = {"temperature": 0}


def test_conversations_match_exactly_by_default_and_one_users_details_never_reach_another(tmp_path):
    """Two end users of one app (one API key) send the same chat but for the merchant and amount in the
    first turn and the assistant's reply; the last turn is generic. The second must not get the first's
    answer. The same chat again, every turn as sent, is a hit; a reworded one is a miss."""

    def chat(merchant: str, amount: str) -> list[dict]:
        return [
            {"role": "user", "content": f"There's a monthly payment to {merchant} on my card, what is it?"},
            {"role": "assistant", "content": f"That is a subscription to {merchant.upper()}, {amount} a month."},
            {"role": "user", "content": "Great. Which merchant and amount is that payment again?"},
        ]

    async def body():
        cache = SemanticCache(CacheConfig(path=str(tmp_path / "c.jsonl"), flush_interval_s=0.01))
        await cache.start()
        try:
            a = chat("Flickbox", "£10.99")
            scope, q = CacheScope.from_request("key:app", "m", a, SEMANTIC)
            assert scope.kind == "history" and q == a[-1]["content"]
            await cache.store(scope, q, "FLICKBOX, £10.99.", "stop", {"completion_tokens": 5}, "m")
            for messages, hit in ((chat("PulseFit", "£34.00"), False), (a, True)):
                s, question = CacheScope.from_request("key:app", "m", messages, SEMANTIC)
                assert (await cache.lookup(s, question)).hit is hit
            reworded = [dict(m) for m in a]
            reworded[0]["content"] = "what's the monthly Flickbox payment on my card?"
            s, question = CacheScope.from_request("key:app", "m", reworded, SEMANTIC)
            res = await cache.lookup(s, question)
            assert not res.hit and "exactly" in res.reason
        finally:
            await cache.close()

    asyncio.run(body())


def test_semantic_conversations_hit_only_when_the_context_matches(tmp_path):
    """conversation_match: semantic. 'cancel it' about a gym membership is never answered with what was
    said about a streaming plan; the same follow-up after reworded or padded turns is a hit."""

    async def body():
        cache = SemanticCache(
            CacheConfig(
                path=str(tmp_path / "c.jsonl"),
                flush_interval_s=0.01,
                conversation_match="semantic",
                conversation_threshold=0.62,
                conversation_checker_threshold=0.4,
            )
        )
        await cache.start()
        try:
            stored = conv("I signed up for a gym membership at FitHub last month.", "How do I cancel it?")
            scope, q = CacheScope.from_request("t", "m", stored, SEMANTIC, conversations="semantic")
            assert scope.kind == "conversation" and q.endswith("| How do I cancel it?")
            await cache.store(scope, q, "Go to the FitHub app...", "stop", {"completion_tokens": 5}, "m")

            def lookup(messages):
                s, question = CacheScope.from_request("t", "m", messages, SEMANTIC, conversations="semantic")
                return asyncio.ensure_future(cache.lookup(s, question))

            other = await lookup(conv("I signed up for a streaming plan at FlixNow last month.", "How do I cancel it?"))
            assert not other.hit, other
            reworded = await lookup(
                [
                    {"role": "user", "content": "hi there"},
                    {"role": "assistant", "content": "Hello! How can I help?"},
                    {"role": "user", "content": "Last month I joined FitHub and got a gym membership."},
                    {"role": "assistant", "content": "Of course, I can help you with the membership."},
                    {"role": "user", "content": "How do I cancel it?"},
                ]
            )
            assert reworded.hit, reworded
            # the same user turns after another assistant answer: "she" is someone else
            physicist = [{"role": "user", "content": "Name a famous physicist."}]
            keys = []
            for who in (
                "Marie Curie, a pioneer of radioactivity.",
                "Richard Feynman, known for quantum electrodynamics.",
            ):
                msgs = physicist + [
                    {"role": "assistant", "content": who},
                    {"role": "user", "content": "When was she born?"},
                ]
                s, question = CacheScope.from_request("t", "m", msgs, SEMANTIC, conversations="semantic")
                assert s.reply == who
                if who.startswith("Marie"):
                    await cache.store(s, question, "In 1867.", "stop", {"completion_tokens": 3}, "m")
                else:  # the names are the conversation's facts: another scope altogether
                    assert s.facts == ("feynman",) and s.key() != keys[0]
                    res = await cache.lookup(s, question)
                    assert not res.hit, res
                keys.append(s.key())
            # a tool result in the history keeps the whole history in the scope: exact only
            tool = stored[:2] + [{"role": "tool", "content": "{}", "tool_call_id": "x"}] + stored[2:]
            s, question = CacheScope.from_request("t", "m", tool, SEMANTIC, conversations="semantic")
            assert s.kind == "history" and question == "How do I cancel it?"
        finally:
            await cache.close()

    asyncio.run(body())


def test_the_shipped_judge_is_the_two_models_averaged():
    """The default judge reads both committed cross-encoders and averages their probabilities (issue 44:
    the ensemble had the best recall at the bound on the calibration split)."""
    import numpy as np

    from gateway.cache.checker import DEFAULT_MODELS

    assert len(DEFAULT_MODELS) == 2 and all(p.is_file() for p in DEFAULT_MODELS)
    pairs = [
        ("How do I reset my router password?", "What are the steps to change my router's password?"),
        ("Is the museum open on Mondays?", "Is the museum closed on Mondays?"),
    ]
    both = CrossEncoderChecker().model_scores(pairs)
    one, two = (CrossEncoderChecker(str(p)).model_scores(pairs) for p in DEFAULT_MODELS)
    np.testing.assert_allclose(both, (one + two) / 2, rtol=1e-5, atol=1e-6)
    assert not np.allclose(one, two)  # two different models, or the average means nothing


def test_the_parse_veto_reads_roles_modality_and_comparison():
    """gateway/cache/parse.py (spaCy en_core_web_sm): near-identical texts whose parse differs."""
    from gateway.cache.parse import parse_conflict

    assert "change roles" in parse_conflict(
        "flights from London to Paris in May", "flights from Paris to London in May"
    )
    assert "modality" in parse_conflict(
        "Can I cancel my subscription without a fee?", "Must I cancel my subscription without a fee?"
    )
    assert "compares" in parse_conflict(
        "Is the red dress cheaper than the blue one?", "Is the red dress more expensive than the blue one?"
    )
    # rewording keeps the roles, and heavy rewording is left to the cross-encoder
    assert (
        parse_conflict("what time does the pharmacy open on sunday", "on sunday, what time does the pharmacy open?")
        == ""
    )
    assert (
        parse_conflict("How do I reset my router password?", "What are the steps to reset the password on my router?")
        == ""
    )
    checker = CrossEncoderChecker(parse_rule=True)
    assert checker.rules_reject("flights from London to Paris in May", "flights from Paris to London in May", False)
