"""Campaigns: spec, runner, results store, statistics, report (see ``docs/campaigns.md``).

| module | holds |
|---|---|
| :mod:`ani.campaign.spec` | the campaign file (``load_spec``), cells, budget, run ids |
| :mod:`ani.campaign.runner` | ``run_one`` (one variant in one cell), ``RunnerDeps`` (injectable factories) |
| :mod:`ani.campaign.run_support` | what the runner and a run's phases share (``GradingObserver``, ``error_text``, ...) |
| :mod:`ani.campaign.loop` | ``run_campaign``: every seed in every cell, resumable, Ctrl-C safe |
| :mod:`ani.campaign.results` | ``RunRecord``, ``runs.jsonl`` (``RunStore``, ``read_runs``) |
| :mod:`ani.stats` (also `ani.campaign.stats`) | Wilson, Clopper-Pearson, exact McNemar |
| :mod:`ani.campaign.report` | ``summary.md`` and the terminal tables |
| :mod:`ani.campaign.cli` | ``ani campaign run|report`` and ``ani run`` (their options: :mod:`ani.campaign.cli_options`) |

Submodules import the lab, scenario, observer and agents lazily, so importing
this package is cheap.
"""
