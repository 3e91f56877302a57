"""The set-up list is right about this machine (issue 11, section 1): every program the registry
names (ani/host/packages.txt; tests/unit/test_host_registry.py checks that the code runs no
other) is installed, and dpkg says it belongs to the package the list names for it, so
scripts/setup.sh, which installs those packages, provides every program the code runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ani.host import checks, programs

pytestmark = pytest.mark.integration

if shutil.which("dpkg") is None:  # pragma: no cover - the project's machine is Debian
    pytest.skip("needs dpkg (Debian/Ubuntu)", allow_module_level=True)


def _aliases(path: str) -> list[str]:
    """``path``, its real path, and their merged-/usr twins (dpkg records /bin/ip for /usr/sbin/ip)."""
    out: list[str] = []
    for p in (path, os.path.realpath(path)):
        for q in (p, *(p.replace(a, b, 1) for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"),
                                                          ("/bin/", "/usr/bin/"), ("/sbin/", "/usr/sbin/"))
                       if p.startswith(a))):
            if q not in out:
                out.append(q)
    return out


def owners(path: str) -> set[str]:
    """The packages dpkg says own ``path`` (or one of its aliases)."""
    found: set[str] = set()
    for p in _aliases(path):
        res = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        for line in res.stdout.splitlines():
            if line.startswith("diversion by") or ": " not in line:
                continue
            pkgs, _, owned = line.partition(": ")
            if owned.strip() == p:
                found |= {x.strip().split(":")[0] for x in pkgs.split(",")}
    return found


def test_dpkg_agrees_that_each_listed_package_provides_its_programs():
    wrong = {}
    for name, prog in programs.registry().items():
        path = prog.locate()
        assert path is not None, f"{prog.shown} is not installed here ({prog.fix})"
        got = owners(path)
        if prog.package not in got:
            wrong[name] = (path, prog.package, sorted(got))
    assert not wrong, f"program -> (path, listed package, dpkg's owners): {wrong}"


def test_every_listed_package_is_installed():
    for pkg in programs.packages():
        res = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        assert "install ok installed" in res.stdout, f"{pkg}: {res.stdout or res.stderr}"


def test_the_owner_lookup_can_say_no():
    assert owners("/usr/lib/frr/frr-reload.py") == {"frr-pythontools"}
    assert "frr-pythontools" not in owners("/usr/lib/frr/zebra")
    assert owners("/usr/sbin/ip") == {"iproute2"}  # recorded as /bin/ip and /sbin/ip (merged /usr)


def test_every_level_can_run_on_this_machine(lab_host):
    """ani doctor's checks all pass here (the project's machine has every package)."""
    shipped = {"zebra", "staticd", "ospfd", "bgpd"}
    assert [f.line() for f in checks.findings() if f.breaks(shipped)] == []


def test_an_installed_wheel_ships_the_list_and_its_doctor_reads_it(tmp_path):
    """The list ships in the wheel (ani/host/packages.txt): the wheel's own ani doctor runs from
    an unpacked copy (outside the source tree) and reads it there."""
    import sys
    import zipfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(root)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    (whl,) = wheels.glob("ani_sdk-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(whl) as z:
        assert "ani/host/packages.txt" in z.namelist()
        z.extractall(site)
    probe = ("import ani.host.programs as p, sys; print(p.PACKAGES_FILE); "
             "sys.argv = ['ani', 'doctor', '--level', 'a0']; from ani.cli import app; app()")
    res = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(site), "COLUMNS": "200"}, timeout=120)
    assert res.stdout.splitlines()[0] == str(site / "ani" / "host" / "packages.txt"), res.stdout + res.stderr
    assert "frr-pythontools" in res.stdout and "levels that can run here" in res.stdout
    assert res.returncode == 0, res.stdout + res.stderr
