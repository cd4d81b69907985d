"""``python -m gateway``: serve the OpenAI-compatible API (``make serve``).

    python -m gateway [--config configs/gateway.yaml] [--host 127.0.0.1] [--port 8000]
                      [--redis-url redis://127.0.0.1:6379/0] [--no-cache] [--drain-timeout 60]

SIGTERM or SIGINT (Ctrl-C) drains (new requests 503 + Retry-After, in-flight ones finish, up to
--drain-timeout), then closes the engines and the cache (gateway/lifecycle.py); the exit status is 0. A
second signal stops waiting for the in-flight requests; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m gateway", description="OpenAI-compatible chat API with a semantic cache"
    )
    p.add_argument("--config", default="configs/gateway.yaml", help="YAML config (default: configs/gateway.yaml)")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--redis-url", help="use Redis as the cache store (default: the embedded file store)")
    p.add_argument("--no-cache", action="store_true", help="serve without the semantic cache")
    p.add_argument(
        "--drain-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="on SIGTERM/SIGINT: seconds to let in-flight requests finish while new ones get 503 (default 60)",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    if args.drain_timeout < 0:
        p.error("--drain-timeout must be >= 0")
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # XLA's flags (runtime.platform.configure_xla) are set by an in-process engine before its first
    # computation; a gateway whose tiers are all remote never loads JAX.
    from gateway.app import create_app
    from gateway.config.gateway import ConfigError, load_config
    from gateway.lifecycle import serve, take_terminal

    overrides = {"host": args.host, "port": args.port}
    if args.redis_url:
        overrides.update({"cache.store": "redis", "cache.redis_url": args.redis_url})
    if args.no_cache:
        overrides["cache.enabled"] = False
    try:
        config = load_config(args.config, overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        app = create_app(config)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tiers = ", ".join(f"{t.name} ({t.model}, {'remote' if t.remote else 'in-process'})" for t in config.tier_spec.tiers)
    logging.getLogger("gateway").info("serving tiers %s on http://%s:%d", tiers, config.host, config.port)
    take_terminal()  # make serve: Ctrl-C reaches the gateway, not make (gateway/lifecycle.py)
    return asyncio.run(serve(app, config.host, config.port, drain_timeout_s=args.drain_timeout))


if __name__ == "__main__":
    sys.exit(main())
