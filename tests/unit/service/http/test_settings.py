"""ServiceSettings: defaults, ATENTO_* environment (nested with __), CLI flags, API keys."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from service.__main__ import parse_settings
from service.http.settings import ServiceSettings


def test_defaults(monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("ATENTO_")]:
        monkeypatch.delenv(key)
    s = ServiceSettings()
    assert (s.host, s.port, str(s.model_dir), s.device, s.shutdown_grace_s) == (
        "127.0.0.1",
        8000,
        "models/normalize/1",
        "auto",
        30.0,
    )
    assert s.api_keys == () and s.resolved_api_keys() == ()


def test_environment_and_nesting(monkeypatch, tmp_path):
    key_file = tmp_path / "keys"
    key_file.write_text("# comment\nfrom-file\n\n")
    monkeypatch.setenv("ATENTO_PORT", "9000")
    monkeypatch.setenv("ATENTO_API_KEYS", "a, b")
    monkeypatch.setenv("ATENTO_API_KEY_FILE", str(key_file))
    monkeypatch.setenv("ATENTO_BATCHING__MAX_QUEUE", "7")
    monkeypatch.setenv("ATENTO_RUNTIME__INTRA_OP_THREADS", "2")
    monkeypatch.setenv("ATENTO_LOG_FORMAT", "json")
    s = ServiceSettings()
    assert s.port == 9000 and s.batching.max_queue == 7 and s.runtime.intra_op_threads == 2
    assert s.resolved_api_keys() == (b"a", b"b", b"from-file")
    assert "a" not in repr(s.api_keys)  # SecretStr


def test_cli_flags_win_over_environment(monkeypatch):
    monkeypatch.setenv("ATENTO_PORT", "9000")
    s = parse_settings(
        [
            "--port",
            "9100",
            "--model-dir",
            "x/1",
            "--batching.max-wait-ms",
            "3",
            "--log-format",
            "json",
            "--api-keys",
            "k",
        ]
    )
    assert s.port == 9100 and str(s.model_dir) == "x/1" and s.batching.max_wait_ms == 3
    assert s.resolved_api_keys() == (b"k",)


@pytest.mark.parametrize(
    "bad",
    [
        {"port": 70000},
        {"log_format": "xml"},
        {"max_body_bytes": 0},
        {"batching": {"max_batch_size": 0}},
        {"repository_poll_s": -1},
    ],
)
def test_invalid_settings_refused(bad):
    with pytest.raises(ValidationError):
        ServiceSettings.model_validate(bad)


def test_repository_polling_every_15_s_unless_told(monkeypatch):
    for key in [k for k in __import__("os").environ if k.startswith("ATENTO_")]:
        monkeypatch.delenv(key)
    assert ServiceSettings().repository_poll_s == 15.0  # Triton's --repository-poll-secs
    monkeypatch.setenv("ATENTO_REPOSITORY_POLL_S", "0")
    assert ServiceSettings().repository_poll_s == 0.0  # off: load calls only
    monkeypatch.setenv("ATENTO_REPOSITORY_POLL_S", "2.5")
    assert ServiceSettings().repository_poll_s == 2.5
