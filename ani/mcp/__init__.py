"""MCP server for any ANI adapter (``ani mcp serve``): :mod:`ani.mcp.server` builds it,
:mod:`ani.mcp.cli` is the command.

Needs the official MCP Python SDK (``mcp``, 1.x or 2.x: :mod:`ani.mcp.sdk`; a core dependency of
ani-sdk); importing this package does not, so the rest of the ``ani`` command works even where it
is missing, and ``ani mcp serve`` then says how to install it.
"""
