#!/usr/bin/env bash
# One-time (and idempotent) set-up of a Debian/Ubuntu machine for ani-sdk:
# system packages, a virtualenv in .venv, the package with its test extras.
# Run as root: labs create network namespaces and start FRR daemons.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(frr iproute2 nftables iputils-ping bubblewrap procps python3-venv git)

if [ "$(id -u)" != 0 ]; then
    echo "ani-sdk: set-up needs root (it installs packages, creates network namespaces and starts FRR): run 'sudo make ...' or as root." >&2
    exit 1
fi
if [ ! -f /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ani-sdk: set-up needs Debian or Ubuntu with apt-get; elsewhere install ${PKGS[*]} and Python >= 3.11 yourself, then 'pip install -e .[test]'." >&2
    exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "ani-sdk: installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=""
for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
        PY="$cand"; break
    fi
done
if [ -z "$PY" ]; then
    echo "ani-sdk: needs Python >= 3.11 (Debian 12 ships 3.11: apt-get install python3)." >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
STAMP=.venv/.ani-installed
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    echo "ani-sdk: installing the package into .venv (pip install -e '.[test]')"
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e '.[test]'
    touch "$STAMP"
fi
