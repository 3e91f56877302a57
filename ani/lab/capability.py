"""Up-front checks that the host can run a lab; raises CapabilityMissing with what to install."""

from __future__ import annotations

import functools
import os
import shutil

from ani.errors import CapabilityMissing
from ani.lab import proc
from ani.lab.frr import FRR_BIN, VTYSH


@functools.lru_cache(maxsize=1)
def _veth_ok() -> str | None:
    """None if a veth pair can be created (probed in a throw-away netns), else the error text."""
    try:
        res = proc.run(
            ["unshare", "--net", "ip", "link", "add", "cap0", "type", "veth", "peer", "name", "cap1"],
            timeout=10,
        )
    except OSError as exc:
        return str(exc)
    if res.timed_out:
        return "timed out after 10 s"
    return None if res.ok else (res.stderr.strip() or f"exit {res.rc}")


def check_capabilities(daemons: set[str] | None = None) -> None:
    """Raise CapabilityMissing naming the first missing piece: root, iproute2, util-linux
    ``unshare``, FRR (zebra, vtysh and each daemon in ``daemons``), or kernel veth support."""
    if os.geteuid() != 0:
        raise CapabilityMissing("the lab needs root (network namespaces, veths, FRR): run as root")
    if not shutil.which("ip"):
        raise CapabilityMissing("'ip' not found: install iproute2 (apt-get install iproute2)")
    if not shutil.which("unshare"):
        raise CapabilityMissing("'unshare' not found: install util-linux")
    if not (FRR_BIN / "zebra").exists():
        raise CapabilityMissing(f"FRR not found ({FRR_BIN}/zebra missing): apt-get install frr")
    if not os.path.exists(VTYSH):
        raise CapabilityMissing(f"{VTYSH} not found: apt-get install frr")
    for d in sorted(daemons or ()):
        if not (FRR_BIN / d).exists():
            raise CapabilityMissing(f"FRR daemon {d} not found in {FRR_BIN}: install a FRR build with {d}")
    err = _veth_ok()
    if err:
        raise CapabilityMissing(f"the kernel cannot create veth pairs ({err}): load the 'veth' module")
