"""Headers every gateway response carries: ``x-request-id`` and, when configured, CORS.

``x-request-id``: the client's own (when it is printable ASCII of at most ``MAX_REQUEST_ID`` characters)
or a new ``req-<hex>``, on every response (errors and streams too: it is set as headers go out, through
``on_response_prepare``), so a client and the operator's logs can name one request.

CORS (``cors:`` in configs/gateway.yaml, ``gateway.config.gateway.CorsConfig``): a preflight
(``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) from an allowed origin is answered
204 before authentication (browsers send no credentials on a preflight); every response to an allowed
origin carries ``Access-Control-Allow-Origin`` and exposes the gateway's own headers (which tier served,
the cost, the cache outcome). An origin not allowed gets no CORS headers: the browser blocks it.
"""

from __future__ import annotations

import uuid

from aiohttp import web

from gateway.config.gateway import CorsConfig

MAX_REQUEST_ID = 128
REQUEST_ID = web.RequestKey("request_id", str)
EXPOSED = (
    "x-request-id",
    "x-cache",
    "x-served-by",
    "x-served-by-replica",
    "x-route-tier",
    "x-route-reason",
    "x-fallback",
    "x-cost-usd",
    "x-cost-saved-usd",
    "retry-after",
)


def request_id(request: web.Request) -> str:
    rid = request.get(REQUEST_ID)
    if rid is None:
        given = request.headers.get("x-request-id", "")
        ok = 0 < len(given) <= MAX_REQUEST_ID and given.isascii() and given.isprintable()
        rid = request[REQUEST_ID] = given if ok else f"req-{uuid.uuid4().hex}"
    return rid


def _allowed(cors: CorsConfig, origin: str | None) -> str | None:
    if not origin:
        return None
    if "*" in cors.allow_origins:
        return "*"
    return origin if origin in cors.allow_origins else None


def setup_headers(app: web.Application, cors: CorsConfig | None) -> None:
    async def on_prepare(request: web.Request, response: web.StreamResponse) -> None:
        response.headers["x-request-id"] = request_id(request)
        if cors is not None and (allow := _allowed(cors, request.headers.get("Origin"))):
            response.headers["Access-Control-Allow-Origin"] = allow
            response.headers["Access-Control-Expose-Headers"] = ", ".join(EXPOSED)
            if allow != "*":
                response.headers["Vary"] = "Origin"

    app.on_response_prepare.append(on_prepare)
    if cors is None:
        return

    @web.middleware
    async def preflight(request: web.Request, handler):
        if (
            request.method == "OPTIONS"
            and "Access-Control-Request-Method" in request.headers
            and _allowed(cors, request.headers.get("Origin"))
        ):
            return web.Response(
                status=204,
                headers={
                    "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
                    "Access-Control-Allow-Headers": ", ".join(cors.allow_headers),
                    "Access-Control-Max-Age": str(cors.max_age_s),
                },
            )
        return await handler(request)

    app.middlewares.insert(0, preflight)
