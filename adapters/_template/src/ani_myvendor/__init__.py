"""ANI adapter for MyVendor devices (template package; see README.md)."""

from .adapter import MyVendorAdapter

__all__ = ["MyVendorAdapter"]
