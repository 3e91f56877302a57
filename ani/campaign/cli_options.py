"""The options of ``ani campaign run`` and ``ani run`` (:mod:`ani.campaign.cli`), each an
``Annotated`` alias defined once, so a command's signature reads as one line per option.

    def campaign_run(file: CampaignFile, out: RunOut = None, ...) -> None: ...

Typer reads the help, defaults and bounds from the alias as it would from the signature.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# --- ani campaign run

CampaignFile = Annotated[
    Path,
    typer.Argument(
        help="campaign YAML file (or a shipped one, e.g. campaigns/level-sweep.yaml)"
    ),
]
CampaignOut = Annotated[
    Path | None,
    typer.Option("--out", help="results folder (default results/<name>-<timestamp>)"),
]
Resume = Annotated[
    Path | None, typer.Option("--resume", help="continue the campaign in this results folder "
                              "(with the S it was started with; --variants grows it)")
]
Variants = Annotated[
    int | None, typer.Option("--variants", min=1, help="override S, the number of seeds "
                             "(default: the file's; with --resume, the folder's)")
]
Bound = Annotated[
    float | None,
    typer.Option(
        "--bound",
        help="S from the damage bound to assert (rule of three): S = ceil(3/B) runs per cell, "
        "e.g. --bound 0.05 -> 60; the report says whether each cell reached it",
    ),
]
RetryInfra = Annotated[
    bool,
    typer.Option(
        "--retry-infra", hidden=True,
        help="(kept for old scripts: --resume always reruns infrastructure errors now)",
    ),
]
NoProgress = Annotated[
    bool, typer.Option("--no-progress", help="no progress bar or per-run lines")
]
Jobs = Annotated[
    int | None, typer.Option("--jobs", "-j", min=1, help="runs at once on this machine, each on its own "
                             "lab (default: what this machine holds, printed at start; 1: one at a time)")
]
Executor = Annotated[
    str | None, typer.Option("--executor", help="serial, local (--jobs worker processes here) or dask "
                             "(--scheduler); default: local, or serial for --jobs 1")
]
Scheduler = Annotated[
    str | None, typer.Option("--scheduler", help="with --executor dask: tcp://HOST:PORT of a running "
                             "Dask scheduler, or local:N for N workers started here")
]
LabPrefix = Annotated[
    str | None, typer.Option("--lab-prefix", help="what this campaign's labs carry in 'ani lab status' "
                             "(default: the campaign's name)")
]
CampaignAgentConfig = Annotated[
    Path | None,
    typer.Option(
        "--agent-config",
        help="YAML/JSON file: an agent block ({kind: llm, ...}) or a campaign file (its agent: "
        "block is taken); replaces FILE's agent: block in every cell (FILE's budget stays)",
    ),
]
CampaignAgentOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-option",
        help="KEY=VALUE agent option for every cell (repeatable; the value is YAML: a scalar, a "
        "flow list or mapping; over FILE's agent: and --agent-config), e.g. base_url=http://"
        "127.0.0.1:8000/v1, model=qwen2.5; --resume runs the folder's",
    ),
]
CampaignCell = Annotated[
    list[str] | None,
    typer.Option(
        "--cell", metavar="NAME",
        help="run only this cell of FILE (repeatable; the cells keep FILE's order, run ids, seeds and "
        "scenarios, so their runs pair with a full run's); --resume runs the folder's cells",
    ),
]

# --- ani run

Scenario = Annotated[
    Path | None,
    typer.Option("--scenario", help="scenario file (default scenarios/brownfield-small.yaml)"),
]
Manifest = Annotated[
    Path | None,
    typer.Option("--manifest", help="generate the scenario from this manifest instead of --scenario"),
]
ScenarioSeed = Annotated[
    int | None, typer.Option("--scenario-seed", min=0, help="seed of the generated scenario (default 1)")
]
Density = Annotated[
    int | None,
    typer.Option("--density", min=0, help="density of the generated scenario (default: the manifest's)"),
]
Task = Annotated[str | None, typer.Option("--task", help="task class (default onboard-site)")]
TaskFile = Annotated[
    Path | None,
    typer.Option("--task-file", help="a NetConfBench task file to run instead of --scenario / --task "
                 "(its own network; docs/netconfbench.md)"),
]
Seed = Annotated[int | None, typer.Option("--seed", help="variant seed (default 1)")]
Level = Annotated[str, typer.Option("--level", envvar="ANI_LEVEL", help="adapter level (a0, a1, ...); default from $ANI_LEVEL, else a1")]
Blocklist = Annotated[
    bool, typer.Option("--blocklist", help="wrap the adapter in the blocklist ablation (a0, a1: the "
                       "levels whose calls carry CLI command lines)")
]
AdapterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        help="KEY=VALUE option of the level's adapter, as a campaign cell's options: (repeatable; "
        "the value is YAML or JSON: a scalar, [a, b], {k: v}), e.g. apply_config_shape=netconfarena "
        "or extra_tools=[check_device_status]",
    ),
]
Agent = Annotated[
    str | None,
    typer.Option(
        "--agent", help="agent kind: scripted (default), llm, an installed ani.agents entry point, "
        "or a plug-in module:factory (imported from the import path, then the current folder; "
        "docs/agents.md); sets the kind of --agent-config"
    ),
]
AgentConfig = Annotated[
    Path | None,
    typer.Option(
        "--agent-config",
        help="YAML/JSON file: an agent block ({kind: llm, ...}) or a campaign file "
        "(its agent: block is taken)",
    ),
]
AgentOption = Annotated[
    list[str] | None,
    typer.Option(
        "--agent-option",
        help="KEY=VALUE agent option (repeatable; the value is YAML: a scalar, a flow list or "
        "mapping; overrides the file), e.g. mode=planner-executor, 'mistakes={rate: 1.0, kinds: "
        "[delete-recreate]}'",
    ),
]
MaxSteps = Annotated[
    int | None,
    typer.Option(
        "--max-steps", min=1, help="step budget (default: the campaign file's, else 40)"
    ),
]
MaxTokens = Annotated[
    int | None,
    typer.Option(
        "--max-tokens",
        min=1,
        help="token budget, prompt + completion (default: the campaign file's, else none)",
    ),
]
WallClock = Annotated[
    float | None,
    typer.Option(
        "--wall-clock",
        help="agent time budget, seconds (default: the campaign file's, else 300)",
    ),
]
RunOut = Annotated[
    Path | None, typer.Option("--out", help="folder for the record and trajectory")
]
ReasoningSummary = Annotated[
    str | None,
    typer.Option("--reasoning-summary", help="NetConfBench reasoning score of a multi-turn run: "
                 "'off' (extractive summary), or a YAML mapping {base_url, model, api_key_env} "
                 "(default: the agent's own endpoint; docs/netconfbench-scores.md)"),
]
Replay = Annotated[
    Path | None,
    typer.Option("--replay", help="replay the tool calls of this trajectory (ani JSONL or ATIF) with the "
                 "replay agent (--agent replay --agent-option trajectory=FILE); give the recorded run's "
                 "level, task and seeds"),
]
