"""``import ani.protocol`` loads no module of ``ani.testing``, ``ani.lab`` or ``ani.host`` (issue 28
§1): the protocol an agent or adapter author reads is a bottom layer (docs/architecture.md,
"Layers"). It loaded ``ani.testing.fake_lab``, ``ani.lab.topology`` and ``ani.host.programs``
through ``protocol -> strict_schema -> testing``. In a fresh interpreter: the test process has
loaded everything already. (The layers contract itself is ``lint-imports``, which ``make test``
runs before pytest.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("ani.testing", "ani.lab", "ani.host")


def _modules_after(statement: str) -> list[str]:
    """Every module name in ``sys.modules`` of a fresh interpreter after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                         check=True)
    return json.loads(out.stdout)


def _loaded_after(statement: str) -> list[str]:
    return [m for m in _modules_after(statement) if m.startswith("ani")]


def _forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_import_ani_protocol_loads_no_testing_lab_or_host_module():
    loaded = _loaded_after("import ani.protocol")
    assert "ani.protocol" in loaded and "ani.strict_schema" in loaded
    assert _forbidden(loaded) == []


def test_the_check_sees_what_a_lab_import_loads():
    # the same probe on a module that does load the lab: the check above can fail
    loaded = _loaded_after("import ani.lab.topology")
    assert "ani.lab.topology" in _forbidden(loaded)


def test_a_campaign_runs_modules_load_no_scipy():
    # scipy.stats costs ~1.1 s of CPU to load; a run (its worker process, `ani run`) grades its
    # known answer with ani.campaign.known_answer, which imports ani.stats, and computes no
    # interval: only a report does, and it loads scipy when it first computes one
    loaded = {m.split(".")[0] for m in _modules_after("import ani.campaign.executors.worker, ani.campaign.execute, "
                                                       "ani.campaign.extensions, ani.campaign.known_answer, ani.stats")}
    assert "ani" in loaded and "scipy" not in loaded and "matplotlib" not in loaded
    assert "scipy.stats" in _modules_after("import ani.stats; ani.stats.wilson(1, 2)")
