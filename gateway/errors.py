"""OpenAI-style errors: every failure the gateway reports has this body and a fitting status.

    {"error": {"message": "...", "type": "invalid_request_error", "param": "messages", "code": null}}
"""

from __future__ import annotations

import json

from aiohttp import web


class APIError(Exception):
    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None):
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
    messages = {
        404: "no such endpoint",
        405: f"method not allowed",
        413: "request body too large",
    }
    message = messages.get(status) or exc.reason or "request failed"
    if status == 413 and exc.text:
        message = f"request body too large: {exc.text.strip()}"
    return APIError(status, message, type=_HTTP_TYPES.get(status, "invalid_request_error" if status < 500 else "server_error"),
                    headers={k: v for k, v in exc.headers.items() if k.lower() in ("allow", "retry-after")})
