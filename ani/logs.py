"""structlog loggers that import structlog at their first event.

``log = get_logger(__name__)`` at a module's top costs nothing until ``log.warning(...)`` runs:
importing structlog (which imports rich's tracebacks for its console renderer) is some 0.15 s of
CPU, and every lab server (NETCONF, SSH), campaign worker and ``ani`` command imports
``ani.lab`` while few of them ever log there. The logger is structlog's own
(``structlog.get_logger(name)``) once made; its events, processors and configuration are
structlog's.
"""

from __future__ import annotations

import threading
from typing import Any


class LazyLogger:
    """Forwards every attribute to ``structlog.get_logger(name)``, made at the first use."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        if self._logger is None:
            with self._lock:
                if self._logger is None:
                    import structlog

                    self._logger = structlog.get_logger(self._name)
        return getattr(self._logger, attr)


def get_logger(name: str) -> LazyLogger:
    """A :class:`LazyLogger` named ``name`` (a module's ``__name__``)."""
    return LazyLogger(name)
