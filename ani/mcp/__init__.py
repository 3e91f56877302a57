"""MCP server for any ANI adapter (``ani mcp serve``): :mod:`ani.mcp.server` builds it,
:mod:`ani.mcp.cli` is the command.

Needs the ``mcp`` extra (the official MCP Python SDK); importing this package does not, so the
``ani`` command works without it.
"""
