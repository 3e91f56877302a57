"""The scripted baseline agent's planner: a task's request -> the typed service changes
(``ani.intents`` change mappings) that carry it out.

::

    form = task_form(task)                         # "intent" (a structured file) or "ticket" (none)
    req = request_of(task)                         # the class's file structure, from either form
    changes = changes_for(task, configs)           # [{"type": "tenant-site", "action": ...}, ...]

The plan is the task class's reference change set (:meth:`ani.scenario.tasks.base.TaskClass.
reference_changes`, one per class in :mod:`ani.scenario.tasks.reference`), the same one the
observer compares a run with: the baseline agent takes it from the task class rather than
being the reference (so editing this agent changes no measurement). It reads only the task
(request text and attached files, never hidden tests) and ``configs``, the routers'
configurations the agent read (``{router: DeviceConfig}``, nftables included).

The request is read by the class (:meth:`~ani.scenario.tasks.base.TaskClass.read_request`):
the attached file (intent form) or the ticket's text through the class's ``parse_ticket``
(ticket form), exactly the structure of the intent form's file. Every error is
:class:`ani.agents.scripted.AgentFailed` naming the file / field / service (the task class's
TaskError, same message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ani.agents.base import AgentTask
from ani.agents.scripted import AgentFailed
from ani.device.model import DeviceConfig
from ani.errors import TaskError
from ani.scenario.tasks import TASK_CLASSES, TaskClass, get_task_class
from ani.scenario.tasks.reference import MAX_ROUNDS, onboard

__all__ = ["MAX_ROUNDS", "TASK_FILES", "changes_for", "onboard", "request_of", "task_form"]


#: the attached file of each shipped task class's intent form (the classes' ``intent_file``)
TASK_FILES: dict[str, str] = {name: cls.intent_file for name, cls in TASK_CLASSES.items() if isinstance(cls, type)}


def _class(task: AgentTask) -> TaskClass:
    if task.task_class not in TASK_CLASSES:
        raise AgentFailed(f"the scripted agent knows no task class {task.task_class!r} "
                          f"(known: {', '.join(TASK_CLASSES)})")
    return _failed(get_task_class, task.task_class)


def _failed(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, a TaskError re-raised as AgentFailed (same message)."""
    try:
        return fn(*args)
    except TaskError as exc:
        raise AgentFailed(str(exc)) from None


def task_form(task: AgentTask) -> str:
    """``"intent"`` when the task carries its class's structured file, ``"ticket"`` when it
    carries no file (the request text holds the parameters). Raises AgentFailed for an unknown
    class, or files that are not the class's file."""
    cls = _class(task)
    if not task.files:
        return "ticket"
    if cls.intent_file not in task.files:
        raise AgentFailed(f"{task.task_class}: expected the attached file {cls.intent_file}, "
                          f"got {', '.join(sorted(task.files))}")
    return "intent"


def request_of(task: AgentTask) -> dict[str, Any]:
    """The request as the class's file structure (a mapping), from the YAML file (intent form)
    or from the request text through the class's ``parse_ticket`` (ticket form). Raises
    AgentFailed naming the file (or ticket) and what is wrong."""
    return _failed(_class(task).read_request, task.request, dict(task.files))


def changes_for(task: AgentTask, configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """The typed service changes (mappings, in apply order) that carry out ``task`` on the
    network whose routers run ``configs``: the task class's reference change set (module doc).
    Raises AgentFailed."""
    cls = _class(task)
    return _failed(cls.reference_changes, _failed(cls.read_request, task.request, dict(task.files)), configs)
