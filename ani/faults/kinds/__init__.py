"""Fault kinds, one module each; every module registers its kind with
:func:`ani.faults.base.register` when imported (``fault_kinds()`` imports them all)."""
