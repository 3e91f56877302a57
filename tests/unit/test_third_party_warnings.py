"""A fresh ``make setup`` installs cryptography 51, which deprecates DSA: importing asyncssh
2.24 (the lab's SSH server, the NETCONF server and client) then warns five times, and the ani
command printed ``warning: DSA is deprecated ...`` five times on every ``ani run`` (issue 28's
verification, on a fresh clone; the lead's older venv had cryptography 50). ``import ani``
silences exactly that warning of asyncssh's modules, nothing else. In a fresh interpreter:
pytest restores the warning filters around every test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DSA = "DSA is deprecated and support will be removed in a future release."


def _stderr_after(module: str, message: str = DSA) -> str:
    code = ("import warnings, ani\n"
            f"warnings.warn_explicit({message!r}, UserWarning, 'misc.py', 32, module={module!r})\n"
            "import asyncssh\n")
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, check=True).stderr


def test_asyncssh_dsa_deprecation_is_not_shown():
    assert _stderr_after("asyncssh.crypto.misc") == ""


def test_other_warnings_still_are():
    assert DSA in _stderr_after("someone_else.crypto")
    assert "other news" in _stderr_after("asyncssh.crypto.misc", "other news")
