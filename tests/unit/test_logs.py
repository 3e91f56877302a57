"""ani.logs: a module's logger imports structlog at its first event, not before."""

from __future__ import annotations

import subprocess
import sys

import structlog.testing

from ani.logs import get_logger


def test_the_lab_servers_imports_do_not_load_structlog():
    # what a NETCONF server, an SSH server and an `ani` command import: no structlog (~0.15 s)
    code = ("import sys, ani.lab.lab, ani.lab.cleanup, ani.adapters.sandbox, ani.netconf.serve; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('structlog', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_first_event_makes_structlogs_logger_and_logs_through_it():
    log = get_logger("ani.test_logs")
    with structlog.testing.capture_logs() as events:
        log.warning("memcg.tasks_left", cgroup="/x", tasks=2)
        log.info("second", n=1)
    assert events == [{"event": "memcg.tasks_left", "cgroup": "/x", "tasks": 2, "log_level": "warning"},
                      {"event": "second", "n": 1, "log_level": "info"}]
    assert log._logger is not None  # noqa: SLF001 - made once, then kept
