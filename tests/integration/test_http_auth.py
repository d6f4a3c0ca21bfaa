"""API keys: Bearer on everything but health and metrics; constant-time compare; never logged."""

from __future__ import annotations

import logging

import httpx


def test_api_keys(fake_server, tmp_path, caplog):
    key_file = tmp_path / "keys"
    key_file.write_text("# ops\nfile-key\n")
    s = fake_server(api_keys="k1,k2", api_key_file=key_file)
    body = {"inputs": "ab"}
    caplog.set_level(logging.DEBUG)
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic k1"}):
        r = httpx.post(f"{s.url}/generate", json=body, headers=headers)
        assert r.status_code == 401 and r.json()["error_type"] == "unauthorized"
    for key in ("k1", "k2", "file-key"):
        r = httpx.post(f"{s.url}/generate", json=body, headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 200, r.text
    assert httpx.get(f"{s.url}/info").status_code == 401
    assert httpx.post(f"{s.url}/attention", json=body).status_code == 401
    assert httpx.post(f"{s.url}/generate_stream", json=body).status_code == 401
    for open_path in ("/health", "/health/live", "/health/ready", "/v2/health/ready", "/metrics"):
        assert httpx.get(f"{s.url}{open_path}").status_code == 200, open_path
    metrics = httpx.get(f"{s.url}/metrics").text
    assert 'atento_requests_rejected_total{reason="unauthorized"} 6.0' in metrics
    assert "k1" not in caplog.text and "file-key" not in caplog.text
