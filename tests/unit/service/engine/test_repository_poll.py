"""Repository polling (service/engine/repository_poll.py): which version directories a scan makes due, what a
scan sees on disk, and a poll's loads through ModelRepository.refresh with engines that only check a file.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest

from service.engine.errors import ModelLoadError, RepositoryRefused
from service.engine.repository import ModelRepository
from service.engine.repository_poll import ChangeDetector, RepositoryPoller, scan_repository
from service.engine.types import EngineStats

FILES_A = (("manifest.json", 10, 1, 1, 100),)
FILES_B = (("manifest.json", 10, 2, 2, 101),)  # the same size, written again
HALF = (("encoder.onnx", 4096, 3, 3, 102),)


def test_a_new_version_is_due_once_its_files_stay_the_same_across_two_scans() -> None:
    detector = ChangeDetector()
    detector.baseline({("m", "1"): FILES_A})
    assert detector.due({("m", "1"): FILES_A}) == {}  # what the start loaded is not loaded again
    assert detector.due({("m", "1"): FILES_A, ("m", "2"): HALF}) == {}  # just appeared: maybe being copied
    assert detector.due({("m", "1"): FILES_A, ("m", "2"): FILES_B}) == {}  # still changing
    assert detector.due({("m", "1"): FILES_A, ("m", "2"): FILES_B}) == {"m": {"2"}}
    assert detector.due({("m", "1"): FILES_A, ("m", "2"): FILES_B}) == {}  # attempted with these files


def test_a_version_is_tried_again_only_when_its_files_change() -> None:
    detector = ChangeDetector()
    scan = {("m", "3"): HALF}
    detector.due(scan)
    assert detector.due(scan) == {"m": {"3"}}  # tried (and, say, refused)
    for _ in range(5):
        assert detector.due(scan) == {}  # no retry loop while nothing changes
    fixed = {("m", "3"): FILES_A}
    assert detector.due(fixed) == {}
    assert detector.due(fixed) == {"m": {"3"}}


def test_an_empty_version_directory_is_not_due_and_every_model_is_reported() -> None:
    detector = ChangeDetector()
    scan = {("m", "2"): (), ("other", "7"): FILES_A, ("m", "4"): FILES_B}
    detector.due(scan)
    assert detector.due(scan) == {"m": {"4"}, "other": {"7"}}


def test_a_version_removed_and_copied_back_is_due_again() -> None:
    detector = ChangeDetector()
    detector.baseline({("m", "1"): FILES_A})
    assert detector.due({}) == {}
    detector.due({("m", "1"): FILES_B})
    assert detector.due({("m", "1"): FILES_B}) == {"m": {"1"}}


def _write_version(directory: Path, content: bytes = b"good") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "weights").write_bytes(content)
    (directory / "manifest.json").write_text("{}")


def test_scan_sees_versions_and_every_rewrite(tmp_path: Path) -> None:
    _write_version(tmp_path / "m" / "1")
    _write_version(tmp_path / "m" / "2")
    (tmp_path / "m" / "draft").mkdir()  # not a version: not a positive integer
    (tmp_path / "m" / "0").mkdir()
    _write_version(tmp_path / "other" / "1")
    (tmp_path / "not a model name").mkdir()
    first = scan_repository(tmp_path, None)
    assert sorted(first) == [("m", "1"), ("m", "2"), ("other", "1")]
    assert [name for name, *_ in first[("m", "1")]] == ["manifest.json", "weights"]
    assert sorted(scan_repository(tmp_path, ["m"])) == [("m", "1"), ("m", "2")]

    weights = tmp_path / "m" / "2" / "weights"
    status = weights.stat()
    time.sleep(0.05)  # past the kernel's coarse file-time tick (up to 10 ms), as any real rewrite is
    weights.write_bytes(b"evil")  # same size, and the old mtime put back: ctime still moves
    os.utime(weights, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert scan_repository(tmp_path, None)[("m", "2")] != first[("m", "2")]
    shutil.copy2(tmp_path / "m" / "1" / "weights", tmp_path / "m" / "1" / "weights.new")  # cp -p keeps mtime
    os.replace(tmp_path / "m" / "1" / "weights.new", tmp_path / "m" / "1" / "weights")
    assert scan_repository(tmp_path, None)[("m", "1")] != first[("m", "1")]
    assert scan_repository(tmp_path, None)[("other", "1")] == first[("other", "1")]


class CheckingEngine:
    """An engine whose start() "verifies" its directory: `weights` must hold b"good"."""

    def __init__(self, directory: Path, started: list[Path]) -> None:
        self.directory = directory
        self.ready = False
        started.append(directory)

    async def start(self) -> None:
        if (self.directory / "weights").read_bytes() != b"good":
            raise ModelLoadError(f"{self.directory / 'weights'} is corrupt")
        self.ready = True

    async def stop(self, *, drain: bool = True, timeout_s: float = 30.0) -> None:
        self.ready = False

    def stats(self) -> EngineStats:
        return EngineStats(queue_depth=0, running_sequences=0, running_requests=0)


def test_a_poll_loads_a_new_version_and_keeps_a_refused_one_out(tmp_path: Path) -> None:
    _write_version(tmp_path / "m" / "1")
    started: list[Path] = []
    repository = ModelRepository(
        tmp_path,
        engine_factory=lambda directory, name, version: CheckingEngine(directory, started),  # type: ignore[arg-type,return-value]
    )
    changes: list[str] = []
    poller = RepositoryPoller(repository, interval_s=60.0, on_change=lambda: changes.append("published"))

    async def scenario() -> None:
        await poller.baseline()
        await repository.start()
        assert await poller.poll_once() == {}
        _write_version(tmp_path / "m" / "2")
        assert await poller.poll_once() == {}  # appeared since the last scan: not settled yet
        assert await poller.poll_once() == {"m": {"2"}}
        assert repository.loaded() == [{"name": "m", "version": "2"}]
        assert changes == ["published"]

        _write_version(tmp_path / "m" / "3", b"evil")
        await poller.poll_once()
        assert await poller.poll_once() == {"m": {"3"}}
        for _ in range(3):
            assert await poller.poll_once() == {}
        index = {row["version"]: row for row in repository.index()}
        assert index["3"]["state"] == "UNAVAILABLE" and "weights is corrupt" in index["3"]["reason"]
        assert index["2"]["state"] == "READY" and index["1"]["state"] == "UNAVAILABLE"
        assert repository.loaded() == [{"name": "m", "version": "2"}]
        assert started.count(tmp_path / "m" / "3") == 1  # refused once, not retried while unchanged

        (tmp_path / "m" / "3" / "weights").write_bytes(b"good")  # the copy is fixed
        await poller.poll_once()
        assert await poller.poll_once() == {"m": {"3"}}
        assert repository.loaded() == [{"name": "m", "version": "3"}]

        _write_version(tmp_path / "new" / "1")  # a new model directory (no ATENTO_MODELS list)
        await poller.poll_once()
        await poller.poll_once()
        assert repository.loaded() == [{"name": "m", "version": "3"}, {"name": "new", "version": "1"}]
        await repository.stop()

    asyncio.run(scenario())
    assert started.count(tmp_path / "m" / "1") == 1 and started.count(tmp_path / "m" / "2") == 1


def test_a_poller_stops_while_waiting(tmp_path: Path) -> None:
    _write_version(tmp_path / "m" / "1")
    repository = ModelRepository(tmp_path, engine_factory=lambda d, n, v: CheckingEngine(d, []))  # type: ignore[arg-type,return-value]
    poller = RepositoryPoller(repository, interval_s=3600.0, on_change=lambda: None)

    async def scenario() -> None:
        poller.start()
        await asyncio.sleep(0)
        await asyncio.wait_for(poller.stop(), timeout=5)

    asyncio.run(scenario())


def test_a_poll_does_not_repeat_a_load_calls_work(tmp_path: Path) -> None:
    """What a load call tried after its files last changed counts as tried: its refusal is not repeated, and a
    model it loaded and an unload call unloaded stays unloaded."""
    _write_version(tmp_path / "m" / "1")
    started: list[Path] = []
    repository = ModelRepository(
        tmp_path,
        engine_factory=lambda directory, name, version: CheckingEngine(directory, started),  # type: ignore[arg-type,return-value]
    )
    poller = RepositoryPoller(repository, interval_s=60.0, on_change=lambda: None)

    async def scenario() -> None:
        await poller.baseline()
        await repository.start()
        _write_version(tmp_path / "m" / "2", b"evil")
        _write_version(tmp_path / "x" / "1")
        with pytest.raises(RepositoryRefused, match="weights is corrupt"):
            await repository.load("m")
        await repository.load("x")
        await repository.unload("x")
        for _ in range(3):
            assert await poller.poll_once() == {}
        assert repository.loaded() == [{"name": "m", "version": "1"}]
        (tmp_path / "m" / "2" / "weights").write_bytes(b"good")
        await poller.poll_once()
        assert await poller.poll_once() == {"m": {"2"}}
        assert repository.loaded() == [{"name": "m", "version": "2"}]
        await repository.stop()

    asyncio.run(scenario())
    assert started.count(tmp_path / "m" / "2") == 2 and started.count(tmp_path / "x" / "1") == 1


def test_a_poll_keeps_a_served_version_whose_directory_was_removed(tmp_path: Path) -> None:
    _write_version(tmp_path / "m" / "1")
    repository = ModelRepository(tmp_path, engine_factory=lambda d, n, v: CheckingEngine(d, []))  # type: ignore[arg-type,return-value]
    poller = RepositoryPoller(repository, interval_s=60.0, on_change=lambda: None)

    async def scenario() -> None:
        await poller.baseline()
        await repository.start()
        shutil.rmtree(tmp_path / "m" / "1")
        _write_version(tmp_path / "m" / "2", b"evil")  # and its replacement is refused
        await poller.poll_once()
        assert await poller.poll_once() == {"m": {"2"}}
        assert repository.loaded() == [{"name": "m", "version": "1"}]
        _write_version(tmp_path / "m" / "3")
        await poller.poll_once()
        await poller.poll_once()
        assert repository.loaded() == [{"name": "m", "version": "3"}]
        await repository.stop()

    asyncio.run(scenario())
