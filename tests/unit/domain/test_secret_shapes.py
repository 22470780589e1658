"""Every credential shape, generated and embedded in arbitrary text, is redacted: its value never
survives redact_text, redact_lines or redact_data, a marker takes its place, the number of lines
never changes and redacting again changes nothing."""

from __future__ import annotations

import base64
import json
import os
import re
import string

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.domain.secret_shapes import is_key_material
from memory.domain.secrets import find_secrets, redact_data, redact_lines, redact_text

MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
EXAMPLES = int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "60"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
UPPER = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
# What a written password may hold. Not first: `$ % < ( [ { # ~ / .`, which open a reference,
# a slot, a comment or a path (secret_values.is_placeholder), nor `-`, which after a `--flag`
# starts the next flag; nowhere unquoted: quotes, `|`, `;` and `&`, which end an unquoted
# value as they end one in a shell or a table.
PASSWORD_FIRST = ALNUM + "!@*^+_"
PASSWORD_REST = ALNUM + "!@#$%^*()-_+=.,?~/[]{}<>"
# ...nor read as code that fetches it: a call or subscript on a name, `get_secret(db)`.
CODE = re.compile(r"[A-Za-z_][\w.]{2,}[(\[][\w.]*[)\]]")


def chars(alphabet: str, low: int, high: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=low, max_size=low if high is None else high)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@st.composite
def passwords(draw, quoted: bool = False) -> str:
    """A written password: mixed letters, digits and symbols, or words when quoted."""
    if quoted and draw(st.booleans()):
        words = draw(st.lists(st.sampled_from(PASSPHRASE_WORDS), min_size=2, max_size=6))
        return " ".join(words)
    value = draw(chars(PASSWORD_FIRST, 1)) + draw(chars(PASSWORD_REST, 5, 30))
    assume(re.search(r"[A-Za-z]", value) and re.search(r"[^A-Za-z]", value))
    assume(not CODE.fullmatch(value))
    return value


PASSPHRASE_WORDS = ["correct", "horse", "battery", "staple", "orbit", "lantern", "quartz",
                    "maple", "velvet", "tundra", "pixel", "falcon", "cobalt", "harbor"]


@st.composite
def jwts(draw) -> str:
    header = {"alg": draw(st.sampled_from(["HS256", "RS256", "ES256"])), "typ": "JWT"}
    claims = {"sub": draw(chars(ALNUM, 4, 12)), "iat": draw(st.integers(10**9, 2 * 10**9)),
              "role": draw(st.sampled_from(["admin", "deploy", "reader"]))}
    signature = b64url(draw(st.binary(min_size=32, max_size=64)))
    return ".".join([b64url(json.dumps(header).encode()), b64url(json.dumps(claims).encode()),
                     signature])


def guid(draw) -> str:
    return "-".join(draw(chars(HEX, n)) for n in (8, 4, 4, 4, 12))


@st.composite
def shaped(draw) -> tuple[str, str]:
    """(line holding {}, the secret value) for one shape known by its form."""
    d = draw
    choices = {
        "aws-access-key": lambda: ("aws key {} for the backup job",
                                   d(st.sampled_from(["AKIA", "ASIA"])) + d(chars(UPPER, 16))),
        "aws-secret-key": lambda: ("aws_secret_access_key = {}", d(chars(B64, 40))),
        "google-api-key": lambda: ("maps key {}", "AIza" + d(chars(URLSAFE, 35))),
        "google-oauth-secret": lambda: ("GOOGLE_CLIENT_SECRET {}", "GOCSPX-" + d(chars(URLSAFE, 28))),
        "google-oauth-token": lambda: ("token {}", "ya29." + d(chars(URLSAFE, 40, 120))),
        "azure-client-secret": lambda: ("app secret {}", d(chars(ALNUM, 3)) + d(chars("0123456789", 1))
                                        + "Q~" + d(chars(ALNUM + "_~.-", 34))),
        "azure-sas": lambda: ("https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={}",
                              d(chars(ALNUM + "%", 40, 60)) + "%3D"),
        "azure-storage": lambda: ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};"
                                  "EndpointSuffix=core.windows.net", d(chars(B64, 86)) + "=="),
        "service-bus": lambda: ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root"
                                ";SharedAccessKey={}", d(chars(B64, 43)) + "="),
        "odbc-password": lambda: ("Server=tcp:db.example.net,1433;Database=app;User ID=svc;Password={}"
                                  ";Encrypt=True", d(passwords())),
        "github-token": lambda: ("export GH_TOKEN {}", d(st.sampled_from(["ghp_", "gho_", "ghs_", "ghr_"]))
                                 + d(chars(ALNUM, 36))),
        "github-pat": lambda: ("pat {}", "github_pat_" + d(chars(ALNUM, 22)) + "_" + d(chars(ALNUM, 59))),
        "gitlab-token": lambda: ("gitlab {}", "glpat-" + d(chars(URLSAFE, 20))),
        "bitbucket": lambda: ("app password {}", "ATBB" + d(chars(ALNUM, 32))),
        "slack-token": lambda: ("slack {}", d(st.sampled_from(["xoxb-", "xoxp-", "xapp-1-"]))
                                + d(chars("0123456789", 11)) + "-" + d(chars(ALNUM, 24))),
        "slack-webhook": lambda: ("hook https://hooks.slack.com/services/{}",
                                  "T" + d(chars(UPPER, 8)) + "/B" + d(chars(UPPER, 10)) + "/"
                                  + d(chars(ALNUM, 24))),
        "discord-webhook": lambda: ("https://discord.com/api/webhooks/{}",
                                    d(chars("0123456789", 18)) + "/" + d(chars(URLSAFE, 68))),
        "teams-webhook": lambda: ("https://contoso.webhook.office.com/webhookb2/{}",
                                  f"{guid(d)}@{guid(d)}/IncomingWebhook/{d(chars(HEX, 32))}/{guid(d)}"),
        "telegram": lambda: ("bot {}", d(chars("0123456789", 10)) + ":AA" + d(chars(URLSAFE, 33))),
        "stripe": lambda: ("stripe {}", d(st.sampled_from(["sk_live_", "rk_live_", "sk_test_", "whsec_"]))
                           + d(chars(ALNUM, 24, 99))),
        "square": lambda: ("square {}", d(st.sampled_from(["sq0atp-" + d(chars(URLSAFE, 22)),
                                                           "EAAA" + d(chars(URLSAFE, 60))]))),
        "braintree": lambda: ("braintree {}", f"access_token$production${d(chars(HEX, 16))}$"
                                              f"{d(chars(HEX, 32))}"),
        "npm-token": lambda: ("//registry.npmjs.org/:_authToken {}", "npm_" + d(chars(ALNUM, 36))),
        "pypi-token": lambda: ("pypi {}", "pypi-AgEIcHlwaS5vcmc" + d(chars(URLSAFE, 60, 160))),
        "openai-key": lambda: ("OPENAI key {}", d(st.sampled_from(["sk-", "sk-proj-"])) + d(chars(URLSAFE, 48))),
        "anthropic-key": lambda: ("claude {}", "sk-ant-api03-" + d(chars(URLSAFE, 93)) + "AA"),
        "huggingface": lambda: ("hf {}", "hf_" + d(chars(ALNUM, 34))),
        "sendgrid": lambda: ("mail {}", "SG." + d(chars(URLSAFE, 22)) + "." + d(chars(URLSAFE, 43))),
        "vault-token": lambda: ("vault {}", "hvs." + d(chars(URLSAFE, 90))),
        "jwt": lambda: ("session {}", d(jwts())),
        "url-password": lambda: (d(st.sampled_from(["postgres://admin:{}@db.internal:5432/app",
                                                    "redis://:{}@cache:6379/0",
                                                    "mongodb+srv://svc:{}@cluster0.example.net/db",
                                                    "https://deploy:{}@git.example.com/repo.git"])),
                                 d(chars(ALNUM + "!$*()-_~%", 6, 24))),
        "bearer": lambda: (d(st.sampled_from(["Authorization: Bearer {}", "-H 'Authorization: Bearer {}'",
                                              '{{"Authorization": "Bearer {}"}}'])),
                           d(chars(URLSAFE + ".", 20, 60))),
        "basic": lambda: (d(st.sampled_from(["Authorization: Basic {}", "-H 'Authorization: Basic {}'"])),
                          base64.b64encode(f"{d(chars(ALNUM, 3, 10))}:{d(passwords())}".encode()).decode()),
        "token-header": lambda: (d(st.sampled_from(["Authorization: Token {}", "X-Api-Key: {}",
                                                    "Private-Token: {}", "X-Vault-Token: {}"])),
                                 d(chars(ALNUM, 20, 40))),
        "cookie": lambda: ("Cookie: session={}; theme=dark", d(chars(ALNUM + "%-_", 16, 48))),
        "curl-user": lambda: ("curl -u deploy:{} https://ci.example.com/api", d(passwords())),
        "netrc": lambda: ("machine api.example.com login bot password {}", d(passwords())),
    }
    return d(st.sampled_from(sorted(choices)).map(lambda kind: choices[kind]()))


NAMES = ["password", "DB_PASSWORD", "db.password", "client-secret", "client_secret", "api_key",
         "apiKey", "X-Api-Key", "access_token", "AUTH_TOKEN", "passphrase", "secret", "credentials",
         "Admin password", "PGPASSWORD", "SECRET_KEY", "signing_key", "refresh-token", "PIN",
         "aws_secret_access_key", "ssh_pass", "passwd", "webhook_secret"]


@st.composite
def assigned(draw) -> tuple[str, str]:
    """(line holding {}, the value) for a value after a credential's name, in many styles."""
    name = draw(st.sampled_from(NAMES))
    quoted = draw(st.booleans())
    value = draw(passwords(quoted=quoted))
    styles = ["{n}: {q}{{}}{q}", "{n}={q}{{}}{q}", "{n} = {q}{{}}{q}", '"{n}": "{{}}"',
              "'{n}' => '{{}}'", "**{n}:** {q}{{}}{q}", "export {n}={q}{{}}{q}", "--{n} {q}{{}}{q}",
              "<{n}>{{}}</{n}>", "{n}:{q}{{}}{q}"]
    style = draw(st.sampled_from(styles))
    if style.startswith("--") or style.startswith("<"):
        name = re.sub(r"\W+", "-", name)
    if " " in value:
        assume(quoted and "{q}" in style or '"{{}}"' in style or "'{{}}'" in style or "<" in style)
    quote = draw(st.sampled_from(['"', "'", "`"])) if quoted else ""
    return style.format(n=name, q=quote), value


@st.composite
def embedded(draw, secrets) -> tuple[list[str], str]:
    """(lines, value): a secret's line inside arbitrary text, a list item, a table cell, a code
    fence, under a YAML key or a heading."""
    template, value = draw(secrets)
    line = template.format(value)
    prefix = draw(st.text(string.printable.strip(), max_size=30))
    suffix = draw(st.text(string.printable.strip(), max_size=30))
    assume(value not in prefix + template + suffix)
    line = f"{prefix}. {line} {suffix}" if draw(st.booleans()) else line
    style = draw(st.sampled_from(["plain", "list", "table", "fence", "yaml", "heading", "quote"]))
    if style == "list":
        return [f"- {line}"], value
    if style == "table":
        return ["| service | note |", "|---|---|", f"| deploy | {line} |"], value
    if style == "fence":
        return ["```sh", line, "```"], value
    if style == "yaml":
        return ["deploy:", "  staging:", f"    {line}"], value
    if style == "heading":
        return [f"## {line}"], value
    return ([f"> {line}"] if style == "quote" else [line]), value


def survives(text: str, value: str) -> bool:
    return value in MARKER.sub("\0", text)  # a generated value may spell a marker's kind


def assert_hidden(lines: list[str], value: str) -> None:
    clean, findings = redact_lines(lines)
    text = "\n".join(lines)
    assert len(clean) == len(lines)
    assert not survives("\n".join(clean), value), (lines, clean)
    assert findings and MARKER.search("\n".join(clean))
    assert redact_text(text) == "\n".join(clean)
    assert redact_lines(list(clean)) == (clean, redact_lines(list(clean))[1])
    assert redact_text("\n".join(clean)) == "\n".join(clean), "redacting again changed it"
    assert not survives(repr(redact_data({"note": text, "items": lines})), value)


@PROPERTY
@given(embedded(shaped()))
def test_a_shaped_secret_never_survives(case):
    assert_hidden(*case)


@PROPERTY
@given(embedded(assigned()))
def test_a_value_after_a_credentials_name_never_survives(case):
    assert_hidden(*case)


@PROPERTY
@given(st.sampled_from(NAMES), passwords(quoted=True))
def test_front_matter_values_under_a_credentials_name_are_hidden(name, value):
    clean = redact_data({"title": "Deploy", name: value, "nested": {name: value}})
    assert clean["title"] == "Deploy"
    assert clean[name].startswith("[REDACTED:") and clean["nested"][name].startswith("[REDACTED:")


@PROPERTY
@given(st.lists(st.text(string.printable, max_size=80), max_size=12))
def test_redaction_keeps_the_line_count_and_is_idempotent(lines):
    lines = [line for text in lines for line in text.split("\n")]
    clean, _ = redact_lines(lines)
    assert len(clean) == len(lines)
    assert redact_lines(list(clean))[0] == clean


@PROPERTY
@given(embedded(st.one_of(shaped(), assigned())))
def test_spans_locate_the_values_without_holding_them(case):
    lines, value = case
    text = "\n".join(lines)
    spans = find_secrets(text)
    assert spans and all(not hasattr(span, "value") for span in spans)
    hidden = [list(line) for line in lines]
    for span in spans:
        hidden[span.line - 1][span.start:span.end] = ["\0"] * (span.end - span.start)
    assert value not in "\n".join("".join(line) for line in hidden)


# The first bytes of key material and of things shaped alike but public (base64).
KEY_STARTS = {
    "pkcs1-rsa": "MIICXAIBAAKBgQDvwiZXulhzMY9N8Yds6okDunmdvtP3c6mGRKUm011wdxgNdyVU",
    "sec1-ec": "MHcCAQEEIDRZIsS2jlJFKzhPZL5cAbESo20g5pfKjlfeSfsne8dMoAoGCCqGSM49",
    "pkcs8-ed25519": "MC4CAQAwBQYDK2VwBCIEIHZdVyjxwUdd1q+WSjnBtRhqTcFP28WuR4hVy6cxhyM7",
    "pkcs8-encrypted": "MIH0MF8GCSqGSIb3DQEFDTBSMDEGCSqGSIb3DQEFDDAkBBB0wEOYJKNsnNp9i6qG",
    "openssh": "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz",
    "pgp-secret-key": "lFgEaw9mpxYJKwYBBAHaRw8BAQdAtPYRl5wbaHSl1eeVFzVbPlykHIwcme90l1kk",
}
PUBLIC_STARTS = {
    "certificate": "MIIBBDCBq6ADAgECAgEBMAoGCCqGSM49BAMCMAwxCjAIBgNVBAMMAXQwHhcNMjYw",
    "public-key": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/U0yMRgPxfLvkh38yvPpx2BxgYfA",
    "ssh-public-key": "AAAAC3NzaC1lZDI1NTE5AAAAIAAU4RskTbFSuPevRTJxtg76tT/P2XRGJokfDRcj",
    "text": base64.b64encode(b"Monday standup notes: the deploy went fine").decode(),
    "not base64": "MIIE-this-is-no-base64-at-all",
}


@pytest.mark.parametrize("name", sorted(KEY_STARTS))
def test_key_material_is_known_by_its_first_bytes(name):
    assert is_key_material(KEY_STARTS[name])


@pytest.mark.parametrize("name", sorted(PUBLIC_STARTS))
def test_public_keys_certificates_and_text_are_no_key_material(name):
    assert not is_key_material(PUBLIC_STARTS[name])
