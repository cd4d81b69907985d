"""OpenAI-style errors: every failure the gateway reports has this body and a fitting status.

{"error": {"message": "...", "type": "invalid_request_error", "param": "messages", "code": null}}
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from aiohttp import web

log = logging.getLogger("runtime.serving")


class APIError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.headers = headers or {}

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self) -> web.Response:
        return web.json_response(self.body(), status=self.status, headers=self.headers, dumps=json.dumps)


def invalid(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(400, message, param=param, code=code)


_HTTP_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    405: "invalid_request_error",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
    503: "service_unavailable",
}


def from_http_exception(exc: web.HTTPException) -> APIError:
    status = exc.status
    messages = {404: "no such endpoint", 405: "method not allowed", 413: "request body too large"}
    message = messages.get(status) or exc.reason or "request failed"
    if status == 413 and exc.text:
        message = f"request body too large: {exc.text.strip()}"
    return APIError(
        status,
        message,
        type=_HTTP_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error"),
        headers={k: v for k, v in exc.headers.items() if k.lower() in ("allow", "retry-after")},
    )


@web.middleware
async def error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except APIError as exc:
        return exc.response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return from_http_exception(exc).response()
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception:  # a bug: log it, answer in the OpenAI shape, never leak a traceback
        log.exception("unhandled error on %s %s", request.method, request.path)
        return APIError(500, "internal server error", type="server_error").response()


async def read_json(request: web.Request) -> Any:
    ctype = request.headers.get("Content-Type", "application/json").split(";")[0].strip().lower()
    if ctype not in ("application/json", ""):
        raise APIError(415, f"Content-Type must be application/json, got {ctype!r}")
    raw = await request.read()  # raises 413 past client_max_size
    if not raw:
        raise invalid("the request body is empty; expected a JSON object")
    try:
        body = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:  # the C scanner recurses per nesting level
        raise invalid("the request body is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN/Infinity, ints over 4300 digits
        raise invalid(f"the request body is not valid JSON: {exc}") from None
    where = _lone_surrogate(body)
    if where is not None:
        raise invalid(
            f"the request body has a lone UTF-16 surrogate escape (\\ud800-\\udfff) in {where or 'a string'}: "
            "that is not text",
            where or None,
        )
    return body


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> str | None:
    """Where (``messages[0].content``) a string has a lone surrogate, which json.loads lets through
    from a ``\\udXXX`` escape and which cannot be encoded to UTF-8 later (tokenizer, cache, SSE); None if
    there is none. Iterative: the body's depth is whatever the parser allowed."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return path
        elif isinstance(v, dict):
            for k, item in v.items():
                if _SURROGATE.search(k):
                    return path
                stack.append((item, f"{path}.{k}" if path else k))
        elif isinstance(v, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(v))
    return None
