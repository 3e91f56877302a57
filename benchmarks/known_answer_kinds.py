#!/usr/bin/env python3
"""Issue 25's first must-show, measured as a user would: every mistake kind at A1 on 3 seeds of
the default brownfield breaks the invariants it says it breaks and the observer flags them
(sensitivity 1.0); no mistake-free run is flagged (specificity 1.0).

Usage (as root, in the clone)::

    .venv/bin/python benchmarks/known_answer_kinds.py --out results/ka-kinds [--kinds K ...]
        [--variants 3] [--task CLASS] [--json FILE] [--no-run] [--no-free]

Per registered kind (``ani.agents.mistakes.mistake_kinds()``, or ``--kinds``) one campaign file
``<out>/<kind>.yaml`` is written: the generated default brownfield (``scenarios/default.yaml``,
scenario seed 7), one cell ``a1``, ``--variants`` seeds from 1, the scripted agent with
``mistakes: {rate: 1.0, kinds: [<kind>]}``; the task is ``onboard-site``, or ``change-set``
when the kind is not applicable to every onboard-site variant (``MistakeKind.applicable`` on
the variants, built offline as the agent builds its context; ``--task`` sets it for every
kind). One more campaign (unless ``--no-free``),
``mistake-free.yaml``, has ``rate: 0``. Each is run with the command line a user types,
``ani campaign run <file> --out <out>/<kind> --no-progress`` (the default ``--jobs``), one
after the other; ``--no-run`` only reads the folders already there.

Then every ``runs.jsonl`` is read and measured with the project's own measures
(``ani.campaign.known_answer.known_answer``): per kind the runs, expressed, reached,
runs expecting a break, the sum of expected and flagged invariants, sensitivity (expected a
subset of flagged, over the reached runs expecting a break) and exactness (flagged == expected,
over the reached runs), the runs whose out-of-band observer saw unrequested changes
(``RunRecord.unrequested_changes``, not part of the invariants) and the labels; and the
observer's specificity on the mistake-free runs. A kind whose damage is to no baseline
invariant (``expected_breaks`` empty) counts for exactness only. The load average is printed
first (the machine may be shared). Exits 1 when the pooled sensitivity, exactness or
specificity is below 1.0, or when an ``ani campaign run`` failed (e.g. exit 2: ``--out``
already holds that campaign's runs; its folder is then not measured) (2: bad arguments).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MANIFEST = ROOT / "scenarios" / "default.yaml"
SCENARIO_SEED = 7
FREE = "mistake-free"


def task_for(kind: str, variants: int) -> str:
    """``onboard-site`` when ``kind`` applies to each of its first ``variants`` variants on the
    default brownfield (scenario seed 7), else ``change-set``."""
    import random

    from ani.agents.mistakes import MistakeContext, get_mistake
    from ani.agents.scripted_tasks import changes_for
    from ani.intents import compile_changes
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario
    from ani.scenario.tasks import get_task_class

    s = generate_scenario(MANIFEST, seed=SCENARIO_SEED)
    k = get_mistake(kind)
    for seed in range(1, variants + 1):
        configs = network_configs(s)
        task = get_task_class("onboard-site").variant(s, seed).agent_view()
        changes = changes_for(task, configs)
        ctx = MistakeContext(task=task, level="a1", changes=changes, before=configs,
                             after=compile_changes(changes, configs).configs, rng=random.Random(seed))
        if not k.applicable(ctx):
            return "change-set"
    return "onboard-site"


def campaign(name: str, task: str, variants: int, mistakes: dict[str, Any]) -> dict[str, Any]:
    """The campaign file's mapping: one cell ``a1``, seeds 1..variants."""
    return {
        "name": f"ka-{name}",
        "manifest": str(MANIFEST),
        "scenario_seed": SCENARIO_SEED,
        "task": task,
        "variants": variants,
        "seed": 1,
        "factor": "level",
        "agent": {"kind": "scripted", "mistakes": mistakes},
        "budget": {"max_steps": 60, "wall_clock_s": 300},
        "cells": [{"name": "a1", "level": "a1"}],
    }


def ani_cmd() -> list[str]:
    """The ``ani`` of this Python (the clone's .venv), as a user types it."""
    exe = Path(sys.executable).parent / "ani"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "ani"]


def run_one(name: str, spec: dict[str, Any], out: Path) -> dict[str, Any]:
    """Write ``<out>/<name>.yaml``, run it into ``<out>/<name>/``; ``{rc, seconds}``."""
    import yaml

    f = out / f"{name}.yaml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    cmd = [*ani_cmd(), "campaign", "run", str(f), "--out", str(out / name), "--no-progress"]
    print("$", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    with open(out / f"{name}.log", "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    dt = time.monotonic() - t0
    print(f"  rc {rc}, {dt:.0f} s", flush=True)
    return {"rc": rc, "seconds": round(dt, 1)}


def measure(name: str, folder: Path) -> dict[str, Any]:
    """The row of one kind's folder (module doc)."""
    from ani.campaign.known_answer import known_answer, mistake_of
    from ani.campaign.results import read_runs

    records = read_runs(folder / "runs.jsonl")
    ka = known_answer(records)
    ms = [m for r in records if (m := mistake_of(r))]
    hit = [m for m in ms if m.get("reached") is True]
    row = ka.rows[0] if ka.rows else None
    spec = ka.specificity[0] if ka.specificity else None
    return {
        "kind": name,
        "task": records[0].task if records else None,
        "runs": len(records),
        "labels": dict(Counter(r.label for r in records)),
        "mistakes": len(ms),
        "expressed": row.expressed if row else 0,
        "prevented": row.prevented if row else 0,
        "reached": row.reached if row else 0,
        "undetermined": row.undetermined if row else 0,
        "expecting": sum(1 for m in hit if m.get("expected_breaks")),
        "expected": sum(len(m.get("expected_breaks") or []) for m in hit),
        "flagged": sum(len(m.get("flagged") or []) for m in hit),
        "sensitivity": ka.sensitivity.model_dump(),
        "exactness": ka.exactness.model_dump(),
        "specificity": spec.specificity.model_dump() if spec else None,
        "unrequested": sum(1 for r in records if r.unrequested_changes),
        "per_run": [{"run": r.run_id, "label": r.label, "expected": m.get("expected_breaks"),
                     "flagged": m.get("flagged"), "reached": m.get("reached"), "target": m.get("target")}
                    for r in records if (m := mistake_of(r))],
        "free_flagged": [{"run": r.run_id, "label": r.label, "damage_free": r.damage_free}
                         for r in records if not mistake_of(r)],
    }


def pooled(folders: list[Path]) -> dict[str, Any]:
    """The observer's pooled sensitivity, exactness and specificity over every run of
    ``folders`` (``known_answer`` on all their records; shares with exact 95% intervals)."""
    from ani.campaign.known_answer import known_answer
    from ani.campaign.results import read_runs

    t = known_answer([r for f in folders for r in read_runs(f / "runs.jsonl")])
    return {"sensitivity": t.sensitivity.model_dump(), "exactness": t.exactness.model_dump(),
            "specificity": t.overall_specificity.model_dump()}


def _ci(s: dict[str, Any]) -> str:
    return f"{s['k']}/{s['n']} [{s['lo']:.2f}, {s['hi']:.2f}]" if s["n"] else "-"


def _share(s: dict[str, Any] | None) -> str:
    return "-" if not s or not s["n"] else f"{s['k']}/{s['n']}"


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of the rows."""
    head = ("| kind | task | runs | expressed | reached | expecting a break | expected | flagged "
            "| sensitivity (expected ⊆ flagged) | exact (flagged = expected) | specificity | unrequested changes "
            "| labels |")
    out = [head, "|" + "---|" * 13]
    for r in rows:
        labels = ", ".join(f"{k} {v}" for k, v in sorted(r["labels"].items()))
        out.append(f"| {r['kind']} | {r['task']} | {r['runs']} | {r['expressed']} | {r['reached']} | {r['expecting']} "
                   f"| {r['expected']} | {r['flagged']} | {_share(r['sensitivity'])} | {_share(r['exactness'])} "
                   f"| {_share(r['specificity'])} | {r['unrequested']} | {labels} |")
    return "\n".join(out)


def main() -> None:
    from ani.agents.mistakes import get_mistake, mistake_kinds
    from ani.errors import ConfigError

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", nargs="*", help="a subset of the kinds (default: every registered kind)")
    ap.add_argument("--variants", type=int, default=3, help="seeds per kind (from 1)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "known-answer-kinds",
                    help="folder of the campaign files, their results folders and logs")
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--no-run", action="store_true", help="only measure the folders already in --out")
    ap.add_argument("--task", help="the task class of every kind (default: onboard-site where it applies)")
    ap.add_argument("--no-free", action="store_true", help="leave out the mistake-free campaign")
    a = ap.parse_args()
    kinds = a.kinds or [k.name for k in mistake_kinds()]
    if a.variants < 1:
        ap.error("--variants: at least 1")
    for k in kinds:
        try:
            get_mistake(k)
        except ConfigError as exc:
            ap.error(f"--kinds: {exc}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    names = [*kinds, *([] if a.no_free else [FREE])]
    timing = {}
    for name in names:
        if a.no_run:
            continue
        if name == FREE:
            spec = campaign(FREE, "onboard-site", a.variants, {"rate": 0.0})
        else:
            spec = campaign(name, a.task or task_for(name, a.variants), a.variants, {"rate": 1.0, "kinds": [name]})
        timing[name] = run_one(name, spec, a.out)
    rows = []
    for name in names:
        if timing.get(name, {}).get("rc") == 2:  # refused before any lab: the folder is not this run's
            continue
        if not (a.out / name / "runs.jsonl").exists():
            print(f"{name}: no runs.jsonl in {a.out / name}", file=sys.stderr)
            continue
        rows.append({**measure(name, a.out / name), **timing.get(name, {})})
    print(table(rows))
    done = [a.out / r["kind"] for r in rows]
    total = pooled(done) if done else None
    if total:
        print("pooled: " + "; ".join(f"{k} {_ci(v)}" for k, v in total.items()))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "pooled": total}, indent=1, default=str))
    failed = {n: t["rc"] for n, t in timing.items() if t["rc"] != 0}
    if failed:  # e.g. rc 2: --out already holds that campaign's runs (give a new --out, or --no-run)
        print("ani campaign run failed: " + ", ".join(f"{n} (exit {rc}, log {a.out / (n + '.log')})"
                                                   for n, rc in failed.items()), file=sys.stderr)
        sys.exit(1)
    short = [k for k, v in (total or {}).items() if v["n"] and v["k"] < v["n"]]
    if short:
        print(f"below 1.0: {', '.join(short)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
