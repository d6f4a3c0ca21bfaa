"""The front end of deploy/ on this machine: `python -m service` replicas, Debian's nginx and Prometheus with
deploy/'s configuration rendered for loopback (deploy/render.py), each a child process on 127.0.0.1 that the
test starts, kills and restarts. Used by tests/deploy/test_frontend.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import IO

import httpx
import pytest

from deploy.render import render_nginx, render_prometheus

ROOT = Path(__file__).resolve().parents[2]
BUNDLED_MODEL = ROOT / "models" / "normalize" / "1"

# `python -m service` with one change when ATENTO_TEST_STEP_S is set: each decoder call takes at least that
# long, so that generations last long enough to be cut (the bundled model writes a token in about 5 ms).
# Everything else is service.__main__.main(), as tests/reliability/test_shutdown.py does.
_LAUNCHER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, "tests/reliability")
    from harness import PacedRunnerFactory
    import service.http.app
    from service.__main__ import main
    from service.engine import Engine

    def build_engine(settings, metrics):
        factory = PacedRunnerFactory(delay_s=float(os.environ["ATENTO_TEST_STEP_S"]))
        return Engine(settings.model_dir, runtime=settings.runtime, batching=settings.batching,
                      observer=metrics, runner_factory=factory)

    service.http.app._build_engine = build_engine  # the one seam: which runner the engine uses
    sys.exit(main())
""")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def binary(name: str) -> str:
    """The path of a Debian binary (nginx lives in /usr/sbin, off a user's PATH). Skips when it is missing
    and we are not root; fails as root, where deploy/install-apt.sh (run by `make test`) installs it."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
    if found:
        return found
    message = f"{name} not found: run deploy/install-apt.sh as root (Debian packages nginx, prometheus)"
    if os.geteuid() == 0:
        pytest.fail(message)
    pytest.skip(f"not root and {message}")


def _stop(proc: subprocess.Popen[bytes] | None, *, timeout_s: float = 30.0) -> None:
    """SIGTERM the child's process group, then SIGKILL it if it outlives `timeout_s`."""
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


class Replica:
    """One `python -m service` on a fixed loopback port (nginx's config names it), restartable."""

    def __init__(self, *, name: str, log_dir: Path, step_s: float, model_dir: Path = BUNDLED_MODEL) -> None:
        self.name = name
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.address}"
        self.log_path = log_dir / f"{name}.log"
        self.step_s = step_s
        self.model_dir = model_dir
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("ATENTO_")}
        env.update(
            PYTHONPATH=str(ROOT),
            ATENTO_LOG_FORMAT="json",
            ATENTO_RUNTIME__INTRA_OP_THREADS="1",  # three replicas share the machine's cores
            ATENTO_TEST_STEP_S=str(self.step_s),
            # One token a decoder call, so that STEP_S paces every token: drafts would bring a copy's tokens
            # several to a call, and the streaming test reads the gaps between tokens.
            ATENTO_BATCHING__DRAFT_TOKENS="0",
        )
        args = ["--model-dir", str(self.model_dir), "--host", "127.0.0.1", "--port", str(self.port)]
        self._log = self.log_path.open("ab")  # a file, not a pipe: a full pipe would block the server
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, *args],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: killpg reaches it and nothing else
        )

    def wait_ready(self, *, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.proc is not None and self.proc.poll() is None, f"{self.name} exited: {self.log_tail()}"
            try:
                if httpx.get(f"{self.url}/health/ready", timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"{self.name} never became ready: {self.log_tail()}"
            time.sleep(0.05)

    def kill(self) -> None:
        """kill -9, as an OOM killer or a lost node would."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def terminate(self, *, timeout_s: float = 40.0) -> int:
        """SIGTERM (a rolling restart, `docker stop`); returns the exit code once it has drained."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        _stop(self.proc)
        if self._log is not None:
            self._log.close()

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]


class Nginx:
    """Debian's nginx running deploy/nginx/nginx.conf, rendered for the replicas' loopback ports."""

    def __init__(self, *, directory: Path, upstreams: list[str]) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.conf = directory / "nginx.conf"
        self.conf.write_text(
            render_nginx(listen=f"127.0.0.1:{self.port}", upstreams=upstreams, log_dir=directory), encoding="utf-8"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        nginx = binary("nginx")
        # As root, workers would drop to `nobody`, who cannot write the 0700 pytest directory (request bodies
        # over 16 KB are buffered to disk there); outside a test the shipped file keeps nginx's default user.
        directives = f"daemon off; pid {self.directory / 'nginx.pid'};" + (" user root;" if os.geteuid() == 0 else "")
        base = [nginx, "-e", "stderr", "-p", str(self.directory), "-c", str(self.conf), "-g", directives]
        check = subprocess.run([*base, "-t"], capture_output=True, text=True, timeout=30, check=False)
        assert check.returncode == 0, check.stderr
        with (self.directory / "nginx.out").open("ab") as out:
            self.proc = subprocess.Popen(base, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, self.error_log()
            try:
                if httpx.get(f"{self.url}/nginx-health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "nginx did not start"
            time.sleep(0.05)

    def stop(self) -> None:
        _stop(self.proc)

    def error_log(self) -> str:
        parts = [p.read_text(errors="replace") for p in (self.directory / "nginx.out", self.directory / "error.log")]
        return "\n".join(p for p in parts if p)[-5000:]


class Prometheus:
    """Debian's Prometheus with deploy/prometheus/*.yml, rendered for static targets and short intervals."""

    def __init__(self, *, directory: Path, targets: list[str], interval: str, alert_for: str) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config, rules = render_prometheus(
            listen=f"127.0.0.1:{self.port}",
            targets=targets,
            scrape_interval=interval,
            evaluation_interval=interval,
            alert_for=alert_for,
        )
        self.config = directory / "prometheus.yml"
        self.config.write_text(config, encoding="utf-8")
        (directory / "alerts.yml").write_text(rules, encoding="utf-8")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        prometheus = binary("prometheus")
        with (self.directory / "prometheus.log").open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    prometheus,
                    f"--config.file={self.config}",
                    f"--storage.tsdb.path={self.directory / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while True:
            assert self.proc.poll() is None, (self.directory / "prometheus.log").read_text()[-3000:]
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "Prometheus did not become ready"
            time.sleep(0.1)

    def query(self, promql: str) -> list[dict[str, object]]:
        body = httpx.get(f"{self.url}/api/v1/query", params={"query": promql}, timeout=10).json()
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def alerts(self) -> list[dict[str, object]]:
        body = httpx.get(f"{self.url}/api/v1/alerts", timeout=10).json()
        assert body["status"] == "success", body
        return list(body["data"]["alerts"])

    def stop(self) -> None:
        _stop(self.proc)
