"""Faults below the ANI during a run (issue 14, §1): kinds (:mod:`ani.faults.kinds`), the
schedule drawn from a seed and a rate (:mod:`ani.faults.schedule`) and the per-run session that
injects, verifies, watches and removes them (:mod:`ani.faults.session`). See ``docs/faults.md``."""

from ani.faults.base import FaultKind, FaultSpec, fault_kinds, get_fault_kind, register

__all__ = ["FaultKind", "FaultSpec", "fault_kinds", "get_fault_kind", "register"]
