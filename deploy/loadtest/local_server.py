"""A local `python -m service` on 127.0.0.1 and an ephemeral port, for `make loadtest` and the HTTP
benchmark (bench/ imports it from here; deploy/ never imports bench/): started as a subprocess, ready
once GET /health answers 200, terminated on exit. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: `python -m service` runs from it


@dataclass(frozen=True)
class LocalServer:
    url: str
    process: subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def local_server(
    model_dir: Path,
    *,
    max_batch_size: int = 64,
    threads: int = 2,
    variant: str | None = None,
    device: str = "cpu",
    ready_timeout_s: float = 300.0,
    log: Path | None = None,
    decoder_spinning: bool | None = None,
    environment: Mapping[str, str] | None = None,
) -> Iterator[LocalServer]:
    """Serve `model_dir`; yields once healthy. Raises RuntimeError when it exits or never gets ready.
    `environment`: ATENTO_* variables over the ones these arguments set (threads 0 = onnxruntime's default)."""
    port = free_port()
    env = {
        **os.environ,
        "ATENTO_HOST": "127.0.0.1",
        "ATENTO_PORT": str(port),
        "ATENTO_MODEL_DIR": str(model_dir),
        "ATENTO_DEVICE": device,
        "ATENTO_LOG_LEVEL": "warning",
        "ATENTO_BATCHING__MAX_BATCH_SIZE": str(max_batch_size),
        "ATENTO_BATCHING__MAX_QUEUE": "4096",
        "ATENTO_RUNTIME__INTRA_OP_THREADS": str(threads),
    }
    if variant is not None:
        env["ATENTO_VARIANT"] = variant
    if decoder_spinning is not None:  # a pool per session, as bench.workload.make_engine does
        env["ATENTO_RUNTIME__SHARED_THREAD_POOL"] = "false"
        env["ATENTO_RUNTIME__DECODER_ALLOW_SPINNING"] = "true" if decoder_spinning else "false"
    env.update(environment or {})
    output = open(log, "wb") if log is not None else subprocess.DEVNULL  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "service"], cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with code {process.returncode} before getting ready")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server was not ready within {ready_timeout_s:.0f} s")
            time.sleep(0.2)
        yield LocalServer(url, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None:
            output.close()
