"""docs/netconfbench.md: the format example runs as written and prints what the page says it
prints; the error messages the page shows are the ones the loader gives."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from ani.errors import TaskFormatError
from ani.netconfbench.task import parse_task

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "netconfbench.md").read_text()


def test_the_format_example_prints_what_the_page_says(run_doc_example):
    out = run_doc_example("netconfbench.md", "format", timeout=120)
    m = re.search(r"<!-- example:format -->.*?```\n\nprints\n\n```text\n(.*?)```", PAGE, re.S)
    assert m, "the 'prints' block after example:format"
    assert out == m.group(1)


def test_the_draft_example_prints_what_the_page_says(run_doc_example):
    out = run_doc_example("netconfbench.md", "draft", timeout=120)
    m = re.search(r"<!-- example:draft -->.*?```\n\nprints\n\n```text\n(.*?)```", PAGE, re.S)
    assert m, "the 'prints' block after example:draft"
    assert out == m.group(1)


def _errors_block() -> list[str]:
    m = re.search(r"## Errors\n.*?```text\n(.*?)```", PAGE, re.S)
    assert m
    return m.group(1).splitlines()


BASE = json.loads((ROOT / "tests" / "data" / "netconfbench" / "static-backup.json").read_text())


def _with(change):
    d = copy.deepcopy(BASE)
    change(d)
    return d


CASES = {
    "topology.links[2]": _with(lambda d: d["topology"]["links"].append("r1 eth-c <-> r3 eth-c")),
    'startup_configs["New York"]': _with(lambda d: d["startup_configs"].__setitem__("New York", "x")),
    "ground_truth_configs[1]": _with(lambda d: d["ground_truth_configs"].append(d["ground_truth_configs"][0])),
    "testcases[1].expected_result.colour": _with(lambda d: d["testcases"][1]["expected_result"].__setitem__("colour", 1)),
    "intents: required": _with(lambda d: (d.pop("intents"), d.__setitem__("testcases", []))),
    "testcases[1].expected_result.distance": _with(lambda d: d["testcases"][1]["expected_result"].__setitem__("distance", 300)),
    "task_name: must not be empty": _with(lambda d: (d.__setitem__("task_name", ""), d["intents"].__setitem__(1, "  "))),
}


@pytest.mark.parametrize("key", list(CASES))
def test_the_error_lines_of_the_page_are_the_loaders(key):
    line = next(ln for ln in _errors_block() if ln.startswith(f"tasks/x.json: {key}"))
    with pytest.raises(TaskFormatError) as exc:
        parse_task(CASES[key], source="tasks/x.json")
    assert str(exc.value) == line


def test_the_encoding_and_template_lines_of_the_page_are_the_loaders(tmp_path, monkeypatch):
    from ani.netconfbench.task import load_task

    (tmp_path / "tasks").mkdir()
    text = (ROOT / "tests" / "data" / "netconfbench" / "static-backup.json").read_text()
    lines = text.splitlines()
    lines[1] = lines[1].replace("Static route", "Statische Route f\u00fcr")
    (tmp_path / "tasks" / "x.json").write_bytes("\n".join(lines).encode("latin-1"))
    tpl = tmp_path / "templates"
    tpl.mkdir()
    (tpl / "static-backup.yaml").write_bytes((ROOT / "intents" / "netconfbench" / "templates" / "static-backup.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    for path in ("tasks/x.json", "templates/static-backup.yaml"):
        line = next(ln for ln in _errors_block() if ln.startswith(f"{path}: ") and ("cannot read" in ln or "template" in ln))
        with pytest.raises(TaskFormatError) as exc:
            load_task(path)
        assert str(exc.value) == line
