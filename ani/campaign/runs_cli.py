"""What ``ani campaign list``, ``show`` and ``import`` print (plain text, or JSON with ``--json``).

    ani campaign list DIR                     one line per run (run id, cell, variant, verdict, ...)
    ani campaign show DIR RUN_ID              one run: verdict, cost, trajectory, failed checks
    ani campaign import FILE [--out F.jsonl]  the tool calls of a trajectory (ATIF or ani's JSONL)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ani.campaign.live import count
from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord
from ani.campaign.runs_view import NOT_RUN, RunRow, failed_checks, trajectory_path

LIST_COLUMNS = ("run id", "cell", "variant", "verdict", "failed", "steps", "tokens", "wall_s", "trajectory")
#: characters of a result text shown per call by ``ani campaign import``
TEXT_CHARS = 100
#: characters of a call's arguments shown by ``ani campaign import``
ARGS_CHARS = 160


def _dash(v: Any) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if isinstance(v, float) else str(v)


def list_lines(rows: list[RunRow]) -> list[str]:
    """The lines of ``ani campaign list``: a header, then one aligned line per run."""
    table = [list(LIST_COLUMNS)] + [
        [r.run_id, r.cell, r.variant or "-", r.label, _dash(r.failed), _dash(r.steps), _dash(r.tokens),
         _dash(r.wall_s), r.trajectory or "-"] for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(LIST_COLUMNS) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
            for row in table]


def list_json(rows: list[RunRow]) -> str:
    """``ani campaign list --json``: a JSON array of the rows (:class:`RunRow` fields)."""
    return json.dumps([r.as_dict() for r in rows], indent=1)


def show_lines(folder: Path, plan: RunPlan | None, rec: RunRecord | None) -> list[str]:
    """The lines of ``ani campaign show``: what ran, the verdict, the cost, the trajectory and
    each failed check with its detail."""
    src: Any = rec if rec is not None else plan
    lines = [f"run {src.run_id} (campaign {src.campaign})",
             f"cell {src.cell}, level {src.level}, task {src.task} ({getattr(src, 'form', None) or 'intent'}), "
             f"variant {getattr(rec, 'variant_id', None) or '-'}, seed {src.seed}"]
    if rec is None:
        return lines + [f"verdict: {NOT_RUN} (planned, no record: not run yet, or interrupted)"]
    if rec.scenario_hash:
        lines.append(f"scenario {rec.scenario_hash}" + (f" (density {rec.density})" if rec.density is not None else ""))
    yes = {True: "yes", False: "no", None: "-"}
    verdict = f"verdict: {rec.label}"
    verdict += f" ({rec.infra_error_reason})" if rec.infra_error_reason else \
        f" (success {yes[rec.success]}, damage-free {yes[rec.damage_free]})"
    lines.append(verdict + f"; stop reason {rec.stop_reason or '-'}")
    if rec.agent_error:
        lines.append(f"agent error: {rec.agent_error}")
    cost = rec.cost
    lines.append(f"cost: {count(rec.steps if rec.steps is not None else '-', 'step')}, {count(rec.tool_calls, 'tool call')} "
                 f"({count(rec.tool_errors, 'error')}), "
                 f"tokens {_dash(cost.get('tokens'))} (prompt {_dash(cost.get('prompt_tokens'))}, completion "
                 f"{_dash(cost.get('completion_tokens'))}), turns {_dash(cost.get('turns'))}, "
                 f"agent {_dash(rec.agent_s)} s, wall {rec.wall_s:.1f} s")
    if rec.model:
        lines.append(f"model {rec.model}" + (f", agent mode {rec.agent_mode}" if rec.agent_mode else ""))
    path = trajectory_path(folder, rec.run_id)
    lines.append(f"trajectory: {path if path is not None else '- (none written)'}")
    lines.append(f"hidden tests {sum(c.passed for c in rec.tests)}/{len(rec.tests)} pass, invariants "
                 f"{sum(c.passed for c in rec.invariants)}/{len(rec.invariants)} pass")
    failed = failed_checks(rec)
    if failed:
        lines.append(f"failed checks ({len(failed)}):")
        lines += [f"  {kind} {name}: {detail}" for kind, name, detail in failed]
    return lines


def show_json(folder: Path, plan: RunPlan | None, rec: RunRecord | None) -> str:
    """``ani campaign show --json``: ``{run_id, label, trajectory, failed_checks, record, plan}``."""
    src: Any = rec if rec is not None else plan
    path = trajectory_path(folder, src.run_id)
    return json.dumps({
        "run_id": src.run_id,
        "label": rec.label if rec is not None else NOT_RUN,
        "trajectory": str(path) if path is not None else None,
        "failed_checks": [{"kind": k, "name": n, "detail": d} for k, n, d in failed_checks(rec)] if rec else [],
        "record": json.loads(rec.model_dump_json()) if rec is not None else None,
        "plan": json.loads(plan.model_dump_json()) if plan is not None else None,
    }, indent=1)


def call_lines(calls: list[Any], n_events: int) -> list[str]:
    """``ani campaign import``: ``N tool calls (of M events)``, then ``k. tool(args) -> ok: text``."""
    lines = [f"{len(calls)} tool call{'s' if len(calls) != 1 else ''} (of {n_events} events)"]
    for i, c in enumerate(calls, 1):
        flag = "ok" if c.ok else (c.error_code or "error") if c.ok is False else "?"
        text = " ".join((c.text or "").split())
        text = text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 3] + "..."
        args = json.dumps(c.arguments, sort_keys=True, default=str)
        args = args if len(args) <= ARGS_CHARS else args[: ARGS_CHARS - 3] + "..."
        lines.append(f"{i}. {c.tool}({args}) -> {flag}: {text}")
    return lines
