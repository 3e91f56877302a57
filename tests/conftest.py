"""Shared fixtures.

* ``make_lab(topology_or_path, **kw) -> Lab``: a factory returning a lab that is up (converged);
  every lab it made is downed at teardown, also when the test failed. ``kw`` goes to ``Lab``
  (``lab_id``, ``detached``).
* ``tri_lab``: one session-wide lab of ``tests/data/tri-ospf-ibgp.yaml`` (r1 route reflector, r2, r3,
  hosts h1 behind r2 and h2 behind r3). Read-only: tests that change a lab make their own.
* ``TRI``: path of that topology file.

Tests that need root + FRR + namespaces carry the ``integration`` marker; the fixtures skip
them with the reason if the host lacks a capability (never on the project's test machine).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ani.errors import CapabilityMissing

DATA = Path(__file__).parent / "data"
TRI = DATA / "tri-ospf-ibgp.yaml"


def _require_lab_host() -> None:
    from ani.lab.capability import check_capabilities

    try:
        check_capabilities()
    except CapabilityMissing as exc:
        pytest.skip(f"lab unavailable on this host: {exc}")


@pytest.fixture
def make_lab() -> Iterator[Callable[..., object]]:
    from ani.lab.lab import Lab

    _require_lab_host()
    labs: list[Lab] = []

    def factory(topology_or_path, **kw) -> Lab:  # type: ignore[no-untyped-def]
        lab = Lab(topology_or_path, **kw)
        labs.append(lab)
        return lab.up()

    yield factory
    errors = []
    for lab in reversed(labs):
        try:
            lab.down()
        except Exception as exc:  # noqa: BLE001 - down every lab, then report
            errors.append(f"{lab.id}: {exc}")
    assert not errors, f"lab teardown failed: {errors}"


@pytest.fixture(scope="session")
def tri_lab():  # type: ignore[no-untyped-def]
    from ani.lab.lab import Lab

    _require_lab_host()
    lab = Lab(TRI)
    try:
        lab.up()
        yield lab
    finally:
        lab.down()
