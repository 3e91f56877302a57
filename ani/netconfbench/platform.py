"""Which platform a NetConfBench task's startup configs are written for.

The draft's own tasks are Cisco IOS (``version 12.4``, ``service timestamps ...``); the lab
runs FRR only, so a task must say FRR before it runs (``ani.netconfbench.lab`` refuses the
rest by name). Detection reads each device's startup config line by line:

============  ==========================================================  ===================
platform      strong markers (any decides)                                weak (if no strong)
============  ==========================================================  ===================
``frr``       ``frr version ...``, ``frr defaults ...``,                  ``ip address A.B.C.D/L``,
              ``service integrated-vtysh-config``                         ``interface eth0``-style names
``cisco-ios`` ``version 12.4`` (a bare ``version N.N``),                  ``ip address A.B.C.D M.M.M.M``,
              ``service timestamps``, ``boot-start-marker``,              ``interface Serial0/0``-style
              ``line vty ...``, ``line con 0``, ``no service pad``       names
``junos``     ``version 12.3R...``, ``system {`` / ``interfaces {``       ``set interfaces ...``
              blocks, ``set system ...``
============  ==========================================================  ===================

Carriage returns (``\\r\\n`` configs) are ignored. Write ``frr defaults traditional`` (or the
``frr version`` line ``show running-config`` prints) at the top of an FRR startup config and
detection is certain. Another platform is one :class:`Platform` (its markers) registered in
:data:`PLATFORM_KINDS` (or declared in the entry-point group ``ani.platforms``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ani.errors import ConfigError
from ani.plugin_registry import Registry

if TYPE_CHECKING:
    from ani.netconfbench.task import NcbTask

@dataclass(frozen=True)
class Platform:
    """One platform's markers: ``strong`` patterns (any decides), ``weak`` ones (counted when
    no platform has a strong one); each matched against one line of a config."""

    name: str
    strong: tuple[re.Pattern[str], ...]
    weak: tuple[re.Pattern[str], ...] = ()


def _platform(name: str, strong: tuple[str, ...], weak: tuple[str, ...]) -> Platform:
    return Platform(name, tuple(re.compile(p) for p in strong), tuple(re.compile(p) for p in weak))


#: the platforms detection knows (an :class:`ani.plugin_registry.Registry` of :class:`Platform`:
#: the table above in its order, then others sorted; entry-point group ``ani.platforms``)
PLATFORM_KINDS: Registry[Platform] = Registry(
    "platform", group="ani.platforms", order=("frr", "cisco-ios", "junos"), error=ConfigError,
    hint="pip install the package that provides it (entry-point group ani.platforms)")
for _p in (
    _platform("frr", (r"^frr (version|defaults)\b", r"^service integrated-vtysh-config\b"),
              (r"^\s*ip address \d+\.\d+\.\d+\.\d+/\d+", r"^interface (eth|ens|enp|veth|lo)\w*\s*$")),
    _platform("cisco-ios", (r"^version \d+\.\d+\s*$", r"^service timestamps\b", r"^boot-(start|end)-marker\b",
                            r"^line (vty|con|aux)\b", r"^no service pad\b"),
              (r"^\s*ip address \d+\.\d+\.\d+\.\d+ \d+\.\d+\.\d+\.\d+",
               r"^interface (Serial|FastEthernet|GigabitEthernet|TenGigabitEthernet|Ethernet|Loopback)\d")),
    _platform("junos", (r"^version \d+\.\d+[A-Z]",
                        r"^\s*(system|interfaces|protocols|routing-options|policy-options)\s*\{",
                        r"^set (system|routing-options|policy-options) "),
              (r"^set interfaces ",)),
):
    PLATFORM_KINDS.register(_p.name, _p)

#: the values :func:`platform_of` returns (the shipped platforms and ``unknown``)
PLATFORMS = (*PLATFORM_KINDS.names(), "unknown")


def _count(weak: bool, lines: list[str]) -> dict[str, int]:
    return {p.name: sum(1 for ln in lines for rx in (p.weak if weak else p.strong) if rx.search(ln))
            for p in PLATFORM_KINDS.objects()}


def config_platform(text: str) -> str:
    """The platform of one device's config text (:data:`PLATFORMS`): the one with the most
    strong markers, else the most weak ones, else ``"unknown"`` (ties: ``unknown``)."""
    lines = text.replace("\r", "").splitlines()
    for weak in (False, True):
        counts = _count(weak, lines)
        best = max(counts.values(), default=0)
        if best:
            winners = [n for n, c in counts.items() if c == best]
            return winners[0] if len(winners) == 1 else "unknown"
    return "unknown"


def device_platforms(task: NcbTask) -> dict[str, str]:
    """``{node: platform}`` for every node with a startup config (in the file's order)."""
    return {node: config_platform(text) for node, text in task.startup_configs.items()}


def platform_of(task: NcbTask) -> str:
    """``"frr"`` | ``"cisco-ios"`` | ``"junos"`` | ``"unknown"``: the platform the task's
    startup configs are written for. A platform other than FRR found on any device wins (the
    first such device in the file's order: a task that is FRR on one router and IOS on
    another cannot run here); else ``"frr"`` if one device is recognisably FRR; else
    ``"unknown"`` (no startup configs, or none recognised)."""
    found = list(device_platforms(task).values())
    other = [p for p in found if p not in ("frr", "unknown")]
    if other:
        return other[0]
    return "frr" if "frr" in found else "unknown"
