"""MyVendorAdapter: a minimal ANI adapter built on ani's BaseAdapter.

BaseAdapter gives you, for free: JSON Schema of each tool from its pydantic argument model,
argument validation before anything reaches a device (INVALID_ARGUMENTS), device-name checks
(UNKNOWN_DEVICE, for any ``device``/``devices`` argument), unknown tools (UNKNOWN_TOOL), timing,
one trajectory event per call, and the ``get_topology`` tool.

Write each tool as a method taking one validated ``Args`` model and returning a ToolResult.
Agent mistakes are ``ToolResult.failure(ErrorCode.X, message)``; raise only for harness faults.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ani.adapters.base import BaseAdapter, DeviceArgs, tool
from ani.errors import ErrorCode
from ani.protocol import Level, ToolResult


class ShowArgs(DeviceArgs):
    """Arguments of ``show_version``: ``device`` (inherited) plus one option."""

    detail: bool = Field(default=False, description="Include the uptime line")


class MyVendorAdapter(BaseAdapter):
    """Example vendor adapter: ``get_topology`` (inherited) and ``show_version(device)``.

    Args:
        lab: the running lab (``lab.exec(node, argv, timeout)`` reaches a device).
        trajectory: where calls are logged (ani.trajectory.Trajectory).
        options: adapter settings from the campaign cell, e.g. ``{"timeout_s": 10}``.
    """

    level = Level.A1  # the ANI level whose tool surface this adapter offers

    def __init__(self, lab: Any, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.timeout_s = float(self.options.get("timeout_s", 10.0))

    @tool(args=ShowArgs, read_only=True, description="Show the device's software version.")
    def show_version(self, args: ShowArgs) -> ToolResult:
        # Replace with your device's management call (SSH, NETCONF, REST, ...).
        res = self.lab.exec(args.device, ["vtysh", "-c", "show version"], timeout=self.timeout_s)
        if res.timed_out:
            return ToolResult.failure(ErrorCode.TIMEOUT, f"timeout after {self.timeout_s:g} s", retriable=True)
        if res.rc != 0:
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, res.stderr.strip() or f"exit status {res.rc}")
        lines = res.stdout.splitlines()
        if not args.detail:
            lines = [ln for ln in lines if "uptime" not in ln.lower()]
        text = "\n".join(lines)
        return ToolResult.success(text, {"version": text})
