"""Moved to :mod:`ani.device.commands` (a command list as FRR takes it, merged onto a device
config): the observer and the scripted agent use it too, below NetConfBench (docs/architecture.md,
"Layers"). ``ani.netconfbench.commands`` is the same module object."""

import sys

from ani.device import commands

sys.modules[__name__] = commands
