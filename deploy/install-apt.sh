#!/usr/bin/env bash
# Install the Debian packages the test suite needs (run as root; idempotent).
#   prometheus                  -> /usr/bin/promtool (tests/deploy checks prometheus.yml and alerts.yml)
#   chromium, chromium-driver   -> headless browser tests (marker `browser`)
# Packages already installed (dpkg -s) are skipped; `apt-get update` runs at most once, and only
# when something is missing.
set -euo pipefail

PACKAGES=(prometheus chromium chromium-driver)

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

# The prometheus package starts a server via its init scripts where a service manager runs; the tests
# only need the promtool binary.
command -v promtool >/dev/null || { echo "install-apt.sh: promtool not found after install" >&2; exit 1; }
echo "install-apt.sh: installed ${missing[*]}"
