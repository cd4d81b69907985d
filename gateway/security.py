"""The admin key, and the logging policy for message content.

In: ``admin:`` from ``configs/gateway.yaml`` (validated once, the key kept only as its sha256) and each
HTTP request's ``Authorization`` header. Out: 401 ``APIError``s for the operator pages when an admin
key is configured; nothing otherwise. Runs on the event loop.

    admin:                       # leave it out (the default) and /metrics and the dashboard are open,
      key_env: JAXSERVE_ADMIN_KEY  # which suits a gateway on 127.0.0.1; or key_sha256: <64 hex digits>

With an admin key, ``ADMIN_PATHS`` answer only to ``Authorization: Bearer <admin key>`` (what a
Prometheus scraper sends with ``authorization.credentials``) or HTTP Basic with the admin key as the
password (what a browser sends after its login prompt, so the dashboard page and its polling work).
Routes are matched on the router's canonical path, so ``/metrics?x`` or a HEAD request cannot slip by.

Logging policy: prompts and answers are never logged unless ``log_content: true`` is set in the config
(``-v`` alone does not do it); then each request's messages and answer are logged at INFO, to debug a
deployment on purpose.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import logging
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from aiohttp import web

from runtime.serving.errors import APIError
from gateway.config.typed import ConfigError

log = logging.getLogger("gateway.content")

ADMIN_PATHS = frozenset({"/metrics", "/dashboard", "/dashboard/data"})
REALM = 'Basic realm="jaxserve admin", charset="UTF-8"'


def hash_secret(secret: str) -> str:
    """sha256 hex of a key as the client sends it (``surrogateescape``: any header bytes hash)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class AdminConfig:
    key_sha256: str  # the admin key is never kept in clear

    def __post_init__(self):
        if not isinstance(self.key_sha256, str) or not re.fullmatch(r"[0-9a-f]{64}", self.key_sha256):
            raise ConfigError("admin.key_sha256: must be 64 lowercase hex digits (sha256 of the key)")

    def accepts(self, secret: str | None) -> bool:
        return secret is not None and hmac.compare_digest(hash_secret(secret), self.key_sha256)


def parse_admin(data: Any, env: Mapping[str, str] | None = None) -> AdminConfig | None:
    """``admin:`` -> ``AdminConfig``; ``None`` (absent or empty) leaves the operator pages open."""
    env = os.environ if env is None else env
    if data is None or data == {}:
        return None
    if not isinstance(data, Mapping):
        raise ConfigError("admin: must be a mapping with key_sha256 or key_env")
    unknown = sorted(set(map(str, data)) - {"key_sha256", "key_env"})
    if "key" in unknown:
        raise ConfigError("admin.key: keys are not written in clear; give key_sha256 or key_env")
    if unknown:
        raise ConfigError(f"admin: unknown key(s) {', '.join(unknown)} (known: key_env, key_sha256)")
    if ("key_sha256" in data) == ("key_env" in data):
        raise ConfigError("admin: give exactly one of key_sha256 or key_env")
    if "key_env" in data:
        name = data["key_env"]
        if not isinstance(name, str) or not env.get(name):
            raise ConfigError(f"admin.key_env: the environment variable {name!r} is not set")
        return AdminConfig(hash_secret(env[name]))
    return AdminConfig(data["key_sha256"])


def presented_secret(request: web.Request) -> str | None:
    """The key in ``Authorization``: a Bearer token, or the password of HTTP Basic credentials."""
    auth = request.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    scheme, value = scheme.lower(), value.strip()
    if scheme == "bearer" and value:
        return value
    if scheme == "basic" and value:
        try:
            decoded = base64.b64decode(value.encode("ascii", "surrogateescape"), validate=True)
        except (binascii.Error, ValueError):
            return None
        _, sep, password = decoded.decode("utf-8", "surrogateescape").partition(":")
        return password if sep else None
    return None


def admin_middleware_for(admin: AdminConfig | None):
    @web.middleware
    async def admin_middleware(request: web.Request, handler):
        if admin is not None:
            resource = request.match_info.route.resource
            if resource is not None and resource.canonical in ADMIN_PATHS:
                secret = presented_secret(request)
                if not admin.accepts(secret):
                    code = "missing_admin_key" if secret is None else "invalid_admin_key"
                    raise APIError(401, "this page needs the admin key: 'Authorization: Bearer <admin key>' "
                                   "(or HTTP Basic with the admin key as the password)",
                                   type="authentication_error", code=code, headers={"WWW-Authenticate": REALM})
        return await handler(request)

    return admin_middleware


def log_content(enabled: bool, what: str, completion_id: str, text: Any) -> None:
    """Log a request's messages or answer, only where the operator opted in (``log_content: true``)."""
    if enabled:
        log.info("%s %s: %r", completion_id, what, text)


def setup_security(app: web.Application, admin: AdminConfig | None) -> None:
    """Install the admin check (innermost middleware: the error middleware shapes its 401) and
    ``GET /openapi.json``."""
    from gateway.api.openapi import openapi_json

    app.middlewares.append(admin_middleware_for(admin))
    app.router.add_get("/openapi.json", openapi_json)
