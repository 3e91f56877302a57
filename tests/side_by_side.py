"""A test module's independent lab cases run side by side, three at a time (issue 28 §4).

Where each case of a module starts its own lab and then mostly waits on FRR, the module computes
every case once, in a module fixture, a few at a time; each case's test then takes its own
outcome, so every case still passes, fails or skips on its own, with its own traceback::

    @pytest.fixture(scope="module")
    def outcomes():
        return side_by_side({seed: functools.partial(_case, seed) for seed in SEEDS})

    @pytest.mark.timeout(1200)  # the module's cases run in the first test's setup
    @pytest.mark.parametrize("seed", SEEDS)
    def test_case(outcomes, seed):
        outcome(outcomes, seed)

A case is a callable of no argument that asserts as a test body does. Its labs come from
:func:`own_labs` (the ``make_lab`` fixture's factory: each lab is unique and downed when the case
ends, also when it fails). What it returns is its outcome; what it raises (a failed assertion,
``pytest.skip``) is raised again by :func:`outcome` in the case's own test.

Three at a time, as ``tests/integration/test_ncb_shipped_tasks.py``: under ``pytest -n 4`` (``make
test``) that is up to twelve labs on the machine. The labs come up one at a time (:data:`UP`): three labs starting
their FRR daemons at once on a loaded machine (load 50-80 on two cores) ran past FRR's start
deadline (then 15 s a router, now ``ani.lab.frr.START_TIMEOUT_S``) where one lab after the other
did not; what overlaps is the rest of a case
(the agent, the grading, the waits on FRR). A runner case takes :func:`runner_deps` for that.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from threading import Lock
from typing import Any

#: cases (labs) of one module at a time
WIDTH = 3
#: held while a case's lab comes up (``Lab.up()``), so that the labs of a module come up one at a time
UP = Lock()


class _Raised:
    """What a case raised, kept to be raised again in its test."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def side_by_side(cases: Mapping[Hashable, Callable[[], Any]], width: int = WIDTH) -> dict[Hashable, Any]:
    """Run every case, ``width`` at a time, in the order given (put the longest first).

    Returns ``{key: what the case returned, or what it raised}``, for :func:`outcome`. Every case
    runs to its end (one failing does not stop the others); a ``KeyboardInterrupt`` or
    ``SystemExit`` is not kept but raised once the cases under way have ended (their labs downed),
    as is an interruption of the waiting thread, the cases not yet started then left out."""

    def run(case: Callable[[], Any]) -> Any:
        try:
            return case()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - pytest's skip/fail are BaseExceptions
            return _Raised(exc)

    pool = ThreadPoolExecutor(width)
    try:
        futures = {key: pool.submit(run, case) for key, case in cases.items()}
        return {key: future.result() for key, future in futures.items()}
    finally:  # interrupted (Ctrl-C, the test's timeout): the cases not started never start
        pool.shutdown(wait=True, cancel_futures=True)


def outcome(outcomes: Mapping[Hashable, Any], key: Hashable) -> Any:
    """The outcome of case ``key``: what it returned; what it raised is raised here again (its
    traceback still points into the case)."""
    got = outcomes[key]
    if isinstance(got, _Raised):
        raise got.exc
    return got


def with_labs(case: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """``case(make_lab, *args)`` as a case of no argument, ``make_lab`` being its own
    :func:`own_labs` (what a test body that took the ``make_lab`` fixture needs)."""

    def run() -> Any:
        with own_labs() as make_lab:
            return case(make_lab, *args)

    return run


@contextmanager
def own_labs() -> Iterator[Callable[..., Any]]:
    """The ``make_lab`` fixture's factory for one case: ``(topology_or_path, **kw) -> Lab`` (up);
    every lab it made is downed when the block ends, also on failure (skips the case where the
    host cannot run labs)."""
    from conftest import _owned_labs

    with _owned_labs() as factory:

        def one_at_a_time(topology_or_path, **kw):  # type: ignore[no-untyped-def]
            with UP:
                return factory(topology_or_path, **kw)

        yield one_at_a_time


def runner_deps(**kw: Any) -> Any:
    """``RunnerDeps(**kw)`` for ``ani.campaign.runner.run_one`` whose labs (the real ones) come up
    one at a time (:data:`UP`); the host check stays the real one."""
    from ani.campaign import runner

    def make_lab(topology: Any, prefix: str | None = None, netconf: bool = True, ssh: bool = True) -> Any:
        lab = runner.real_make_lab(topology, prefix, netconf=netconf, ssh=ssh)  # the run's servers only
        up = lab.up

        def up_alone() -> Any:
            with UP:
                return up()

        lab.up = up_alone
        return lab

    def check_host(levels: list[str], daemons: set[str]) -> Any:
        # the real check, under another name: runner.check_host skips ``_real_check_host`` itself
        # when make_lab is not ``real_make_lab`` (it takes that for fake labs), and these labs are real
        return runner._real_check_host(levels, daemons)

    return runner.RunnerDeps(make_lab=make_lab, check_host=check_host, **kw)
