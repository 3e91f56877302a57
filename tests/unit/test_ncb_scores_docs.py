"""docs/netconfbench-scores.md's lab-free example runs as written and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path


def test_scores_docs_example_prints_what_the_page_says(run_doc_example):
    out = run_doc_example("netconfbench-scores.md", "scores", timeout=120)
    page = (Path(__file__).parents[2] / "docs" / "netconfbench-scores.md").read_text()
    said = re.search(r"<!-- example:scores -->.*?prints .*?:\n\n```text\n(.*?)\n```", page, re.S).group(1)
    assert out.rstrip("\n") == said


def test_the_threshold_the_page_states_is_the_codes():
    from ani.netconfbench.harvest import HARVEST_F1_THRESHOLD

    page = (Path(__file__).parents[2] / "docs" / "netconfbench-scores.md").read_text()
    assert f"is below **{HARVEST_F1_THRESHOLD:g}**" in page


def test_summary_docs_example_prints_what_the_page_says(run_doc_example):
    out = run_doc_example("netconfbench-scores.md", "summary", timeout=120)
    page = (Path(__file__).parents[2] / "docs" / "netconfbench-scores.md").read_text()
    said = re.search(r"<!-- example:summary -->.*?prints .*?:\n\n```text\n(.*?)\n```", page, re.S).group(1)
    assert out.rstrip("\n") == said


def test_the_pages_reasoning_summary_settings_are_valid():
    import yaml

    from ani.netconfbench.reasoning_summary import SummaryConfig

    page = (Path(__file__).parents[2] / "docs" / "netconfbench-scores.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(reasoning_summary:.*?)```", page, re.S)]
    assert len(blocks) == 2
    off, other = (SummaryConfig.parse(b["reasoning_summary"]) for b in blocks)
    assert not off.enabled and other.enabled and other.model == "qwen2.5-7b-instruct"
