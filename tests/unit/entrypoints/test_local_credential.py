"""The challenge of the owner's local credential: a server answers only a client that proved
it holds the secret, for its own port, and its answer proves the same back."""

import secrets

import pytest

from memory.domain.tokens import ProofRole, owner_proof
from memory.entrypoints.local_credential import answer_challenge

SECRET = secrets.token_urlsafe(32)
NONCE = "0f" * 16


def challenge(secret=SECRET, port=8765, nonce=NONCE) -> str:
    return f"{nonce} {owner_proof(secret, ProofRole.CLIENT, port, nonce)}"


def test_a_client_holding_the_secret_gets_the_servers_proof_for_its_nonce_and_port():
    assert answer_challenge(SECRET, challenge(), 8765) == owner_proof(
        SECRET, ProofRole.SERVER, 8765, NONCE)


@pytest.mark.parametrize("header", [
    None, "", NONCE, f"{NONCE} ", f"{NONCE} {'0' * 64}",
    challenge(secret=secrets.token_urlsafe(32)),  # another secret
    challenge(port=8766),  # a proof meant for another port (relayed from there)
    f"{NONCE} {owner_proof(SECRET, ProofRole.SERVER, 8765, NONCE)}",  # the server's own proof
    challenge(nonce="short"), challenge(nonce="ZZ" * 16),
    f"{NONCE} \u00e9\u00e9",
])
def test_anything_else_gets_no_answer(header):
    assert answer_challenge(SECRET, header, 8765) is None
