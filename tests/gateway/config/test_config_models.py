"""The config models (gateway/config/): pydantic dataclasses validated once, errors that name the key.

Unit tests, no model and no server: how a wrong value, an unknown key, a YAML-only key (``key_env``,
``engine.kv_cache_mb``) and a rule across fields are reported, and that the models still behave as the
frozen dataclasses the rest of the gateway reads (positional construction, equality, hashing).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from gateway.config.admin import AdminConfig, parse_admin
from gateway.config.gateway import ConfigError, GatewayConfig, Limits, ModelEntry, load_config
from gateway.config.tiers import KeyPolicy, KeysConfig, Price, TierConfig, TiersSpec, parse_tiers
from gateway.config.typed import hash_secret, validate
from runtime.api import EngineConfig

ONE_TIER = {"tiers": [{"name": "t", "model": "m"}]}


def error(cls, data, where="", **context) -> str:
    with pytest.raises(ConfigError) as exc:
        validate(cls, data, where, context=context)
    return str(exc.value)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"max_messages": "ten"}, "limits.max_messages: must be an integer, got 'ten'"),
        ({"max_messages": 2.0}, "limits.max_messages: must be an integer, got 2.0"),  # no silent truncation
        ({"max_messages": True}, "limits.max_messages: must be an integer, got True"),
        ({"max_messages": 0}, "limits.max_messages: must be >= 1, got 0"),
        (
            {"max_mesages": 3},
            "limits: unknown key(s) max_mesages (known: default_max_tokens, max_body_bytes, max_messages)",
        ),
        ("lots", "limits: must be a mapping, got 'lots'"),
    ],
)
def test_errors_name_the_key(data, message):
    assert error(Limits, data, "limits") == message


def test_every_error_is_reported_once_per_key():
    text = error(
        TiersSpec,
        {
            "tiers": [{"name": "a", "model": "m", "capacity": "x", "colour": 1, "size": 2}],
            "router": {"default": "a", "code": "yes"},
        },
    )
    assert text.split("; ") == [
        "tiers[0].capacity: must be an integer, got 'x'",
        "router.code: must be true or false, got 'yes'",
        "tiers[0]: unknown key(s) colour, size (known: capabilities, capacity, fallback, max_context, "
        "model, name, price, sampling, timeout_s, truncation, url, urls)",
    ]


def test_yaml_only_keys_are_named_and_listed():
    assert "models[0].engine.kv_cache_mb: must be a positive integer, got 'lots'" in error(
        GatewayConfig, {"models": [{"name": "m", "engine": {"kv_cache_mb": "lots"}}]}
    )
    assert "models[0]: unknown key(s) gguff (known: engine, gguf, name, preset)" in error(
        GatewayConfig, {"models": [{"name": "m", "gguff": "x.gguf"}]}
    )
    assert "keys.entries[0].key_env: the environment variable 'NOPE' is not set" in error(
        TiersSpec, {**ONE_TIER, "keys": {"entries": [{"name": "a", "key_env": "NOPE"}]}}, env={}
    )
    assert "keys.entries[0].name: required" in error(
        TiersSpec, {**ONE_TIER, "keys": {"entries": [{"key_sha256": "a" * 64}]}}
    )


def test_yaml_sugar_becomes_fields():
    entry = validate(
        ModelEntry,
        {
            "name": "small",
            "preset": "smollm2-135m",
            "gguf": "/m.gguf",
            "engine": {"kv_cache_mb": 32, "max_num_seqs": 4},
        },
    )
    assert entry == ModelEntry(
        "small", EngineConfig(model="smollm2-135m", gguf_path="/m.gguf", kv_cache_bytes=32 << 20, max_num_seqs=4)
    )
    tier = validate(
        TierConfig,
        {
            "name": "a",
            "model": "m",
            "fallback": "b",
            "urls": ["http://h:1"],
            "price": {"input_per_mtok": 1, "output_per_mtok": 2},
        },
    )
    assert tier.fallback == ("b",) and tier.urls == ("http://h:1",)  # a string is a list of one
    assert tier.price == Price(1.0, 2.0) and tier.cost(1_000_000, 500_000) == pytest.approx(2.0)
    policy = validate(KeyPolicy, {"name": "a", "key_env": "K"}, context={"env": {"K": "sk-a"}})
    assert policy.key_sha256 == hash_secret("sk-a")
    admin = parse_admin({"key_env": "ADMIN"}, env={"ADMIN": "adm"})
    assert admin == AdminConfig(hash_secret("adm")) and parse_admin({}) is None and parse_admin(None) is None


def test_nothing_is_coerced():
    assert "limits.max_body_bytes: must be an integer, got '1024'" in error(
        GatewayConfig, {"limits": {"max_body_bytes": "1024"}}
    )
    assert "tiers[0].urls: must be a list of strings" in error(
        TiersSpec, {"tiers": [{"name": "a", "model": "m", "urls": [1]}]}
    )
    assert "warmup: must be true or false, got 'no'" in error(GatewayConfig, {"warmup": "no"})
    # an integer where a float is wanted is a float
    assert validate(TierConfig, {"name": "a", "model": "m", "timeout_s": 5}).timeout_s == 5.0


def test_rules_across_fields_name_their_keys():
    assert "tiers[0].fallback: unknown tier 'x'" in error(
        TiersSpec, {"tiers": [{"name": "a", "model": "m", "fallback": ["x"]}]}
    )
    assert "tiers[0].model: 'gpt' is not one of the gateway's in-process models (m)" in error(
        TiersSpec, {"tiers": [{"name": "a", "model": "gpt"}]}, local_models=["m"]
    )
    # within the gateway's config the same rule names the path from the top
    text = error(GatewayConfig, {"models": [{"name": "m"}], "tiers": {"tiers": [{"name": "a", "model": "gpt"}]}})
    assert text.startswith("tiers.tiers[0].model: 'gpt' is not one of the gateway's in-process models")
    remote_only = {"tiers": [{"name": "a", "model": "x", "url": "http://h:1"}]}
    assert "models: m not served by any tier" in error(GatewayConfig, {"models": [{"name": "m"}], "tiers": remote_only})


def test_built_in_code_like_dataclasses():
    """Positional arguments, equality, hashing and replace work as they did with frozen dataclasses;
    a bad value is refused in code too, with the same message."""
    policy = KeyPolicy("team", key_sha256=hash_secret("k"), budget_usd=1, tiers=["a"])  # a list is a tuple
    assert policy.tiers == ("a",) and policy.budget_usd == 1.0 and hash(policy) == hash(dataclasses.replace(policy))
    assert KeysConfig(entries=(policy,)).lookup(hash_secret("k")) is policy
    with pytest.raises(ValueError, match="capacity: must be >= 1, got 0"):
        TierConfig("a", "m", capacity=0)
    tier = TierConfig("a", "m")  # in-process: urls=() is the default; only YAML's `urls: []` is a mistake
    assert dataclasses.replace(tier, timeout_s=0.1) == TierConfig(**{**tier.__dict__, "timeout_s": 0.1})
    with pytest.raises(ValueError, match="must be 64 lowercase hex digits"):
        AdminConfig("not-a-digest")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Limits().max_messages = 3  # type: ignore[misc]
    spec = TiersSpec.from_models(["a", "b"])
    assert spec.names == ["a", "b"] and spec.router.default == "a"
    # the cross checks run whichever way the config is built
    with pytest.raises(ValueError, match="not served by any tier"):
        GatewayConfig(
            models=(ModelEntry("m"),),
            tiers=parse_tiers({"tiers": [{"name": "a", "model": "x", "url": "http://h:1"}]}, []),
        )


def test_tiers_file_is_read_relative_to_the_config(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "tiers.yaml").write_text("tiers: [{name: a, model: m, price: {input_per_mtok: 2}}]\n")
    (tmp_path / "conf" / "gw.yaml").write_text("models: [{name: m}]\ntiers: tiers.yaml\nport: 0\n")
    config = load_config(tmp_path / "conf" / "gw.yaml", {"port": 9000, "cache.enabled": False})
    assert config.port == 9000 and config.cache == {"enabled": False}
    assert config.tier_spec.tier("a").price.input_per_mtok == 2.0 and config.tier_spec.router.default == "a"
    (tmp_path / "conf" / "gw.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError, match="the top level must be a mapping"):
        load_config(tmp_path / "conf" / "gw.yaml")
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.yaml")


def test_config_imports_no_room_above_it():
    """gateway.config is the bottom of the gateway: importing it loads neither security, api nor observability
    (the cycle config -> security -> api.openapi -> config.keys -> config is gone)."""
    code = (
        "import sys, gateway.config.gateway, gateway.keys; "
        "print([m for m in sys.modules if m.startswith(('gateway.security', 'gateway.api', "
        "'gateway.observability', 'jax'))])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
