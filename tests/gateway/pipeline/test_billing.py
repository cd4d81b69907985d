"""Billing: each tier's part at its own prices; a hit is free and records what it saved."""

from __future__ import annotations

import pytest

from gateway.accounting.usage import Caller, UsageLedger
from gateway.config.tiers import KeyPolicy, KeysConfig
from gateway.pipeline.billing import Billing
from tests.gateway.pipeline.fakes import metrics, sample, spec

CALLER = Caller("key:abc", "abc", KeyPolicy(name="abc"))


def billing():
    return Billing(UsageLedger(KeysConfig()), spec(), metrics())


def test_each_tier_is_charged_its_part_at_its_prices():
    b = billing()
    # big: (5 x 3 + 2 x 15) / 1e6 = 45e-6; lil: (7 x 0.5 + 1 x 1.5) / 1e6 = 5e-6
    assert b.charge(CALLER, [("big", 5, 2), ("lil", 7, 1)], fallback=True) == pytest.approx(50e-6)
    u = b.ledger.usage(CALLER)
    assert (u["requests"], u["fallbacks"], u["prompt_tokens"], u["completion_tokens"]) == (1, 1, 12, 3)
    assert u["by_tier"]["big"]["cost_usd"] == pytest.approx(45e-6)
    assert u["by_tier"]["lil"]["cost_usd"] == pytest.approx(5e-6)
    assert sample(b.metrics, "gateway_cost_usd_total", tier="big") == pytest.approx(45e-6)
    assert sample(b.metrics, "prompt_tokens_total", model="lil") == 7
    assert sample(b.metrics, "generation_tokens_total", model="big") == 2


def test_a_request_that_produced_nothing_costs_nothing_but_counts():
    b = billing()
    assert b.charge(CALLER, [], fallback=False) == 0
    u = b.ledger.usage(CALLER)
    assert u["requests"] == 1 and u["fallbacks"] == 0 and u["cost_usd"] == 0


def test_a_hit_is_free_and_records_what_it_saved():
    b = billing()
    saved = b.saving("big", 5, 2)
    assert saved == pytest.approx(45e-6)
    b.credit_hit(CALLER, "big", saved, 2)
    u = b.ledger.usage(CALLER)
    assert u["cache_hits"] == 1 and u["saved_usd"] == pytest.approx(45e-6) and u["cost_usd"] == 0
    assert sample(b.metrics, "gateway_cost_saved_usd_total", tier="big") == pytest.approx(45e-6)
    assert sample(b.metrics, "gateway_cache_tokens_saved_total", model="big") == 2
    assert b.saving("lil", 0, 0) == 0  # an entry without usage
