"""A well-known password in a URL or keyword DSN to a local host is a development credential: still hidden,
said once at refresh; any other credential is a secret as before."""

from __future__ import annotations

import pytest

from memory.domain.dev_credentials import allows_dev_credentials, is_local_host
from memory.domain.note_reading import read_note
from memory.domain.secrets import redact_lines

DEV = [
    "postgres://app:app@localhost:5432/app",
    "DATABASE_URL=postgres://app:app@localhost/app",
    "mysql://root:password@127.0.0.1:3306/shop",
    "postgresql://postgres:postgres@127.0.9.1/db",
    "redis://default:secret@[::1]:6379/0",
    "amqp://guest:CHANGEME@rabbit.local/",
    "postgres://svc:dev@db.test/svc",
    "postgres://svc:example@api.localhost/svc",
    "see `postgres://app:test@localhost/app` for the tests",
    "host=localhost port=5432 user=app password=app dbname=app",  # a libpq keyword DSN
    'host=127.0.0.1 user=app password="postgres"',
    "Server=localhost,1433;Database=shop;User Id=sa;Password=changeme;",  # ADO / ODBC
    "Data Source=localhost;User ID=app;Password=app",
]
REAL = [
    "postgres://app:Xk9#mQ2v@db.internal/app",  # a strong password, a network host
    "postgres://app:app@db.internal/app",  # a weak password, but not on this machine
    "postgres://app:app@10.0.0.7/app",
    "postgres://app:app@localhost.example.com/app",
    "postgres://app:app@evil.localhost.com/app",
    "postgres://app:Xk9mQ2vT7@localhost:5432/app",  # local, but a password someone chose
    "postgres://app:apps@localhost/app",
    "host=localhost user=app password=Xk9mQ2vT7 dbname=app",
    "Server=db.internal;User Id=sa;Password=changeme;",
    "host=localhost user=app password=app host=db.prod",  # one host on the line is not local
    "password: app",  # no host on the line: nothing says where it leads
]


@pytest.mark.parametrize("line", DEV)
def test_a_well_known_password_for_a_local_host_is_a_dev_credential(line):
    (clean,), findings = redact_lines([line])
    assert "[REDACTED:" in clean  # hidden all the same
    assert [f.local_dev for f in findings] == [True]


@pytest.mark.parametrize("line", REAL)
def test_any_other_credential_in_a_url_is_a_secret(line):
    (clean,), findings = redact_lines([line])
    assert "[REDACTED:" in clean
    assert [f.local_dev for f in findings] == [False]


def test_a_real_credential_beside_a_dev_one_makes_the_line_a_secret():
    _, findings = redact_lines(["local postgres://app:app@localhost/app, prod "
                                "postgres://app:Xk9#mQ2v@db.internal/app"])
    assert [f.local_dev for f in findings] == [False]


def test_other_kinds_and_markers_are_never_dev_credentials():
    _, findings = redact_lines(["api_key=app host=localhost", "postgres://app:[REDACTED:url-password]"
                                "@localhost/app", "token ghp_" + "a1" * 18])
    assert findings and not any(f.local_dev for f in findings)


@pytest.mark.parametrize("host,local", [("localhost", True), ("LOCALHOST.", True),
                                        ("127.0.0.1", True), ("[::1]", True), ("db.test", True),
                                        ("printer.local", True), ("db.internal", False),
                                        ("192.168.1.5", False), ("", False), ("[::2]", False)])
def test_local_hosts(host, local):
    assert is_local_host(host) is local


@pytest.mark.parametrize("value,allowed", [("allow-dev-credentials", True),
                                           (["other", "Allow-Dev-Credentials "], True),
                                           ("allow", False), (None, False), (True, False)])
def test_the_front_matter_that_silences_the_notice(value, allowed):
    assert allows_dev_credentials(value) is allowed


def _read(text: str):
    lines = text.split("\n")
    front = {"secrets": "allow-dev-credentials"} if "allow-dev" in text else None
    return read_note("notes/db.md", lines, front, content_hash="h")


def test_a_note_with_a_dev_credential_gives_a_notice_not_a_warning():
    doc = _read("# DB\nRun against postgres://app:app@localhost:5432/app locally.")
    assert doc.warnings == ()
    assert doc.notices == ("notes/db.md: line(s) 2 hold a local development credential (a "
                           "well-known password for a local host), hidden like any secret; "
                           "add `secrets: allow-dev-credentials` to the note's front matter "
                           "to stop this notice",)
    assert "app:app@" not in "\n".join(doc.lines)


def test_the_front_matter_silences_the_notice_but_not_a_real_secret():
    doc = _read("---\nsecrets: allow-dev-credentials\n---\npostgres://app:app@localhost/app\n"
                "postgres://app:Xk9#mQ2v@db.internal/app")
    assert doc.notices == ()
    assert doc.warnings == ("notes/db.md: secret-shaped text on line(s) 5 (url-password) is "
                            "replaced by a marker in everything derived from the note",)
    assert "[REDACTED:url-password]@localhost" in doc.lines[3]


@pytest.mark.timeout(60)  # a hang guard: the line's hosts are read once, not once per value
@pytest.mark.parametrize("unit", ["host=localhost user=a password=a ", "Server=x;Password=a;",
                                  "a://b:app@localhost ", "host="])
def test_a_pasted_line_of_dsns_stays_linear(unit):
    line = unit * (200_000 // len(unit))
    clean, _ = redact_lines([line])
    assert len(clean) == 1
