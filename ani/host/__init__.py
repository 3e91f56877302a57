"""What the SDK needs from the machine it runs on: packages, programs, kernel features, root.

- :mod:`ani.host.programs`: the program registry, read from ``ani/host/packages.txt`` (the one
  list of system packages; ``scripts/setup.sh`` installs from it): :func:`program`,
  :func:`require`, and the fault journal.
- :mod:`ani.host.checks`: every check of ``ani doctor`` (programs, kernel features probed in a
  throw-away network namespace, root, FRR's accounts) and :func:`ani.host.checks.unfit`, the
  check ``ani run`` / ``ani campaign run`` make before the first lab.
- :mod:`ani.host.capacity`: how many labs this machine holds at once and the default ``--jobs``
  (cores, available memory, a run's measured peak memory).
- :mod:`ani.host.proc`: host-side commands with a timeout (``run``, ``ExecResult``) and process identity.
- the ``ani doctor`` command is :mod:`ani.cli_doctor` (it reads topology files, a layer above).
"""

from __future__ import annotations

from ani.host.programs import LEVELS, Program, packages, program, registry, require

__all__ = ["LEVELS", "Program", "packages", "program", "registry", "require"]
