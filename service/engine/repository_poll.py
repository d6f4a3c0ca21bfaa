"""Repository polling, as Triton's `--model-control-mode=poll`: new or changed version directories are loaded.

`scan_repository` reads what is on disk (every version directory's files: size, times, inode; no hashing),
`ChangeDetector` decides from successive scans which versions to try (pure: unit-tested without a server or
a clock), and `RepositoryPoller` is the asyncio task that runs both every `interval_s` and hands the work to
`ModelRepository.refresh`: the same verify, warm up, switch and drain path as a load call. No HTTP here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from service.engine.repository import NAME_PATTERN, ModelRepository, version_directories

logger = logging.getLogger(__name__)

# One file of a version directory: (path inside it, size, mtime_ns, ctime_ns, inode). ctime and the inode
# change on every write or replacement, even when a copy keeps the source's mtime (cp -p, shutil.copy2).
FileState = tuple[str, int, int, int, int]
Fingerprint = tuple[FileState, ...]
Snapshot = dict[tuple[str, str], Fingerprint]  # (model name, version) -> its files


def fingerprint_directory(directory: Path) -> Fingerprint:
    """The state of every regular file under `directory`, sorted by path."""
    files: list[FileState] = []
    for path in sorted(directory.rglob("*")):
        try:
            status = path.stat()
        except OSError:  # removed while we looked: the next scan sees the directory as it ends up
            continue
        if stat.S_ISREG(status.st_mode):
            relative = path.relative_to(directory).as_posix()
            files.append((relative, status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino))
    return tuple(files)


def scan_repository(root: Path, names: Collection[str] | None) -> Snapshot:
    """Every version directory of `names` (None: of every model directory under root) and its files."""
    if names is None:
        names = sorted(p.name for p in root.iterdir() if p.is_dir() and NAME_PATTERN.fullmatch(p.name))
    return {
        (name, version): fingerprint_directory(root / name / version)
        for name in names
        for version in version_directories(root / name)
    }


@dataclass
class ChangeDetector:
    """Which version directories to try, from successive scans.

    A version is due when its files are the same as at the previous scan (settled: not being copied right now),
    it has files, and they differ from the files its last attempt saw: a version that failed (a half-written or
    corrupt copy) is tried again when its files change, never again and again as they are.
    """

    previous: Snapshot = field(default_factory=dict)
    attempted: Snapshot = field(default_factory=dict)

    def baseline(self, snapshot: Snapshot) -> None:
        """What the server's start is about to load: attempted already, due again only once it changes."""
        self.previous = dict(snapshot)
        self.attempted = dict(snapshot)

    def due(self, snapshot: Snapshot) -> dict[str, set[str]]:
        """The versions to try now, by model name; they count as attempted with their current files."""
        due: dict[str, set[str]] = {}
        for key, files in snapshot.items():
            settled = self.previous.get(key) == files
            if files and settled and self.attempted.get(key) != files:
                due.setdefault(key[0], set()).add(key[1])
                self.attempted[key] = files
        self.previous = dict(snapshot)
        return due


class RepositoryPoller:
    """Scans a repository every `interval_s` and refreshes the models with due versions.

    The scan runs in a worker thread and the loads in ModelRepository.refresh (its load lock only, which no
    request takes), so requests never wait on a poll. Cancelled by stop() on shutdown.

    Args:
        repository: the served repository (not a server of one model directory).
        interval_s: seconds between the end of one poll and the start of the next.
        on_change: called after a poll that refreshed a model (the app republishes atento_model_info).
    """

    def __init__(self, repository: ModelRepository, *, interval_s: float, on_change: Callable[[], None]) -> None:
        if repository.root is None:
            raise ValueError("only a model repository can be polled")
        self._repository = repository
        self._root = repository.root
        self._interval_s = interval_s
        self._on_change = on_change
        self._detector = ChangeDetector()
        self._task: asyncio.Task[None] | None = None

    async def baseline(self) -> None:
        """Record the repository as the server's start will load it (call before ModelRepository.start)."""
        self._detector.baseline(await self._scan())

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="atento-repository-poller")

    async def stop(self) -> None:
        """Cancel the task, even in the middle of a load (the repository's stop() then stops that engine)."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def poll_once(self) -> dict[str, set[str]]:
        """Scan, then refresh every model with a due version, the default model first. Returns what was due."""
        snapshot = await self._scan()
        due: dict[str, set[str]] = {}
        for name, versions in self._detector.due(snapshot).items():
            fresh = {v for v in versions if not self._tried_since_changed(name, v, snapshot[(name, v)])}
            if fresh:
                due[name] = fresh
        default = self._repository.default_name
        for name in sorted(due, key=lambda n: (n != default, n)):
            logger.info("repository poll: model %s versions %s are new or changed", name, ", ".join(sorted(due[name])))
            await self._repository.refresh(name, versions=due[name])
        if due:
            self._on_change()
        return due

    def _tried_since_changed(self, name: str, version: str, files: Fingerprint) -> bool:
        """Whether a start, load call or poll began loading the version after its files last changed: then it
        has been tried as it is (a load call's refusal is not repeated; an unloaded model stays unloaded)."""
        entry = self._repository.tried(name, version)
        # ctime is the kernel's coarse clock (a tick, <= 10 ms, behind): a file written in the same tick as a
        # load began counts as seen by it.
        return entry is not None and max(ctime for _, _, _, ctime, _ in files) < entry.tried_at_ns

    async def _scan(self) -> Snapshot:
        return await asyncio.to_thread(scan_repository, self._root, self._repository.names)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            try:
                await self.poll_once()
            except Exception:  # e.g. the repository's volume briefly unreadable: log it, poll again next time
                logger.exception("repository poll of %s failed", self._root)
