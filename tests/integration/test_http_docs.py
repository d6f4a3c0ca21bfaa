"""GET /docs works offline: Swagger UI's page references only this server, and every asset it names answers."""

from __future__ import annotations

import re

import httpx


def test_docs_reference_only_local_urls_that_answer(fake_server):
    s = fake_server()
    page = httpx.get(f"{s.url}/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    html = page.text
    assert not re.search(r"https?://|//cdn", html), re.findall(r"https?://[^\s\"']+", html)
    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", html)
    assert {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/openapi.json"} <= set(urls), urls
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
        assert httpx.get(f"{s.url}{url}").status_code == 200, url
    assert httpx.get(f"{s.url}/docs/assets/LICENSE").status_code == 200  # Swagger UI's Apache-2.0 licence
    assert httpx.get(f"{s.url}/redoc").status_code == 404  # ReDoc (another CDN) is off
