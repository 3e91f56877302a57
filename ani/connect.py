"""An opened adapter on a running lab: ``ani.connect``.

    import ani

    with ani.connect("demo", "a1") as adapter:           # the lab `ani lab up ... --lab demo` started
        print([t.name for t in adapter.tools()])
        print(adapter.call("get_running_config", {"device": "r1"}).text)
    # the adapter's sessions are closed here; the lab is still running

The lab is attached (:meth:`ani.lab.Lab.attach`), never owned: closing the adapter, leaving
the ``with`` block or the process ending leaves the lab as it is (``ani lab down ID`` removes
it). Several adapters may be connected to one lab at once, from one process or several, at the
same level or at different ones; each call of one adapter is safe from several threads
(docs/protocol.md, "Concurrency").

``ani mcp serve`` opens its adapter through :func:`open_on_lab` as well, so the errors below
are the same there.
"""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING, Any

from ani.errors import AniError, CapabilityMissing, ConfigError, LabNotFound

if TYPE_CHECKING:
    from ani.lab.protocol import Devices

#: the level when neither the call nor ``$ANI_LEVEL`` names one
DEFAULT_LEVEL = "a1"


def connect(lab_id: str, level: str | None = None, *, blocklist: bool | str = False, **options: Any) -> Any:
    """The adapter of ``level`` on the running lab ``lab_id``, opened.

    Args:
        lab_id: the id of a running lab (``ani lab up FILE --lab ID`` prints it; ``ani lab
            status`` lists them), started by any process.
        level: an adapter name (``a0``, ``a1``, ``a2``, ``a3t``, ``a3r``, ``a4``, or a
            registered third-party one); default ``$ANI_LEVEL``, else ``a1``.
        blocklist: the blocklist ablation, as a campaign cell's ``blocklist:`` (``ani run
            --blocklist``): True for the platform's default blocklist, or the path of a YAML
            blocklist file; only at ``a0`` and ``a1`` (the levels whose calls carry CLI command
            lines), refused at any other.
        **options: the adapter's options, as in a campaign cell's ``options:`` (e.g.
            ``command_timeout_s=5`` at a1; docs/mcp.md lists each level's).

    Returns:
        The opened adapter (a :class:`ani.adapters.base.BaseAdapter` for the built-in levels).
        ``adapter.close()``, or leaving ``with ani.connect(...) as adapter:``, closes its
        sessions and leaves the lab running (``with`` calls ``open()`` once more, which an
        opened built-in adapter takes as a no-op). Its calls are logged to an in-memory
        trajectory (``adapter.trajectory``).

    Raises:
        LabNotFound: no lab ``lab_id`` is running (the message names the labs that are), or it
            is still starting or already stopped.
        ConfigError: an unknown level (:class:`~ani.errors.LevelError`, naming the known ones),
            an option the level does not take (naming the level's options) or a value it cannot
            use, ``blocklist`` at a level whose calls it cannot inspect, or a blocklist file
            that does not load (all before the lab is attached, except the last).
        CapabilityMissing: the level cannot work on this machine (what ``ani doctor`` reports).
        AniError: the adapter could not be opened.
    """
    from ani.registry import ENV_VAR, check_blocklist, resolve_name

    name = resolve_name(level or os.environ.get(ENV_VAR) or DEFAULT_LEVEL)
    if blocklist:
        check_blocklist(name)
    return open_on_lab(attach_running(lab_id), name, options, blocklist=blocklist)


def attach_running(lab_id: str) -> Any:
    """The running lab ``lab_id``, attached (:meth:`ani.lab.Lab.attach`: never removed by it).

    Raises LabNotFound: no such lab (names the known ones), or its status is not ``up``
    (still starting, or stopped)."""
    from ani.lab.lab import Lab
    from ani.lab.state import lab_ids

    lab = Lab.attach(lab_id)
    status = lab._state.status if lab._state is not None else "?"
    if status != "up":
        others = [i for i in lab_ids() if i != lab_id]
        raise LabNotFound(f"lab {lab_id!r} is not running (status {status}: "
                          f"{'still starting' if status == 'creating' else 'stopped'}); "
                          f"other labs: {', '.join(others) or 'none'}")
    return lab


def open_on_lab(lab: Devices, name: str, options: dict[str, Any], trajectory: Any = None, *,
                check_host: bool = True, blocklist: bool | str = False) -> Any:
    """Create the adapter ``name`` (a resolved name, :func:`ani.registry.resolve_name`) on
    ``lab`` with ``options`` and open it. ``trajectory``: an :class:`ani.trajectory.Trajectory`
    to log its calls to (default: a fresh in-memory one). ``check_host=False``: the caller has
    checked the host for the level already (:func:`ani.host.checks.unfit`). ``blocklist``: wrap
    it in the blocklist ablation (True: the platform's default; a path: a YAML blocklist file;
    ``a0`` and ``a1`` only).

    Raises CapabilityMissing (the level cannot work here, before anything is created),
    ConfigError (an option or option value the adapter cannot use; a blocklist at a level whose
    calls it cannot inspect, or one that does not load), AniError (open failed)."""
    from ani.host.checks import describe_unfit, unfit
    from ani.registry import create_adapter

    bad = unfit([name]) if check_host else {}  # refused before anything opens (ani doctor's words)
    if bad:
        raise CapabilityMissing(describe_unfit({name: name}, bad, noun="level"))
    kwargs: dict[str, Any] = {"options": dict(options)}
    if trajectory is not None:
        kwargs["trajectory"] = trajectory
    try:
        adapter = create_adapter(name, lab, blocklist=blocklist, **kwargs)
    except AniError:
        raise
    except (ValueError, TypeError, LookupError, OSError) as exc:
        # an option value the adapter cannot use (e.g. command_timeout_s=abc, platform=nope)
        given = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "none"
        raise ConfigError(
            f"{name} options ({given}): {type(exc).__name__}: {' '.join(str(exc).split())}"
        ) from None
    try:
        adapter.open()
    except BaseException:
        _close_quietly(adapter)  # what a half-done open() holds (its own sessions; never the lab)
        raise
    return adapter


def _close_quietly(adapter: Any) -> None:
    try:
        adapter.close()
    except Exception:  # noqa: BLE001 - the open() failure is the error to report
        pass


class _CallableModule(types.ModuleType):
    """This module, callable as :func:`connect`: ``ani.connect`` is both the module (so ``import
    ani.connect as m; m.open_on_lab`` works) and the function (``ani.connect("demo", "a1")``),
    whichever was imported first."""

    def __call__(self, lab_id: str, level: str | None = None, *, blocklist: bool | str = False,
                 **options: Any) -> Any:
        return connect(lab_id, level, blocklist=blocklist, **options)


sys.modules[__name__].__class__ = _CallableModule
