"""Replay a blind stream of questions through a real SemanticCache, with threshold learning off and on.

    python scripts/replay_cache_learning.py [--split test] [--users 3] [--window 300] [--seed 0]
    python scripts/replay_cache_learning.py --make-splits     # once: families -> stream/{dev,test}.jsonl

The stream (``tests/data/cache/stream/``, written by a helper blind to every other pair set and to this
code; ``raw/`` holds it as written): families of look-alike intents that need different answers, each
intent asked in 4-6 phrasings. Every phrasing is asked by ``--users`` end users of one API key at random
times (one scope, as a key's end users share it), in one seeded order. A first ask of an intent can only
miss; a later ask of the same words is an exact repeat; a later ask of other words of an intent already
asked is a **reworded repeat** (what a semantic cache is for); an ask whose family has another intent
stored is exposed to a look-alike.

The model is an oracle: a miss is answered with the intent's own answer text (the helper's), so a label
is the verifier's rule (``answers_agree``: the same text, or answers' cosine >= 0.85 without numbers in
conflict) applied to two answers that are right by construction. What this measures is the learning rule
and its labels' noise between look-alike intents' answers (two different answers can still look alike);
it does not measure a real model's wording drift between two answers to one question (with one, fewer
right pairs would be labelled right and the learner would move less).

Both runs use the shipped embedder, checker and calibrated thresholds, live verification at the shipped
share, a fresh file store each, and the same order. Out: ``docs/results/cache_learning_<split>.json``
(per window: reworded repeats served, served answers, wrong ones, thresholds in force; totals) and
``docs/results/cache_learning_<split>.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runtime.platform import cpu_info  # noqa: E402

STREAM = ROOT / "tests" / "data" / "cache" / "stream"
TEST_SHARE = 0.5


def split_of(family: dict) -> str:
    h = hashlib.sha256(family["family"].encode()).digest()[0]
    return "test" if h < round(256 * TEST_SHARE) else "dev"


def make_splits() -> dict[str, int]:
    """raw/families.jsonl -> dev.jsonl / test.jsonl by a hash of the family id (once: never overwrites)."""
    out = {s: STREAM / f"{s}.jsonl" for s in ("dev", "test")}
    if any(p.exists() for p in out.values()):
        raise SystemExit(f"{STREAM}/dev.jsonl or test.jsonl exists: the split is frozen")
    rows = {"dev": [], "test": []}
    for line in (STREAM / "raw" / "families.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            fam = json.loads(line)
            rows[split_of(fam)].append(line)
    for s, p in out.items():
        p.write_text("\n".join(rows[s]) + "\n", encoding="utf-8")
    return {s: len(r) for s, r in rows.items()}


def load_events(split: str, users: int, seed: int) -> list[dict]:
    events = []
    for line in (STREAM / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        fam = json.loads(line)
        for intent in fam["intents"]:
            iid = f"{fam['family']}/{intent['intent']}"
            for q in intent["questions"]:
                for _ in range(users):
                    events.append({"family": fam["family"], "intent": iid, "question": q, "answer": intent["answer"]})
    random.Random(seed).shuffle(events)
    return events


async def run(events: list[dict], learn: bool, embedder, checker, window: int, progress: bool) -> dict:
    from tqdm import tqdm

    from gateway.cache import CacheConfig, CacheScope, SemanticCache
    from gateway.cache.normalize import normalize_question

    with tempfile.TemporaryDirectory() as tmp:
        config = CacheConfig(path=os.path.join(tmp, "c.jsonl"), learn=learn, flush_interval_s=5.0)
        cache = SemanticCache(config, embedder=embedder, checker=checker)
        answer_of: dict[str, str] = {}  # question -> the intent's answer (the oracle model)

        async def model(request, tier) -> str:
            return answer_of[request]

        cache.attach_verifier(model, rng=random.Random(1))
        learner = cache.attach_learner() if learn else None
        await cache.start()
        intent_of_entry: dict[str, str] = {}
        asked_intents: set[str] = set()
        asked_texts: set[str] = set()
        stored_by_family: dict[str, set[str]] = {}
        windows, cur = [], None
        totals = dict(events=0, reworded=0, reworded_served=0, served=0, wrong=0, exact_repeats=0, lookalike_exposed=0)
        t0 = time.perf_counter()
        for n, ev in enumerate(tqdm(events, desc=f"replay (learn {'on' if learn else 'off'})", disable=not progress)):
            if n % window == 0:
                cur = dict(start=n, events=0, reworded=0, reworded_served=0, served=0, wrong=0)
                windows.append(cur)
            q, intent = ev["question"], ev["intent"]
            answer_of[q] = ev["answer"]
            scope, question = CacheScope.from_request(
                "key", "tier", [{"role": "user", "content": q}], {"temperature": 0}
            )
            norm = normalize_question(question)
            kind = "exact" if norm in asked_texts else ("reworded" if intent in asked_intents else "first")
            exposed = bool(stored_by_family.get(ev["family"], set()) - {intent})
            got = await cache.lookup(scope, question)
            cur["events"] += 1
            totals["events"] += 1
            totals["exact_repeats"] += kind == "exact"
            totals["lookalike_exposed"] += exposed
            if kind == "reworded":
                cur["reworded"] += 1
                totals["reworded"] += 1
            if got.hit:
                right = intent_of_entry.get(got.entry.id) == intent
                cur["served"] += 1
                totals["served"] += 1
                cur["wrong"] += not right
                totals["wrong"] += not right
                if kind == "reworded" and got.kind == "semantic" and right:
                    cur["reworded_served"] += 1
                    totals["reworded_served"] += 1
                cache.offer_verification(scope, question, got, q, "tier")
            else:
                await cache.store(scope, question, ev["answer"], "stop", {}, "tier")
                entry_id = cache.replica.state.exact.get((scope.key(), norm))
                if entry_id is not None:
                    intent_of_entry[entry_id] = intent
                stored_by_family.setdefault(ev["family"], set()).add(intent)
            asked_intents.add(intent)
            asked_texts.add(norm)
            if cache.verifier is not None:
                await cache.verifier.drain()
            if learner is not None:
                await learner.drain()
            th = cache.thresholds(scope)
            cur["thresholds"] = [round(th[0], 3), round(th[1], 3)]
            cur["labels"] = len(learner.labels["single"]) if learner is not None else 0
        elapsed = time.perf_counter() - t0
        stats = cache.stats()
        await cache.close()
    for w in windows:
        w["reworded_served_share"] = w["reworded_served"] / w["reworded"] if w["reworded"] else None
        w["wrong_share_of_served"] = w["wrong"] / w["served"] if w["served"] else None
    totals["reworded_served_share"] = totals["reworded_served"] / max(1, totals["reworded"])
    totals["wrong_share_of_served"] = totals["wrong"] / max(1, totals["served"])
    return {
        "learn": learn,
        "totals": totals,
        "windows": windows,
        "seconds": round(elapsed, 1),
        "learning": stats.get("learning"),
        "verification": {k: stats["verification"][k] for k in ("estimates", "tightened", "dropped", "failed")},
        "base_thresholds": [config.threshold, config.checker_threshold],
        "bound": config.bounds()["single"],
    }


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for run, color in ((result["off"], "tab:gray"), (result["on"], "tab:blue")):
        label = "learning on" if run["learn"] else "learning off"
        xs = [w["start"] + w["events"] for w in run["windows"]]
        axes[0].plot(xs, [w["reworded_served_share"] for w in run["windows"]], "o-", color=color, label=label)
        axes[1].plot(xs, [w["wrong_share_of_served"] for w in run["windows"]], "o-", color=color, label=label)
        axes[2].plot(xs, [w["thresholds"][0] for w in run["windows"]], "-", color=color, label=f"cosine, {label}")
        axes[2].plot(xs, [w["thresholds"][1] for w in run["windows"]], "--", color=color, label=f"checker, {label}")
    axes[0].set_title("reworded repeats served (per window)")
    axes[1].set_title("wrong answers among served (per window)")
    axes[1].axhline(result["on"]["bound"], color="tab:red", ls=":", label=f"bound {result['on']['bound']}")
    axes[2].set_title("thresholds in force (end of window)")
    for ax in axes:
        ax.set_xlabel("requests")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"cache learning replay: {result['split']} stream, {result['events']} requests, seed {result['seed']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--make-splits", action="store_true")
    p.add_argument("--split", default="dev", choices=("dev", "test"))
    p.add_argument("--users", type=int, default=3, help="end users who ask each phrasing")
    p.add_argument("--window", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=0, help="the first N requests only (a quick look)")
    p.add_argument("--out-dir", default=str(ROOT / "docs" / "results"))
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.make_splits:
        print(json.dumps(make_splits()))
        return 0
    from gateway.cache import CacheConfig
    from gateway.cache.checker import make_checker
    from gateway.cache.onnx_models import OnnxEmbedder

    events = load_events(args.split, args.users, args.seed)
    if args.limit:
        events = events[: args.limit]
    config = CacheConfig()
    embedder = OnnxEmbedder(max_batch=config.embed_max_batch, max_wait_ms=0.0, num_threads=1)
    checker = make_checker(config.checker, num_threads=config.checker_threads, read_replies=True)

    async def both():
        await embedder.start()
        await checker.start()
        off = await run(events, False, embedder, checker, args.window, not args.no_progress)
        on = await run(events, True, embedder, checker, args.window, not args.no_progress)
        return off, on

    off, on = asyncio.run(both())
    embedder.close()
    checker.close()
    result = {
        "what": "cache threshold learning: a blind stream replayed with learning off and on (scripts/replay_cache_learning.py)",
        "split": args.split,
        "events": len(events),
        "users": args.users,
        "seed": args.seed,
        "window": args.window,
        "off": off,
        "on": on,
        "every_window_within_bound": {
            r: all((w["wrong_share_of_served"] or 0.0) <= res["bound"] for w in res["windows"])
            for r, res in (("off", off), ("on", on))
        },
        "cpu": cpu_info(),
    }
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"cache_learning_{args.split}" + (f"_seed{args.seed}" if args.seed else "")
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    plot(result, out / f"{stem}.png")
    for name, res in (("off", off), ("on", on)):
        t = res["totals"]
        print(
            f"learning {name}: reworded served {t['reworded_served']}/{t['reworded']} ({t['reworded_served_share']:.3f}), "
            f"wrong {t['wrong']}/{t['served']} served ({t['wrong_share_of_served']:.4f}), {res['seconds']} s"
        )
    print(json.dumps(result["every_window_within_bound"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
