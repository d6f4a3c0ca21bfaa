"""A model repository: several models, several versions each, one `EngineClient` per loaded version.

The layout is Triton's: `ROOT/<name>/<version>/` with a positive integer version, each a model directory
(docs/model-directory.md). Every version is verified (sha256 of every file, both graphs' signatures) and
warmed up by its engine's start() *beside* what is already served; only then does routing switch to it,
in one assignment on the event loop, so no request ever sees half a version. A version that leaves the
served set is first removed from routing, then waits for the requests that had already resolved it
(leases: resolved but maybe not yet submitted), then drains its engine's queue and is stopped.

Which versions are served is Triton's version policy "latest N" (`versions`, 1 by default): the newest N
versions of a name that verify and load. A version that fails never takes traffic; its error is kept for
the index. New versions come in by a load call, or by polling (service/engine/repository_poll.py), which
calls refresh(). No HTTP here: service/http/ maps these calls to the Open Inference Protocol and the routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from service.engine.client import EngineClient
from service.engine.errors import ModelNotFound, ModelNotReady, RepositoryRefused
from service.engine.types import EngineStats

logger = logging.getLogger(__name__)

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
LOADING, READY, DRAINING, UNAVAILABLE = "LOADING", "READY", "DRAINING", "UNAVAILABLE"
_LEASE_POLL_S = 0.01

# Builds the (not yet started) engine of one version directory; `name`, `version` label its metrics.
EngineFactory = Callable[[Path, str, str], EngineClient]
# Called when a version's engine is gone (stopped after a drain, or never started): its metrics go too.
RetiredHook = Callable[[str, str], None]


@dataclass
class ModelVersion:
    """One version of one model and where it stands: LOADING, READY (takes traffic), DRAINING, UNAVAILABLE."""

    name: str
    version: str
    directory: Path | None  # None: a server of one model directory, not a repository
    engine: EngineClient | None = None
    state: str = UNAVAILABLE
    reason: str = ""  # why it is UNAVAILABLE: a load error, "unloaded", the version policy
    leases: int = 0  # requests that resolved it and may not have submitted yet (event loop only)
    tried_at_ns: int = 0  # wall clock (time.time_ns) when its last load began: the poller skips files older

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "state": self.state, "reason": self.reason}


@dataclass
class _Model:
    versions: dict[str, ModelVersion] = field(default_factory=dict)
    serving: tuple[str, ...] = ()  # the READY versions taking traffic, newest first; [0] is the default


def version_number(version: str) -> int:
    return int(version)


def version_directories(directory: Path) -> list[str]:
    """A model directory's version directories, newest first (positive integers, as Triton numbers them)."""
    if not directory.is_dir():
        return []
    found = [p.name for p in directory.iterdir() if p.is_dir() and p.name.isdigit() and int(p.name) > 0]
    return sorted(found, key=version_number, reverse=True)


class ModelRepository:
    """The models a server serves, by name and version; the engine behind each request.

    Args:
        root: the repository directory; None for `single`.
        engine_factory: builds a version's engine (Engine with the server's settings, or a test's fake).
        names: serve only these models (ATENTO_MODELS); None = every directory under root.
        default_model: the model behind the TGI routes; None = the only one, else the first by name.
        versions: the version policy, the newest N loadable versions of each name.
        drain_timeout_s: how long a retired version's in-flight requests may take before they are failed.
    """

    def __init__(
        self,
        root: Path | None,
        *,
        engine_factory: EngineFactory | None = None,
        names: Sequence[str] | None = None,
        default_model: str | None = None,
        versions: int = 1,
        drain_timeout_s: float = 30.0,
    ) -> None:
        self.root = root
        self._factory = engine_factory
        self._versions = versions
        self._drain_timeout_s = drain_timeout_s
        self._models: dict[str, _Model] = {}
        self._control = asyncio.Lock()  # one load or unload at a time
        self.on_retired: RetiredHook = lambda name, version: None
        self._single: EngineClient | None = None
        self.names = tuple(names) if names else None  # ATENTO_MODELS; None: whatever is on disk, new ones too
        self._started = False  # start() has loaded what it could: an empty model is then missing, not loading
        if root is not None:
            wanted = list(names) if names else self._names_on_disk()
            for name in wanted:
                self._check_name(name)
            self._models = {name: _Model() for name in wanted}
            self.default_name = default_model or (sorted(wanted)[0] if wanted else "")
            if self.default_name not in self._models:
                raise RepositoryRefused(
                    f"the default model {self.default_name!r} is not among the served models {sorted(wanted)} of {root}"
                )

    @classmethod
    def single(cls, engine: EngineClient) -> ModelRepository:
        """A server of one model directory (ATENTO_MODEL_DIR): its engine, named after start() by its info."""
        repository = cls(None)
        repository._single = engine
        repository.default_name = ""
        return repository

    # ---- the directory ----

    def _check_name(self, name: str) -> None:
        if not NAME_PATTERN.fullmatch(name):
            raise ModelNotFound(f"{name!r} is not a model name", loaded=self.loaded())

    def _names_on_disk(self) -> list[str]:
        assert self.root is not None
        if not self.root.is_dir():
            raise RepositoryRefused(f"the model repository {self.root} is not a directory")
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and NAME_PATTERN.fullmatch(p.name))

    def _versions_on_disk(self, name: str) -> list[str]:
        assert self.root is not None
        return version_directories(self.root / name)

    # ---- lifecycle ----

    async def start(self) -> None:
        """Load every served model's newest loadable versions. Raises the default model's load error."""
        if self._single is not None:
            await self._single.start()
            info = self._single.info
            entry = ModelVersion(info.name, str(info.version), None, self._single, READY)
            self._models = {info.name: _Model({entry.version: entry}, (entry.version,))}
            self.default_name = info.name
            return
        async with self._control:
            try:
                for name in sorted(self._models, key=lambda n: n != self.default_name):  # the default first
                    await self._sync(name)
            finally:
                self._started = True
        if not self._models[self.default_name].serving:
            problems = "; ".join(v.reason for v in self._models[self.default_name].versions.values())
            raise ModelNotReady(f"the default model {self.default_name!r} has no loadable version: {problems}")

    async def stop(self, *, drain: bool = True, timeout_s: float = 30.0) -> None:
        """Stop every engine (the server's shutdown), draining for up to timeout_s when asked."""
        engines = [v.engine for m in self._models.values() for v in m.versions.values() if v.engine is not None]
        if self._single is not None and not engines:
            engines = [self._single]
        await asyncio.gather(*(engine.stop(drain=drain, timeout_s=timeout_s) for engine in engines))

    async def load(self, name: str) -> list[dict[str, str]]:
        """(Re)load a model from the repository: new versions are verified and warmed up beside the served
        ones, then take the traffic; versions left out by the policy drain and are unloaded.

        Returns:
            The model's versions as the index shows them.

        Raises:
            ModelNotFound: no such model directory. RepositoryRefused: a server of one model directory.
        """
        self._require_repository("load")
        self._check_name(name)
        assert self.root is not None
        if not (self.root / name).is_dir():
            raise ModelNotFound(f"no model {name!r} in the repository {self.root}", loaded=self.loaded())
        async with self._control:
            self._models.setdefault(name, _Model())
            await self._sync(name)
        model = self._models[name]
        newest_served = max((version_number(v) for v in model.serving), default=0)
        refused = [
            entry
            for entry in model.versions.values()
            if entry.state == UNAVAILABLE and entry.reason.startswith("failed") and int(entry.version) > newest_served
        ]
        if refused:
            kept = f"version {model.serving[0]} keeps serving" if model.serving else "no version is served"
            problems = "; ".join(f"version {e.version} {e.reason}" for e in refused)
            raise RepositoryRefused(f"model {name!r}: {problems}; {kept}")
        return [v.describe() for v in model.versions.values()]

    async def refresh(self, name: str, *, versions: Collection[str]) -> None:
        """The poller's load: try `versions` of `name` (new or changed on disk), then serve and retire as load()
        does. Versions not listed are not retried (one that failed waits until its files change). Nothing is
        raised: a refused version's error goes to the index and the log."""
        self._check_name(name)
        async with self._control:
            model = self._models.setdefault(name, _Model())
            for version in set(versions) & set(model.serving):  # its engine has the files loaded already
                logger.warning("model %s version %s changed on disk while served: not reloaded", name, version)
            await self._sync(name, attempt=versions)

    async def unload(self, name: str) -> None:
        """Take every version of a model out of routing, drain them and stop their engines.

        Raises:
            ModelNotFound: not a served model. RepositoryRefused: the default model (the TGI routes' and
            readiness' model stays; load it again to roll out a new version).
        """
        self._require_repository("unload")
        if name not in self._models:
            raise ModelNotFound(f"no model {name!r} is served", loaded=self.loaded())
        if name == self.default_name:
            raise RepositoryRefused(
                f"{name!r} is the default model (ATENTO_DEFAULT_MODEL, behind the TGI routes and readiness): "
                "load it again to roll out a new version instead"
            )
        async with self._control:
            model = self._models[name]
            leaving = [model.versions[v] for v in model.serving]
            model.serving = ()
            await asyncio.gather(*(self._retire(entry, reason="unloaded") for entry in leaving))

    def _require_repository(self, what: str) -> None:
        if self.root is None:
            raise RepositoryRefused(
                f"this server serves one model directory (ATENTO_MODEL_DIR): nothing to {what}; serve a "
                "repository (ATENTO_MODEL_REPOSITORY) to load and unload models"
            )

    # ---- loading and retiring ----

    async def _sync(self, name: str, *, attempt: Collection[str] | None = None) -> None:
        """Serve the newest `versions` loadable versions on disk; retire the rest. Holds the control lock.
        `attempt`: the only versions to (re)load, besides the READY ones kept; None = any not READY."""
        model = self._models[name]
        chosen: list[str] = []
        candidates = self._versions_on_disk(name)
        if attempt is not None:  # a poll unloads nothing: a served version whose directory went stays till replaced
            candidates = sorted({*candidates, *model.serving}, key=version_number, reverse=True)
        for version in candidates:
            if len(chosen) == self._versions:
                break
            entry = model.versions.get(version)
            if entry is None or entry.state != READY:
                if attempt is not None and version not in attempt:
                    continue
                entry = await self._start_version(name, version)
                model.versions[version] = entry
            if entry.state == READY:
                chosen.append(version)
        leaving = [model.versions[v] for v in model.serving if v not in chosen]
        model.serving = tuple(chosen)  # the switch: one assignment, between two requests on the event loop
        if chosen:
            logger.info("serving %s versions %s", name, ", ".join(chosen))
        policy = f"not served: the version policy serves the newest {self._versions} loadable version(s)"
        await asyncio.gather(*(self._retire(entry, reason=policy) for entry in leaving))

    async def _start_version(self, name: str, version: str) -> ModelVersion:
        assert self.root is not None and self._factory is not None
        directory = self.root / name / version
        entry = ModelVersion(name, version, directory, state=LOADING, tried_at_ns=time.time_ns())
        self._models[name].versions[version] = entry  # the index shows it LOADING
        try:
            entry.engine = self._factory(directory, name, version)
            await entry.engine.start()  # verifies every file's sha256 and the graphs, then warms up
        except Exception as exc:  # any failure leaves it out of routing, with the reason for the index
            entry.state, entry.reason = UNAVAILABLE, f"failed to load: {exc}"
            logger.error("model %s version %s refused: %s", name, version, exc)
            if entry.engine is not None:
                with contextlib.suppress(Exception):
                    await entry.engine.stop(drain=False, timeout_s=0.0)
            entry.engine = None
            self.on_retired(name, version)
            return entry
        entry.state, entry.reason = READY, ""
        logger.info("model %s version %s loaded and warmed up", name, version)
        return entry

    async def _retire(self, entry: ModelVersion, *, reason: str) -> None:
        """Out of routing already: wait for its leases, drain its queue, stop it."""
        entry.state = DRAINING
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._drain_timeout_s
        while entry.leases and loop.time() < deadline:
            await asyncio.sleep(_LEASE_POLL_S)
        if entry.engine is not None:
            await entry.engine.stop(drain=True, timeout_s=max(0.0, deadline - loop.time()))
        entry.engine = None
        entry.state, entry.reason = UNAVAILABLE, reason
        self.on_retired(entry.name, entry.version)
        logger.info("model %s version %s drained and unloaded", entry.name, entry.version)

    # ---- routing ----

    def resolve(self, name: str | None = None, version: str | None = None) -> ModelVersion:
        """The version that takes a request: `name` (None = the default model) at `version` (None = its
        newest served one).

        Raises:
            ModelNotFound: no such model or version is served (the error lists the loaded ones).
            ModelNotReady: the server of one model directory, or the default model, is still loading.
        """
        if self._single is not None and not self._models:  # one model directory, still loading
            if name is None:
                return ModelVersion("", "", None, self._single, LOADING)
            raise ModelNotReady("the model is loading")
        wanted = self.default_name if name is None else name
        model = self._models.get(wanted)
        if model is None:
            raise ModelNotFound(f"no model {wanted!r} is served", loaded=self.loaded())
        if version is None:
            if model.serving:
                return model.versions[model.serving[0]]
            loading = [v for v in model.versions.values() if v.state == LOADING]
            if loading:
                return loading[0]  # not ready: the caller answers 503 while it loads
            if not self._started:
                raise ModelNotReady(f"model {wanted!r} is loading")
            raise ModelNotFound(f"model {wanted!r} has no served version", loaded=self.loaded())
        entry = model.versions.get(version)
        if entry is None or version not in model.serving:
            state = f" ({entry.state}: {entry.reason})" if entry is not None and entry.reason else ""
            raise ModelNotFound(f"model {wanted!r} has no served version {version!r}{state}", loaded=self.loaded())
        return entry

    @contextlib.contextmanager
    def lease(self, entry: ModelVersion) -> Iterator[EngineClient]:
        """Hold `entry` while a request resolves and submits: its retirement waits for the lease."""
        assert entry.engine is not None
        entry.leases += 1
        try:
            yield entry.engine
        finally:
            entry.leases -= 1

    # ---- what is served ----

    def loaded(self) -> list[dict[str, str]]:
        """Every served (name, version), the default model's first."""
        return [
            {"name": name, "version": version}
            for name, model in sorted(self._models.items(), key=lambda item: item[0] != self.default_name)
            for version in model.serving
        ]

    def tried(self, name: str, version: str) -> ModelVersion | None:
        """A version's entry if a start, load or poll has tried to load it (even if it failed or was unloaded)."""
        model = self._models.get(name)
        return None if model is None else model.versions.get(version)

    def serving(self) -> list[ModelVersion]:
        return [m.versions[v] for m in self._models.values() for v in m.serving]

    def engines(self) -> dict[tuple[str, str], tuple[EngineStats, bool]]:
        """Every version with an engine (served or draining): its stats, and whether it takes traffic."""
        return {
            (v.name, v.version): (v.engine.stats(), v.version in m.serving)
            for m in self._models.values()
            for v in m.versions.values()
            if v.engine is not None and v.state in (READY, DRAINING)
        }

    def index(self) -> list[dict[str, str]]:
        """Every version the repository holds or has tried, with its state and reason (Triton's index)."""
        rows: dict[tuple[str, str], dict[str, str]] = {}
        if self.root is not None:
            for name in self._names_on_disk():
                for version in self._versions_on_disk(name):
                    rows[(name, version)] = {"name": name, "version": version, "state": UNAVAILABLE, "reason": ""}
        for model in self._models.values():
            for entry in model.versions.values():
                rows[(entry.name, entry.version)] = entry.describe()
        return [rows[key] for key in sorted(rows, key=lambda k: (k[0], version_number(k[1]) if k[1] else 0))]

    def stats(self) -> EngineStats:
        """The served engines' queues and batches together (the process-wide gauges)."""
        # Draining versions too: their requests are still in flight.
        stats = [v.engine.stats() for m in self._models.values() for v in m.versions.values() if v.engine is not None]
        if not stats and self._single is not None:
            return self._single.stats()
        return EngineStats(
            queue_depth=sum(s.queue_depth for s in stats),
            running_sequences=sum(s.running_sequences for s in stats),
            running_requests=sum(s.running_requests for s in stats),
        )
