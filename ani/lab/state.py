"""The lab state file ``/run/ani/labs/<id>/state.json``.

Written (atomically: temp file + rename) *before* anything is created and updated as resources
appear, so a lab whose creator crashed half-way can still be removed by ``Lab.down_stale()``.

Shape (JSON)::

    {"id": "3fa2c1", "name": "<topology name>", "prefix": "level-sweep",   # prefix: or null
     "owner_pid": 1234, "owner_start": 98765, "detached": false, "status": "creating|up|down", "created": 1764430000.0,
     "namespaces": ["ani-3fa2c1-r1", ...],
     "pids": {"r1": {"zebra": 4321, ...}}, "topology": {...},
     "netconf_pid": 4400, "netconf_start": 98800,     # the NETCONF server, if the lab runs one
     "ssh_pid": 4401, "ssh_start": 98801,             # the SSH server of the routers' CLIs, if any
     "ssh_ports": {"r1": 40123, ...},                 # its ports, once it listens (ani.lab.ssh)
     "reaper_pid": 4390, "reaper_start": 98790}       # the lab's reaper (ani.lab.reaper)

``status`` is ``up`` once ``Lab.up()`` has returned (routing converged, the NETCONF server
ready); a detached lab that is ``up`` has been handed over by its creator (``ani lab up``): its
reaper leaves it and ``down_stale`` spares it. Until then a creator that dies takes the lab
with it.

``prefix`` is a label the lab's creator chose so that its owner finds it on a shared machine
(``ani lab status --prefix P``; e.g. a campaign's name, ``RunPlan.lab_prefix``): any text matching
:data:`PREFIX_RE` (a campaign's name always does), never part of a namespace or file name (those
use the id, ``[a-z0-9]{1,12}``).

Unknown keys are ignored on reading (pydantic's default), so files with the former ``dirs`` key
still load; a file without ``prefix`` (written before it existed) reads as no prefix.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ani.errors import LabIdError
from ani.host.proc import is_alive, start_time

#: where lab directories live; override with $ANI_LAB_ROOT (tests of the state logic only)
LABS_ROOT = Path(os.environ.get("ANI_LAB_ROOT", "/run/ani/labs"))
LAB_ID_RE = re.compile(r"^[a-z0-9]{1,12}$")
NS_PREFIX = "ani-"
#: a lab's prefix (a label, see the module doc): the pattern of a campaign's name
#: (``ani.campaign.spec.NAME_RE``; a unit test keeps the two equal)
PREFIX_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")


class LabState(BaseModel):
    """The persistent record of one lab (see module docstring)."""

    id: str
    name: str = "lab"
    prefix: str | None = None
    owner_pid: int = 0
    owner_start: int | None = None
    detached: bool = False
    status: str = "creating"
    created: float = Field(default_factory=time.time)
    namespaces: list[str] = Field(default_factory=list)
    pids: dict[str, dict[str, int]] = Field(default_factory=dict)
    topology: dict[str, Any] = Field(default_factory=dict)
    #: the lab's NETCONF server process (PID and start time, see proc.start_time), or None
    netconf_pid: int | None = None
    netconf_start: int | None = None
    #: the lab's SSH server of the routers' CLIs (PID, start time; ani.lab.ssh), or None, and its
    #: ports ``{router: port}`` once it listens
    ssh_pid: int | None = None
    ssh_start: int | None = None
    ssh_ports: dict[str, int] = Field(default_factory=dict)
    #: the lab's reaper process (PID and start time, see ani.lab.reaper), or None
    reaper_pid: int | None = None
    reaper_start: int | None = None

    def owner_alive(self) -> bool:
        """True if the creating process still runs (same PID *and* start time)."""
        return is_alive(self.owner_pid, self.owner_start)


def check_prefix(prefix: str | None) -> str | None:
    """``prefix`` if it is a valid lab prefix (or None: no prefix).

    Raises:
        LabIdError: it does not match :data:`PREFIX_RE` (a ConfigError: bad input).
    """
    if prefix is None or (isinstance(prefix, str) and PREFIX_RE.match(prefix)):
        return prefix
    shown = repr(prefix[:70]) + ("..." if len(prefix) > 70 else "") if isinstance(prefix, str) else repr(prefix)
    raise LabIdError(f"lab prefix {shown} must be 1 to 64 characters: letters, digits and . _ + - "
                     "(not starting with one of . _ + -), e.g. a campaign's name")


def ns_prefix(lab_id: str) -> str:
    """``ani-<id>-``: the prefix of every namespace and FRR pathspace of lab ``lab_id``."""
    return f"{NS_PREFIX}{lab_id}-"


def node_ns(lab_id: str, node: str) -> str:
    """``ani-<id>-<node>``: the netns (and, for routers, FRR pathspace) of ``node``."""
    return ns_prefix(lab_id) + node


def lab_dir(lab_id: str) -> Path:
    return LABS_ROOT / lab_id


def state_path(lab_id: str) -> Path:
    return lab_dir(lab_id) / "state.json"


def new_state(lab_id: str, **kw: Any) -> LabState:
    pid = os.getpid()
    return LabState(id=lab_id, owner_pid=pid, owner_start=start_time(pid), **kw)


def write_state(state: LabState) -> None:
    """Write atomically (a reader never sees a half-written file)."""
    path = state_path(state.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".state.{os.getpid()}.{time.monotonic_ns()}.tmp")
    tmp.write_text(json.dumps(state.model_dump(mode="json"), indent=1))
    os.replace(tmp, path)


def read_state(lab_id: str) -> LabState | None:
    """The state of lab ``lab_id``, or None if missing or unreadable."""
    try:
        return LabState.model_validate_json(state_path(lab_id).read_text())
    except (OSError, ValueError):
        return None


def lab_ids() -> list[str]:
    """Ids of every lab directory under LABS_ROOT, sorted."""
    try:
        return sorted(p.name for p in LABS_ROOT.iterdir() if p.is_dir() and LAB_ID_RE.match(p.name))
    except FileNotFoundError:
        return []
