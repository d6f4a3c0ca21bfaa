"""The HTTP service's settings: environment variables `ATENTO_*` and the same flags on the command line.

Owns `ServiceSettings`; nests the engine's `BatchingSettings` and `RuntimeSettings` (service/engine/settings.py).
Never instantiated at import time: `service.__main__.main()` builds one and passes it to `create_app`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.engine.settings import BatchingSettings, RuntimeSettings


class ServerSettings(BaseModel):
    """The connection limits uvicorn enforces for `python -m service` (ATENTO_SERVER__*, --server.*).

    What uvicorn cannot bound is left to the front end (deploy/nginx): the time to send a request body,
    and a client reading its response slowly (send_timeout_s stops only one that reads nothing).
    docs/http-limits.md lists both sides.
    """

    http: Literal["h11", "httptools"] = Field(
        "h11",
        description="HTTP parser. h11 (default) bounds the request head (header_timeout_s, max_header_bytes); "
        "httptools parses faster but bounds neither, for a server behind a front end that does.",
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="A connection is closed when a request head (request line and headers) is not complete this "
        "many seconds after the connection opened or the head's first byte arrived (slowloris, and connections "
        "that never send a request). h11 only.",
    )
    send_timeout_s: float = Field(
        30.0,
        gt=0,
        description="A connection is aborted when its client has read nothing of a response for this many seconds "
        "(the server's send buffers stay full): a client that stops reading cannot hold its response in memory, "
        "its connection open, or an event stream's request in flight, for longer. h11 only.",
    )
    keep_alive_timeout_s: int = Field(
        5, ge=1, description="An idle keep-alive connection is closed after this many seconds without a new request."
    )
    max_header_bytes: int = Field(
        65_536,
        ge=1024,
        description="Largest request head (request line and headers) in bytes; larger ones get 400 and the "
        "connection is closed (uvicorn's h11_max_incomplete_event_size). h11 only.",
    )
    max_headers: int = Field(
        100, ge=8, description="Most header fields in a request; more get 431 before any other check."
    )
    limit_concurrency: int | None = Field(
        1000,
        ge=1,
        description="Open connections (and requests in progress) beyond which uvicorn answers every new request "
        "503 at once, health probes included; null = no limit (then the file-descriptor limit is the bound).",
    )
    backlog: int = Field(
        1024, ge=1, description="Connections the kernel queues for accept() before refusing (listen backlog)."
    )


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

    host: str = Field(  # loopback by default; containers set 0.0.0.0 explicitly
        "127.0.0.1", description="Address to listen on (0.0.0.0: every interface)."
    )
    port: int = Field(8000, ge=0, le=65535, description="Port to listen on; 0 = any free port.")
    model_dir: Path = Field(
        Path("models/normalize/1"), description="The exported model directory to serve (docs/model-directory.md)."
    )
    # A model repository (service/engine/repository.py) unless ATENTO_MODEL_DIR is given: `serves_repository`.
    model_repository: Path = Field(
        Path("models"),
        description="The model repository: every <name>/<version>/ model directory under it is served (the newest "
        "`repository_versions` of each name). Ignored when model_dir is set.",
    )
    models: Annotated[tuple[str, ...], NoDecode] = Field(
        (), description="Comma-separated model names to serve from the repository; empty = every one there."
    )
    default_model: str | None = Field(
        None,
        description="The repository's model behind the TGI routes (/generate, /generate_stream, /, /attention, "
        "/info) and readiness; null = the only one, or the first by name.",
    )
    repository_versions: int = Field(
        1,
        ge=1,
        le=16,
        description="Versions of each model served: the newest N that verify and load (Triton's version policy "
        "latest N). A newer one loads beside them, then takes the traffic; the oldest drains and is unloaded.",
    )
    # Triton's --repository-poll-secs default; a scan only stats files, so it costs next to nothing.
    repository_poll_s: float = Field(
        15.0,
        ge=0,
        description="Seconds between two scans of the repository for new or changed version directories, which "
        "are then verified, warmed up and switched to as by a load call (a directory is tried once its files "
        "stay the same across two scans; one that fails is retried when its files change); 0 = no polling, "
        "load calls only. Ignored when model_dir is set.",
    )
    variant: str | None = Field(
        None,
        description="The manifest's variant to load (fp32, int8, fp16); null = its default_variant; auto = int8 on a "
        "CPU with int8 dot products (AVX512-VNNI, AVX-VNNI, AMX-INT8) when the export checked it against fp32, else "
        "the default.",
    )
    device: str = Field(
        "auto",
        description="auto (CUDA when onnxruntime can use it, else CPU), cpu, or cuda (a startup error without it).",
    )
    api_keys: Annotated[tuple[SecretStr, ...], NoDecode] = Field(
        (), description="Comma-separated API keys clients send as `Authorization: Bearer KEY`; empty = no auth."
    )
    api_key_file: Path | None = Field(
        None, description="A file of API keys, one per line ('#' comments allowed), added to api_keys."
    )
    log_format: Literal["json", "text"] = Field("text", description="Log lines as JSON objects or as text.")
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="Least severe level logged.")
    max_body_bytes: int = Field(1_048_576, ge=1, description="Largest request body in bytes; larger ones get 413.")
    shutdown_grace_s: float = Field(
        30.0, ge=0, description="Seconds in-flight requests may finish after SIGTERM before they get 503."
    )
    request_timeout_s: float | None = Field(
        60.0, gt=0, description="Seconds a request may take before it gets 504; null = no deadline."
    )
    body_timeout_s: float = Field(
        10.0,
        gt=0,
        description="Seconds a client may leave between two parts of its request body (and no more than the "
        "request's own timeout in all) before it gets 408 and its connection is closed.",
    )
    max_new_tokens_limit: int = Field(
        256, ge=1, description="Largest max_new_tokens a client may ask for, and the default when it asks none."
    )
    max_batch_inputs: int = Field(32, ge=1, le=1024, description="Largest list of `inputs` in one request.")
    max_num_beams: int = Field(8, ge=1, description="Largest num_beams (beam width) a client may ask for.")
    # Attention values (cells) one response may hold, across its inputs, kinds, layers and heads (413
    # beyond): the bundled model's largest single /attention is 331,776; 32 inputs of it would be 181 MB of JSON.
    max_attention_cells: int = Field(
        1_000_000, ge=1, description="Most attention values one response may hold; larger requests get 413."
    )
    # The model directory's edit guard (docs/model-directory.md); false serves the model's raw output (to measure it).
    edit_guard: bool = Field(
        True, description="Apply the model directory's edit guard; off serves the model's raw output."
    )
    static_dir: Path | None = Field(None, description="The web viewer's files; null = service/static.")
    batching: BatchingSettings = Field(default_factory=BatchingSettings, description="Continuous batching limits.")
    runtime: RuntimeSettings = Field(
        default_factory=RuntimeSettings,
        description="The library that runs the graphs (onnxruntime or OpenVINO), its precision and threads.",
    )
    server: ServerSettings = Field(default_factory=ServerSettings, description="uvicorn's connection limits.")

    @field_validator("models", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        """Accept "a,b" (env, CLI) as well as a list."""
        if isinstance(value, str):
            return tuple(name.strip() for name in value.split(",") if name.strip())
        return value

    @model_validator(mode="after")
    def _one_source(self) -> ServiceSettings:
        if {"model_dir", "model_repository"} <= self.model_fields_set:
            raise ValueError("set model_dir (one model directory) or model_repository (a repository), not both")
        return self

    @property
    def serves_repository(self) -> bool:
        """A repository of models, unless one model directory was asked for (ATENTO_MODEL_DIR, --model-dir)."""
        return "model_dir" not in self.model_fields_set

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
