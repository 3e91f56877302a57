"""check-invariants.sh of ``ani scenario export --format containerlab`` (issue 27 §5) run
against real FRR: no Docker here, so ``docker exec clab-<lab>-<node> CMD`` is mapped onto the
same node of an ani lab of the same scenario (its ``enter`` script; ``vtysh`` to the node's
vtysh). The script's verdicts (its bash, ping's summary, its Python judge of FRR 8.4.4's JSON)
are the observer's, on a sample of every kind of brownfield-small's invariants, with every
invariant holding and after a change breaks some."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from ani.observer import Observer
from ani.observer.checks import CommandCheck
from ani.scenario import load_scenario
from ani.scenario.clab_script import invariants_script

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

SCENARIO = "scenarios/brownfield-small.yaml"

SHIM = """#!/bin/sh
# docker exec [-i] clab-x-NODE CMD...: CMD in NODE of the ani lab in $LABDIR
[ "$1" = exec ] || exit 125
shift
[ "$1" = -i ] && shift
node=${1#clab-x-}
shift
if [ "$1" = vtysh ]; then shift; exec "$LABDIR/$node/enter" "$LABDIR/$node/bin/vtysh" "$@"; fi
exec "$LABDIR/$node/enter" "$@"
"""


def _sample(scenario):
    """Two invariants of each kind (isolation apart from reach), and a command check."""
    out, seen = [], {}
    for c in scenario.invariants:
        key = (c.kind, getattr(c, "expect", True))
        if seen.get(key, 0) < 2:
            seen[key] = seen.get(key, 0) + 1
            out.append(c)
    out.append(CommandCheck(router="e2", commands=["show ip route bgp"], expect=r"^B>.? 198\.18\.11\.0/24"))
    return out


def _run(script, tmp_path, labdir, tries):
    (tmp_path / "bin").mkdir(exist_ok=True)
    docker = tmp_path / "bin" / "docker"
    docker.write_text(SHIM)
    docker.chmod(0o755)
    (tmp_path / "check.sh").write_text(script)
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", LABDIR=str(labdir), TRIES=str(tries),
               NEG_PINGS="2")
    res = subprocess.run(["bash", str(tmp_path / "check.sh")], capture_output=True, text=True, env=env, timeout=240)
    verdicts = dict((m.group(2), m.group(1) == "ok") for m in re.finditer(r"^(ok|FAIL) +(.+)$", res.stdout, re.M))
    return res, verdicts


def test_the_script_judges_as_the_observer_on_real_frr(make_lab, tmp_path):
    scenario = load_scenario(SCENARIO)
    lab = make_lab(scenario.topology)
    checks = _sample(scenario)
    assert {c.kind for c in checks} == {"reach", "route", "bgp_session", "loopback", "command"}
    script = invariants_script("x", scenario.name, checks)

    t0 = time.monotonic()
    res, verdicts = _run(script, tmp_path, lab.dir, tries=5)
    run_s = time.monotonic() - t0
    assert res.returncode == 0, res.stdout + res.stderr
    assert verdicts == {c.name: True for c in checks}, res.stdout
    assert res.stdout.rstrip().endswith(f"{len(checks)}/{len(checks)} invariants hold")
    print(f"check-invariants.sh: {len(checks)} checks in {run_s:.2f} s")

    # break some: e2 forwards between tenants (isolation), blue1's prefix leaves e1's list
    assert lab.exec("e2", ["nft", "flush", "chain", "inet", "fw", "forward"]).rc == 0
    res = lab.vtysh("e1", ["configure terminal", "no ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24"])
    assert res.rc == 0, res.stderr
    deadline = time.monotonic() + 15
    while "198.18.11.0/24" in lab.vtysh("e2", "show ip route 198.18.11.0/24").stdout and time.monotonic() < deadline:
        time.sleep(0.2)
    want = {r.name: r.passed for r in Observer(lab).evaluate(checks, bound_s=3.0)}
    assert not all(want.values())
    t0 = time.monotonic()
    res, verdicts = _run(script, tmp_path, lab.dir, tries=1)  # settled: one look, as the observer's last
    assert res.returncode == 1 and verdicts == want, res.stdout
    print(f"after the change: {sorted(n for n, ok in want.items() if not ok)} failed, "
          f"the script's run {time.monotonic() - t0:.2f} s")
