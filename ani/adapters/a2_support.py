"""What A2 can do on a device, from its NETCONF hello (:class:`ani.netconf.hello.ServerHello`):
the features each tool and each RPC needs, the refusal of an RPC the device cannot do, and the
summary (what works, what does not) that ``unsupported`` results and ``ani mcp serve
--inventory`` give (docs/real-devices.md, "Devices that do not serve ani-frr")."""

from __future__ import annotations

from typing import Any

from ani.netconf.hello import ServerHello

#: how many modules an ``unsupported`` error names (the whole list is said once, at connect:
#: :func:`support_text` in ``ani mcp serve``'s notes and instructions, and the note of a read)
SHORT_MODULES = 3

__all__ = ["MODEL", "SHORT_MODULES", "TOOL_NEEDS", "needs", "support", "support_text", "unsupported_message"]

#: the YANG module A2's tools describe (their descriptions, get_state's default filter, compare's
#: cli format)
MODEL = "ani-frr"
#: each tool and the protocol features it needs at most (:mod:`ani.netconf.hello`); what one
#: RPC needs is :func:`needs`
TOOL_NEEDS: dict[str, tuple[str, ...]] = {
    "get_config": (), "get_state": (), "lock": (), "unlock": (), "get_schema": ("monitoring",),
    "edit_config": ("candidate",), "validate": ("candidate", "validate"), "compare": ("candidate",),
    "discard_changes": ("candidate",), "commit": ("candidate", "confirmed-commit"),
    "confirm_commit": ("candidate", "confirmed-commit"), "cancel_commit": ("confirmed-commit",),
}
_NEEDS_NOTE = {
    "get_config": "source=candidate needs candidate", "lock": "target=candidate needs candidate",
    "unlock": "target=candidate needs candidate", "commit": "confirmed=false needs candidate only",
}


def needs(op: str, kw: dict[str, Any]) -> tuple[str, ...]:
    """The protocol features (:mod:`ani.netconf.hello`) one RPC needs, from its arguments."""
    candidate = "candidate" in (kw.get("source"), kw.get("target"))
    if op == "commit":
        return ("candidate", "confirmed-commit") if kw.get("confirmed") else ("candidate",)
    if op == "cancel_commit":
        return ("confirmed-commit",)
    if op == "validate":
        return ("candidate", "validate") if candidate else ("validate",)
    if op == "discard_changes":
        return ("candidate",)
    if op == "get_schema":
        return ("monitoring",)
    return ("candidate",) if candidate else ()


def support(hello: ServerHello, serves_model: bool | None = None,
            module_limit: int | None = None) -> dict[str, Any]:
    """What A2 can do on a device with this hello: ``works`` and ``does_not_work`` (tool names,
    the latter with the missing features: ``"validate (needs validate)"``), ``serves_model``
    (``ani-frr`` served: ``serves_model`` when given, e.g. from the device's YANG library, else
    from the hello, unknown counting as served), ``modules`` (at most ``module_limit`` named, the
    rest counted: :meth:`ServerHello.module_list`), ``module_count``, ``lacks`` (the features A2
    uses that it lacks)."""
    works, not_ = [], []
    for tool_name, needs in TOOL_NEEDS.items():
        missing = hello.missing(needs)
        if not missing:
            works.append(tool_name)
            continue
        partial = f"; {_NEEDS_NOTE[tool_name]}" if tool_name in _NEEDS_NOTE else ""
        if set(missing) == {"confirmed-commit"} and tool_name == "commit":
            works.append("commit (confirmed=false)")
            partial = ""
        not_.append(f"{tool_name} (needs {', '.join(missing)}{partial})")
    used = sorted({f for needs in TOOL_NEEDS.values() for f in needs})
    return {"works": works, "does_not_work": not_, "serves_model": (hello.serves(MODEL) is not False) if serves_model is None else serves_model,
            "modules": hello.module_list(module_limit), "module_count": len(hello.modules),
            "lacks": hello.missing(used)}


def support_text(device: str, hello: ServerHello, serves_model: bool | None = None,
                 module_limit: int | None = None) -> str:
    """One paragraph: what works on ``device`` and what does not (see :func:`support`); its
    modules all named. With ``module_limit`` (an error's short form): at most that many modules
    named and counted, and what does not work left to the error's ``data.does_not_work``."""
    s = support(hello, serves_model, module_limit)
    out = []
    if not s["serves_model"]:
        out.append(f"{device} does not serve {MODEL} (its modules: {s['modules']}): get_state reads "
                   "everything without a filter, compare shows XML")
    if s["does_not_work"] and module_limit is None:
        out.append(f"not on {device}: " + "; ".join(s["does_not_work"]))
    out.append(f"works on {device}: " + ", ".join(s["works"]))
    return ". ".join(out)


def unsupported_message(device: str, op: str, missing: list[str], hello: ServerHello,
                        serves_model: bool | None = None) -> str:
    """``r2: commit needs confirmed-commit (capability urn:...), which its hello does not
    announce; nothing was sent. <support_text>``, naming at most :data:`SHORT_MODULES` of the
    device's modules and their count (an agent meets this on every refused call; the whole list
    is said once, at connect)."""
    needs = "; ".join(f"{f} ({ServerHello.needs(f)})" for f in missing)
    return (f"{device}: {op.replace('_', '-')} needs {needs}, which its NETCONF hello does not announce; "
            f"nothing was sent. {support_text(device, hello, serves_model, SHORT_MODULES)}")
