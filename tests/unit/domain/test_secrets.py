"""Secret-shaped text is redacted with a visible marker and located by line."""

import pytest

from builders import World, make_doc

from memory.domain.health import SecretNote
from memory.domain.secrets import redact_lines

SECRETS = [
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE", "the key is {} for staging"),
    ("aws-secret-key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = {}"),
    ("bearer-token", "abcdef0123456789abcdef", "curl -H 'Authorization: Bearer {}'"),
    ("url-password", "hunter2pass", "DATABASE_URL=postgres://admin:{}@db.local:5432/app"),
    ("github-token", "ghp_" + "a1" * 18, "export GH={}"),
    ("password-assignment", "correct-horse-battery", "password: {}"),
]


@pytest.mark.parametrize("kind,secret,template", SECRETS)
def test_each_secret_shape_is_redacted(kind, secret, template):
    (clean,), findings = redact_lines([template.format(secret)])
    assert f"[REDACTED:{kind}]" in clean
    assert findings[0].line == 1
    assert secret not in clean


def test_private_key_blocks_are_redacted_whole():
    lines = ["before", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXk", "-----END OPENSSH PRIVATE KEY-----", "after"]
    clean, findings = redact_lines(lines)
    assert clean[0] == "before" and clean[4] == "after"
    assert all("REDACTED:private-key" in x for x in clean[1:4])
    assert [f.line for f in findings] == [2, 3, 4]


def test_ordinary_prose_is_untouched():
    lines = ["the token budget is 30 seconds", "password reset flow sends an email",
             "see https://example.com/docs for details"]
    assert redact_lines(lines) == (tuple(lines), ())


def test_search_and_get_redact_and_health_lists_the_note():
    body = ("# Staging access\n\nConnect to staging with the deploy account.\n"
            "DATABASE_URL=postgres://deploy:s3cretpass@staging.db:5432/app\n")
    w = World([make_doc("Repos/alpha/Notes/Staging.md", body)])
    w.refresh("full")
    item = w.service.search("connect staging deploy account").items[0]
    assert "s3cretpass" not in item.text and "[REDACTED:url-password]" in item.text
    got = w.service.get("Repos/alpha/Notes/Staging.md")
    assert got.redacted_lines == (4,)
    assert all("s3cretpass" not in line.text for line in got.lines)
    listed = w.service.health().notes_with_secrets
    assert listed == (SecretNote(path="Repos/alpha/Notes/Staging.md", lines=(4,),
                                 kinds=("url-password",)),)
