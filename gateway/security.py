"""The admin key, the logging policy for message content, and ``GET /openapi.json``.

In: the validated ``admin:`` of ``configs/gateway.yaml`` (``gateway.config.admin.AdminConfig``, the key
kept only as its sha256) and each HTTP request's ``Authorization`` header. Out: 401 ``APIError``s for the
operator pages when an admin key is configured; nothing otherwise. Runs on the event loop.

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
import hmac
import logging
from typing import Any

from aiohttp import web

from gateway.api.openapi import openapi_json
from gateway.config.admin import AdminConfig
from gateway.config.typed import hash_secret
from runtime.serving.errors import APIError

log = logging.getLogger("gateway.content")

ADMIN_PATHS = frozenset(
    {
        "/metrics",
        "/dashboard",
        "/dashboard/data",
        "/dashboard/diagnosis",
        "/dashboard/tuning",
        "/dashboard/verification",
        "/dashboard/evict",
    }
)
REALM = 'Basic realm="jaxserve admin", charset="UTF-8"'


def admits(admin: AdminConfig, secret: str | None) -> bool:
    """Whether ``secret`` is the admin key: its sha256 compared in constant time."""
    return secret is not None and hmac.compare_digest(hash_secret(secret), admin.key_sha256)


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
                if not admits(admin, secret):
                    code = "missing_admin_key" if secret is None else "invalid_admin_key"
                    raise APIError(
                        401,
                        "this page needs the admin key: 'Authorization: Bearer <admin key>' "
                        "(or HTTP Basic with the admin key as the password)",
                        type="authentication_error",
                        code=code,
                        headers={"WWW-Authenticate": REALM},
                    )
        return await handler(request)

    return admin_middleware


def log_content(enabled: bool, what: str, completion_id: str, text: Any) -> None:
    """Log a request's messages or answer, only where the operator opted in (``log_content: true``)."""
    if enabled:
        log.info("%s %s: %r", completion_id, what, text)


def setup_security(app: web.Application, admin: AdminConfig | None) -> None:
    """Install the admin check (innermost middleware: the error middleware shapes its 401) and
    ``GET /openapi.json``."""
    app.middlewares.append(admin_middleware_for(admin))
    app.router.add_get("/openapi.json", openapi_json)
