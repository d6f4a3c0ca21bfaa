"""`make serve`: the ATENTO_* environment wins over the Makefile (README: `ATENTO_MODEL_DIR=... make serve`)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from service.__main__ import parse_settings

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def serve_command(env: dict[str, str], *make_args: str) -> list[str]:
    """The arguments `make serve` would give `python -m service` (make -n prints the recipe)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ATENTO_") and k not in ("MODEL_DIR", "MAKEFLAGS")}
    out = subprocess.run(
        ["make", "-s", "-n", "-C", str(ROOT), "serve", *make_args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(line for line in reversed(out.splitlines()) if " -m service" in line)
    words = shlex.split(line)
    return words[words.index("service") + 1 :]


def settings_for(monkeypatch, env, argv):
    for key in [k for k in os.environ if k.startswith("ATENTO_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return parse_settings(argv)


@pytest.mark.parametrize(
    ("variable", "value", "field"),
    [
        ("ATENTO_MODEL_DIR", "models/mine/1", "model_dir"),
        ("ATENTO_PORT", "9123", "port"),
        ("ATENTO_HOST", "0.0.0.0", "host"),
    ],
)
def test_environment_wins(monkeypatch, variable, value, field):
    env = {variable: value}
    argv = serve_command(env)
    assert argv == []  # nothing the environment could have set
    assert str(getattr(settings_for(monkeypatch, env, argv), field)) == value


def test_no_variables_serves_the_bundled_model(monkeypatch):
    argv = serve_command({})
    settings = settings_for(monkeypatch, {}, argv)
    assert (str(settings.model_dir), settings.host, settings.port) == ("models/normalize/1", "127.0.0.1", 8000)
    assert (ROOT / settings.model_dir / "manifest.json").is_file()


def test_model_dir_on_makes_command_line(monkeypatch):
    argv = serve_command({"ATENTO_MODEL_DIR": "models/other/1"}, "MODEL_DIR=models/mine/1")
    assert argv == ["--model-dir", "models/mine/1"]
    assert str(settings_for(monkeypatch, {}, argv).model_dir) == "models/mine/1"
