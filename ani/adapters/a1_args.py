"""Argument models of A1's optional tools (:mod:`ani.adapters.a1`): the NetConfBench draft's
extra tools (draft-cui-nmrg-llm-benchmark §6.3) and NetConfArena's ``apply_config``.

- :class:`BatchArgs` (``batch_configure_devices``): either the draft's shape, ``devices`` (names)
  + ``commands`` (one list sent to every device), or ``configs``, ``{device: [commands]}`` (a
  list per device). Exactly one of the two shapes; a device at most once; no empty list.
- :class:`StatusArgs` (``check_device_status``): ``devices`` (names; empty: every router) and
  ``metrics`` (a subset of the draft's enum ``cpu``, ``memory``, ``interface``).
- :class:`ApplyConfigArgs` (``apply_config``): ``configs``, ``{device: "line\\nline\\n..."}``;
  :func:`config_lines` splits the text (blank lines dropped; ``configure terminal`` / ``end``
  kept, the adapter does not send them twice).

The draft addresses devices by IP (``device_ips``, ``device_ip``) and passes a
``credential_id``; the lab's devices are addressed by name and need no credentials, so those
keys are refused with a message that says what to send instead (not just "unknown argument").
Device names are checked against the lab by the adapter (``unknown device 'R1'; did you mean
'r1'? ...``, :mod:`ani.names`) before anything is sent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ani.adapters.base import Args

__all__ = ["ApplyConfigArgs", "BatchArgs", "METRICS", "StatusArgs", "config_lines"]

#: the draft's ``check_device_status`` metrics (§6.3.2), in its order
METRICS: tuple[str, ...] = ("cpu", "memory", "interface")

#: keys of the draft's schemas the lab has no use for -> what to send instead
_DRAFT_KEYS = {
    "device_ips": "address devices by name: 'devices' (a list of router names; get_topology lists them)",
    "device_ip": "address devices by name: 'devices' (a list of router names; get_topology lists them)",
    "credential_id": "not needed: the lab's devices take no credentials; leave it out",
}


class _DraftArgs(Args):
    """Arguments of a tool the draft defines with ``device_ips`` / ``device_ip`` /
    ``credential_id``: those keys are refused saying what to send instead (module doc)."""

    @model_validator(mode="before")
    @classmethod
    def _draft_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            bad = [f"{k}: {_DRAFT_KEYS[k]}" for k in data if k in _DRAFT_KEYS]
            if bad:
                raise ValueError("; ".join(bad))
        return data


def _duplicates(names: list[str]) -> list[str]:
    seen: set[str] = set()
    return sorted({n for n in names if n in seen or seen.add(n)})  # type: ignore[func-returns-value]


class BatchArgs(_DraftArgs):
    devices: list[str] = Field(
        default_factory=list,
        description=(
            "Device names to send the same 'commands' to, in order (the draft's shape). "
            "Give either devices + commands, or configs."
        ),
    )
    commands: list[str] = Field(
        default_factory=list,
        description=(
            "CLI command sequence to execute on every device of 'devices', one FRR configuration "
            "statement per item, full keywords"
        ),
    )
    configs: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Per-device command lists, {device: [commands]}, applied in the order given; "
            "instead of devices + commands"
        ),
    )

    @model_validator(mode="after")
    def _one_shape(self) -> BatchArgs:
        given = self.model_fields_set
        draft = bool({"devices", "commands"} & given)
        if draft and "configs" in given:
            raise ValueError("give either devices + commands or configs, not both")
        if "configs" in given:
            if not self.configs:
                raise ValueError("configs: is empty (name at least one device)")
            empty = [d for d, cmds in self.configs.items() if not cmds]
            if empty:
                raise ValueError(f"configs: empty command list for {', '.join(map(repr, empty))}")
            return self
        if not draft:
            raise ValueError("give devices + commands (the same commands on every device) or configs "
                             "({device: [commands]})")
        for name in ("devices", "commands"):
            if name not in given:
                raise ValueError(f"{name}: Field required (with {'commands' if name == 'devices' else 'devices'})")
        if not self.devices:
            raise ValueError("devices: is empty (name at least one device)")
        if not self.commands:
            raise ValueError("commands: is empty")
        if dup := _duplicates(self.devices):
            raise ValueError(f"devices: named more than once: {', '.join(map(repr, dup))}")
        return self

    def plan(self) -> dict[str, list[str]]:
        """``{device: commands}`` in the order they are applied."""
        if self.configs:
            return {d: list(c) for d, c in self.configs.items()}
        return {d: list(self.commands) for d in self.devices}


class StatusArgs(_DraftArgs):
    devices: list[str] = Field(
        default_factory=list,
        description="Device names to check; leave empty for every router",
    )
    metrics: list[Literal["cpu", "memory", "interface"]] = Field(
        default_factory=lambda: ["interface"],
        description=(
            "What to report beside reachability and the FRR daemons' state: cpu (CPU seconds "
            "used by each daemon), memory (resident memory of each daemon), interface (kernel "
            "link state and counters of each interface). Default: [interface]"
        ),
    )

    @model_validator(mode="after")
    def _unique(self) -> StatusArgs:
        if dup := _duplicates(self.devices):
            raise ValueError(f"devices: named more than once: {', '.join(map(repr, dup))}")
        return self


class ApplyConfigArgs(Args):
    configs: dict[str, str] = Field(
        description=(
            "Per-device configuration, {device: \"line\\nline\\n...\"}: FRR configuration "
            "statements separated by newlines, full keywords. Configuration mode is entered and "
            "left for you ('configure terminal' / 'end' lines are accepted, not needed). All "
            "devices or none: if a line fails, every device is rolled back."
        ),
    )

    @model_validator(mode="after")
    def _not_empty(self) -> ApplyConfigArgs:
        if not self.configs:
            raise ValueError("configs: is empty (name at least one device)")
        empty = [d for d, text in self.configs.items() if not config_lines(text)]
        if empty:
            raise ValueError(f"configs: no configuration lines for {', '.join(map(repr, empty))}")
        return self

    def plan(self) -> dict[str, list[str]]:
        """``{device: lines}`` (:func:`config_lines`) in the order given."""
        return {d: config_lines(text) for d, text in self.configs.items()}


def config_lines(text: str) -> list[str]:
    """The lines of one device's ``apply_config`` text: split at newlines (``\\n``, ``\\r\\n``),
    blank lines dropped, each line as written otherwise (the allowlist sanitises it)."""
    return [ln for ln in text.splitlines() if ln.strip()]
