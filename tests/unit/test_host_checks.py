"""ani.host.checks and ``ani doctor``: findings, the levels a gap breaks, the one-line refusal of
``ani run`` / ``ani campaign run``, the lab's up-front check (issue 11, section 1).

A fake packages file makes programs present or missing for real (files in tmp_path); the
kernel probes are replaced where a test is about programs only (tests/integration runs them).
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from ani.cli import app
from ani.errors import CapabilityMissing
from ani.host import checks, programs


@pytest.fixture
def host(tmp_path, monkeypatch):
    """Registered: ip (lab), frr-reload.py (a1..a4), git (a3r, a4), bgpd (daemon), isisd (daemon);
    present: ip and bgpd. Root; probes succeed."""
    lib = tmp_path / "lib"
    (tmp_path / "bin").mkdir()
    lib.mkdir()
    f = tmp_path / "packages.txt"
    f.write_text(
        "iproute2         ip                   lab          links\n"
        f"frr-pythontools  {lib}/frr-reload.py  a1,a2,a3t,a3r,a4  reload\n"
        "git              git                  a3r,a4       sot\n"
        f"frr              {lib}/bgpd           daemon       BGP\n"
        f"frr              {lib}/isisd          daemon       IS-IS\n"
    )
    for p in (tmp_path / "bin" / "ip", lib / "bgpd"):
        p.write_text("#!/bin/sh\n")
        p.chmod(0o755)
    monkeypatch.setattr(programs, "PACKAGES_FILE", f)
    monkeypatch.setattr(programs, "EXTRA_PATH", ())
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(checks.os, "geteuid", lambda: 0)
    monkeypatch.setattr(checks, "kernel_findings", lambda levels=None, lab_only=False: [])
    monkeypatch.setattr(checks, "privilege_findings", lambda: [])
    programs.entries.cache_clear()
    yield tmp_path
    programs.entries.cache_clear()


def _by_name(found):
    return {f.name.rsplit("/", 1)[-1]: f for f in found}


def test_findings_say_what_is_there_and_what_each_gap_breaks(host):
    found = _by_name(checks.findings())
    assert found["ip"].ok and found["ip"].detail == str(host / "bin" / "ip")
    reload = found["frr-reload.py"]
    assert not reload.ok and reload.fix == "apt-get install frr-pythontools"
    assert reload.breaks() == ("a1", "a2", "a3t", "a3r", "a4")
    assert reload.line() == f"{host}/lib/frr-reload.py is missing (apt-get install frr-pythontools)"
    assert found["git"].breaks() == ("a3r", "a4")
    # a daemon breaks every level only where a topology runs it
    assert found["isisd"].breaks() == () and found["isisd"].breaks({"isisd"}) == programs.LEVELS
    assert found["bgpd"].breaks({"bgpd"}) == ()  # present


def test_unfit_lists_only_the_levels_that_cannot_run(host):
    bad = checks.unfit(["a0", "a2", "a3r"])
    assert list(bad) == ["a2", "a3r"]
    assert [f.name.rsplit("/", 1)[-1] for f in bad["a2"]] == ["frr-reload.py"]
    assert [f.name.rsplit("/", 1)[-1] for f in bad["a3r"]] == ["frr-reload.py", "git"]
    assert checks.unfit(["a0"]) == {}
    assert list(checks.unfit(["a0"], daemons={"isisd"})) == ["a0"]


def test_the_refusal_is_one_line_naming_cells_items_and_packages(host):
    cells = {"a0": "a0", "a2": "a2", "a3r": "a3r", "a4-x": "a4"}
    line = checks.describe_unfit(cells, checks.unfit(set(cells.values())))
    assert "\n" not in line
    assert line == (
        f"cells a2, a3r, a4-x cannot run on this machine: {host}/lib/frr-reload.py is missing "
        "(apt-get install frr-pythontools); git is missing (apt-get install git) [a3r, a4-x]; "
        "to install them all: apt-get install frr-pythontools git; see 'ani doctor'")
    one = checks.describe_unfit({"a2": "a2"}, checks.unfit(["a2"]))
    assert one == (f"cell a2 cannot run on this machine: {host}/lib/frr-reload.py is missing "
                   "(apt-get install frr-pythontools); see 'ani doctor'")


def test_the_refusal_names_a_package_once_and_leaves_out_what_follows_from_it(host, monkeypatch):
    # a machine without frr (two of its daemons, one of them only for a topology that runs it)
    # and without iproute2: the probe that needs ip was "not tested", which follows from ip
    (host / "lib" / "bgpd").unlink()
    (host / "bin" / "ip").unlink()
    untested = checks.Finding(name="veth links", kind="kernel", ok=False, detail="not tested: ip missing",
                              fix="load the veth module (modprobe veth)", needed_by=("lab",))
    monkeypatch.setattr(checks, "kernel_findings", lambda levels=None, lab_only=False: [untested])
    cells = {"a0": "a0", "a2": "a2"}
    line = checks.describe_unfit(cells, checks.unfit(set(cells.values()), daemons={"bgpd", "isisd"}))
    assert line == (
        "cells a0, a2 cannot run on this machine: ip is missing (apt-get install iproute2); "
        "frr: bgpd, isisd are missing (apt-get install frr); "
        f"{host}/lib/frr-reload.py is missing (apt-get install frr-pythontools) [a2]; "
        "to install them all: apt-get install frr frr-pythontools iproute2; see 'ani doctor'")
    # a probe that failed for a reason of its own is named
    failed = checks.Finding(name="veth links", kind="kernel", ok=False, detail="RTNETLINK answers: Operation not supported",
                            fix="load the veth module (modprobe veth)", needed_by=("lab",))
    monkeypatch.setattr(checks, "kernel_findings", lambda levels=None, lab_only=False: [failed])
    line = checks.describe_unfit({"a0": "a0"}, checks.unfit(["a0"]))
    assert "veth links: RTNETLINK answers: Operation not supported (load the veth module (modprobe veth))" in line


def test_the_lab_check_names_everything_a_lab_lacks(host, monkeypatch):
    checks.check_lab()  # ip is there; frr-reload.py and git are not the lab's
    with pytest.raises(CapabilityMissing, match=r"cannot start a lab here: .*isisd is missing \(apt-get install frr\)"):
        checks.check_lab({"isisd"})
    (host / "bin" / "ip").unlink()
    with pytest.raises(CapabilityMissing, match=r"ip is missing \(apt-get install iproute2\)"):
        checks.check_lab()


def test_privilege_and_probe_findings_without_root(monkeypatch):
    monkeypatch.setattr(checks.os, "geteuid", lambda: 1000)
    root = [f for f in checks.privilege_findings() if f.name == "root"][0]
    assert not root.ok and root.detail == "euid 1000" and root.breaks() == programs.LEVELS
    kernel = checks.kernel_findings()
    assert kernel and all(not f.ok and f.detail == "not tested: needs root" for f in kernel)
    assert [f.name for f in checks.kernel_findings(["a1"])] == [
        "network namespaces", "mount and UTS namespaces", "veth links", "nftables", "user namespaces",
        "memory cgroup controller"]
    a0 = [f.name for f in checks.kernel_findings(["a0"])]
    assert "A0 sandbox (bwrap)" in a0 and "cgroup v1 memory and pids controllers" in a0


def test_a_failing_probe_is_a_finding_with_the_kernels_words(monkeypatch):
    monkeypatch.setattr(checks.os, "geteuid", lambda: 0)
    monkeypatch.setattr(checks, "_probe", lambda argv: "Error: Unknown device type." if "veth" in argv else None)
    veth = [f for f in checks.kernel_findings(["a1"]) if f.name == "veth links"][0]
    assert not veth.ok and veth.breaks() == programs.LEVELS
    assert veth.line() == "veth links: Error: Unknown device type. (load the veth module (modprobe veth))"


def test_ani_doctor_table_fix_and_exit_codes(host, monkeypatch):
    import ani.cli_doctor as hcli

    monkeypatch.setattr(hcli, "shipped_daemons", lambda: {"zebra", "bgpd"})
    res = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert res.exit_code == 1, res.output
    out = " ".join(res.output.split())
    assert "MISSING" in out and "frr-pythontools" in out
    assert f"missing: {host}/lib/frr-reload.py is missing (apt-get install frr-pythontools): breaks a1, a2, a3t, a3r, a4" in out
    assert "missing: git is missing (apt-get install git): breaks a3r, a4" in out
    assert "isisd is missing (apt-get install frr): no level needs it" in out
    assert "fix: apt-get install frr-pythontools git" in out  # isisd's frr is not needed here
    assert "levels that can run here: a0; cannot: a1, a2, a3t, a3r, a4" in out
    assert CliRunner().invoke(app, ["doctor", "--level", "a0"]).exit_code == 0
    assert CliRunner().invoke(app, ["doctor", "--level", "a0", "--level", "a4"]).exit_code == 1
    bad = CliRunner().invoke(app, ["doctor", "--level", "a9"])
    assert bad.exit_code == 2 and "--level: unknown level 'a9'; known: a0" in bad.stderr


def test_ani_doctor_counts_the_daemons_of_the_scenario_given(host, tmp_path):
    topo = tmp_path / "t.yaml"
    topo.write_text("routers:\n  r1: {daemons: [isisd]}\n")
    res = CliRunner().invoke(app, ["doctor", "--level", "a0", "--scenario", str(topo)])
    assert res.exit_code == 1 and re.search(r"isisd is missing \(apt-get install frr\): breaks a0, a1", res.output)
    res = CliRunner().invoke(app, ["doctor", "--scenario", str(tmp_path / "absent.yaml")])
    assert res.exit_code == 2 and "--scenario:" in res.stderr



def test_a_setup_only_package_is_asked_of_dpkg_and_breaks_no_level(host, monkeypatch, tmp_path):
    # python3-venv provides no program the code runs: scripts/setup.sh needs it for the venv
    f = programs.PACKAGES_FILE
    f.write_text(f.read_text() + "python3-venv     -                    setup        the virtualenv\n")
    programs.entries.cache_clear()
    dpkg = tmp_path / "bin" / "dpkg-query"
    dpkg.write_text("#!/bin/sh\necho 'dpkg-query: no packages found matching python3-venv' >&2\nexit 1\n")
    dpkg.chmod(0o755)
    # the fixture's PATH is tmp_path/bin: this dpkg-query is the one asked
    venv = [f for f in checks.setup_findings() if f.name == "python3-venv"]
    assert len(venv) == 1 and not venv[0].ok and venv[0].detail == "not installed"
    assert venv[0].breaks() == ()
    assert venv[0].line() == "package python3-venv is not installed (apt-get install python3-venv)"
    assert checks.unfit(["a0"]) == {}  # the set-up package stops no level
    res = CliRunner().invoke(app, ["doctor", "--level", "a0"])
    assert res.exit_code == 0, res.output
    assert "package python3-venv is not installed (apt-get install python3-venv): needed by scripts/setup.sh" in res.output
    assert re.search(r"^fix: apt-get install .*\bpython3-venv\b", res.output, re.M)
    dpkg.write_text("#!/bin/sh\nprintf 'install ok installed'\n")
    assert [f.ok for f in checks.setup_findings()] == [True]


def test_without_root_the_refusal_names_root_not_the_probes_it_kept_from_running(host, monkeypatch):
    # not root: every kernel probe is "not tested: needs root", which follows from root and is
    # left out of the one line (ani run, ani campaign run) and of the lab's check; a program
    # that is also missing is still named
    monkeypatch.setattr(checks.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(checks, "privilege_findings", lambda: [
        checks.Finding(name="root", kind="privilege", ok=False, detail="euid 1000",
                       fix="run as root (sudo)", needed_by=("lab",))])
    untested = [checks.Finding(name=n, kind="kernel", ok=False, detail="not tested: needs root",
                               fix="...", needed_by=("lab",)) for n in ("network namespaces", "veth links")]
    monkeypatch.setattr(checks, "kernel_findings", lambda levels=None, lab_only=False: untested)
    line = checks.describe_unfit({"a0": "a0"}, checks.unfit(["a0"]))
    assert line == "cell a0 cannot run on this machine: root: euid 1000 (run as root (sudo)); see 'ani doctor'"
    with pytest.raises(CapabilityMissing) as ei:
        checks.check_lab()
    assert str(ei.value) == "cannot start a lab here: root: euid 1000 (run as root (sudo))"
    (host / "bin" / "ip").unlink()
    line = checks.describe_unfit({"a0": "a0"}, checks.unfit(["a0"]))
    assert line == ("cell a0 cannot run on this machine: ip is missing (apt-get install iproute2); "
                    "root: euid 1000 (run as root (sudo)); see 'ani doctor'")
    # ani doctor still lists every probe (its table is the whole picture)
    assert {f.name for f in checks.findings() if f.kind == "kernel"} == {"network namespaces", "veth links"}


def test_ani_doctor_without_root_shows_the_probes_as_untested_not_missing(host, monkeypatch):
    import ani.cli_doctor as hcli

    monkeypatch.setattr(hcli, "shipped_daemons", lambda: {"bgpd"})
    monkeypatch.setattr(checks, "privilege_findings", lambda: [
        checks.Finding(name="root", kind="privilege", ok=False, detail="euid 1000",
                       fix="run as root (sudo)", needed_by=("lab",))])
    untested = [checks.Finding(name=n, kind="kernel", ok=False, detail="not tested: needs root",
                               fix="load the veth module (modprobe veth)", needed_by=("lab",))
                for n in ("network namespaces", "veth links")]
    monkeypatch.setattr(checks, "kernel_findings", lambda levels=None, lab_only=False: untested)
    res = CliRunner().invoke(app, ["doctor", "--level", "a0"], env={"COLUMNS": "250"})
    assert res.exit_code == 1, res.output
    rows = {ln.split()[0] + (" " + ln.split()[1] if ln.split()[0] in ("network", "veth") else ""): ln
            for ln in res.output.splitlines() if ln.strip()}
    assert "untested" in rows["network namespaces"] and "MISSING" not in rows["network namespaces"]
    assert "MISSING" in rows["root"]
    out = " ".join(res.output.split())
    assert "missing: root: euid 1000 (run as root (sudo)): breaks a0" in out
    assert "missing: veth links" not in out and "modprobe veth" not in out  # not the fix for this
    assert ("not tested: network namespaces, veth links: needs root; run ani doctor again after the fix"
            in out)
    assert "levels that can run here: none" in out


def test_netem_is_probed_for_the_latency_fault_and_breaks_no_level(monkeypatch):
    """Faults (issue 14): the full listing probes netem; no level needs it, so a kernel without
    it (this one) leaves every level runnable and says which fault kind is unavailable."""
    monkeypatch.setattr(checks.os, "geteuid", lambda: 0)
    monkeypatch.setattr(checks, "_probe", lambda argv: "Error: Specified qdisc kind is unknown." if "netem" in argv else None)
    netem = [f for f in checks.kernel_findings() if f.name.startswith("netem")]
    assert len(netem) == 1 and not netem[0].ok and netem[0].breaks() == ()
    assert "Specified qdisc kind is unknown" in netem[0].line()
    assert not [f for f in checks.kernel_findings(["a1"]) if f.name.startswith("netem")]
    assert not [f for f in checks.kernel_findings(lab_only=True) if f.name.startswith("netem")]


def test_a_test_only_program_missing_does_not_fail_doctor(host):
    """yangcli / netconfd (issue 23: the NETCONF interop tests) are registered for the test suite
    only: missing, they break no level and ani doctor exits 0, saying what needs them."""
    f = programs.PACKAGES_FILE
    f.write_text(f.read_text() + "yangcli          yangcli              test         interop test\n")
    programs.entries.cache_clear()
    yc = _by_name(checks.findings())["yangcli"]
    assert not yc.ok and yc.breaks() == ()
    assert checks.unfit(["a0"]) == {}
    res = CliRunner().invoke(app, ["doctor", "--level", "a0"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert ("yangcli is missing (apt-get install yangcli): no level needs it (the test suite only: "
            "make test)") in out
