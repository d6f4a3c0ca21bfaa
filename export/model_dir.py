"""The model directory on disk: file hashes, the manifest, and the atomic write (everything goes
into a temporary sibling that is renamed into place at the end). Imports nothing from this repository.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import onnx

MANIFEST = "manifest.json"
FORMAT = "atento-model/2"
ONNX_DTYPES: dict[int, str] = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.BOOL: "bool",
}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(directory: Path) -> dict[str, str]:
    """sha256 of every file in the directory except the manifest itself."""
    return {
        path.name: sha256_file(path) for path in sorted(directory.iterdir()) if path.is_file() and path.name != MANIFEST
    }


def graph_signature(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The graph's inputs and outputs: name, dtype and shape (symbolic names or sizes)."""
    graph = onnx.load(str(path), load_external_data=False).graph

    def describe(value: onnx.ValueInfoProto) -> dict[str, Any]:
        tensor = value.type.tensor_type
        return {
            "name": value.name,
            "dtype": ONNX_DTYPES.get(tensor.elem_type, str(tensor.elem_type)),
            "shape": [d.dim_param if d.dim_param else d.dim_value for d in tensor.shape.dim],
        }

    return {"inputs": [describe(v) for v in graph.input], "outputs": [describe(v) for v in graph.output]}


def tool_versions() -> dict[str, str]:
    versions = {}
    for name, distribution in (
        ("torch", "torch"),
        ("onnx", "onnx"),
        ("onnxruntime", "onnxruntime"),
        ("onnxscript", "onnxscript"),
        ("atento", "atento"),
    ):
        try:
            versions[name] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[name] = "unknown"
    return versions


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    """Add the hashes of every file now in `directory` and write manifest.json."""
    complete = {**manifest, "files": file_hashes(directory)}
    (directory / MANIFEST).write_text(json.dumps(complete, indent=2) + "\n")


@contextlib.contextmanager
def staged_directory(target: Path, *, replace: bool) -> Iterator[Path]:
    """Yield an empty temporary directory next to `target`; rename it to `target` when the block
    succeeds, delete it when the block raises, so `target` is never left half-written.

    Raises:
        FileExistsError: `target` exists and `replace` is False.
    """
    if target.exists() and not replace:
        raise FileExistsError(f"{target} already exists (pass --force to replace it)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield staging
        os.chmod(staging, 0o755)  # mkdtemp makes it 0700
        if target.exists():
            retired = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, retired / target.name)
            os.replace(staging, target)
            shutil.rmtree(retired)
        else:
            os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
