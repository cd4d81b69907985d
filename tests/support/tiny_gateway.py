"""A gateway over the tiny random Llama in-process, in a background thread on a loopback port
(tests/support/gateway_server.py's ServerThread). The model is served as "tiny"."""

from __future__ import annotations

from gateway.app import create_app
from gateway.config.gateway import GatewayConfig, ModelEntry
from tests.support.engines import tiny_config
from tests.support.gateway_server import ServerThread

# The engine most gateway tests compile: the tiny limits with a 256-token context (a chat template and a
# question fit) and 64 blocks.
GATEWAY_ENGINE = dict(max_model_len=256, num_blocks=64)


def tiny_gateway(
    path, engine: dict | None = None, *, backends=None, cache_enabled=None, app_cache=None, **config
) -> ServerThread:
    """Started and ready. ``engine``: tiny_config overrides on top of GATEWAY_ENGINE; ``config``: GatewayConfig
    fields; ``backends``, ``cache_enabled`` and ``app_cache`` (create_app's ``cache``): create_app's."""
    models = (ModelEntry("tiny", tiny_config(path, **{**GATEWAY_ENGINE, **(engine or {})})),)
    app = create_app(
        GatewayConfig(port=0, models=models, **config), backends=backends, cache=app_cache, cache_enabled=cache_enabled
    )
    return ServerThread(app).start()
