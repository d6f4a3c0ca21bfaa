"""Tensors of the Open Inference Protocol over HTTP: JSON `data`, and Triton's binary tensor data extension.

A request may be JSON alone, or JSON followed by raw tensors: the `Inference-Header-Content-Length` header
gives the JSON's length, and each binary input says its size in `parameters.binary_data_size`. BYTES
elements are each a 4-byte little-endian length and the bytes; numbers are little-endian, row-major.
tritonclient sends inputs this way by default and asks for binary outputs, so both directions are here.
No FastAPI here: bytes in, values out.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from service.engine.errors import InputTooLong, InvalidInput

HEADER_LENGTH = "inference-header-content-length"
_NUMPY_DTYPE = {"INT64": "<i8", "FP32": "<f4"}


@dataclass(frozen=True)
class OutputTensor:
    name: str
    datatype: str  # "BYTES" | "INT64" | "FP32"
    shape: tuple[int, ...]
    values: list[str] | np.ndarray  # BYTES: the texts; numbers: an array of `shape`


def split_body(body: bytes, header_length: str | None) -> tuple[dict[str, Any], bytes]:
    """The request's JSON object and the binary tensor data after it (b"" without the extension).

    Raises:
        InvalidInput: a bad header length, or JSON that is not an object.
    """
    if header_length is None:
        json_part, binary = body, b""
    else:
        if not header_length.isdigit() or int(header_length) > len(body):
            raise InvalidInput(
                f"Inference-Header-Content-Length must be the JSON's length in bytes, at most the body's "
                f"{len(body)}; got {header_length[:20]!r}"
            )
        json_part, binary = body[: int(header_length)], body[int(header_length) :]
    if not json_part.strip():
        return {}, binary
    try:
        parsed = json.loads(json_part)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInput(f"the request is not valid JSON: {error}") from None
    if not isinstance(parsed, dict):
        raise InvalidInput("the request must be a JSON object")
    return parsed, binary


def _flatten(data: Any) -> list[Any]:
    """JSON tensor data, flat: OIP allows nested rows as well as a flat row-major list."""
    if not isinstance(data, list):
        return [data]
    flat: list[Any] = []
    for item in data:
        flat.extend(_flatten(item) if isinstance(item, list) else [item])
    return flat


def _binary_strings(raw: bytes, count: int, name: str) -> list[bytes]:
    elements, offset = [], 0
    for _ in range(count):
        if offset + 4 > len(raw):
            raise InvalidInput(f"input {name!r}: its binary data holds fewer than {count} BYTES elements")
        (length,) = struct.unpack_from("<I", raw, offset)
        offset += 4
        if offset + length > len(raw):
            raise InvalidInput(f"input {name!r}: a BYTES element runs past its binary data")
        elements.append(raw[offset : offset + length])
        offset += length
    if offset != len(raw):
        raise InvalidInput(f"input {name!r}: {len(raw) - offset} bytes of binary data left after {count} elements")
    return elements


def text_input(
    tensor: dict[str, Any], binary: bytes, offset: int, *, max_items: int
) -> tuple[list[str], tuple[int, ...], int]:
    """The texts of a BYTES input tensor, its shape, and the binary offset after it.

    Raises:
        InvalidInput: not BYTES, a shape that is not a batch of texts, too many texts, data that does not
            match the shape, or text that is not UTF-8.
    """
    name = str(tensor.get("name", ""))[:64]
    if tensor.get("datatype") != "BYTES":
        raise InvalidInput(f"input {name!r} must have datatype BYTES (texts), not {tensor.get('datatype')!r}")
    shape = tensor.get("shape")
    if not isinstance(shape, list) or not shape or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise InvalidInput(f"input {name!r}: shape must be a list of non-negative integers, e.g. [8] or [8, 1]")
    if len(shape) > 2 or (len(shape) == 2 and shape[1] != 1):
        raise InvalidInput(f"input {name!r}: shape {shape} is not a batch of texts ([N] or [N, 1])")
    count = math.prod(shape)
    if count == 0:
        raise InvalidInput(f"input {name!r}: no texts (shape {shape})")
    if count > max_items:  # as the TGI routes answer too many inputs: 413
        raise InputTooLong(f"input {name!r}: at most {max_items} texts per request, got {count}")
    parameters = tensor.get("parameters") or {}
    size = parameters.get("binary_data_size") if isinstance(parameters, dict) else None
    if size is not None:
        if not isinstance(size, int) or size < 0 or offset + size > len(binary):
            raise InvalidInput(f"input {name!r}: binary_data_size {size!r} runs past the request body")
        raw_items: list[Any] = list(_binary_strings(binary[offset : offset + size], count, name))
        offset += size
    else:
        raw_items = _flatten(tensor.get("data"))
        if len(raw_items) != count:
            raise InvalidInput(f"input {name!r}: shape {shape} holds {count} elements, data has {len(raw_items)}")
    texts = []
    for item in raw_items:
        if isinstance(item, bytes):
            try:
                item = item.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidInput(f"input {name!r}: a text is not UTF-8") from None
        if not isinstance(item, str):
            raise InvalidInput(f"input {name!r}: BYTES data must be strings, got {type(item).__name__}")
        texts.append(item)
    return texts, tuple(shape), offset


def _raw(tensor: OutputTensor) -> bytes:
    if tensor.datatype == "BYTES":
        parts = []
        for text in tensor.values:
            encoded = str(text).encode("utf-8")
            parts.append(struct.pack("<I", len(encoded)) + encoded)
        return b"".join(parts)
    return np.ascontiguousarray(tensor.values, dtype=_NUMPY_DTYPE[tensor.datatype]).tobytes()


def encode_outputs(
    head: dict[str, Any], outputs: Sequence[OutputTensor], *, binary: set[str]
) -> tuple[bytes, int | None]:
    """The response body: `head` plus the outputs, those named in `binary` as raw data after the JSON.

    Returns:
        The body and the JSON's length (the Inference-Header-Content-Length), or None for JSON alone.
    """
    described, blobs = [], []
    for tensor in outputs:
        entry: dict[str, Any] = {"name": tensor.name, "datatype": tensor.datatype, "shape": list(tensor.shape)}
        if tensor.name in binary:
            blob = _raw(tensor)
            entry["parameters"] = {"binary_data_size": len(blob)}
            blobs.append(blob)
        elif tensor.datatype == "BYTES":
            entry["data"] = list(tensor.values)
        else:
            entry["data"] = np.asarray(tensor.values).reshape(-1).tolist()
        described.append(entry)
    header = json.dumps({**head, "outputs": described}, ensure_ascii=False, separators=(",", ":")).encode()
    if not blobs:
        return header, None
    return header + b"".join(blobs), len(header)
