"""The scripted baseline agent's ``troubleshoot`` diagnosis: the task class's
(:mod:`ani.scenario.tasks.diagnose`, where the diagnosis lives since it is the troubleshoot
class's reference change set), its errors raised as this agent's AgentFailed (same message).

::

    d = diagnose({"tenant": "blue", "site": "blue3", "cannot_reach": ["blue1"]}, configs)
    d.findings, d.checked, d.changes
"""

from __future__ import annotations

from typing import Any

from ani.agents.scripted import AgentFailed
from ani.device.model import DeviceConfig
from ani.errors import TaskError
from ani.scenario.tasks import diagnose as _diagnose
from ani.scenario.tasks.diagnose import Diagnosis, plist_decision

__all__ = ["Diagnosis", "diagnose", "plist_decision"]


def diagnose(symptom: dict[str, Any], configs: dict[str, DeviceConfig]) -> Diagnosis:
    """:func:`ani.scenario.tasks.diagnose.diagnose`; raises AgentFailed (its TaskError's message)."""
    try:
        return _diagnose.diagnose(symptom, configs)
    except TaskError as exc:
        raise AgentFailed(str(exc)) from None
