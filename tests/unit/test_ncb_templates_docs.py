"""docs/netconfbench-templates.md: the runnable example runs, and the page documents every
generator, every link medium and every subnet attribute the module has."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from ani.netconfbench import templates

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "netconfbench-templates.md"


def test_runnable_example_runs(monkeypatch, capsys):
    section = DOC.read_text().split("## Runnable example", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python block under '## Runnable example'"
    monkeypatch.chdir(ROOT)
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_ncb_templates"})
    assert "OSPF point-to-point adjacency" in capsys.readouterr().out


def test_every_generator_medium_and_attribute_is_documented():
    text = DOC.read_text()
    for model in (templates.Choice, templates.RandomSubnet, templates.SubnetAttr, templates.Format, templates.Interface):
        kind = typing.get_args(model.model_fields["type"].annotation)[0]
        assert f"| `{kind}` |" in text, kind
    for medium, pattern in templates.MEDIA.items():
        assert f"`{medium}` -> `{pattern.replace('{n}', '<n>')}`" in text, medium
    for attr in typing.get_args(templates.SubnetAttr.model_fields["attr"].annotation):
        assert f"`{attr}`" in text, attr
