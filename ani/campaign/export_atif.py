"""``ani campaign export DIR --format atif --out OUT``: each run of a results folder as one ATIF
document (:func:`export_atif`), ``OUT/<run id>.json``.

A document is the run's trajectory (:func:`ani.trajectory_atif.to_atif`: the request, the model's
replies, every tool call with its arguments and result) with the run in its ``extra["ani"]``:

    run:  run_id, campaign, cell, level, blocklist, adapter_options, task, form, variant_id,
          seed, scenario_hash, density, stress, model, agent_mode
    verdict: label, success, damage_free, infra_error_reason, agent_error, stop_reason,
          tests / invariants (passed, total), failed_checks [{kind, name, detail}]
    cost: the record's cost (tokens, prompt / completion tokens, turns, steps, tool calls,
          agent_s, wall_s)

``session_id`` is the run id; ``final_metrics`` holds the run's prompt and completion tokens.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord
from ani.campaign.runs_view import failed_checks, load_folder, trajectory_path
from ani.errors import AniError, CampaignSpecError
from ani.trajectory_atif import AgentInfo, read_events, to_atif

FORMATS = ("atif",)
#: the record fields that say which run it is (``extra["ani"]["run"]``)
RUN_FIELDS = ("run_id", "campaign", "cell", "level", "blocklist", "adapter_options", "task", "form",
              "variant_id", "seed", "scenario_hash", "density", "stress", "model", "agent_mode")
VERDICT_FIELDS = ("label", "success", "damage_free", "infra_error_reason", "agent_error", "stop_reason")


def export_atif(folder: str | Path, out: str | Path, *, deps: Any = None) -> list[Path]:
    """Write ``out/<run id>.json`` (ATIF, validated by the ``atif`` models) for every run of the
    results folder ``folder`` that has a record, in plan order; returns the files written.

    Raises:
        CampaignSpecError: ``folder`` is not a results folder, holds no finished run, or ``out``
            is a file, cannot be written or already holds files.
        TrajectoryError: a run's trajectory file cannot be read (its path and line).
    """
    from ani.campaign.loop import writable_folder
    from ani.campaign.runner import RunnerDeps

    src, dest = Path(folder), Path(out)
    plans, records = load_folder(src)
    if not records:
        raise CampaignSpecError(f"{src}: no finished run to export (runs.jsonl holds no record)")
    if dest.is_dir() and any(dest.iterdir()):
        raise CampaignSpecError(f"--out {dest}: already holds files; give a new or empty folder")
    writable_folder(dest, "--out")
    deps = deps if deps is not None else RunnerDeps()
    order = {p.run_id: i for i, p in enumerate(plans)}
    by_plan = {p.run_id: p for p in plans}
    written = []
    for rec in sorted(records, key=lambda r: order.get(r.run_id, len(order))):
        doc = run_document(src, by_plan.get(rec.run_id), rec, deps)
        written.append(_write(dest / f"{rec.run_id}.json", doc.to_json_dict(exclude_none=True)))
    return written


def _write(path: Path, data: dict[str, Any]) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def run_document(folder: Path, plan: RunPlan | None, rec: RunRecord, deps: Any) -> Any:
    """The ATIF document (``atif.Trajectory``) of one run. Raises TrajectoryError."""
    path = trajectory_path(folder, rec.run_id)
    events = read_events(path) if path is not None else []
    notes = []
    request = None
    if not any(e.get("event") == "agent_start" for e in events):
        request, why = task_request(folder, plan, deps)
        if why:
            notes.append(f"the request could not be rebuilt from the plan: {why}")
    if path is None:
        notes.append("no trajectory was written for this run (it ended before the agent started)")
    kind = str((plan.agent if plan is not None else {}).get("kind") or "agent")
    cost = dict(rec.cost)
    return to_atif(
        events, request=request, session_id=rec.run_id,
        agent=AgentInfo(name=f"ani-{kind}", model_name=rec.model,
                        extra={"level": rec.level, "agent_mode": rec.agent_mode}),
        extra=run_extra(rec, path),
        final_metrics={"total_prompt_tokens": cost.get("prompt_tokens"),
                       "total_completion_tokens": cost.get("completion_tokens"),
                       "extra": {"tokens": cost.get("tokens"), "tool_calls": rec.tool_calls,
                                 "wall_s": rec.wall_s}},
        notes="; ".join(notes) or None,
    )


def run_extra(rec: RunRecord, path: Path | None) -> dict[str, Any]:
    """The document's ``extra["ani"]`` fields of ``rec``: run, verdict, cost, trajectory file."""
    data = json.loads(rec.model_dump_json(include=set(RUN_FIELDS) | set(VERDICT_FIELDS)))
    verdict = {k: data.get(k) for k in VERDICT_FIELDS}
    verdict["tests"] = {"passed": sum(c.passed for c in rec.tests), "total": len(rec.tests)}
    verdict["invariants"] = {"passed": sum(c.passed for c in rec.invariants), "total": len(rec.invariants)}
    verdict["failed_checks"] = [{"kind": k, "name": n, "detail": d} for k, n, d in failed_checks(rec)]
    return {"run": {k: data.get(k) for k in RUN_FIELDS}, "verdict": verdict, "cost": dict(rec.cost),
            "trajectory_file": path.name if path is not None else None}


def task_request(folder: Path, plan: RunPlan | None, deps: Any) -> tuple[str | None, str | None]:
    """``(the request the agent was given, None)`` rebuilt from the run's plan (its scenario in
    the folder, its task class and seed), or ``(None, why not)``: a scripted run's trajectory
    does not hold its request."""
    if plan is None:
        return None, "the folder has no plan of this run"
    from ani.agents.llm_config import user_message
    from ani.campaign.execute import scenario_of
    from ani.campaign.runner import variant_of

    try:
        catalogue = scenario_of(plan, folder, deps)
        task_class = catalogue if plan.scenario.tasks is not None else deps.get_task_class(plan.task)
        view = variant_of(task_class, catalogue, plan.seed, plan.form).agent_view()
    except (AniError, OSError) as exc:
        return None, f"{type(exc).__name__}: {str(exc)[:300]}"
    return user_message(view.request, dict(view.files)), None
