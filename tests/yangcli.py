"""Debian's ``yangcli`` (yuma123 2.13), a third-party NETCONF client, driven in batch mode for the
interop tests (tests/integration/test_netconf_yangcli.py).

yangcli needs a terminal (it calls ``tcgetattr`` on stdin and exits at once without one): it runs
on a pseudo-terminal, with ``--batch-mode --run-script=FILE`` (the script's commands, then it
exits), ``HOME`` set to a test-owned folder (it writes ``$HOME/.yuma/tmp`` whatever ``--home``
says), and the password in a ``--config`` file of mode 0600 (never on the command line).

yangcli 2.13 cannot parse YANG 1.1's ``modifier invert-match`` (a yuma123 limit, not the
module's fault): loading ``ani-frr`` fails on the five patterns that use it. :func:`module_copy`
writes a copy without those five patterns to a folder yangcli is pointed to with ``--modpath``;
the server still enforces them, which the error-reply test relies on (yangcli sends a value the
copy allows and the server refuses, with an ``error-path``).

A script stops at the first ``rpc-error`` ("Script ... canceled"): a test that wants an error
reply ends its script there.
"""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent
#: the ``pattern ... { modifier invert-match; ... }`` blocks of ani-frr.yang (strings joined by +)
_INVERT = re.compile(r"pattern\s+'[^']*'(?:\s*\+\s*'[^']*')*\s*\{[^{}]*?modifier\s+invert-match;[^{}]*\}",
                     re.S)
INVERT_MATCH_PATTERNS = 5


def yangcli() -> str | None:
    """The path of Debian's yangcli, None when it is not installed."""
    return shutil.which("yangcli")


def module_copy(folder: Path) -> Path:
    """Write ``folder/ani-frr.yang``: the shipped module without its ``invert-match`` patterns
    (exactly :data:`INVERT_MATCH_PATTERNS` of them, else AssertionError: the module changed and
    this copy no longer says what the test claims). Returns the folder."""
    text = (ROOT / "yang" / "ani-frr.yang").read_text()
    copy, n = _INVERT.subn("", text)
    assert n == INVERT_MATCH_PATTERNS and "invert-match" not in copy, n
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ani-frr.yang").write_text(copy)
    return folder


def run(endpoint: Any, script: list[str], home: Path, modpath: Path | None = None,
        display: str = "plain", timeout: float = 120.0) -> str:
    """Run yangcli against ``endpoint`` (``.host``, ``.port``, ``.username``, ``.password``) with
    ``script`` (yangcli commands, one a line) and return what it printed (``\\r\\n`` as ``\\n``).
    ``display``: ``--display-mode`` (plain, xml, ...). Raises TimeoutError (after killing it) if
    it has not exited after ``timeout`` seconds."""
    exe = yangcli()
    assert exe, "yangcli is not installed (apt-get install yangcli)"
    assert '"' not in endpoint.password and "\\" not in endpoint.password
    home.mkdir(parents=True, exist_ok=True)
    conf, run_file = home / "yangcli.conf", home / "script.ycs"
    conf.touch(mode=0o600)
    conf.write_text(f'yangcli {{\n  password "{endpoint.password}"\n}}\n')
    run_file.write_text("\n".join(script) + "\n")
    argv = [exe, f"--config={conf}", f"--server={endpoint.host}", f"--ncport={endpoint.port}",
            f"--user={endpoint.username}", f"--home={home}", "--batch-mode",
            f"--run-script={run_file}", "--autoaliases=false", "--autohistory=false",
            "--autouservars=false", "--log-level=info", f"--display-mode={display}",
            f"--timeout={int(timeout)}"]
    if modpath is not None:
        argv.append(f"--modpath={modpath}")
    master, slave = pty.openpty()
    env = {**os.environ, "HOME": str(home), "TERM": "dumb"}
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=home,
                            close_fds=True, start_new_session=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"yangcli still running after {timeout} s:\n{out.decode(errors='replace')[-3000:]}")
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    return out.decode(errors="replace").replace("\r\n", "\n")


def replies(output: str) -> list[tuple[str, str]]:
    """yangcli's replies in order: ``[(kind, body)]``, kind ``OK`` | ``Data`` | ``Error`` (from
    its ``RPC <kind> Reply N for session S:`` lines), body what it printed up to the next one."""
    parts = re.split(r"^RPC (OK|Data|Error) Reply \d+ for session \d+:\n", output, flags=re.M)
    return list(zip(parts[1::2], parts[2::2], strict=True))
