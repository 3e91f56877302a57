"""MyVendorAdapter: a minimal ANI adapter built on ani's BaseAdapter.

BaseAdapter gives you, for free: JSON Schema of each tool from its pydantic argument model,
argument validation before anything reaches a device (INVALID_ARGUMENTS), device-name checks
(UNKNOWN_DEVICE, for any ``device``/``devices`` argument), unknown tools (UNKNOWN_TOOL), timing,
one trajectory event per call, calls from several threads serialised, and the ``get_topology``
tool.

Write each tool as a method taking one validated ``Args`` model and returning a ToolResult.
Agent mistakes are ``ToolResult.failure(ErrorCode.X, message)``; raise only for harness faults.

The device here is reached through ``lab.exec(device, argv)`` running the vendor CLI (FRR's
``vtysh`` in ani's labs and in :class:`ani.testing.FakeLab`); replace ``_cli`` with your
device's management call (SSH, NETCONF, REST, ...).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ani.adapters.base import BaseAdapter, DeviceArgs, tool
from ani.errors import ErrorCode
from ani.protocol import Level, ToolResult

SHOW_RUNNING = "show running-config"


class ShowArgs(DeviceArgs):
    """Arguments of ``show_version``: ``device`` (inherited) plus one option."""

    detail: bool = Field(default=False, description="Include the uptime line")


class ConfigureArgs(DeviceArgs):
    """Arguments of ``configure``: ``device`` and the configuration lines."""

    lines: list[str] = Field(min_length=1, description="Configuration lines, in order, one per item")


class MyVendorAdapter(BaseAdapter):
    """Example vendor adapter: ``get_topology`` (inherited), ``show_version(device, detail)``,
    ``get_config(device)`` and ``configure(device, lines)`` (all lines or none).

    Args:
        lab: the running lab (``lab.exec(node, argv, timeout)`` reaches a device).
        trajectory: where calls are logged (ani.trajectory.Trajectory).
        options: adapter settings from the campaign cell, e.g. ``{"timeout_s": 10}``.
    """

    level = Level.A1  # the ANI level whose tool surface this adapter offers
    #: its tools carry CLI command lines (``commands``), so the blocklist ablation can inspect
    #: them (``create_adapter(..., blocklist=True)`` refuses an adapter without this)
    blocklist_inspects = True

    def __init__(self, lab: Any, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.timeout_s = float(self.options.get("timeout_s", 10.0))

    def _cli(self, device: str, commands: list[str]) -> tuple[str, ToolResult | None]:
        """Run CLI commands; (output, None) or (output, the failure to return)."""
        argv = ["vtysh"]
        for c in commands:
            argv += ["-c", c]
        res = self.lab.exec(device, argv, timeout=self.timeout_s)
        if res.timed_out:
            return res.stdout, ToolResult.failure(ErrorCode.TIMEOUT, f"timeout after {self.timeout_s:g} s",
                                                  retriable=True)
        if res.rc != 0:
            why = (res.stdout + res.stderr).strip() or f"exit status {res.rc}"
            return res.stdout, ToolResult.failure(ErrorCode.COMMAND_FAILED, why)
        return res.stdout, None

    def _running(self, device: str) -> tuple[list[str], ToolResult | None]:
        out, failed = self._cli(device, [SHOW_RUNNING])
        lines = [ln.rstrip() for ln in out.splitlines()
                 if ln.strip() and not ln.startswith(("Building", "Current configuration", "!"))]
        return lines, failed

    @tool(args=ShowArgs, read_only=True, description="Show the device's software version.")
    def show_version(self, args: ShowArgs) -> ToolResult:
        out, failed = self._cli(args.device, ["show version"])
        if failed:
            return failed
        lines = out.splitlines()
        if not args.detail:
            lines = [ln for ln in lines if "uptime" not in ln.lower()]
        text = "\n".join(lines)
        return ToolResult.success(text, {"version": text})

    @tool(args=DeviceArgs, read_only=True, description="The device's running configuration.")
    def get_config(self, args: DeviceArgs) -> ToolResult:
        lines, failed = self._running(args.device)
        if failed:
            return failed
        return ToolResult.success("\n".join(lines), {"lines": lines})

    @tool(args=ConfigureArgs, destructive=True,
          description="Apply configuration lines to the device: all of them, or none (a refused line "
                      "undoes the ones before it).")
    def configure(self, args: ConfigureArgs) -> ToolResult:
        before, failed = self._running(args.device)
        if failed:
            return failed
        _out, refused = self._cli(args.device, ["configure terminal", *args.lines])
        after, failed = self._running(args.device)
        if failed:
            return failed
        if refused is None:
            return ToolResult.success(f"{args.device}: applied {len(args.lines)} line(s)",
                                      {"added": [ln for ln in after if ln not in before]},
                                      changed=after != before)
        # undo: the device has no rollback of its own here, so remove what the call added
        added = [ln.strip() for ln in after if ln not in before]
        if added:
            self._cli(args.device, ["configure terminal", *(f"no {ln}" for ln in reversed(added))])
        now, failed = self._running(args.device)
        if failed is None and now == before:
            return ToolResult.failure(ErrorCode.ROLLED_BACK,
                                      f"{args.device}: refused, nothing applied: {refused.error.message}",
                                      data={"undone": added})
        return ToolResult.failure(ErrorCode.ROLLBACK_FAILED,
                                  f"{args.device}: refused ({refused.error.message}) and not restored",
                                  data={"left": [ln for ln in now if ln not in before]}, changed=True)
