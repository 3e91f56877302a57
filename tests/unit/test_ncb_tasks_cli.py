"""``ani tasks import / export / show`` through the real command line (typer's runner on
``ani.cli.app``): one line per task, errors with file and JSON path (exit 2) and nothing
written then, export files the importer accepts unchanged, no file overwritten silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from ani.cli import app
from ani.netconfbench.task import dump_task, load_task

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "netconfbench"
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_import_prints_one_line_per_task_and_copies_only_with_into(tmp_path):
    res = invoke("tasks", "import", str(DATA))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "ios-static.json: 'Static Routing': 2 nodes, 2 testcases (1 command, 1 expected_result), 2 solutions, "
        "platform cisco-ios",
        "static-backup.json: 'Static route with a backup': 2 nodes, 3 testcases (2 command, 1 expected_result), "
        "1 solution, platform frr",
    ]
    into = tmp_path / "imported"
    res = invoke("tasks", "import", str(DATA / "static-backup.json"), "--into", str(into))
    assert res.exit_code == 0, res.output
    assert "copied 1 task file into" in res.stderr
    copied = into / "static-backup.json"
    assert copied.read_text() == dump_task(load_task(DATA / "static-backup.json"))
    assert load_task(copied) == load_task(DATA / "static-backup.json")


def test_one_bad_file_and_nothing_is_copied(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(DATA, src)
    bad = json.loads((src / "static-backup.json").read_text())
    bad["testcases"][0]["expected_output"] = "(("
    (src / "zz-bad.json").write_text(json.dumps(bad))
    (src / "zz-broken.json").write_text('{"task_name": ')
    res = invoke("tasks", "import", str(src), "--into", str(tmp_path / "out"))
    assert res.exit_code == 2
    errors = res.stderr.splitlines()
    assert errors[0].startswith(f"error: {src / 'zz-bad.json'}: testcases[0].expected_output: not a valid regular "
                                "expression: missing ), unterminated subpattern")
    assert errors[1] == f"error: {src / 'zz-broken.json'}: not valid JSON: line 1, column 15: Expecting value"
    assert not (tmp_path / "out").exists()


def test_export_gives_files_the_importer_accepts_unchanged(tmp_path):
    out = tmp_path / "out"
    res = invoke("tasks", "export", str(DATA / "ios-static.json"), str(DATA / "static-backup.json"), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [f"wrote {out / 'ios-static.json'}", f"wrote {out / 'static-backup.json'}"]
    for name in ("ios-static.json", "static-backup.json"):
        assert load_task(out / name) == load_task(DATA / name)
    # exporting the export again changes nothing, byte for byte, and needs no --force
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    res = invoke("tasks", "export", str(out), "--out", str(out))
    assert res.exit_code == 0, res.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first
    assert "\r\n" in json.loads(first["ios-static.json"])["startup_configs"]["NewYork"]  # CRLF kept


def test_export_overwrites_a_differing_file_only_with_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "static-backup.json").write_text("{}\n")
    res = invoke("tasks", "export", str(DATA / "static-backup.json"), "--out", str(out))
    assert res.exit_code == 2
    assert res.stderr.strip() == f"error: {out / 'static-backup.json'}: exists and differs (--force overwrites it)"
    assert (out / "static-backup.json").read_text() == "{}\n"
    res = invoke("tasks", "export", str(DATA / "static-backup.json"), "--out", str(out), "--force")
    assert res.exit_code == 0 and load_task(out / "static-backup.json") == load_task(DATA / "static-backup.json")


def test_two_inputs_of_one_name_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    shutil.copy(DATA / "static-backup.json", tmp_path / "a" / "static-backup.json")
    res = invoke("tasks", "export", str(DATA / "static-backup.json"), str(tmp_path / "a"), "--out", str(tmp_path / "o"))
    assert res.exit_code == 2 and "is also the target of" in res.stderr
    assert not (tmp_path / "o").exists()


def test_show_summarises_a_task_and_its_checks():
    res = invoke("tasks", "show", str(DATA / "ios-static.json"))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "links:" in lines and "  NewYork S0/0 <-> Washington S0/0" in lines
    assert "platform: cisco-ios (NewYork cisco-ios, Washington cisco-ios): cannot run here, the lab runs FRR routers only" in lines
    assert "  harvested-0007 (harvested-from-validated-run): 2 lines on NewYork" in lines
    assert "  Static Route from NewYork to Washington  ->  route check on NewYork" in lines
    res = invoke("tasks", "show", "--checks", str(DATA / "static-backup.json"))
    assert res.exit_code == 0
    assert [c["kind"] for c in json.loads(res.stdout)] == ["command", "route", "command"]


def test_show_a_bad_file(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"intents": []}')
    res = invoke("tasks", "show", str(p))
    assert res.exit_code == 2 and res.stderr.startswith(f"error: {p}: task_name: required; intents: must not be empty")


# -- new-user check: encodings and templates where a task file is wanted ---------------------------

BOM = b"\xef\xbb\xbf"
TEMPLATE = DATA.parents[2] / "intents" / "netconfbench" / "templates" / "static-backup.yaml"


def test_a_task_file_with_a_utf8_bom_imports_and_exports_without_it(tmp_path):
    src = tmp_path / "in" / "static-backup.json"
    src.parent.mkdir()
    src.write_bytes(BOM + (DATA / "static-backup.json").read_bytes())
    assert load_task(src) == load_task(DATA / "static-backup.json")
    res = invoke("tasks", "import", str(src), "--into", str(tmp_path / "imported"))
    assert res.exit_code == 0, res.output
    res = invoke("tasks", "export", str(src), "--out", str(tmp_path / "out"))
    assert res.exit_code == 0, res.output
    for written in (tmp_path / "imported" / src.name, tmp_path / "out" / src.name):
        data = written.read_bytes()
        assert not data.startswith(BOM) and data.decode("utf-8") == dump_task(load_task(src))


def test_a_task_file_in_another_encoding_is_named_clearly(tmp_path):
    text = (DATA / "static-backup.json").read_text().replace("Static route", "Statische Route für")
    latin = tmp_path / "latin.json"
    latin.write_bytes(text.encode("latin-1"))
    res = invoke("tasks", "import", str(latin))
    assert res.exit_code == 2
    line = " ".join(res.stderr.split())
    col = text.splitlines()[1].index("ü") + 1
    assert line == (f"error: {latin}: cannot read: not UTF-8 text: byte 0xfc at line 2, column {col} is not UTF-8 "
                    "(the file is probably Latin-1 or Windows-1252: save it as UTF-8)"), line
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes(text.encode("utf-16"))
    res = invoke("tasks", "show", str(utf16))
    assert res.exit_code == 2
    assert " ".join(res.stderr.split()) == f"error: {utf16}: cannot read: not UTF-8 text: it looks like UTF-16 (save it as UTF-8)"


def test_show_and_import_of_a_template_say_it_is_one_and_how_to_instantiate_it(tmp_path):
    for cmd in ("show", "import"):
        res = invoke("tasks", cmd, str(TEMPLATE))
        assert res.exit_code == 2
        line = " ".join(res.stderr.split())
        assert line.startswith(f"error: {TEMPLATE}: a task template (its parameters: declare the fields that vary), "
                               "not a task file:"), line
        assert f"ani tasks instantiate {TEMPLATE} --seed N" in line and "not valid JSON" not in line
    as_json = tmp_path / "tpl.json"  # a template written as JSON: not imported as a task with {fields}
    import yaml

    as_json.write_text(json.dumps(yaml.safe_load(TEMPLATE.read_text())))
    res = invoke("tasks", "import", str(as_json))
    assert res.exit_code == 2 and "a task template" in res.stderr and "ani tasks instantiate" in res.stderr
    res = invoke("tasks", "import", str(TEMPLATE.parent))
    assert res.exit_code == 2
    assert "no *.json task files in this directory (it holds bgp-prefix-filter.yaml, ospf-p2p-area.yaml, " \
           "static-backup.yaml: templates? make task files from one with 'ani tasks instantiate" in " ".join(res.stderr.split())
    plain = tmp_path / "notes.yaml"
    plain.write_text("task_name: x\n")
    res = invoke("tasks", "show", str(plain))
    assert res.exit_code == 2 and "a NetConfBench task file is JSON" in res.stderr


def test_import_of_a_cisco_task_says_plainly_it_cannot_run_here(tmp_path):
    """issue 23 §6: the importer accepted the draft's Cisco IOS task without a word; it is valid
    NetConfBench (imported, exit 0), and stderr says it cannot run here in the runner's words."""
    res = invoke("tasks", "import", str(DATA), "--into", str(tmp_path / "in"))
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[0] == (
        f"warning: {DATA / 'ios-static.json'}: startup_configs: the task's configurations are for cisco-ios, "
        "not FRR: the lab runs FRR routers only, so this task cannot run here (ani run --task-file and a "
        "campaign's tasks: refuse it)")
    assert "static-backup.json" not in res.stderr.splitlines()[0]
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["ios-static.json", "static-backup.json"]
    show = invoke("tasks", "show", str(DATA / "ios-static.json"))
    assert "platform: cisco-ios (NewYork cisco-ios, Washington cisco-ios): cannot run here" in show.stdout
    assert "cannot run here" not in invoke("tasks", "show", str(DATA / "static-backup.json")).stdout


def test_the_import_warning_and_the_runners_refusal_say_the_same():
    from ani.errors import TaskFormatError
    from ani.netconfbench.lab import platform_problem, refuse_other_platforms

    task = load_task(DATA / "ios-static.json")
    try:
        refuse_other_platforms(task, "x.json")
    except TaskFormatError as exc:
        assert str(exc) == f"{platform_problem(task, 'x.json')} (refused before any lab)"
    else:
        raise AssertionError("a cisco-ios task was not refused")
    assert platform_problem(load_task(DATA / "static-backup.json"), "y.json") is None


def test_a_misspelt_task_key_is_named_with_the_key_it_misspells(tmp_path):
    """issue 23 §6: ``testcase`` (for ``testcases``) was reported as ``testcases: required``
    only; a misspelt optional key (``startup_config``) was kept silently and the task ran
    without its startup configs. An unknown key not close to a task key stays an extension."""
    doc = json.loads((DATA / "static-backup.json").read_text())
    one = dict(doc)
    one["testcase"] = one.pop("testcases")
    (tmp_path / "a.json").write_text(json.dumps(one))
    two = dict(doc)
    two["startup_config"] = two.pop("startup_configs")
    (tmp_path / "b.json").write_text(json.dumps(two))
    ext = dict(doc, x_origin="netconfbench draft 00")
    (tmp_path / "c.json").write_text(json.dumps(ext))
    res = invoke("tasks", "import", str(tmp_path / "a.json"), str(tmp_path / "b.json"), str(tmp_path / "c.json"))
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        f"error: {tmp_path / 'a.json'}: testcase: not a task key (did you mean 'testcases'?); testcases: required",
        f"error: {tmp_path / 'b.json'}: startup_config: not a task key (did you mean 'startup_configs'?)",
    ]
    assert invoke("tasks", "import", str(tmp_path / "c.json")).exit_code == 0
