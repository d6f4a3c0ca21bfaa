"""Structured logging for the service: a request id per request (contextvar), JSON or text, keys redacted.

`configure_logging` is called by `python -m service` (not at import). Imports only the standard library.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
from typing import Any

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("atento_request_id", default="-")

# Anything that looks like a credential is masked before a record is written, wherever it came from.
_SECRET = re.compile(
    r"(?i)(bearer\s+|api[_-]?keys?[\"']?\s*[=:]\s*[\"']?|authorization[\"']?\s*[=:]\s*[\"']?)"
    r"([^\s,\"'}]+)"
)
# Attributes of a record that are not `extra=` fields to write. uvicorn's records carry `color_message`, the
# message again with terminal escape codes.
_STANDARD_ATTRS = frozenset(vars(logging.makeLogRecord({})).keys()) | {
    "message",
    "asctime",
    "request_id",
    "color_message",
}


def redact(text: str, secrets: tuple[bytes, ...] = ()) -> str:
    """Mask bearer tokens, `api_key=` pairs and any of the configured `secrets` in `text`."""
    text = _SECRET.sub(lambda m: m.group(1) + "[REDACTED]", text)
    for secret in secrets:
        value = secret.decode("utf-8", "replace")
        if value:
            text = text.replace(value, "[REDACTED]")
    return text


class RequestIdFilter(logging.Filter):
    """Stamp each record with the current request id and redact secrets from its message."""

    def __init__(self, secrets: tuple[bytes, ...] = ()) -> None:
        super().__init__()
        self._secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id_var.get()
        message = record.getMessage()
        cleaned = redact(message, self._secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, message, request_id and any `extra=` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """Human-readable lines with the request id and `extra=` fields as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [f"{k}={v}" for k, v in vars(record).items() if k not in _STANDARD_ATTRS and not k.startswith("_")]
        return f"{line} {' '.join(extras)}" if extras else line


def configure_logging(*, log_format: str, log_level: str, secrets: tuple[bytes, ...] = ()) -> None:
    """Route the root, uvicorn and atento loggers to stderr in the chosen format.

    uvicorn's access log is turned off: the request middleware logs one line per request instead,
    with the request id, route, status and duration.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RequestIdFilter(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(log_level.upper())
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").disabled = True
