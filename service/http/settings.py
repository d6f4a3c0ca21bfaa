"""The HTTP service's settings: environment variables `ATENTO_*` and the same flags on the command line.

Owns `ServiceSettings`; nests the engine's `BatchingSettings` and `RuntimeSettings` (service/engine/settings.py).
Never instantiated at import time: `service.__main__.main()` builds one and passes it to `create_app`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.engine.settings import BatchingSettings, RuntimeSettings


class ServiceSettings(BaseSettings):
    """Everything `python -m service` can be told.

    Nested sections use `__` in environment variables (`ATENTO_BATCHING__MAX_QUEUE=32`) and a dot on
    the command line (`--batching.max-queue 32`).
    """

    model_config = SettingsConfigDict(
        env_prefix="ATENTO_",
        env_nested_delimiter="__",
        extra="ignore",  # other ATENTO_* variables (e.g. a teammate's) must not break startup
    )

    host: str = "127.0.0.1"  # loopback by default; containers set 0.0.0.0 explicitly
    port: int = Field(8000, ge=0, le=65535)  # 0 = ephemeral (tests)
    model_dir: Path = Path("models/normalize/1")  # an exported model directory (docs/model-directory.md)
    variant: str | None = None  # manifest variant ("fp32", "int8"); None = the manifest's default_variant
    device: str = "auto"  # "auto" | "cpu" | "cuda": which onnxruntime execution provider to ask for
    api_keys: Annotated[tuple[SecretStr, ...], NoDecode] = ()  # comma-separated; empty = no auth
    api_key_file: Path | None = None  # one key per line ('#' comments allowed), added to api_keys
    log_format: Literal["json", "text"] = "text"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    max_body_bytes: int = Field(1_048_576, ge=1)  # larger request bodies get 413
    shutdown_grace_s: float = Field(30.0, ge=0)  # SIGTERM: how long in-flight requests may finish
    request_timeout_s: float | None = Field(60.0, gt=0)  # per-request deadline (504); None = none
    max_new_tokens_limit: int = Field(256, ge=1)  # largest max_new_tokens a client may ask for
    max_batch_inputs: int = Field(32, ge=1)  # largest list of `inputs` in one request
    max_num_beams: int = Field(8, ge=1)  # largest beam width a client may ask for
    # The model directory's edit guard (docs/model-directory.md); false serves the model's raw output (to measure it).
    edit_guard: bool = True
    static_dir: Path | None = None  # web viewer; None = service/static next to this file
    batching: BatchingSettings = Field(default_factory=BatchingSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: object) -> object:
        """Accept "k1,k2" (env, CLI) as well as a list."""
        if isinstance(value, str):
            return tuple(key.strip() for key in value.split(",") if key.strip())
        return value

    def resolved_api_keys(self) -> tuple[bytes, ...]:
        """Return every accepted key (inline and from `api_key_file`) as bytes for constant-time compare.

        Raises:
            OSError: `api_key_file` is set but cannot be read.
        """
        keys = [key.get_secret_value() for key in self.api_keys]
        if self.api_key_file is not None:
            for line in self.api_key_file.read_text(encoding="utf-8").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    keys.append(line)
        return tuple(key.encode("utf-8") for key in keys)
