#!/usr/bin/env bash
# One-time (and idempotent) set-up of a Debian/Ubuntu machine for ani-sdk:
# system packages, a virtualenv in .venv, the package with its test extras, then `ani doctor`.
# Run as root: labs create network namespaces and start FRR daemons.
set -euo pipefail
cd "$(dirname "$0")/.."

# The system packages: the first column of ani/host/packages.txt, the one list that the code
# (ani.host: the program registry, `ani doctor`) reads too.
PKG_FILE=ani/host/packages.txt
mapfile -t PKGS < <(awk '!/^[[:space:]]*(#|$)/ && !seen[$1]++ {print $1}' "$PKG_FILE")
if [ ${#PKGS[@]} -eq 0 ]; then
    echo "ani-sdk: $PKG_FILE lists no packages" >&2
    exit 1
fi

GOAL="${1:-setup}"   # the make goal, for the messages

if [ "$(id -u)" != 0 ]; then
    echo "ani-sdk: needs root (it installs packages, creates network namespaces and starts FRR): run 'sudo make $GOAL' or run it as root." >&2
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
    # Installing frr on a systemd machine enables and starts frr.service (zebra, staticd and
    # watchfrr in the host's own namespace). Labs never use it (each lab router runs its own
    # daemons in its namespace, under /etc/frr/ani-* and /var/run/frr/ani-*), so when this
    # script installed frr, it does not leave an unused routing daemon running on the host.
    if [[ " ${missing[*]} " == *" frr "* ]] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        systemctl disable --now frr.service >/dev/null 2>&1 || true
        echo "ani-sdk: disabled the host's frr.service (labs start their own FRR daemons; 'systemctl enable --now frr' to undo)"
    fi
fi

# A Python >= 3.11 that can make a venv with pip (Debian/Ubuntu split ensurepip into
# python3.X-venv: a python3.13 without python3.13-venv is skipped, not a failed venv).
PY=""
for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; then
        PY="$cand"; break
    fi
done
if [ -z "$PY" ]; then
    echo "ani-sdk: needs Python >= 3.11 with venv (Debian 12: apt-get install python3 python3-venv; Ubuntu 22.04: apt-get install python3.11 python3.11-venv)." >&2
    exit 1
fi

# (Re)create the venv if it is missing or broken (e.g. an earlier 'python3 -m venv' that
# failed for lack of ensurepip leaves a .venv without pip).
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    rm -rf .venv
    echo "ani-sdk: creating the virtualenv .venv ($("$PY" --version))"
    "$PY" -m venv .venv
fi
# The package and its test extras are installed by uv (a resolver and installer from PyPI, put
# into the venv by pip first, best effort): on this machine pip took 47 s of a fresh clone's set-up,
# uv 22 with its cache (docs/performance.md, "Ninth round"). uv byte-compiles what it installs
# (--compile-bytecode, as pip does). uv reads no pip.conf: a machine whose packages come from a
# mirror sets UV_INDEX_URL (or UV_DEFAULT_INDEX) too. Where uv cannot be had or fails, pip installs
# the same.
STAMP=.venv/.ani-installed
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    if .venv/bin/python -m pip install -q --upgrade pip uv >/dev/null 2>&1 && .venv/bin/python -m uv --version >/dev/null 2>&1; then
        echo "ani-sdk: installing the package into .venv (uv pip install -e '.[test]')"
        if ! .venv/bin/python -m uv pip install -q --python .venv/bin/python --compile-bytecode -e '.[test]'; then
            echo "ani-sdk: uv pip install failed (above); installing with pip"
            .venv/bin/python -m pip install -q -e '.[test]'
        fi
    else
        echo "ani-sdk: installing the package into .venv (pip install -e '.[test]'; pip could not install uv)"
        .venv/bin/python -m pip install -q --upgrade pip >/dev/null
        .venv/bin/python -m pip install -q -e '.[test]'
    fi
    touch "$STAMP"
fi
# Byte-compile the package (pip compiles the dependencies, not an editable install's own code).
# Where PYTHONDONTWRITEBYTECODE is set (CI images, Docker's python images) no process would ever
# cache ani's modules: every campaign worker, lab server and `ani` command compiled the ones it
# imports from source again (docs/performance.md, "Sixth round"). Each set-up recompiles stale ones.
.venv/bin/python -m compileall -q ani >/dev/null

# What this machine still lacks (a kernel feature, a package apt could not install): a warning
# with the fix, not a failure (unit tests run anywhere; labs and campaigns refuse with the same
# words). `ani doctor` prints the whole table.
if ! doctor_out=$(.venv/bin/ani doctor 2>&1); then
    echo "ani-sdk: warning: this machine cannot run every level yet ('ani doctor' for the table):" >&2
    grep -E '^(missing|fix|levels that can run)' <<<"$doctor_out" | sed 's/^/  /' >&2 || true
fi
