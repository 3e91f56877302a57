"""docs/vendor-adapter.md's worked examples run as written, on real labs:

- ``platform``: A1 driven by a derived platform file (data only) on a real two-router lab;
- ``platform-suite``: that page's pytest module (the conformance suite on A1 with that file),
  saved to the tmp dir and run by pytest;
- ``plugin``: the bash block (copy the template, rename it to acme, ``pip install -e .``, check
  the registry, run its tests) in a throw-away virtualenv whose ``python``/``pip`` come first on
  PATH. The venv sees this checkout's venv's packages through a ``.pth`` line (``site.addsitedir``) (so nothing is fetched and
  the project's own venv is not touched); the package is built without build isolation
  (hatchling, from the test extra).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "vendor-adapter.md"


def block(marker: str, lang: str) -> str:
    m = re.search(rf"<!-- example:{re.escape(marker)} -->\s*```{lang}\n(.*?)\n```", DOC.read_text(), re.S)
    assert m, f"no example:{marker} block in {DOC}"
    return m.group(1)


@pytest.mark.timeout(600)
def test_platform_example_runs(lab_host, run_doc_example):
    out = run_doc_example("vendor-adapter.md", "platform", timeout=300).splitlines()
    assert out == ["True True True", "not_allowed", "rolled_back False"]


@pytest.mark.timeout(900)
def test_platform_suite_example_passes(lab_host, tmp_path):
    test = tmp_path / "test_acme_conformance.py"
    test.write_text(block("platform-suite", "python") + "\n")
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(test)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=840)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    assert re.search(r"\b13 passed\b", proc.stdout), proc.stdout[-2000:]


@pytest.mark.timeout(900)
def test_plugin_example_runs(lab_host, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    # this venv's packages, with their own .pth files (ani's editable install among them)
    (purelib / "ani-checkout.pth").write_text(f"import site; site.addsitedir({sysconfig.get_path('purelib')!r})\n")
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "WORK": str(tmp_path),
           "VIRTUAL_ENV": str(venv), "PIP_NO_BUILD_ISOLATION": "0", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("ANI_LEVEL", None)
    script = block("plugin", "bash")
    script = script.replace("python -m pytest -q tests/", "python -m pytest -q -p no:cacheprovider tests/")
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=840)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert "ani_acme.adapter:AcmeAdapter" in lines, proc.stdout[-2000:]
    assert re.search(r"\b26 passed\b", proc.stdout), proc.stdout[-2000:]
    assert (tmp_path / "ani-acme" / "src" / "ani_acme" / "adapter.py").is_file()
    assert list(purelib.glob("ani_acme-0.1.0.dist-info")), "not installed into the throw-away venv"
    assert not list(Path(sysconfig.get_path("purelib")).glob("ani_acme*")), "installed into the project's venv"
    assert not (ROOT / "adapters" / "_template" / "src" / "ani_acme").exists()  # the copy was renamed, not the source
