"""ani.mcp.envelope.diagnose: which JSON-RPC error each malformed wire line (or HTTP body) gets, and
the HTTP screen in front of the SDK's app (logic only; the real server over stdio and HTTP is
tests/integration/test_mcp_adversarial.py)."""

from __future__ import annotations

import json

import pytest

from ani.mcp.envelope import diagnose


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
    # a request whose id is not a string or an integer: the SDK reads it as a notification
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', -32600, None),
    ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', -32600, None),
    ('{"jsonrpc":"2.0","id":false,"method":"notifications/initialized"}', -32600, None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"x"}}', -32600, None),
    ('{"jsonrpc":"2.0","id":1.0,"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),          # an HTTP body
    (b'{"jsonrpc":"2.0","id":7,"method":"ping"', -32700, None),
])
def test_each_malformed_line_gets_the_error_it_calls_for(line, code, rid):
    err = diagnose(line)
    assert err is not None and (err.code, err.id) == (code, rid), err
    assert err.message.startswith("Parse error" if code == -32700 else "Invalid Request")
    wire = json.loads(err.line())  # the reply line: compact JSON-RPC, id null when unreadable
    assert err.line().endswith("}\n") and "\n" not in err.line()[:-1]
    assert wire == {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": err.message}}


@pytest.mark.parametrize("line", [
    '{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":"r","result":{}}',
    '{"jsonrpc":"2.0","id":-3,"method":"ping"}',
    '{"jsonrpc":"2.0","id":"","method":"ping"}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"id":null}}',
    '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',  # a client's error reply
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
])
def test_a_line_the_sdk_accepts_passes_through(line):
    assert diagnose(line) is None


def test_an_unreadable_id_is_named_by_its_kind_never_echoed():
    err = diagnose('{"jsonrpc":"2.0","id":{"token":"s3cr3t"},"method":"tools/list"}')
    assert err is not None and "an object" in err.message and "s3cr3t" not in err.message


def _post(app, body: bytes, **headers: str):
    import httpx

    async def go():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
            return await client.post("/mcp", content=body, headers={"content-type": "application/json",
                                                                     **headers})

    import anyio

    return anyio.run(go)


class _Recorder:
    """The SDK's app stand-in: records the bodies it is handed, answers 202."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope, receive, send) -> None:
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def test_the_http_screen_answers_a_malformed_body_and_passes_a_good_one_on_whole():
    from ani.mcp.http_screen import screened

    inner = _Recorder()
    app = screened(inner, host="127.0.0.1")
    res = _post(app, b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}')
    assert res.status_code == 400 and res.headers["content-type"] == "application/json"
    assert res.json()["id"] is None and res.json()["error"]["code"] == -32600
    assert _post(app, b'{"jsonrpc":"2.0","id":3,"method":"tools/list"').json()["error"]["code"] == -32700
    assert _post(app, b'{"id":8,"method":"ping"}').json() == {
        "jsonrpc": "2.0", "id": 8, "error": {"code": -32600, "message": 'Invalid Request: no "jsonrpc": "2.0" member'}}
    assert inner.bodies == []
    good = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert _post(app, good).status_code == 202 and inner.bodies == [good]
    # a request the SDK's Host check refuses is the SDK's to answer, malformed or not
    assert _post(app, b'{"jsonrpc":"2.0","id":null,"method":"ping"}', host="evil.example").status_code == 202
    assert len(inner.bodies) == 2
