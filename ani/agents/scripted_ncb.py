"""The scripted agent on a ``netconfbench`` variant: the reference solution, through the level's
own tools.

The variant's first solution (``AgentTask.oracle``: ``{"solution_id", "configs": {router:
[command, ...]}}`` in the lab's names) is applied as the level lets an operator:

- A1: one ``update_config(device, commands)`` per router with the solution's lines as written
  (mode lines such as ``configure terminal`` / ``end`` dropped:
  :func:`ani.device.commands.config_lines`), so A1's snapshot / rollback and allowlist
  apply as to any agent;
- A0: one ``shell`` per router, ``vtysh -c 'configure terminal' -c <line> ... -c end``; a
  non-zero exit fails the run naming the router and vtysh's words;
- A2: the routers are read (:func:`ani.agents.scripted_push.read_configs`), the intended
  configuration is the running one with the solution's lines merged in (hier-config, the
  blocks as vtysh would enter them: :func:`ani.device.commands.merge_solution`; a
  ``no`` line removes what it names), and :func:`ani.agents.scripted_push.push_configs` makes the
  routers hold it in one confirmed-commit transaction. A line the YANG device model cannot
  carry fails the run naming it (before any change).

A0 / A1 send the lines as written rather than a computed difference: the applied commands are
then the solution's, which is what the draft's command score compares. Other levels (A3-T,
A3-R, A4: typed services, no CLI) fail with AgentFailed naming the level.
"""

from __future__ import annotations

import shlex
from typing import Any

from ani.agents.base import AgentTask
from ani.agents.scripted import AgentFailed, need
from ani.agents.scripted_push import device_level, push_configs, read_configs
from ani.device.commands import config_lines, merge_solution

__all__ = ["solve"]


def _configs(task: AgentTask) -> dict[str, list[str]]:
    sol = task.oracle or {}
    configs = sol.get("configs")
    if not isinstance(configs, dict) or not configs:
        raise AgentFailed(f"{task.variant_id}: the variant carries no reference solution to apply "
                          "(the task has no ground_truth_configs)")
    out = {str(r): config_lines([str(c) for c in cmds]) for r, cmds in configs.items()}
    return {r: lines for r, lines in out.items() if lines}


def solve(task: AgentTask, steps: Any, tools: set[str]) -> None:
    """Apply ``task.oracle``'s solution through the level's tools (module doc). Raises
    AgentFailed or BudgetExceeded."""
    configs = _configs(task)
    level = device_level(tools)
    if level == "a1":
        for router, lines in configs.items():
            need(steps.call("update_config", {"device": router, "commands": lines}), f"update_config on {router}")
    elif level == "a0":
        for router, lines in configs.items():
            cmd = "vtysh " + " ".join(f"-c {shlex.quote(ln)}" for ln in ["configure terminal", *lines, "end"])
            res = steps.call("shell", {"device": router, "command": cmd})
            data = res.data or {}
            rc = data.get("exit_status")
            if rc is None:
                need(res, f"shell on {router}")
            elif int(rc) != 0:
                out = f"{data.get('stdout', '')} {data.get('stderr', '')}".strip()
                raise AgentFailed(f"vtysh on {router} exited {rc}: {' '.join(out.split())[:300]}")
    else:  # a2
        before = read_configs(steps, tools, list(configs))
        try:
            want = {r: merge_solution(before[r], lines, router=r) for r, lines in configs.items()}
        except ValueError as exc:
            raise AgentFailed(str(exc)) from None
        push_configs(steps, tools, before, want)
