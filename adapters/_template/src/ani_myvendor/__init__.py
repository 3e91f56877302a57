"""ANI adapter for MyVendor devices (template package; see README.md)."""

from ani_myvendor.adapter import MyVendorAdapter

__all__ = ["MyVendorAdapter"]
