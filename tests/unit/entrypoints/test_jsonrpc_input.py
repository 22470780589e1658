"""The one bounded parse every transport runs on a client's message before the SDK sees it."""

import json

import pytest

from memory.entrypoints.jsonrpc_input import (MAX_DEPTH, MAX_MESSAGE_BYTES, MalformedMessage,
                                              parse_message)

PING = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":%s}}'


def refused(raw: bytes) -> MalformedMessage:
    with pytest.raises(MalformedMessage) as caught:
        parse_message(raw)
    return caught.value


@pytest.mark.parametrize("raw,code,says", [
    (PING % (b"[" * 100_000 + b"]" * 100_000), -32600, "nested more than"),
    (PING % (b"{\"a\":" * 5_000 + b"1" + b"}" * 5_000), -32600, "nested more than"),
    (PING % b"1e999999", -32600, "out of range"),
    (PING % b"-1e400", -32600, "out of range"),
    (PING % (b"9" * 100_000), -32600, "a number of 100000 characters"),
    (PING % (b"0." + b"1" * 5_000), -32600, "out of range"),
    (PING % b"NaN", -32700, "NaN is not a JSON value"),
    (PING % b"-Infinity", -32700, "not a JSON value"),
    (PING % b'"caf\xe9"', -32700, "not UTF-8"),
    (PING % b'"\xed\xa0\x80"', -32700, "not UTF-8"),  # a surrogate encoded as UTF-8
    (PING % b'"\\ud83d cut"', -32600, "lone UTF-16 surrogate"),
    (PING % b'{"k":1,"k":2}', -32600, "'k' appears twice"),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}', -32600, "twice"),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}', -32600, '"params" must be'),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}', -32600, '"params" must be'),
    (b'{"jsonrpc":"2.0","id":7,"method":["ping"]}', -32600, '"method" must be'),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, '"id" must be'),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, '"id" must be'),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, '"id" must be'),
    (b'{"jsonrpc":"1.0","id":7,"method":"ping"}', -32600, '"jsonrpc" must be "2.0"'),
    (b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', -32600, "batch"),
    (b'"ping"', -32600, "a JSON object is expected"),
    (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":', -32700, "not JSON"),
    (b"", -32700, "not JSON"),
])
def test_each_malformed_class_is_refused_with_its_json_rpc_code(raw, code, says):
    error = refused(raw)
    assert error.code == code and says in str(error), str(error)
    assert len(error.message) <= 300 and "\n" not in error.message


@pytest.mark.parametrize("raw,request_id", [
    (PING % (b"[" * 100_000 + b"]" * 100_000), 7),  # the id is read though the rest is refused
    (b'{"jsonrpc":"2.0","id":"a-7","method":"ping","params":{"x":"\xff"}}', "a-7"),
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/ca', 7),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":' + b"9" * 5_000 + b',"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":3,"result":{"x":[}', None),  # a reply's id is one of ours
])
def test_the_error_carries_the_requests_id_when_it_can_be_read(raw, request_id):
    assert refused(raw).request_id == request_id


def test_a_broken_reply_of_the_client_is_marked_so_nobody_answers_it():
    assert refused(b'{"jsonrpc":"2.0","id":3,"result":{"x":[}').is_reply
    assert not refused(b'{"jsonrpc":"2.0","id":3,"method":"x","params":[}').is_reply


def test_well_formed_messages_pass_as_they_are():
    nested = {"jsonrpc": "2.0", "id": "n", "method": "tools/call", "params": {
        "name": "memory_write", "arguments": {"text": 'brackets [[ {{ in a "string" \\ ' * 500}}}
    deep = {"v": 1}
    for _ in range(MAX_DEPTH - 4):
        deep = {"v": deep}
    for message in (nested, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": deep},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "result": {"roots": []}},
                    {"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "no"}},
                    {"jsonrpc": "2.0", "id": 4, "method": "x", "params": {"n": -12.5e3,
                                                                           "big": 10 ** 30}}):
        assert parse_message(json.dumps(message).encode()) == message


def test_a_message_of_the_largest_size_parses_within_the_bound():
    text = "x" * (MAX_MESSAGE_BYTES - 200)
    raw = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"t": text}}).encode()
    assert parse_message(raw)["params"]["t"] == text
