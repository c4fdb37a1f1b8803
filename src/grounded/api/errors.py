"""The one place that turns errors into HTTP responses: {"error": {code, message, details}}."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from grounded.errors import GroundedError
from grounded.logging import get_logger

log = get_logger("grounded.api")


def error_body(code: str, message: str, details: object | None = None) -> dict[str, object]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def install(app: FastAPI) -> None:
    @app.exception_handler(GroundedError)
    async def _grounded(request: Request, exc: GroundedError) -> JSONResponse:
        if exc.http_status >= 500:
            log.warning("request_failed", code=exc.code, path=request.url.path)
        return JSONResponse(error_body(exc.code, exc.message, exc.details), exc.http_status)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        fields = [
            {"field": ".".join(str(p) for p in err.get("loc", ())), "problem": err.get("msg")}
            for err in exc.errors()
        ]
        return JSONResponse(
            error_body("invalid_input", "the request is not valid", {"fields": fields}), 422
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(error_body(code, str(exc.detail)), exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled_error", path=request.url.path)
        return JSONResponse(
            error_body("internal_error", "an unexpected error occurred; see the server log"), 500
        )
