"""Measure the semantic cache's recall and false-hit rate on question pairs, at the shipped thresholds:
the ones the calibration table gives under the operator's bound (``cache.max_false_hit_rate``).

    python scripts/eval_cache.py                       # dev (the calibration split) + team test
    python scripts/eval_cache.py --blind               # + the blind batch's test split (read it once)
    python scripts/eval_cache.py --pairs OTHER.jsonl   # any pair file
    python scripts/eval_cache.py --checker all         # every checker, side by side

Each line of a pair file: ``{"a": ..., "b": ..., "same_answer": bool, "category": str?, "subtype": str?}``
where ``a`` and ``b`` are a question string or an OpenAI ``messages`` list ending with a user message.
``a`` is the request whose answer is stored, ``b`` the incoming one. Pairs are of two kinds, reported
apart: *single* questions (a system prompt allowed) and *conversations* (earlier turns).

How a pair is decided is the cache's own rule (``SemanticCache.lookup``): both requests are scoped
(``CacheScope.from_request``: tenant, model, system prompt, parameters, the kind of scope; conversations
kept exact by default, ``--conversation-match semantic`` keys them by their user turns and facts); a
different scope is a miss; the same normalized question is an exact hit; otherwise a hit needs cosine >=
the threshold and the checker's score >= the checker threshold, each per kind. The script computes every
pair's cosine and checker score once, sweeps the thresholds, and then replays the shipped ones through a
real ``SemanticCache`` (store ``a``, look up ``b``, a tenant per pair) and reports whether the real
lookups agree with the computed decisions. ``--calibrate`` also emits the dev split's grid counts
(``scripts/calibrate_cache.py`` writes the table from them).

Prints JSON; writes ``out/cache_eval_<checker>.json`` and a PNG of the sweep.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.cache import CacheConfig, CacheScope, SemanticCache  # noqa: E402
from gateway.cache.checker import CHECKERS, make_checker  # noqa: E402
from gateway.cache.normalize import normalize_question  # noqa: E402
from runtime.platform import cpu_info  # noqa: E402

DATA = ROOT / "tests" / "data" / "cache"
MODEL = "eval-model"
PARAMS = {"temperature": 0}
# The operator's bound (cache.max_false_hit_rate) the evaluation runs at, and the recall targets.
BUDGET = {"single": 0.01, "conversation": 0.02}
TARGET_RECALL = {"single": 0.60, "conversation": 0.40}
COSINES = [round(0.50 + 0.01 * i, 2) for i in range(50)]  # 0.50 .. 0.99
SCORES = [round(0.02 * i, 2) for i in range(50)] + [0.99, 0.995, 0.999]  # 0.00 .. 0.98, then finer at the top
REPLIES = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)  # conversations: the assistant turns' cosine (0: not compared)


def load_pairs(path: str | Path) -> list[dict]:
    pairs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            row = json.loads(line)
            for key in ("a", "b", "same_answer"):
                if key not in row:
                    raise SystemExit(f"{path}:{n}: missing {key!r}")
            row.setdefault("category", "uncategorized")
            pairs.append(row)
    return pairs


def as_messages(x) -> list[dict]:
    return [{"role": "user", "content": x}] if isinstance(x, str) else list(x)


def prepare(pairs: list[dict], conversations: str = "exact") -> list[dict]:
    """Scope both sides the way the gateway does; the pair's kind, exactness and texts."""
    out = []
    for i, p in enumerate(pairs):
        tenant = f"eval-{i}"
        try:
            sa, qa = CacheScope.from_request(tenant, MODEL, as_messages(p["a"]), PARAMS, conversations=conversations)
            sb, qb = CacheScope.from_request(tenant, MODEL, as_messages(p["b"]), PARAMS, conversations=conversations)
        except ValueError as exc:
            raise SystemExit(f"pair {i}: {exc}") from None
        same_scope = sa.key() == sb.key()
        out.append(
            {
                "pair": p,
                "kind": "single" if sb.kind == "single" else "conversation",
                "qa": qa,
                "qb": qb,
                "same_scope": same_scope,
                "exact": same_scope
                and normalize_question(qa) == normalize_question(qb)
                and (sb.kind != "conversation" or sa.reply == sb.reply),
                "replies": (sa.reply, sb.reply),
                # the cache's semantic path: not for conversations kept exact
                "semantic": not (sb.kind == "history" and conversations == "exact"),
            }
        )
    return out


def featurize(items: list[dict], embedder, checker) -> None:
    """Cosine and checker score of every pair that the scope and the exact path leave to them."""
    texts = sorted({t for it in items for t in (it["qa"], it["qb"])})
    vecs = embedder.embed_many(texts)
    row = {t: i for i, t in enumerate(texts)}
    for it in items:
        it["cosine"] = float(vecs[row[it["qa"]]] @ vecs[row[it["qb"]]])
    replies = sorted({r for it in items for r in it["replies"] if r})
    rvecs = dict(zip(replies, embedder.embed_many(replies))) if replies else {}
    for it in items:  # the cache's reply gate: both absent match, one absent does not
        ra, rb = it["replies"]
        it["reply_cos"] = float(rvecs[ra] @ rvecs[rb]) if ra and rb else (1.0 if not ra and not rb else -1.0)
    for it in items:  # one pair per call, as a lookup scores it
        if it["same_scope"] and not it["exact"] and it["semantic"]:
            conv = it["kind"] == "conversation"
            it["score"] = float(checker.scores([(it["qa"], it["qb"])], conv, [it["replies"] if conv else None])[0])
    for it in items:
        it.setdefault("score", 1.0 if it["exact"] else 0.0)


def hits(items: list[dict], cos: float, score: float, reply: float = 0.0) -> list[bool]:
    return [
        it["same_scope"]
        and (reply <= 0 or it["kind"] != "conversation" or it["reply_cos"] >= reply)
        and (it["exact"] or (it["semantic"] and it["cosine"] >= cos and it["score"] >= score))
        for it in items
    ]


def rates(items: list[dict], hit: list[bool]) -> dict:
    same = [h for it, h in zip(items, hit) if it["pair"]["same_answer"]]
    diff = [h for it, h in zip(items, hit) if not it["pair"]["same_answer"]]
    return {
        "recall": round(float(np.mean(same)), 4) if same else None,
        "false_hit_rate": round(float(np.mean(diff)), 4) if diff else None,
        "hits": int(sum(same)),
        "same_answer_pairs": len(same),
        "false_hits": int(sum(diff)),
        "different_answer_pairs": len(diff),
    }


def report(items: list[dict], cos: float, score: float, reply: float = 0.0) -> dict:
    hit = hits(items, cos, score, reply)
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        by_cat[it["pair"]["category"]].append(i)
    per_category = {}
    for cat, idx in sorted(by_cat.items()):
        r = rates([items[i] for i in idx], [hit[i] for i in idx])
        entry = {"pairs": len(idx)}
        if r["same_answer_pairs"]:
            entry.update(recall=r["recall"], hits=r["hits"])
        if r["different_answer_pairs"]:
            entry.update(false_hit_rate=r["false_hit_rate"], false_hits=r["false_hits"])
        per_category[cat] = entry
    thresholds = {"cosine": cos, "checker": score, **({"reply": reply} if reply else {})}
    return {"thresholds": thresholds, **rates(items, hit), "per_category": per_category}


def show(x) -> str:
    return x if isinstance(x, str) else " / ".join(f"{m['role']}: {m['content']}" for m in x)


def mistakes(items: list[dict], cos: float, score: float, reply: float = 0.0) -> list[dict]:
    return [
        {
            "category": it["pair"]["category"],
            "a": show(it["pair"]["a"])[:300],
            "b": show(it["pair"]["b"])[:300],
            "cosine": round(it["cosine"], 4),
            "score": round(it["score"], 4),
        }
        for it, h in zip(items, hits(items, cos, score, reply))
        if h and not it["pair"]["same_answer"]
    ]


async def replay(items: list[dict], config: CacheConfig, embedder, checker) -> dict:
    """Store a, look up b through a real SemanticCache; count where it disagrees with ``hits``."""

    class Table:  # the embedder interface over the vectors already computed
        dim = embedder.dim

        def __init__(self):
            texts = sorted({t for it in items for t in (it["qa"], it["qb"], *it["replies"]) if t})
            self.table = dict(zip(texts, embedder.embed_many(texts)))
            self.forward_passes = self.texts_embedded = 0

        async def start(self):
            return None

        def close(self):
            return None

        async def embed(self, text):
            return self.table[text]

    with tempfile.TemporaryDirectory() as tmp:
        cache = SemanticCache(
            replace(config, path=os.path.join(tmp, "eval.jsonl"), flush_interval_s=60.0, purge_interval_s=3600.0),
            embedder=Table(),
            checker=checker,
        )
        await cache.start()
        disagree, kinds = 0, Counter()
        try:
            for i, it in enumerate(items):
                tenant = f"eval-{i}"
                mode = config.conversation_match
                sa, qa = CacheScope.from_request(
                    tenant, MODEL, as_messages(it["pair"]["a"]), PARAMS, conversations=mode
                )
                sb, qb = CacheScope.from_request(
                    tenant, MODEL, as_messages(it["pair"]["b"]), PARAMS, conversations=mode
                )
                await cache.store(sa, qa, f"answer {i}", "stop", {"prompt_tokens": 1, "completion_tokens": 1}, MODEL)
                res = await cache.lookup(sb, qb)
                kinds[res.kind] += 1
                cos, score = cache.thresholds(sb)
                expected = hits([it], cos, score if config.guard else 0.0, config.conversation_reply_threshold)[0]
                disagree += res.hit != expected
        finally:
            await cache.close()
    return {"pairs": len(items), "disagreements": disagree, "lookup_kinds": dict(kinds)}


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k in ("single", "conversation") if k in results["sweep"]]
    fig, axes = plt.subplots(1, len(kinds), figsize=(6.5 * len(kinds), 4.2), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        sw = results["sweep"][kind]
        for split, style in (("dev", "--"), ("test", "-"), ("blind_test", ":"), ("blind2_test", "-."), ("pairs", "-")):
            if split not in sw:
                continue
            ax.plot(COSINES, sw[split]["recall"], style, color="tab:blue", label=f"recall ({split})")
            ax.plot(COSINES, sw[split]["false_hit_rate"], style, color="tab:red", label=f"false hits ({split})")
        ax.axvline(sw["cosine"], color="gray", lw=1, ls=":", label=f"chosen cosine {sw['cosine']}")
        ax.axhline(BUDGET[kind], color="tab:red", lw=0.8, ls=":")
        ax.axhline(TARGET_RECALL[kind], color="tab:blue", lw=0.8, ls=":")
        ax.set_title(f"{kind}: checker {results['checker']} >= {sw['checker']}, reply >= {sw.get('reply', 0)}")
        ax.set_xlabel("cosine threshold")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def markdown(runs: list[dict]) -> str:
    """The side-by-side table of docs/CACHE_EVAL.md: every checker, each kind, each split side by side."""
    splits = [x for x in ("dev", "test", "blind_test", "blind2_test", "pairs") if any(x in r["results"] for r in runs)]
    lines = [
        "| checker | kind | thresholds (cosine, checker) | "
        + " | ".join(f"{x} recall | {x} false hits" for x in splits)
        + f" | target met ({splits[-1]}) |",
        "|---|---|---|" + "---|---|" * len(splits) + "---|",
    ]
    for run in runs:
        for kind, sw in run["sweep"].items():
            res = run["results"]
            cells = []
            for split in splits:
                r = res.get(split, {}).get(kind)
                if r is not None:
                    cells.append(
                        (
                            f"{r['recall']:.3f} ({r['hits']}/{r['same_answer_pairs']})",
                            f"{r['false_hit_rate']:.3f} ({r['false_hits']}/{r['different_answer_pairs']})",
                            r["target_met"],
                        )
                    )
            met = "error" not in run.get("thresholds_from", {})
            row = [
                run["checker"],
                kind,
                f"{sw['cosine']}, {sw['checker']}"
                + (f", reply {sw['reply']}" if sw.get("reply") else "")
                + ("" if met else " (the bound cannot be supported: strictest)"),
            ]
            for rec, fhr, _ in cells:
                row += [rec, fhr]
            row.append("yes" if cells and cells[-1][2] else "no")
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for run in runs[:1]:
        for split, kinds in run["results"].items():
            for kind, r in kinds.items():
                lines.append(f"Per category, {run['checker']}, {split}, {kind}:")
                lines.append("")
                lines.append("| category | pairs | recall | false-hit rate |")
                lines.append("|---|---|---|---|")
                for cat, e in r["per_category"].items():
                    lines.append(f"| {cat} | {e['pairs']} | {e.get('recall', '')} | {e.get('false_hit_rate', '')} |")
                lines.append("")
    return "\n".join(lines)


def make_embedder(name: str):
    if name == "onnx":
        from gateway.cache.onnx_models import OnnxEmbedder

        return OnnxEmbedder()
    from gateway.cache.embedder import Embedder

    return Embedder(quantize="int8" if name == "torch-int8" else "none")


def split_files(blind: bool) -> dict[str, list[Path]]:
    """dev: the calibration split (the team's dev and the blind batches' dev parts); test: the frozen
    test split; blind_test: the blind batches' test parts, read only with ``--blind``."""
    batches = sorted(d for d in DATA.glob("blind*") if d.is_dir())
    out = {
        "dev": [DATA / "dev.jsonl", *(f for d in batches for f in sorted(d.glob("dev*.jsonl")))],
        "test": [DATA / "test.jsonl"],
    }
    if blind:  # one split per batch: blind_test (the first batch), blind2_test, ...
        for d in batches:
            out[d.name + "_test"] = sorted(d.glob("test*.jsonl"))
    return {k: [p for p in v if p.is_file()] for k, v in out.items()}


def calibration_args(checker: str, checker_model: str | None, threads: int, parse_rule: bool = False):
    """The arguments ``evaluate`` takes to count calibration rows on the dev splits only (no test split,
    no replay, conversations keyed semantically, every grid point reported): calibrate_cache.py's run,
    and judge_candidates.py's for each candidate."""
    return argparse.Namespace(
        pairs=None,
        checker=checker,
        checker_model=checker_model,
        parse_rule=parse_rule,
        embedder="onnx",
        threads=threads,
        no_read_replies=False,
        no_replay=True,
        conversation_match="semantic",
        calibration=None,
        calibrate=True,
        blind=False,
        bound_single=0.5,
        bound_conversation=0.5,
    )


def final_split(args, splits) -> str:
    """The split a run reports its served mistakes and replay on: the newest blind batch with --blind."""
    if args.pairs:
        return "pairs"
    blind = sorted((s for s in splits if s.startswith("blind") and s.endswith("_test")), key=_batch_order)
    return blind[-1] if args.blind and blind else "test"


def _batch_order(name: str) -> int:
    digits = name[len("blind") : -len("_test")]
    return int(digits) if digits else 1


def calibration_rows(items: list[dict], reply: float) -> list[list]:
    """Every (cosine, checker) grid point's [cosine, checker, false hits, negatives, hits, positives]."""
    neg = [it for it in items if not it["pair"]["same_answer"]]
    pos = [it for it in items if it["pair"]["same_answer"]]
    rows = []
    for c in SCORES:
        for t in COSINES:
            rows.append([t, c, int(sum(hits(neg, t, c, reply))), len(neg), int(sum(hits(pos, t, c, reply))), len(pos)])
    return rows


def evaluate(args, embedder=None) -> dict:
    from gateway.cache.calibration import upper

    mode = args.conversation_match
    base = dict(
        checker=args.checker,
        guard=args.checker != "none",
        embed_backend=args.embedder,
        checker_reads_replies=not args.no_read_replies,
        conversation_match=mode,
        calibration=args.calibration or "",
    )
    checker = make_checker(
        args.checker,
        num_threads=args.threads,
        read_replies=not args.no_read_replies,
        model_path=getattr(args, "checker_model", None),
        parse_rule=getattr(args, "parse_rule", False),
    )
    embedder = embedder or make_embedder(args.embedder)
    if args.pairs:
        splits = {"pairs": load_pairs(args.pairs)}
    else:
        splits = {name: [p for f in files for p in load_pairs(f)] for name, files in split_files(args.blind).items()}
    t0 = time.perf_counter()
    prepared = {name: prepare(pairs, mode) for name, pairs in splits.items()}
    for items in prepared.values():
        featurize(items, embedder, checker)
    t_features = time.perf_counter() - t0

    bounds = {"single": args.bound_single, "conversation": args.bound_conversation}
    out = {
        "checker": args.checker,
        "embedder": args.embedder,
        "conversation_match": mode,
        "splits": {name: len(p) for name, p in splits.items()},
        "bound": bounds,
        "targets": TARGET_RECALL,
        "sweep": {},
        "results": {},
    }
    try:
        config = CacheConfig(**base, max_false_hit_rate=bounds)
        out["thresholds_from"] = config.threshold_source
    except ValueError as exc:  # the bound cannot be supported with this checker: the strictest grid point
        config = CacheConfig(
            **base,
            max_false_hit_rate=bounds,
            threshold=COSINES[-1],
            checker_threshold=SCORES[-1],
            conversation_threshold=COSINES[-1],
            conversation_checker_threshold=SCORES[-1],
        )
        out["thresholds_from"] = {"error": str(exc)}
    if args.checker == "none":
        config = replace(config, checker_threshold=0.0, conversation_checker_threshold=0.0)
    for kind in ("single", "conversation"):
        by_split = {name: [it for it in items if it["kind"] == kind] for name, items in prepared.items()}
        if not any(by_split.values()):
            continue
        cos, score = (
            (config.threshold, config.checker_threshold)
            if kind == "single"
            else (config.conversation_threshold, config.conversation_checker_threshold)
        )
        rep = config.conversation_reply_threshold if kind == "conversation" else 0.0
        out["sweep"][kind] = {"cosine": cos, "checker": score, "reply": rep}
        for name, items in by_split.items():
            if not items:
                continue
            res = report(items, cos, score, rep)
            n, k = res["different_answer_pairs"], res["false_hits"]
            res["false_hit_upper_95"] = round(upper(k, n), 4) if n else None
            res["target_met"] = bool(
                res["recall"] is not None
                and res["recall"] >= TARGET_RECALL[kind]
                and (res["false_hit_rate"] or 0.0) <= bounds[kind]
            )
            out["results"].setdefault(name, {})[kind] = res
            out["sweep"][kind][name] = {
                "recall": [rates(items, hits(items, t, score, rep))["recall"] for t in COSINES],
                "false_hit_rate": [rates(items, hits(items, t, score, rep))["false_hit_rate"] for t in COSINES],
            }
        if args.calibrate and "dev" in by_split:
            out.setdefault("calibration_rows", {})[kind] = calibration_rows(by_split["dev"], rep)
        final = final_split(args, out["splits"])
        if final in out["results"] and kind in out["results"][final]:
            out["results"][final][kind]["false_hits_served"] = mistakes(by_split[final], cos, score, rep)[:40]
    if not args.no_replay:
        final = final_split(args, out["splits"])
        out["replay_through_cache"] = asyncio.run(replay(prepared[final], config, embedder, checker))
    out["timing_s"] = {"features": round(t_features, 1)}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", help="evaluate this pair file at the configured thresholds (default: dev + test)")
    p.add_argument("--checker", choices=(*CHECKERS, "all"), default="cross_encoder", help="all: side by side")
    p.add_argument("--checker-model", help="the cross-encoder's ONNX file (default: the shipped one; a candidate)")
    p.add_argument("--parse-rule", action="store_true", help="also veto by a dependency parse (gateway/cache/parse.py)")
    p.add_argument("--markdown", help="also write the side-by-side table (docs/CACHE_EVAL.md's) to this file")
    p.add_argument("--embedder", choices=("onnx", "torch", "torch-int8"), default=CacheConfig().embed_backend)
    p.add_argument("--threads", type=int, default=2, help="checker threads (the evaluation batches)")
    p.add_argument("--bound-single", type=float, default=BUDGET["single"], help="max_false_hit_rate, singles")
    p.add_argument("--bound-conversation", type=float, default=BUDGET["conversation"])
    p.add_argument("--conversation-match", choices=("exact", "semantic"), default=CacheConfig.conversation_match)
    p.add_argument("--calibration", help="calibration table (default: the shipped one)")
    p.add_argument("--calibrate", action="store_true", help="also emit the dev split's calibration rows")
    p.add_argument("--blind", action="store_true", help="also read the blind batches' test split (once, at the end)")
    p.add_argument("--no-read-replies", action="store_true", help="the checker ignores assistant turns")
    p.add_argument("--no-replay", action="store_true", help="skip the pass through a real SemanticCache")
    p.add_argument("--out-dir", default="out")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    embedder = make_embedder(args.embedder)
    runs = []
    for name in CHECKERS if args.checker == "all" else (args.checker,):
        args_one = argparse.Namespace(**{**vars(args), "checker": name})
        results = {"cpu": cpu_info(), **evaluate(args_one, embedder)}
        if not args.no_plot:
            png = out_dir / f"cache_eval_sweep_{name}.png"
            plot(results, png)
            results["plot"] = str(png)
        (out_dir / f"cache_eval_{name}.json").write_text(json.dumps(results, indent=2) + "\n")
        slim = {k: v for k, v in results.items() if k != "sweep"}
        slim["chosen"] = {k: {n: v.get(n) for n in ("cosine", "checker", "reply")} for k, v in results["sweep"].items()}
        print(json.dumps(slim, indent=2), flush=True)
        runs.append(results)
    if args.markdown:
        Path(args.markdown).write_text(markdown(runs) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
