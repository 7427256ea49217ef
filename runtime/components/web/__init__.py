"""The shipped ``web`` component: a web explorer and a REST / WebSocket API (docs/guide/web.md)."""

from .component import Web

__all__ = ["Web"]
