"""Render deploy/'s nginx and Prometheus configuration for replicas on loopback ports, outside Docker.

The shipped files name the replicas by the compose service (`atento:8000`, found through Docker's DNS);
this rewrites only what ties them to Docker: upstream servers, listen address, log paths, service
discovery, and (for tests) the scrape and alert intervals. Every limit, timeout and rule stays as shipped,
so that tests/deploy/test_frontend.py runs the very configuration that ships.

    python deploy/render.py nginx --listen 127.0.0.1:8080 --upstream 127.0.0.1:8001 --upstream 127.0.0.1:8002 \
        --log-dir /tmp/nginx --out /tmp/nginx/nginx.conf
    python deploy/render.py prometheus --listen 127.0.0.1:9090 --target 127.0.0.1:8001 --out-dir /tmp/prom

Imports nothing from this repository (the standard library and PyYAML only).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parent
NGINX_CONF = DEPLOY / "nginx" / "nginx.conf"
PROMETHEUS_YML = DEPLOY / "prometheus" / "prometheus.yml"
ALERTS_YML = DEPLOY / "prometheus" / "alerts.yml"

# The upstream lines of the shipped config: `server atento:8000 resolve <parameters>;` (the replicas, and
# the same replicas again as backups), each rewritten to one line per loopback replica.
_UPSTREAM_SERVER = re.compile(r"^(?P<indent>[ \t]*)server atento:8000 resolve(?P<params>[^;]*);[^\n]*$", re.M)


def _replace_once(pattern: str, replacement: str, text: str) -> str:
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    if count != 1:
        raise ValueError(f"{NGINX_CONF.name} no longer has a line matching {pattern!r}: update deploy/render.py")
    return new


def render_nginx(*, listen: str, upstreams: Sequence[str], log_dir: Path, source: str | None = None) -> str:
    """Return the shipped nginx.conf with loopback upstreams.

    Args:
        listen: `host:port` nginx listens on (the shipped file listens on port 80).
        upstreams: `host:port` of each replica; each gets every shipped server line's parameters
            (max_fails, fail_timeout, backup), without `resolve`, which needs a resolver and nginx >= 1.27.3.
        log_dir: where the access and error logs go (the shipped file logs to stdout and stderr).
        source: the configuration to render; the shipped file when None.

    Raises:
        ValueError: the shipped file changed shape and a rewrite no longer applies.
    """
    if not upstreams:
        raise ValueError("at least one upstream")
    text = NGINX_CONF.read_text(encoding="utf-8") if source is None else source

    def servers(match: re.Match[str]) -> str:
        return "\n".join(f"{match['indent']}server {address}{match['params']};" for address in upstreams)

    text, count = _UPSTREAM_SERVER.subn(servers, text)
    if count == 0:
        raise ValueError(f"{NGINX_CONF.name} no longer has `server atento:8000 resolve ...;`: update deploy/render.py")
    # Static addresses: no DNS to re-resolve (127.0.0.11 is Docker's resolver, absent here).
    text = _replace_once(r"^[ \t]*resolver 127\.0\.0\.11[^;]*;[^\n]*\n", "", text)
    text = _replace_once(r"^([ \t]*)listen 80;", rf"\g<1>listen {listen};", text)
    text = _replace_once(r"access_log /dev/stdout ", f"access_log {log_dir / 'access.log'} ", text)
    text = _replace_once(r"error_log /dev/stderr ", f"error_log {log_dir / 'error.log'} ", text)
    return text


def render_prometheus(
    *,
    listen: str,
    targets: Sequence[str],
    scrape_interval: str | None = None,
    evaluation_interval: str | None = None,
    alert_for: str | None = None,
) -> tuple[str, str]:
    """Return (prometheus.yml, alerts.yml) for replicas at fixed addresses.

    Args:
        listen: `host:port` of this Prometheus (its own scrape job's target).
        targets: `host:port` of each replica, in place of the job's DNS discovery.
        scrape_interval, evaluation_interval: override the global intervals (tests shorten them).
        alert_for: override every rule's `for:` (tests shorten them); the expressions stay as shipped.
    """
    config = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    if scrape_interval is not None:
        config["global"]["scrape_interval"] = scrape_interval
    if evaluation_interval is not None:
        config["global"]["evaluation_interval"] = evaluation_interval
    for job in config["scrape_configs"]:
        if job["job_name"] == "atento":
            del job["dns_sd_configs"]
            job["static_configs"] = [{"targets": list(targets)}]
        elif job["job_name"] == "prometheus":
            job["static_configs"] = [{"targets": [listen]}]
    rules = yaml.safe_load(ALERTS_YML.read_text(encoding="utf-8"))
    if alert_for is not None:
        for group in rules["groups"]:
            for rule in group["rules"]:
                if "for" in rule:
                    rule["for"] = alert_for
    dump = {"sort_keys": False, "default_flow_style": False}
    return yaml.safe_dump(config, **dump), yaml.safe_dump(rules, **dump)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    nginx = commands.add_parser("nginx", help="deploy/nginx/nginx.conf for loopback upstreams")
    nginx.add_argument("--listen", required=True)
    nginx.add_argument("--upstream", action="append", required=True)
    nginx.add_argument("--log-dir", type=Path, required=True)
    nginx.add_argument("--out", type=Path, required=True)
    prometheus = commands.add_parser("prometheus", help="deploy/prometheus/*.yml for static targets")
    prometheus.add_argument("--listen", required=True)
    prometheus.add_argument("--target", action="append", required=True)
    prometheus.add_argument("--scrape-interval")
    prometheus.add_argument("--evaluation-interval")
    prometheus.add_argument("--alert-for")
    prometheus.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "nginx":
        args.out.write_text(
            render_nginx(listen=args.listen, upstreams=args.upstream, log_dir=args.log_dir), encoding="utf-8"
        )
    else:
        config, rules = render_prometheus(
            listen=args.listen,
            targets=args.target,
            scrape_interval=args.scrape_interval,
            evaluation_interval=args.evaluation_interval,
            alert_for=args.alert_for,
        )
        args.out_dir.mkdir(parents=True, exist_ok=True)
        (args.out_dir / PROMETHEUS_YML.name).write_text(config, encoding="utf-8")
        (args.out_dir / ALERTS_YML.name).write_text(rules, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
