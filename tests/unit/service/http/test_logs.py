"""Log formatting: uvicorn's `color_message` (the message with terminal escape codes) is never written."""

from __future__ import annotations

import json
import logging

import pytest

from service.http.logs import JsonFormatter, TextFormatter


def uvicorn_record() -> logging.LogRecord:
    # What uvicorn.error logs at startup: the plain message, and `color_message` with ANSI codes as an extra.
    return logging.makeLogRecord(
        {
            "name": "uvicorn.error",
            "levelno": logging.INFO,
            "levelname": "INFO",
            "msg": "Uvicorn running on %s (Press CTRL+C to quit)",
            "args": ("http://127.0.0.1:8000",),
            "color_message": "Uvicorn running on \x1b[1m%s\x1b[0m (Press CTRL+C to quit)",
            "request_id": "-",
            "model": "normalize/1",
        }
    )


@pytest.mark.parametrize("formatter", [TextFormatter(), JsonFormatter()], ids=["text", "json"])
def test_color_message_is_dropped_and_other_extras_kept(formatter):
    line = formatter.format(uvicorn_record())
    assert "color_message" not in line and "\x1b" not in line and "\\u001b" not in line
    assert "Uvicorn running on http://127.0.0.1:8000" in line
    assert ("model=normalize/1" in line) if isinstance(formatter, TextFormatter) else json.loads(line)["model"]
