"""ani.host.capacity: the rule for how many labs a machine holds and the default --jobs."""

from __future__ import annotations

import pytest

from ani.errors import ConfigError
from ani.host import capacity
from ani.host.capacity import (MIB, HostResources, check_jobs, cpu_jobs, default_jobs, explain_default,
                               lab_bytes, max_labs)

GIB = 1024 * MIB


def test_lab_bytes_grows_per_router() -> None:
    assert lab_bytes(0) == capacity.RUN_BASE_BYTES
    assert lab_bytes(9) - lab_bytes(8) == capacity.ROUTER_BYTES
    assert lab_bytes(27) == capacity.RUN_BASE_BYTES + 27 * capacity.ROUTER_BYTES
    with pytest.raises(ValueError):
        lab_bytes(-1)


@pytest.mark.parametrize(("need", "available", "reserve", "expected"), [
    (500 * MIB, 24 * GIB, 1 * GIB, 47),     # (24 - 1) GiB // 500 MiB = 47.1
    (500 * MIB, 1500 * MIB, 1 * GIB, 1),    # exactly one fits
    (500 * MIB, 1600 * MIB, 0, 3),
    (500 * MIB, 800 * MIB, 1 * GIB, 1),     # none fits: never below 1
    (500 * MIB, 0, 1 * GIB, 1),
])
def test_max_labs(need: int, available: int, reserve: int, expected: int) -> None:
    assert max_labs(need, available, reserve) == expected


def test_max_labs_refuses_a_lab_of_no_size() -> None:
    with pytest.raises(ValueError):
        max_labs(0, 8 * GIB)


@pytest.mark.parametrize(("cores", "per_core", "expected"),
                         [(2, 1.5, 3), (1, 1.5, 1), (4, 1.5, 6), (2, 0.2, 1), (16, 1.0, 16)])
def test_cpu_jobs(cores: int, per_core: float, expected: int) -> None:
    assert cpu_jobs(cores, per_core) == expected


def test_default_jobs_takes_the_smaller_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity, "LABS_PER_CORE", 1.5)
    assert default_jobs(2, 500 * MIB, 24 * GIB) == 3          # cores bound it
    assert default_jobs(32, 500 * MIB, 24 * GIB) == 47        # memory bounds it (48 by cores)
    assert default_jobs(2, 500 * MIB, 1200 * MIB) == 1        # memory holds one
    assert default_jobs(2, 4 * GIB, 2 * GIB) == 1             # not even one fits: still 1


def test_check_jobs_allows_what_fits() -> None:
    check_jobs(1, 500 * MIB, 0)  # one run is always allowed
    check_jobs(47, 500 * MIB, 24 * GIB)


def test_check_jobs_refuses_more_labs_than_fit_and_says_how_many() -> None:
    with pytest.raises(ConfigError) as exc:
        check_jobs(40, 500 * MIB, 8 * GIB)
    assert str(exc.value) == (
        "--jobs 40: this machine holds about 14 labs of this scenario (500 MiB each, 8192 MiB available, "
        "1024 MiB kept free); give --jobs 14 or fewer"
    )


def test_check_jobs_refuses_zero() -> None:
    with pytest.raises(ConfigError, match=r"--jobs 0: at least 1"):
        check_jobs(0, 500 * MIB, 8 * GIB)


def test_explain_default_names_the_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capacity, "LABS_PER_CORE", 1.5)
    line = explain_default(HostResources(cores=2, available_bytes=24 * GIB), 500 * MIB)
    assert line == "--jobs 3 (default: 2 cores x 1.5 labs per core; memory holds 47 labs of 500 MiB)"


def test_this_host_reads_the_machine() -> None:
    host = capacity.this_host()
    assert host.cores >= 1
    assert host.available_bytes > 0
