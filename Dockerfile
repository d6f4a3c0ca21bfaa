# syntax=docker/dockerfile:1
# atento serving image. Stages:
#   builder  builds the atento wheel (pure Python, no dependencies vendored)
#   gpu      CUDA runtime + onnxruntime-gpu       docker build --target gpu -t atento:0.1.0-gpu .
#   runtime  CPU, the default (last) stage         docker build -t atento:0.1.0 .
# Runtime stages install only `atento[service]`: onnxruntime, FastAPI, tokenizers. Never torch.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG CUDA_IMAGE=nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /src
COPY pyproject.toml README.md ./
COPY model/ model/
COPY export/ export/
COPY service/ service/
RUN pip wheel --no-deps --wheel-dir /wheels .

# ---------------------------------------------------------------------------------------------------------
FROM ${CUDA_IMAGE} AS gpu

# onnxruntime-gpu 1.20+ on PyPI is built for CUDA 12.x and cuDNN 9, which this base image provides.
ARG ONNXRUNTIME_GPU_VERSION=1.20.1

ENV DEBIAN_FRONTEND=noninteractive \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH

RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/venv

# The `service` extra pins the CPU onnxruntime; both wheels provide the same `onnxruntime` module, so swap
# it for the GPU build in the same layer (uninstall first, or the two would overwrite each other's files).
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install "$(echo /wheels/atento-*.whl)[service]" \
    && pip uninstall -y onnxruntime \
    && pip install "onnxruntime-gpu==${ONNXRUNTIME_GPU_VERSION}"

RUN groupadd --system --gid 10001 atento \
    && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin atento

WORKDIR /app
COPY models/ /app/models/

ENV ATENTO_HOST=0.0.0.0 \
    ATENTO_PORT=8000 \
    ATENTO_MODEL_DIR=/app/models/normalize/1 \
    ATENTO_DEVICE=cuda \
    ATENTO_LOG_FORMAT=json

# Numeric uid so Kubernetes' runAsNonRoot can verify it without reading /etc/passwd.
USER 10001:10001
EXPOSE 8000
# slim images have no curl: urlopen raises (exit 1) on 503 and on connection errors.
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:' + os.environ.get('ATENTO_PORT', '8000') + '/health/ready', timeout=2)"]
STOPSIGNAL SIGTERM
# Exec form: python is PID 1 and receives SIGTERM itself, then drains in-flight requests.
CMD ["python", "-m", "service"]

# ---------------------------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install "$(echo /wheels/atento-*.whl)[service]"

RUN groupadd --system --gid 10001 atento \
    && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home --shell /usr/sbin/nologin atento

WORKDIR /app
# Files stay root-owned: the service only reads them, and the root filesystem may be read-only.
COPY models/ /app/models/

ENV ATENTO_HOST=0.0.0.0 \
    ATENTO_PORT=8000 \
    ATENTO_MODEL_DIR=/app/models/normalize/1 \
    ATENTO_DEVICE=cpu \
    ATENTO_LOG_FORMAT=json

USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:' + os.environ.get('ATENTO_PORT', '8000') + '/health/ready', timeout=2)"]
STOPSIGNAL SIGTERM
CMD ["python", "-m", "service"]
