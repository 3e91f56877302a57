"""The agent block of ``ani run`` from ``--agent-config``, ``--agent`` and ``--agent-option``.

::

    agent_block(Path("llm.yaml"), None, ["mode=planner-executor", "seed=3"])
    -> {"kind": "llm", "base_url": ..., "model": ..., "mode": "planner-executor", "seed": 3}

Precedence: the file, then ``--agent KIND`` (the kind), then each ``--agent-option KEY=VALUE``
in order (a later one wins). With none of them the block is ``{"kind": "scripted"}``. The block
is checked by building the agent (:func:`ani.agents.create_agent`) in ``ani run``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ani.errors import ConfigError
from ani.validation import parse_yaml

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def load_agent_config(path: Path) -> dict[str, Any]:
    """The agent block in ``path`` (YAML or JSON).

    The file holds either a bare agent block (a mapping with ``kind``, e.g. ``{kind: llm,
    base_url: ..., model: ...}``) or a campaign file, whose ``agent:`` block is taken. It is read
    as every user file is (a key written twice is an error), and a campaign file is checked by
    the campaign model of ``ani campaign run`` (an unknown or misspelt key, a bad value; the
    keys ``ani run`` sets itself -- scenario, task, cells -- may be absent).

    Raises:
        ConfigError: naming ``--agent-config`` and the file: missing or unreadable, not valid
            YAML/JSON (with the line), a campaign file ``ani campaign run`` would refuse, or
            neither kind of content.
    """
    where = f"--agent-config {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ConfigError(f"{where}: cannot read it ({why})") from None
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{where}: not valid YAML/JSON{at}: {problem}") from None
    if isinstance(data, dict) and "kind" not in data and "agent" in data:
        check_campaign_file(data, where)
        data = data["agent"]
        if not isinstance(data, dict) or "kind" not in data:
            raise ConfigError(f"{where}: the agent: block must be a mapping with a kind")
    if not isinstance(data, dict) or "kind" not in data:
        raise ConfigError(
            f"{where}: neither an agent block ({{kind: llm, ...}}) nor a campaign file with an "
            "agent: block"
        )
    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{where}: agent option names must be strings, got {bad[0]!r}")
    return dict(data)


#: stand-ins for the campaign keys ``ani run`` sets itself, so that a campaign file given to
#: ``--agent-config`` is checked by the same model as in ``ani campaign run``
_RUN_SETS = {"name": "run", "scenario": "-", "task": "onboard-site", "cells": [{"name": "c", "level": "a0"}]}


def check_campaign_file(data: dict[str, Any], where: str) -> None:
    """Check a campaign file given to ``--agent-config`` with the campaign model (the validation
    of ``ani campaign run``): unknown top-level keys, bad values. Absent keys that ``ani run``
    sets itself are allowed; ``budget`` is checked by :func:`campaign_budget` and ``agent`` by
    building the agent, as in ``ani campaign run``.

    Raises:
        ConfigError: ``--agent-config FILE: invalid campaign: budjet: Extra inputs are not
            permitted`` (the words of ``ani campaign run``).
    """
    from ani.campaign.spec import CampaignSpec, _format_loc
    from ani.validation import validate_mapping

    # the task is ani run's --task: the file's is not used (nor checked against the registry)
    probe = {**_RUN_SETS, **{k: v for k, v in data.items() if k not in ("agent", "budget", "task")}}
    validate_mapping(CampaignSpec, probe, source=where, what="campaign", error=ConfigError,
                     top="(top level)", format_loc=lambda loc: _format_loc(loc, probe))


def campaign_budget(path: Path) -> dict[str, Any] | None:
    """The ``budget:`` block of ``path`` when it is a campaign file, else None.

    A campaign file is a mapping with an ``agent:`` block and no top-level ``kind`` (a bare
    agent block has no budget). The block is checked as a :class:`ani.agents.base.Budget`
    (keys ``max_steps``, ``max_tokens``, ``wall_clock_s``); a campaign file without one gives
    ``{}`` (the defaults). Call after :func:`load_agent_config` (which reports unreadable files).

    Raises:
        ConfigError: naming ``--agent-config``, the file and the bad budget field.
    """
    from pydantic import ValidationError

    from ani.agents.base import Budget
    from ani.validation import format_validation_error

    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(data, dict) or "kind" in data or "agent" not in data:
        return None
    budget = data.get("budget")
    if budget is None:
        return {}
    where = f"--agent-config {path}: budget"
    if not isinstance(budget, dict):
        raise ConfigError(f"{where}: must be a mapping (max_steps, max_tokens, wall_clock_s)")
    try:
        Budget.model_validate(budget)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, prefix=where, top=where)) from None
    return dict(budget)


def parse_agent_option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> ``(key, value)``; the value is read as YAML (a scalar, or a flow list
    or mapping, as the key takes in a file: the agent checks it).

    ``mode=planner-executor`` -> ``("mode", "planner-executor")``, ``seed=3`` -> ``("seed", 3)``,
    ``recovery=true`` -> ``("recovery", True)``, ``api_key_env=null`` -> ``("api_key_env",
    None)``, ``model="7"`` -> ``("model", "7")``, ``mistakes={rate: 1.0, kinds: [delete-recreate]}``
    -> ``("mistakes", {"rate": 1.0, "kinds": ["delete-recreate"]})``.

    Raises:
        ConfigError: naming ``--agent-option`` and the text: no ``=``, a key that is not a name,
            an empty value (write ``null`` or ``""``), a value that is not YAML.
    """
    return parse_key_value(text, "--agent-option", example="mode=planner-executor", collections=True)


def parse_key_value(text: str, flag: str, *, example: str, collections: bool = False) -> tuple[str, Any]:
    """``KEY=VALUE`` given to the option ``flag`` -> ``(key, value)``, the value read as YAML
    (so JSON too): a scalar (``3``, ``true``, ``null``, ``"7"``, ``text``), and with
    ``collections`` also a flow list or mapping (``[a, b]``, ``{"x": 1}``).

    Raises:
        ConfigError: naming ``flag`` and the text: no ``=``, a key that is not a name, an
            empty value (write ``null`` or ``""``), a value that is not YAML, a list or a
            mapping where only scalars are taken.
    """
    where = f"{flag} {text!r}"
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"{where}: expected KEY=VALUE, e.g. {example}")
    if not _KEY.fullmatch(key):
        raise ConfigError(f"{where}: {key!r} is not an option name (letters, digits, _)")
    if not raw.strip():
        raise ConfigError(f"{where}: no value after '=' (write null for none, \"\" for empty)")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        what = "YAML (or JSON)" if collections else "a YAML scalar"
        raise ConfigError(f"{where}: the value is not {what} ({problem})") from None
    if isinstance(value, (dict, list)) and not collections:
        raise ConfigError(
            f"{where}: the value must be a scalar (string, number, true/false, null), "
            f"got a {'mapping' if isinstance(value, dict) else 'list'}"
        )
    return key, value


def agent_block(config: Path | None, kind: str | None, options: list[str]) -> dict[str, Any]:
    """The agent block from the file ``config``, the kind and the ``KEY=VALUE`` options.

    Raises:
        ConfigError: from :func:`load_agent_config` and :func:`parse_agent_option`.
    """
    block: dict[str, Any] = load_agent_config(config) if config is not None else {}
    if kind is not None:
        block["kind"] = kind
    for text in options:
        key, value = parse_agent_option(text)
        block[key] = value
    block.setdefault("kind", "scripted")
    return block


def agent_override(config: Path | None, options: list[str]) -> dict[str, Any] | None:
    """``ani campaign run``'s ``--agent-config FILE`` and ``--agent-option KEY=VALUE`` as the
    campaign's agent override (:class:`ani.campaign.spec.AgentOverride`: ``{"agent": the
    file's block or None, "options": {key: value}}``), read and parsed as ``ani run`` reads
    them (:func:`load_agent_config`, :func:`parse_agent_option`; a later option of one key
    wins); None when neither is given.

    Raises:
        ConfigError: from :func:`load_agent_config` and :func:`parse_agent_option`.
    """
    if config is None and not options:
        return None
    parsed: dict[str, Any] = {}
    for text in options:
        key, value = parse_agent_option(text)
        parsed[key] = value
    return {"agent": load_agent_config(config) if config is not None else None, "options": parsed}


def describe_sources(config: Path | None, kind: str | None, options: list[str]) -> str:
    """Where the block came from, for error lines: ``--agent-config f.yaml, --agent-option
    mode=x`` (``--agent scripted`` when nothing was given)."""
    parts = [f"--agent-config {config}"] if config is not None else []
    if kind is not None or config is None:
        parts.append(f"--agent {kind or 'scripted'}")
    parts += [f"--agent-option {o}" for o in options]
    return ", ".join(parts)
