"""`serve --http` flags: where it binds, what it refuses, which Host and Origin it admits."""

import pytest

from memory.domain.errors import InvalidRequest
from memory.entrypoints.http.config import AuthMode, HttpConfig, parse_bind
from memory.entrypoints.http.guards import Admission


@pytest.mark.parametrize("raw,expected", [
    (None, ("127.0.0.1", 8765)), ("", ("127.0.0.1", 8765)), ("9000", ("127.0.0.1", 9000)),
    ("localhost:0", ("localhost", 0)), ("0.0.0.0:80", ("0.0.0.0", 80)),
    ("[::1]:8765", ("::1", 8765)), (":7000", ("127.0.0.1", 7000)),
])
def test_bind_addresses_parse(raw, expected):
    assert parse_bind(raw) == expected


@pytest.mark.parametrize("raw", ["abc", "1.2.3.4:", "host:70000", "host:-1", "8765x"])
def test_a_malformed_bind_address_is_refused(raw):
    with pytest.raises(InvalidRequest):
        parse_bind(raw)


@pytest.mark.parametrize("bind", ["0.0.0.0:8765", "192.168.1.10:8765", "[::]:8765",
                                  "memory.example.com:8765"])
def test_a_reachable_bind_without_authentication_refuses_to_start(bind):
    with pytest.raises(InvalidRequest, match="without authentication"):
        HttpConfig.from_flags(bind)


def test_a_wildcard_bind_needs_the_public_url_it_is_known_by():
    with pytest.raises(InvalidRequest, match="--public-url"):
        HttpConfig.from_flags("0.0.0.0:8765", auth="tokens")
    config = HttpConfig.from_flags("0.0.0.0:8765", auth="tokens",
                                   public_url="https://memory.example.com/mcp")
    assert config.resource_url == "https://memory.example.com/mcp"


@pytest.mark.parametrize("bind", ["127.0.0.1:0", "localhost:8765", "[::1]:8765", "127.0.0.9:1"])
def test_loopback_binds_take_the_owners_local_credential_unless_told_otherwise(bind):
    assert HttpConfig.from_flags(bind).auth is AuthMode.LOCAL
    assert HttpConfig.from_flags(bind, auth="none").auth is AuthMode.NONE
    assert HttpConfig.from_flags(bind, auth="tokens").auth is AuthMode.TOKENS


@pytest.mark.parametrize("bind", ["0.0.0.0:8765", "192.168.1.10:8765"])
def test_the_local_credential_is_refused_off_loopback(bind):
    with pytest.raises(InvalidRequest, match="loopback only"):
        HttpConfig.from_flags(bind, auth="local", public_url="https://memory.example.com/mcp")


def test_oauth_needs_issuer_audience_and_keys_and_only_oauth_takes_them():
    with pytest.raises(InvalidRequest, match="--audience, --jwks"):
        HttpConfig.from_flags(None, auth="oauth", issuer="https://id.example.com")
    with pytest.raises(InvalidRequest, match="belong to --auth oauth"):
        HttpConfig.from_flags(None, auth="tokens", issuer="https://id.example.com")
    with pytest.raises(InvalidRequest, match="--issuer must be"):
        HttpConfig.from_flags(None, auth="oauth", issuer="id.example.com", audience="a",
                              jwks="/keys.json")
    config = HttpConfig.from_flags(None, auth="oauth", issuer="https://id.example.com",
                                   audience="https://memory.example.com/mcp", jwks="/keys.json")
    assert config.oauth.audience == "https://memory.example.com/mcp"


def test_loopback_hosts_pass_and_foreign_ones_do_not():
    admit = Admission(HttpConfig.from_flags("127.0.0.1:8765"))
    for host in ("127.0.0.1:8765", "localhost:8765", "[::1]:8765", "localhost", "127.0.0.1:1"):
        assert admit.host_ok(host), host
    for host in (None, "", "evil.example.com", "evil.example.com:8765", "127.0.0.1.evil.com",
                 "localhost.evil.com:8765", "127.0.0.1:abc", "0.0.0.0:8765"):
        assert not admit.host_ok(host), host


def test_no_browser_origin_but_the_servers_own_passes_unless_admitted():
    admit = Admission(HttpConfig.from_flags("127.0.0.1:8765",
                                            allow_origins=("https://app.example.com",)))
    assert admit.origin_ok(None)  # a program, not a browser
    assert admit.origin_ok("https://app.example.com")
    assert admit.origin_ok("http://127.0.0.1:8765") and admit.origin_ok("http://localhost:8765")
    for origin in ("http://evil.example.com", "null", "http://localhost:3000",
                   "https://app.example.com.evil.com", "http://app.example.com"):
        assert not admit.origin_ok(origin), origin


def test_the_public_url_admits_its_own_host_and_origin():
    admit = Admission(HttpConfig.from_flags("0.0.0.0:8765", auth="tokens",
                                            public_url="https://memory.example.com/mcp"))
    assert admit.host_ok("memory.example.com") and admit.host_ok("memory.example.com:443")
    assert admit.origin_ok("https://memory.example.com")
    assert not admit.host_ok("other.example.com")
