"""Optional bearer-token API keys: a FastAPI dependency comparing in constant time.

Keys live in `app.state.api_keys` (bytes, from the settings); they are never logged or echoed.
"""

from __future__ import annotations

import hmac

from fastapi import Request

from service.engine.errors import Unauthorized


def key_matches(candidate: bytes, keys: tuple[bytes, ...]) -> bool:
    """Return True when `candidate` equals one of `keys`, comparing with every key in constant time."""
    found = False
    for key in keys:
        # No early exit: the time taken does not reveal which key (or how much of one) matched.
        found |= hmac.compare_digest(candidate, key)
    return found


async def require_api_key(request: Request) -> None:
    """Let the request through when no keys are configured or it carries `Authorization: Bearer <key>`.

    Raises:
        Unauthorized: keys are configured and the header is missing, malformed or wrong.
    """
    keys: tuple[bytes, ...] = request.app.state.api_keys
    if not keys:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    if not key_matches(token.strip().encode("utf-8"), keys):
        raise Unauthorized("invalid API key")
