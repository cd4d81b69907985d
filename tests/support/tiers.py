"""The two-tier spec of the gateway's tier tests: "big" (dear, 2 requests at a time) falls back to "lil"
(cheap), the default; "auto" escalates to big. Both serve the in-process model "tiny"."""

from __future__ import annotations

PRICES = {"big": (3.0, 15.0), "lil": (0.5, 1.5)}  # USD per million (input, output) tokens


def two_tiers(*, big: dict | None = None, lil: dict | None = None, router: dict | None = None, **sections) -> dict:
    """The spec as ``tiers:`` data; ``big``, ``lil`` and ``router`` add to or override their settings,
    ``sections`` (``keys=...``) are added as they are."""

    def tier(name: str, settings: dict) -> dict:
        price = {"input_per_mtok": PRICES[name][0], "output_per_mtok": PRICES[name][1]}
        return {"name": name, "model": "tiny", "price": price, **settings}

    return {
        "tiers": [tier("big", {"fallback": ["lil"], "capacity": 2, **(big or {})}), tier("lil", lil or {})],
        "router": {"default": "lil", "escalate_to": "big", **(router or {})},
        **sections,
    }
