"""ani.mcp.stdio.diagnose: which JSON-RPC error each malformed wire line gets (logic only; the real
server over stdio is tests/integration/test_mcp_adversarial.py)."""

from __future__ import annotations

import json

import pytest

from ani.mcp.stdio import diagnose


@pytest.mark.parametrize("line, code, rid", [
    ("{", -32700, None),
    ('{"jsonrpc":"2.0","id":1,"method":"x",}', -32700, None),
    ("[]", -32600, None),
    ('[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]', -32600, None),
    ('"a string"', -32600, None),
    ('{"id":7,"method":"tools/list"}', -32600, 7),
    ('{"jsonrpc":"1.0","id":"x","method":"tools/list"}', -32600, "x"),
    ('{"jsonrpc":"2.0","id":"a","method":5}', -32600, "a"),
    ('{"jsonrpc":"2.0","id":"\\ud800","method":"x"}', -32600, None),       # id not sendable
    ('{"jsonrpc":"2.0","id":' + "1" * 5000 + ',"method":"x"}', -32600, None),
    ('{"params":{"id":3,"x":' + "[" * 3000 + "]" * 3000 + '},"jsonrpc":"2.0","id":12,"method":"x"}', -32600, 12),
    ('{"params":{"id":3,"x":' + "[" * 3000 + "]" * 3000 + '},"jsonrpc":"2.0","method":"x"}', -32600, None),
])
def test_each_malformed_line_gets_the_error_it_calls_for(line, code, rid):
    err = diagnose(line)
    assert err is not None and (err.code, err.id) == (code, rid)
    assert err.message.startswith("Parse error" if code == -32700 else "Invalid Request")
    wire = json.loads(err.line())  # the reply line: compact JSON-RPC, id null when unreadable
    assert err.line().endswith("}\n") and "\n" not in err.line()[:-1]
    assert wire == {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": err.message}}


@pytest.mark.parametrize("line", [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":"r","result":{}}',
])
def test_a_line_the_sdk_accepts_passes_through(line):
    assert diagnose(line) is None
