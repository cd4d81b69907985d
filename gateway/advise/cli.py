"""``python -m gateway.advise``: the advisor's command line.

    python -m gateway.advise --url http://127.0.0.1:8000 [--window 15m] [--ttft-slo 1.0] [--tpot-slo 0.1] [--json]
    python -m gateway.advise --replay RECORDING [--model M] [--base KEY=VALUE ...] --try KEY=VALUE ...
    python -m gateway.advise --tune --recording RECORDING [--url ...] [--window 30m] [--budget-s 600] [--alpha 0.05]
                             [--base KEY=VALUE ...] [--out tuned.yaml]

Reads ``GET /metrics`` once (the counters since the gateway started), or with ``--window`` asks the
gateway for the change over the last minutes (``GET /dashboard/diagnosis``: ``gateway.advise.history``),
and prints the findings (``gateway.advise.symptoms``). ``--replay`` replays a recording on the engine as
configured and as proposed (``gateway.advise.replay``, in this process). ``--tune`` diagnoses, then
replays candidate changes on the recording and ranks them (``gateway.advise.tune``).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

from gateway.advise.symptoms import MIN_REQUESTS, TPOT_SLO, TTFT_SLO, report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m gateway.advise", description="The advisor: the bottleneck named, the remedy replayed"
    )
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--window", help="the last 15m, 90s, 2h (the gateway keeps two hours); default: since start")
    p.add_argument("--ttft-slo", type=float, default=TTFT_SLO, help="seconds, p99")
    p.add_argument("--tpot-slo", type=float, default=TPOT_SLO, help="seconds, p99")
    p.add_argument("--peak-gbs", type=float, default=None, help="the device's memory bandwidth, GB/s (roofline)")
    p.add_argument("--key", default=None, help="the admin key, when /metrics needs one")
    p.add_argument("--json", action="store_true")
    p.add_argument("--replay", metavar="RECORDING", help="replay a recording (gateway.advise.recording) instead")
    p.add_argument("--try", dest="try_", action="append", default=[], metavar="KEY=VALUE", help="with --replay")
    p.add_argument("--base", action="append", default=[], metavar="KEY=VALUE", help="the current engine's keys")
    p.add_argument("--model", default="smollm2-135m", help="with --replay/--tune: the model to replay on")
    p.add_argument("--time-scale", type=float, default=1.0, help="with --replay/--tune: arrival times times this")
    p.add_argument("--max-requests", type=int, default=200, help="with --replay/--tune: the recording's first N")
    p.add_argument("--tiers", default=None, help="with --replay/--tune: the tiers file (prices); configs/tiers.yaml")
    p.add_argument("--tune", action="store_true", help="rank candidate changes by replayed goodput")
    p.add_argument("--recording", help="with --tune: the recording to replay the candidates on")
    p.add_argument("--budget-s", type=float, default=600.0, help="with --tune: stop replaying after this long")
    p.add_argument(
        "--alpha", type=float, default=0.05, help="with --tune: the chance of recommending a change that is no better"
    )
    p.add_argument("--out", default="tuned.yaml", help="with --tune: where the winning change is written (YAML)")
    return p


def fetch(args) -> dict:
    """The diagnosis the gateway at ``args.url`` answers (a window) or this process makes (one scrape).
    Raises ``urllib.error.HTTPError`` or ``OSError``."""
    headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}

    def get(path: str):
        with urllib.request.urlopen(urllib.request.Request(args.url + path, headers=headers), timeout=10) as r:
            return r.read().decode()

    if args.window:  # the gateway differences its own readings (gateway.advise.history)
        query = urllib.parse.urlencode({"window": args.window, "ttft_slo": args.ttft_slo, "tpot_slo": args.tpot_slo})
        return json.loads(get(f"/dashboard/diagnosis?{query}"))
    cards = json.loads(get("/v1/models"))["data"]  # one scrape: the counters since the gateway started
    prices = {c["tier"]: c["price"]["output_per_mtok"] for c in cards if c.get("tier") and c.get("price")}
    return report(
        get("/metrics"), ttft_slo=args.ttft_slo, tpot_slo=args.tpot_slo, prices=prices, peak_gbs=args.peak_gbs
    )


def show(body: dict) -> None:
    span = "since the gateway started" if body["window_s"] is None else f"over the last {body['window_s']:.0f} s"
    print(f"{body['requests']} answered requests {span}")
    if not body["findings"]:
        print(f"no finding: within the service levels (or fewer than {MIN_REQUESTS} requests)")
    for f in body["findings"]:
        print(f"[{f['symptom']}] {f['cause']}\n  evidence: {json.dumps(f['evidence'])}")
        print(f"  remedy: {f['remedy']}\n  change: {f['key']}")
        for t in f["traps"]:
            print(f"  trap: {t}")


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.replay:  # the engine runs in this process (JAX is imported only now)
        from gateway.advise import replay

        return replay.main(args)
    if args.tune and not args.recording:
        print("error: --tune needs --recording (the gateway's record.path)", file=sys.stderr)
        return 2
    try:
        body = fetch(args)
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:300]
        print(f"error: {args.url} answered {exc.code}: {detail}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot read {args.url}: {exc}", file=sys.stderr)
        return 2
    if args.tune:
        from gateway.advise import tune

        return tune.main(args, body)
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    show(body)
    return 0
