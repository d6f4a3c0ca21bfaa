"""The Docker image's install steps, run without Docker: build the wheel as the builder stage does,
install it with only the `service` extra into a fresh virtualenv as the runtime stage does, copy the
bundled model as the image does, and serve it. Proves the image needs no torch and that the wheel
carries everything the service uses (the viewer's static files included).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_MODEL = ROOT / "models" / "normalize" / "1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def get(url: str, timeout: float = 5.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except OSError:
        return 0, b""


def post_json(url: str, body: dict[str, object]) -> dict[str, object]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


@pytest.mark.slow
def test_image_install_steps_serve_the_bundled_model_without_torch(tmp_path: Path) -> None:
    assert (BUNDLED_MODEL / "manifest.json").is_file(), "the bundled model is missing"
    wheels = tmp_path / "wheels"
    # Builder stage: `pip wheel --no-deps --wheel-dir /wheels .`
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels), str(ROOT)])
    (wheel,) = wheels.glob("atento-*.whl")
    # Runtime stage: a fresh interpreter environment with `pip install "<wheel>[service]"` only.
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "--quiet", f"{wheel}[service]"])
    installed = run([str(python), "-m", "pip", "list", "--format=json"]).stdout
    names = {package["name"].lower() for package in json.loads(installed)}
    assert "torch" not in names and "onnxruntime" in names, sorted(names)
    # COPY models/ /app/models/, WORKDIR /app: run outside the checkout so only the wheel is imported.
    app = tmp_path / "app"
    shutil.copytree(ROOT / "models", app / "models")
    port = free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ATENTO_HOST": "127.0.0.1",
        "ATENTO_PORT": str(port),
        "ATENTO_MODEL_DIR": str(app / "models" / "normalize" / "1"),
        "ATENTO_DEVICE": "cpu",
        "ATENTO_LOG_FORMAT": "json",
    }
    server = subprocess.Popen(
        [str(python), "-m", "service"], cwd=app, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while get(f"{base}/health/ready")[0] != 200:
            assert server.poll() is None, f"the server exited:\n{server.stdout.read() if server.stdout else ''}"
            assert time.monotonic() < deadline, "the server never became ready"
            time.sleep(0.5)
        answer = post_json(f"{base}/generate", {"inputs": "La heroica ciudad dormía la siesta."})
        assert answer["generated_text"] == "La heroica ciudad dormía la siesta."
        status, page = get(f"{base}/")
        assert status == 200 and b"<html" in page.lower()
        imported = run([str(python), "-c", "import service.http.app, sys; print('torch' in sys.modules)"], cwd=app)
        assert imported.stdout.strip() == "False"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    assert code == 0
