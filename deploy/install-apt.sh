#!/usr/bin/env bash
# Install the Debian packages the test suite needs (run as root; idempotent).
#   prometheus                  -> /usr/bin/promtool (tests/deploy checks prometheus.yml and alerts.yml) and
#                                  /usr/bin/prometheus (tests/deploy/test_frontend.py runs it on the replicas)
#   nginx                       -> /usr/sbin/nginx (tests/deploy/test_frontend.py runs deploy/nginx/nginx.conf)
#   chromium, chromium-driver   -> headless browser tests (marker `browser`)
# Packages already installed (dpkg -s) are skipped; `apt-get update` runs at most once, and only
# when something is missing.
set -euo pipefail

PACKAGES=(prometheus nginx chromium chromium-driver)

if [[ "$(id -u)" -ne 0 ]]; then
    echo "install-apt.sh: must run as root (try: sudo $0)" >&2
    exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
    if dpkg -s "$pkg" >/dev/null 2>&1 && [[ "$(dpkg-query -W -f='${Status}' "$pkg")" == "install ok installed" ]]; then
        echo "install-apt.sh: $pkg already installed"
    else
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-apt.sh: nothing to do"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# --no-install-recommends keeps the prometheus server's optional extras out; promtool ships in the
# same package as the server on Debian.
apt-get install -y --no-install-recommends "${missing[@]}"

# Both packages start a server through their init scripts where a service manager runs (none does in CI's
# containers); the tests start their own, on loopback ports, and need only the binaries.
for binary in promtool prometheus /usr/sbin/nginx; do
    command -v "$binary" >/dev/null || { echo "install-apt.sh: $binary not found after install" >&2; exit 1; }
done
echo "install-apt.sh: installed ${missing[*]}"
