"""Moved to :mod:`ani.host.proc` (running host-side commands with a timeout, identifying
processes): it is the host's, and ``ani.host`` may not import ``ani.lab`` (docs/architecture.md,
"Layers"). The names stay importable from here for code written against the old place."""

from ani.host.proc import ExecResult, check, cmdline, is_alive, kill_and_wait, run, runs_for_lab, start_time

__all__ = ["ExecResult", "check", "cmdline", "is_alive", "kill_and_wait", "run", "runs_for_lab", "start_time"]
