"""API tokens: issued with a salted digest, matched in constant time, parsed from bearer values."""

import pytest

from memory.domain.errors import InvalidRequest
from memory.domain.tokens import (READ_SCOPE, WRITE_SCOPE, ApiToken, ProofRole, TokenScope,
                                  bearer_value, may_change_memory, owner_proof, same_secret,
                                  split_bearer)

SALT = bytes(range(16))


def issue(secret="s3cret", name="ci-bot", scope=TokenScope.READ):
    return ApiToken.issue(name=name, scope=scope, token_id="0123456789abcdef", secret=secret,
                          salt=SALT, created="2026-01-01T00:00:00+00:00")


def test_the_record_keeps_a_salted_digest_that_matches_only_the_secret():
    token = issue()
    assert "s3cret" not in repr(token)
    assert token.matches("s3cret")
    assert not token.matches("s3cret ") and not token.matches("") and not token.matches("S3CRET")


def test_the_same_secret_under_another_salt_gives_another_digest():
    other = ApiToken.issue(name="ci-bot", scope=TokenScope.READ, token_id="0123456789abcdef",
                           secret="s3cret", salt=bytes(16), created="x")
    assert other.digest != issue().digest


def test_write_implies_read():
    assert TokenScope.READ.grants == (READ_SCOPE,)
    assert TokenScope.WRITE.grants == (READ_SCOPE, WRITE_SCOPE)


def test_only_a_write_scope_may_change_memory():
    assert may_change_memory(TokenScope.WRITE.grants)
    assert not may_change_memory(TokenScope.READ.grants) and not may_change_memory([])


def test_a_bearer_value_round_trips_and_foreign_values_are_not_ours():
    value = bearer_value("0123456789abcdef", "a_b-c")
    assert split_bearer(value) == ("0123456789abcdef", "a_b-c")  # the secret may hold '_'
    for foreign in ("", "aim_", "aim_0123456789abcdef", "aim_0123456789abcdef_",
                    "aim_XYZ_secret", "ghp_0123456789abcdef_x", "Bearer aim_0123456789abcdef_x"):
        assert split_bearer(foreign) is None, foreign


@pytest.mark.parametrize("name", ["", " ", "-lead", "a" * 65, "with space", "new\nline", "é"])
def test_a_token_name_must_be_a_short_identifier(name):
    with pytest.raises(InvalidRequest):
        issue(name=name)


def test_scopes_parse_strictly():
    assert TokenScope.parse(" Write ") is TokenScope.WRITE
    with pytest.raises(InvalidRequest):
        TokenScope.parse("admin")


def test_an_owner_proof_holds_for_one_secret_one_side_one_port_and_one_nonce():
    proof = owner_proof("s" * 43, ProofRole.SERVER, 8765, "ab" * 16)
    assert proof == owner_proof("s" * 43, ProofRole.SERVER, 8765, "ab" * 16)
    others = {owner_proof("t" * 43, ProofRole.SERVER, 8765, "ab" * 16),
              owner_proof("s" * 43, ProofRole.CLIENT, 8765, "ab" * 16),
              owner_proof("s" * 43, ProofRole.SERVER, 8766, "ab" * 16),
              owner_proof("s" * 43, ProofRole.SERVER, 8765, "cd" * 16)}
    assert proof not in others and len(others) == 4
    assert "s" * 43 not in proof


def test_the_owner_secret_is_compared_whole_and_any_text_is_refused_without_error():
    assert same_secret("s" * 43, "s" * 43)
    assert not same_secret("s" * 43, "s" * 42)
    assert not same_secret("s" * 43, "")
    assert not same_secret("s" * 43, "\u00e9" * 43)
