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
    assert "platform: cisco-ios (NewYork cisco-ios, Washington cisco-ios)" in lines
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
