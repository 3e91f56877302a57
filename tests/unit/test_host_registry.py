"""The program registry (ani/host/packages.txt, ani.host.programs): the one list of system
packages, read by the code and by scripts/setup.sh, and a static check that every program the
code runs is in it (issue 11, section 1).

The static check looks at what the code really runs: argv literals (lists whose first word is an
executable on this machine, and the argv of run-like calls), ``program("x")`` / ``require([...])``
calls, the argv lists of the platform files (adapters/*.yaml), and the command words of the
shell scripts the lab and the A0 adapter build (taken from the functions that build them).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ani.errors import HostFault, ProgramMissing
from ani.host import programs

ROOT = Path(__file__).resolve().parents[2]
RUN_LIKE = {"run", "check", "Popen", "exec", "run_capped", "check_output", "check_call", "require"}
#: shell words that are not programs (builtins and keywords of POSIX sh)
SH_WORDS = {"exec", "export", "for", "in", "do", "done", "if", "then", "fi", "echo", "exit", "wait",
            "cd", "set", "true", "false", ":", "[", "test", "read", "printf", "rc=0", "&"}


@pytest.fixture
def fake_packages(tmp_path, monkeypatch):
    """A packages file whose programs live in tmp_path/bin (a PATH program) and tmp_path/lib."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib").mkdir()
    text = (
        "# comment\n"
        f"toolpkg   faketool              lab        a tool on PATH\n"
        f"relpkg    {tmp_path}/lib/reload.py  a1,a2    applies configs   # not a comment\n"
        "venvpkg   -                     setup      no program\n"
    )
    f = tmp_path / "packages.txt"
    f.write_text(text)
    monkeypatch.setattr(programs, "PACKAGES_FILE", f)
    monkeypatch.setattr(programs, "EXTRA_PATH", ())
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    programs.entries.cache_clear()
    yield tmp_path
    programs.entries.cache_clear()


def _exe(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


# --- the data file ---------------------------------------------------------------------------------


def test_the_shipped_file_parses_and_names_known_levels():
    from ani.lab.topology import BASE_DAEMONS, Daemon
    from ani.protocol import Level

    assert programs.LEVELS == tuple(lv.value for lv in Level)
    reg = programs.registry()
    # every FRR daemon a topology may name is registered (and needed where a topology runs it)
    daemons = set(Daemon.__args__)  # type: ignore[attr-defined]
    assert daemons <= set(reg), daemons - set(reg)
    assert all("daemon" in reg[d].needed_by for d in daemons)
    assert all("lab" in reg[d].needed_by for d in BASE_DAEMONS)
    assert reg["frr-reload.py"].package == "frr-pythontools"
    assert reg["frr-reload.py"].levels == ("a1", "a2", "a3t", "a3r", "a4")
    assert reg["git"].levels == ("a3r", "a4") and reg["bwrap"].levels == ("a0",)
    assert reg["ip"].levels == programs.LEVELS


def test_setup_sh_installs_exactly_the_packages_of_the_data_file():
    """scripts/setup.sh's own lines that read the list, run by bash: the same packages, in order."""
    text = (ROOT / "scripts" / "setup.sh").read_text()
    m = re.search(r"^PKG_FILE=.*?^fi$", text, re.M | re.S)
    assert m, "setup.sh must read ani/host/packages.txt"
    out = subprocess.run(["bash", "-c", m.group(0) + '\nprintf "%s\\n" "${PKGS[@]}"'], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == programs.packages()
    assert "frr-pythontools" in out and "git" in out and len(out) == len(set(out))


def test_parse_reads_columns_and_refuses_bad_lines(fake_packages):
    entries = programs.entries()
    assert [(p.name, p.package, p.needed_by) for p in entries] == [
        ("faketool", "toolpkg", ("lab",)), ("reload.py", "relpkg", ("a1", "a2")), ("-", "venvpkg", ("setup",))]
    assert entries[1].used_for == "applies configs   # not a comment"  # the rest of the line
    assert entries[1].path == f"{fake_packages}/lib/reload.py" and entries[0].path is None
    assert programs.packages() == ["toolpkg", "relpkg", "venvpkg"]
    with pytest.raises(HostFault, match=r"x\.txt:2: expected 'package program needed-by used-for'"):
        programs.parse("\npkg prog lab\n", "x.txt")
    with pytest.raises(HostFault, match=r"x\.txt:1: unknown needed-by \['a9'\]"):
        programs.parse("pkg prog a1,a9 text\n", "x.txt")
    with pytest.raises(HostFault, match=r"x\.txt:2: program 'prog' is listed twice \(line 1\)"):
        programs.parse("pkg prog a1 text\npkg2 /usr/bin/prog a2 text\n", "x.txt")


# --- program() / require() ------------------------------------------------------------------------


def test_program_finds_an_installed_program_and_names_the_package_of_a_missing_one(fake_packages, monkeypatch):
    monkeypatch.delenv(programs.FAULT_LOG_ENV, raising=False)
    with pytest.raises(ProgramMissing) as ei:
        programs.program("faketool")
    assert (ei.value.program, ei.value.package) == ("faketool", "toolpkg")
    assert str(ei.value) == "faketool is missing (apt-get install toolpkg)"
    tool = _exe(fake_packages / "bin" / "faketool")
    assert programs.program("faketool") == str(tool)
    tool.chmod(0o644)  # present but not executable: missing
    with pytest.raises(ProgramMissing):
        programs.program("faketool")
    with pytest.raises(ProgramMissing, match=re.escape(f"{fake_packages}/lib/reload.py is missing (apt-get install relpkg)")):
        programs.program("reload.py")
    _exe(fake_packages / "lib" / "reload.py")
    assert programs.program("reload.py") == f"{fake_packages}/lib/reload.py"
    with pytest.raises(HostFault, match="'nosuch' is not registered"):
        programs.program("nosuch")


def test_presence_is_checked_at_every_call_not_cached(fake_packages):
    tool = _exe(fake_packages / "bin" / "faketool")
    programs.require(["faketool", "-x"])
    tool.unlink()
    with pytest.raises(ProgramMissing):
        programs.require(["faketool", "-x"])


def test_require_checks_registered_programs_by_name_or_path_only(fake_packages):
    programs.require(["/bin/sh", "-c", "x"])  # not registered: not checked
    programs.require([])
    with pytest.raises(ProgramMissing, match="faketool is missing"):
        programs.require(["faketool"])
    with pytest.raises(ProgramMissing, match=re.escape(f"{fake_packages}/lib/reload.py is missing")):
        programs.require([f"{fake_packages}/lib/reload.py", "--reload"])
    with pytest.raises(ProgramMissing, match="/opt/x/faketool is missing"):
        programs.require(["/opt/x/faketool"])  # a PATH program given by a path that is not there
    _exe(fake_packages / "bin" / "faketool")
    programs.require([str(fake_packages / "bin" / "faketool")])


def test_missing_programs_are_journalled_in_process_and_in_the_fault_log(fake_packages, monkeypatch):
    log = fake_packages / "faults.jsonl"
    monkeypatch.setenv(programs.FAULT_LOG_ENV, str(log))
    mark = programs.fault_mark()
    for _ in range(2):
        with pytest.raises(ProgramMissing):
            programs.require(["faketool"])
    assert programs.faults_since(mark) == ["faketool is missing (apt-get install toolpkg)"]
    assert programs.read_fault_log(log) == ["faketool is missing (apt-get install toolpkg)"]
    assert programs.read_fault_log(fake_packages / "absent.jsonl") == []
    later = programs.fault_mark()
    assert programs.faults_since(later) == []


def test_proc_run_and_lab_exec_go_through_the_registry(fake_packages, tmp_path):
    from ani.lab import proc
    from ani.lab.lab import Lab
    from ani.lab.topology import parse_topology

    with pytest.raises(ProgramMissing, match="faketool is missing"):
        proc.run(["faketool", "--version"])
    lab = Lab(parse_topology({"routers": {"r1": {}}}), lab_id="regt1")
    lab.dir = tmp_path / "lab"
    with pytest.raises(ProgramMissing, match="faketool is missing"):
        lab.exec("r1", ["faketool"])  # before it looks for the node's entry script


# --- static: every program the code runs is registered --------------------------------------------


def _is_executable_here(word: str) -> bool:
    if word.startswith("/"):
        return os.path.isfile(word) and os.access(word, os.X_OK)
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/lib/frr"])
    return shutil.which(word, path=search) is not None


def _first_word(node: ast.AST) -> tuple[str | None, str | None]:
    """(literal first element, program("x") name) of a list/tuple literal."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None, None
    e = node.elts[0]
    if isinstance(e, ast.Constant) and isinstance(e.value, str):
        return e.value, None
    if isinstance(e, ast.Call) and getattr(e.func, "id", getattr(e.func, "attr", None)) == "program" \
            and e.args and isinstance(e.args[0], ast.Constant):
        return None, e.args[0].value
    return None, None


def code_programs() -> dict[str, list[str]]:
    """``{program: [file:line, ...]}`` of what ani/ runs, found statically."""
    found: dict[str, list[str]] = {}
    for f in sorted((ROOT / "ani").rglob("*.py")):
        rel = f.relative_to(ROOT)
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            where = f"{rel}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name == "program" and node.args and isinstance(node.args[0], ast.Constant):
                    found.setdefault(node.args[0].value, []).append(where)
                if name in RUN_LIKE:
                    for arg in node.args[:2]:  # run(argv), exec(node, argv)
                        lit, via = _first_word(arg)
                        if lit and _is_executable_here(lit):
                            found.setdefault(lit, []).append(where)
                        if via:
                            found.setdefault(via, []).append(where)
            elif isinstance(node, ast.List) and len(node.elts) >= 2:  # an argv literal built anywhere
                lit, _ = _first_word(node)
                if lit and " " not in lit and _is_executable_here(lit):
                    found.setdefault(lit, []).append(where)
    return found


def platform_programs() -> dict[str, list[str]]:
    """argv lists in the platform files (adapters/*.yaml), e.g. the rollback's frr_reload."""
    found: dict[str, list[str]] = {}

    def walk(v: Any, where: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{where}.{k}")
        elif isinstance(v, list):
            if len(v) >= 2 and isinstance(v[0], str) and _is_executable_here(v[0]):
                found.setdefault(v[0], []).append(where)
            for i, x in enumerate(v):
                walk(x, f"{where}[{i}]")

    for f in sorted((ROOT / "adapters").glob("*.yaml")):
        walk(yaml.safe_load(f.read_text()), f.name)
    return found


def _command_words(script: str) -> set[str]:
    """The command words of a POSIX sh script (first word of each simple command)."""
    words: set[str] = set()
    for seg in re.split(r"\|\||&&|[;|\n]|\$\(|\)|`", script):
        toks = seg.split()
        while toks and (toks[0] in SH_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[0])):
            if toks[0] == "for":  # for VAR in ...: no command here
                toks = []
                break
            toks = toks[1:]
        if toks and not toks[0].startswith(("$", '"$', "'")):
            words.add(toks[0].strip("'\""))
    return words


def script_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """Command words of the shell scripts the lab and A0 really build."""
    from ani.adapters import a0
    from ani.lab import frr, netns
    from ani.lab.lab import Lab
    from ani.lab.topology import parse_topology

    scripts: dict[str, str] = {}
    got: list[list[str]] = []
    monkeypatch.setattr(netns, "check", lambda argv, **kw: got.append(list(argv)))
    netns.configure("ns", ["eth0"], [("eth0", "10.0.0.1/24")], gateway="10.0.0.254", forwarding=True)
    scripts["netns.configure"] = got[-1][-1]
    monkeypatch.setattr(frr.proc, "check", lambda argv, **kw: got.append(list(argv)))
    monkeypatch.setattr(frr, "wait_ready", lambda *a, **k: {})
    frr.start("ns", "ps", "r1", ["zebra", "staticd", "bgpd"])
    scripts["frr.start"] = got[-1][-1]
    scripts["frr.uts_argv"] = frr.uts_argv("ns", "r1", "true")[-1]
    lab = Lab(parse_topology({"routers": {"r1": {}}, "hosts": {"h1": {}},
                              "links": [{"a": {"node": "r1", "ifname": "e0"},
                                         "b": {"node": "h1", "ifname": "e0", "address": "10.0.0.2/24"}}]}),
              lab_id="scrt1")
    lab.dir = tmp_path / "lab"
    for node in ("r1", "h1"):
        lab._write_node_scripts(node)
        scripts[f"{node}/enter"] = (lab.dir / node / "enter").read_text()
    scripts["r1/bin/vtysh"] = (lab.dir / "r1" / "bin" / "vtysh").read_text()
    for name, cmd, _ in a0.STATE_PARTS:
        if cmd is not None:  # frr and nft are read by ani.device.state (argv lists, scanned above)
            scripts[f"a0.STATE_PARTS.{name}"] = cmd
    found: dict[str, list[str]] = {}
    for where, text in scripts.items():
        for line in text.splitlines():
            if line.startswith("#"):
                continue
            for w in _command_words(line.replace('"$@"', "")):
                # the harness's own interpreter (frr.remount_python) is no system package's program
                if _is_executable_here(w) and w != sys.executable:
                    found.setdefault(w, []).append(where)
    return found


def _registered(word: str) -> bool:
    return programs.lookup(word) is not None


def test_every_program_the_code_runs_is_registered(tmp_path, monkeypatch):
    found: dict[str, list[str]] = {}
    for part in (code_programs(), platform_programs(), script_programs(tmp_path, monkeypatch)):
        for k, v in part.items():
            found.setdefault(k, []).extend(v)
    # the scan sees what it must (else it would pass by seeing nothing)
    for expected in ("ip", "nft", "ping", "unshare", "vtysh", "frr-reload.py", "/usr/lib/frr/frr-reload.py",
                     "mount", "findmnt", "sysctl", "mkdir", "chown", "grep", "cat"):
        assert any(k == expected or os.path.basename(k) == expected for k in found), expected
    missing = {k: v for k, v in found.items() if not _registered(k)}
    assert not missing, f"programs the code runs that ani/host/packages.txt does not list: {missing}"


def test_the_scan_would_notice_an_unregistered_program(tmp_path):
    """The check can fail: a program run from code but absent from the file is reported."""
    src = tmp_path / "m.py"
    src.write_text('proc.run(["tar", "-x"])\nlab.exec(node, [program("zstd"), "-d"])\n')
    seen = []
    for node in ast.walk(ast.parse(src.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in RUN_LIKE:
            for arg in node.args[:2]:
                seen.append(_first_word(arg))
    assert ("tar", None) in seen and (None, "zstd") in seen
    assert not _registered("tar") and not _registered("zstd")
    assert _command_words("hostname r1; for m in $(findmnt -rn | grep -v x); do mount -o ro \"$m\"; done") == {
        "hostname", "findmnt", "grep", "mount"}
