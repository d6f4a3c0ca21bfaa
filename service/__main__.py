"""`python -m service`: build settings from ATENTO_* and flags, then serve the app with uvicorn.

Flags mirror the settings (`--port 8080`, `--model-dir DIR`, `--batching.max-queue 32`); flags win over
environment variables. SIGTERM drains: new requests get 503, in-flight ones finish, exit code 0.
"""

from __future__ import annotations

import logging
import math
import re
import signal
import sys
import time
from collections.abc import Sequence
from types import FrameType
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic_settings import CliSettingsSource

from service.engine.collector import collect_less_often
from service.http.app import begin_drain, create_app, cut_off
from service.http.connections import bounded_h11
from service.http.logs import configure_logging
from service.http.settings import ServiceSettings

logger = logging.getLogger("atento.app")

# After the grace period the engine fails the requests still in flight (503 JSON with Retry-After);
# this is how long uvicorn then waits for those answers to be written before it cancels what is left.
_CUT_OFF_FLUSH_S = 2


class DrainingServer(uvicorn.Server):
    """uvicorn's server, marking the app as draining the moment a shutdown signal arrives.

    On SIGTERM it keeps listening, so that new requests get a clear 503 (not a refused connection) while
    the in-flight ones finish; once none is left, or the grace period is over, uvicorn stops listening,
    waits for what remains until the grace period ends and runs the lifespan shutdown (the engine).
    """

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app
        self._terminating = False
        self.exit_code = 0

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        begin_drain(self._app)
        if sig == signal.SIGTERM:
            # Not uvicorn's handler: it would stop listening at once, then re-raise the captured signal
            # after shutdown, so the process would die of it instead of exiting 0. on_tick ends the drain.
            self._terminating = True
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self._terminating and not self.should_exit:
            left = self._app.state.drain_deadline - time.monotonic()
            if not self.server_state.tasks:  # nothing in flight: stop now, leaving what is left of the grace
                # ceil, never int(): a fraction of a second left must not become 0 (no wait at all).
                self.config.timeout_graceful_shutdown = max(1, math.ceil(left))
                self.should_exit = True
            elif left <= 0:  # out of time: the engine fails what is left, so each request answers 503 itself
                try:
                    await cut_off(self._app)
                except Exception:  # the shutdown must go on; the middleware still answers what is cancelled 503
                    logger.exception("failing the requests in flight at the end of the grace period failed")
                self.config.timeout_graceful_shutdown = _CUT_OFF_FLUSH_S
                self.should_exit = True
        return await super().on_tick(counter)

    def fail(self, exc: BaseException) -> None:
        """The model could not load: stop serving and exit non-zero."""
        self.exit_code = 1
        self.should_exit = True


# pydantic-settings writes a field's type as its metavar (`{str,null}`, `tuple[SecretStr,...]`); --help shows
# argparse's NAME instead, keeping the choices of a Literal (`{json,text}`) and `[JSON]` of a whole section.
_TYPE_NAMES = re.compile(r"\b(str|int|float|bool|Path|SecretStr|null|tuple|list|dict)\b")


def _add_argument(parser: Any, *names: str, **kwargs: Any) -> Any:
    metavar = kwargs.get("metavar")
    if isinstance(metavar, str) and _TYPE_NAMES.search(metavar):
        kwargs["metavar"] = names[-1].lstrip("-").rsplit(".", 1)[-1].replace("-", "_").upper()
    return parser.add_argument(*names, **kwargs)


def parse_settings(argv: Sequence[str]) -> ServiceSettings:
    """Build settings from the environment and `argv` (flags take precedence)."""
    cli = CliSettingsSource[ServiceSettings](
        ServiceSettings,
        cli_prog_name="python -m service",
        cli_kebab_case=True,
        cli_implicit_flags=True,  # --details style booleans: --flag / --no-flag
        cli_show_env_vars=True,  # each option's help names its ATENTO_* variable
        add_argument_method=_add_argument,
    )
    return ServiceSettings(_cli_settings_source=cli(args=list(argv)))


def own_process_defaults(settings: ServiceSettings) -> ServiceSettings:
    """Settings whose default depends on owning the process: this server's onnxruntime sessions share
    the process-wide thread pool unless told otherwise (RuntimeSettings.shared_thread_pool)."""
    if settings.runtime.shared_thread_pool is not None:
        return settings
    runtime = settings.runtime.model_copy(update={"shared_thread_pool": True})
    return settings.model_copy(update={"runtime": runtime})


def uvicorn_config(app: FastAPI, settings: ServiceSettings) -> uvicorn.Config:
    """uvicorn's configuration for the app, with the connection limits of `settings.server`."""
    server = settings.server
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,  # configure_logging already routed uvicorn's loggers
        access_log=False,  # RequestContextMiddleware logs each request with its id
        timeout_graceful_shutdown=max(1, math.ceil(settings.shutdown_grace_s)),
        proxy_headers=True,
        http=bounded_h11(server) if server.http == "h11" else "httptools",
        h11_max_incomplete_event_size=server.max_header_bytes,
        timeout_keep_alive=server.keep_alive_timeout_s,
        limit_concurrency=server.limit_concurrency,
        backlog=server.backlog,
    )


def main(argv: Sequence[str] | None = None) -> int:
    settings = own_process_defaults(parse_settings(sys.argv[1:] if argv is None else argv))
    configure_logging(
        log_format=settings.log_format, log_level=settings.log_level, secrets=settings.resolved_api_keys()
    )
    collect_less_often()
    app = create_app(settings)
    server = DrainingServer(uvicorn_config(app, settings), app)
    app.state.on_fatal = server.fail
    server.run()
    if server.exit_code:
        return server.exit_code
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
