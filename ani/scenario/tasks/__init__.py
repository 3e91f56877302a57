"""Task classes and their variants (NMAA draft §4.3): one module per class, a shared base.

::

    from ani.scenario.tasks import get_task_class
    task_class = get_task_class("onboard-site")      # or change-set, decommission, troubleshoot
    variant = task_class.variant(scenario, 3)        # deterministic in (scenario, seed)
    variant = task_class.variant(scenario, 3, form="ticket")   # the same change as a terse ticket

The variant's shape, its forms, overrides and superseded invariants: :mod:`ani.scenario.tasks.base`.
Each class: its module (``onboard_site``, ``change_set``, ``decommission``, ``troubleshoot``),
its folder ``intents/<class>/`` (``task.yaml``, ``request.txt``, ``ticket.txt``), and
``docs/tasks.md``. Errors raise TaskError.
"""

from ani.scenario.tasks.base import FORMS, TASK_CLASSES, Draw, TaskClass, TaskVariant, get_task_class, register

# one line per class (listed in base.ORDER, whatever the order of these imports)
from ani.scenario.tasks.onboard_site import OnboardSite  # noqa: E402  isort: skip
from ani.scenario.tasks.change_set import ChangeSet  # noqa: E402  isort: skip
from ani.scenario.tasks.decommission import Decommission  # noqa: E402  isort: skip
from ani.scenario.tasks.troubleshoot import Troubleshoot  # noqa: E402  isort: skip

__all__ = [
    "FORMS",
    "TASK_CLASSES",
    "ChangeSet",
    "Decommission",
    "Draw",
    "OnboardSite",
    "TaskClass",
    "TaskVariant",
    "Troubleshoot",
    "get_task_class",
    "register",
]
