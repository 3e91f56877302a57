"""RFC 6242 framing: base:1.0 end-of-message and base:1.1 chunked, fed in any split."""

from __future__ import annotations

import pytest

from ani.netconf.framing import EOM, MAX_CHUNK, Decoder, FramingError, encode

HELLO = b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"/>'
RPC = b'<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><get/></rpc>'


def drain(dec: Decoder) -> list[bytes]:
    out = []
    while (m := dec.next_message()) is not None:
        out.append(m)
    return out


def feed_bytewise(dec: Decoder, data: bytes) -> list[bytes]:
    out = []
    for i in range(len(data)):
        dec.feed(data[i : i + 1])
        out += drain(dec)
    return out


def test_encode_eom_and_chunked():
    assert encode(RPC, chunked=False) == RPC + b"]]>]]>"
    assert encode(b"abc", chunked=True) == b"\n#3\nabc\n##\n"
    assert encode(b"abcdefg", chunked=True, max_chunk=3) == b"\n#3\nabc\n#3\ndef\n#1\ng\n##\n"
    with pytest.raises(ValueError):
        encode(b"", chunked=True)
    with pytest.raises(ValueError):
        encode(b"a]]>]]>b", chunked=False)  # base:1.0 cannot carry its own delimiter


def test_eom_byte_by_byte_and_several_in_one_buffer():
    dec = Decoder()
    data = encode(HELLO, False) + encode(RPC, False) + encode(b"<x/>", False)
    assert feed_bytewise(dec, data) == [HELLO, RPC, b"<x/>"]
    assert dec.buffered == 0
    dec.feed(data)
    assert drain(dec) == [HELLO, RPC, b"<x/>"]


def test_eom_partial_delimiter_is_not_a_message():
    dec = Decoder()
    dec.feed(b"<a>]]>]]")
    assert dec.next_message() is None
    dec.feed(b"]x</a>" + EOM)
    assert dec.next_message() == b"<a>]]>]]]x</a>"


def test_chunked_byte_by_byte_and_several_in_one_buffer():
    msgs = [RPC, b"<b/>" * 50, "<é>ü</é>".encode()]
    data = b"".join(encode(m, True, max_chunk=7) for m in msgs)
    assert feed_bytewise(Decoder(chunked=True), data) == msgs
    dec = Decoder(chunked=True)
    dec.feed(data)
    assert drain(dec) == msgs


def test_chunk_data_may_contain_framing_look_alikes():
    body = b"\n##\n\n#5\n]]>]]>"
    dec = Decoder(chunked=True)
    dec.feed(encode(body, True))
    assert drain(dec) == [body]


def test_switch_to_chunked_after_hello_in_the_same_buffer():
    """The client's hello and its first (chunked) rpc may arrive in one read."""
    dec = Decoder()
    dec.feed(encode(HELLO, False) + encode(RPC, True))
    assert dec.next_message() == HELLO
    dec.chunked = True
    assert dec.next_message() == RPC
    assert dec.next_message() is None


def test_largest_chunk_size_is_accepted_and_waits_for_data():
    dec = Decoder(chunked=True)
    dec.feed(b"\n#%d\n" % MAX_CHUNK + b"x" * 10)
    assert dec.next_message() is None  # a valid header; the data is still to come


@pytest.mark.parametrize(
    "data",
    [
        b"\n#0\nabc\n##\n",  # size 0
        b"\n#012\n",  # leading zero
        b"\n#4294967296\n",  # one more than the maximum
        b"\n#99999999999",  # too many digits, before any LF
        b"\n#1a\n",  # not a number
        b"\n#-1\n",
        b"\n#\n",  # empty size
        b"#3\nabc\n##\n",  # missing LF
        b"x",
        b"\n##\n",  # end-of-chunks without a chunk
        b"\n#3\nabc\n#\n",  # empty size after a good chunk
        b"\n#3\nabcd\n##\n",  # chunk longer than announced
        b"\n#3\nabc\n##x",  # bad end marker
    ],
)
def test_malformed_chunked_framing_raises(data):
    dec = Decoder(chunked=True)
    with pytest.raises(FramingError):
        for i in range(len(data)):  # also byte by byte: the error is seen as early as possible
            dec.feed(data[i : i + 1])
            drain(dec)


def test_max_message_bounds_both_framings():
    dec = Decoder(max_message=10)
    dec.feed(b"x" * 11)
    with pytest.raises(FramingError):
        dec.next_message()
    dec = Decoder(chunked=True, max_message=10)
    dec.feed(b"\n#11\n")
    with pytest.raises(FramingError):
        dec.next_message()
