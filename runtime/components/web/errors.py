"""The API's errors: each a status and a one-line message, sent as ``{"error": message}``."""

from __future__ import annotations

from sengen.runtime.errors import SengenError


class ApiError(SengenError):
    """A request that cannot be served; ``status`` is its HTTP status (4xx)."""

    def __init__(self, status: int, message: str, detail: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail or []


def not_found(message: str) -> ApiError:
    return ApiError(404, message)


def bad_request(message: str, detail: list[str] | None = None) -> ApiError:
    return ApiError(400, message, detail)


def conflict(message: str) -> ApiError:
    return ApiError(409, message)
