"""TLS where a credential or a key travels, and a JWK used only for what it says it is for."""

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from memory.domain.errors import InvalidRequest
from memory.entrypoints.bridge import run_connect
from memory.entrypoints.clients.target import RemoteServer
from memory.entrypoints.http.auth import key_refusal
from memory.entrypoints.http.config import HttpConfig

REMOTE_PLAIN = ["http://memory.example.com/mcp", "HTTP://10.0.0.5:8765/mcp",
                "http://192.168.1.2/mcp", "http://[2001:db8::1]:80/mcp", "http://127.0.0.1.nip.io/mcp"]
LOOPBACK_PLAIN = ["http://127.0.0.1:8765/mcp", "http://localhost:8765/mcp", "http://[::1]:1/mcp",
                  "http://127.0.0.2/mcp"]


def oauth(issuer="https://id.example.com", jwks="/keys.json") -> HttpConfig:
    return HttpConfig.from_flags(None, auth="oauth", issuer=issuer, audience="a", jwks=jwks)


@pytest.mark.parametrize("url", REMOTE_PLAIN)
def test_plain_http_to_another_machine_is_refused_everywhere_a_secret_travels(url):
    with pytest.raises(InvalidRequest, match=r"--issuer .*in the clear; use https://"):
        oauth(issuer=url)
    with pytest.raises(InvalidRequest, match=r"--jwks .*the keys that decide which tokens"):
        oauth(jwks=url)
    with pytest.raises(ValueError, match=r"--url .*bearer token .*in the clear"):
        RemoteServer.parse(url, "AI_MEMORY_TOKEN")
    with pytest.raises(InvalidRequest, match=r"--url .*bearer token .*in the clear"):
        run_connect(None, url, "AI_MEMORY_TOKEN")  # refused before anything is read or sent


@pytest.mark.parametrize("url", LOOPBACK_PLAIN)
def test_plain_http_to_this_machine_and_https_anywhere_are_accepted(url):
    assert oauth(issuer=url, jwks=url.replace("/mcp", "/jwks")).oauth.issuer == url
    assert RemoteServer.parse(url).url == url
    remote = url.replace("http://", "https://").replace("127.0.0.2", "memory.example.com")
    assert oauth(issuer=remote, jwks=remote).oauth.jwks == remote
    assert RemoteServer.parse(remote).url == remote


def jwk(key, **fields) -> jwt.PyJWK:
    algorithm = {rsa.RSAPrivateKey: jwt.algorithms.RSAAlgorithm,
                 ec.EllipticCurvePrivateKey: jwt.algorithms.ECAlgorithm,
                 ed25519.Ed25519PrivateKey: jwt.algorithms.OKPAlgorithm}
    kind = next(c for c in algorithm if isinstance(key, c))
    return jwt.PyJWK({**algorithm[kind].to_jwk(key.public_key(), as_dict=True), **fields})


RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
P256 = ec.generate_private_key(ec.SECP256R1())
P384 = ec.generate_private_key(ec.SECP384R1())
ED = ed25519.Ed25519PrivateKey.generate()


@pytest.mark.parametrize("key,fields,alg,says", [
    (RSA, {"alg": "RS256"}, "PS256", "the key is for RS256, the token says PS256"),
    (RSA, {"alg": "RS512"}, "RS256", "the key is for RS512"),
    (P256, {"alg": "ES256"}, "ES384", "the key is for ES256"),
    (RSA, {}, "ES256", "a RSA key cannot check an ES256 signature"),
    (P256, {}, "RS256", "a EC key cannot check an RS256 signature"),
    (P384, {}, "ES256", "ES256 needs a key on secp256r1"),
    (P256, {}, "ES512", "ES512 needs a key on secp521r1"),
    (ED, {}, "ES256", "a OKP key cannot check"),
    (RSA, {"use": "enc"}, "RS256", "use is 'enc'"),
])
def test_a_key_is_refused_for_an_algorithm_it_does_not_state_or_fit(key, fields, alg, says):
    assert says in key_refusal(jwk(key, **fields), alg)


@pytest.mark.parametrize("key,fields,alg", [
    (RSA, {"alg": "RS256", "use": "sig"}, "RS256"), (RSA, {}, "PS384"), (RSA, {}, "RS512"),
    (P256, {"alg": "ES256"}, "ES256"), (P384, {}, "ES384"), (ED, {}, "EdDSA"),
])
def test_a_key_fitting_the_algorithm_may_check_it(key, fields, alg):
    assert key_refusal(jwk(key, **fields), alg) is None
