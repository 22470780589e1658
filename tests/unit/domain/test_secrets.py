"""Secret-shaped text is redacted with a visible marker and located by line; prose, placeholders
and references to where a secret lives are not."""

from pathlib import Path

import pytest

from builders import World, make_doc

from memory.domain.health import SecretNote
from memory.domain.secrets import (SecretSpan, contains_secret, find_secrets, key_block_open_at,
                                   redact_data, redact_lines, redact_text, secret_kind_under_name)

ROOT = Path(__file__).resolve().parents[3]
LOCOMO = ROOT.parent / "shared" / "eval" / "locomo-dev" / "memory"

SECRETS = [
    ("aws-access-key", "AKIAIOSFODNN7EXAMPLE", "the key is {} for staging"),
    ("aws-secret-key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = {}"),
    ("bearer-token", "abcdef0123456789abcdef", "curl -H 'Authorization: Bearer {}'"),
    ("authorization-header", "abcdef0123456789", "curl -H 'Authorization: Token {}'"),
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


# Each was missed before: the line, then what must not survive.
MISSED = [
    ("password: hunter2", "hunter2"),
    ('password: "correct horse battery staple"', "horse battery"),
    ("password: correct horse battery staple", "battery staple"),
    ("session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXBsb3kifQ.c2lnbmF0dXJlX2J5dGVz", "eyJzdWIiOiJkZXBsb3kifQ"),
    ("https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBBBB/cccccccccccccccccccccccc", "cccccccc"),
    ("stripe sk_live_51HxxxxxxxxxxxxxxxxxxxxQ and rk_live_51Hyyyyyyyyyyyyyyyy", "51Hx"),
    ("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=bm90IGEgcmVhbCBrZXkgYXQgYWxs+Zm9v==;",
     "bm90IGEg"),
    ("//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdef"),
    ("curl -H 'Authorization: Basic ZGVwbG95Omh1bnRlcjI='", "ZGVwbG95Omh1bnRlcjI"),
    ("REDIS_URL=redis://:s3cr3tpw@cache:6379/0", "s3cr3tpw"),
    ("PIN: 4821", "4821"),
    ("DB_PASS=xyz12", "xyz12"),
    ("Server=db;Database=app;User Id=svc;Password=two words here;Encrypt=True", "two words"),
    ("<password>hunter2</password>", "hunter2"),
    ('password: str = "hunter2"', "hunter2"),
    ("mysql --user=app --password hunter2x --host db", "hunter2x"),
    ("Cookie: session=9f8e7d6c5b4a; theme=dark", "9f8e7d6c5b4a"),
    ("X-Api-Key: 0123456789abcdef0123", "0123456789abcdef"),
]


@pytest.mark.parametrize("line,value", MISSED)
def test_shapes_the_old_detector_missed_are_redacted(line, value):
    (clean,), findings = redact_lines([line])
    assert value not in clean and "[REDACTED:" in clean and findings


def test_a_label_stays_readable():
    assert redact_text("password: hunter2") == "password: [REDACTED:password-assignment]"
    assert redact_text('"client_secret": "s3cr3t!"') == '"client_secret": "[REDACTED:secret-assignment]"'
    assert redact_text("AccountKey=Zm9vYmFyYmF6cXV4cXV1eA==;") == \
        "AccountKey=[REDACTED:connection-string-key];"


PROSE = [
    "the token budget is 30 seconds", "password reset flow sends an email",
    "see https://example.com/docs for details", "rotate the secret monthly",
    "Token: see the vault entry", "api_key: <your key here>", "password: ${DB_PASSWORD}",
    "password: (ask Lena)", "secret: true", "secret: false", "password: ****",
    "- **Token:** stored in 1Password, rotated by the platform team",
    "Password: we keep it in the vault", "token: $GITHUB_TOKEN", "password: DB_PASSWORD",
    'token = os.environ["GITHUB_TOKEN"]', "password = settings.DB_PASSWORD",
    "token: ~/.config/nx/token.json", "token_url: https://auth.example.com/token",
    "max_tokens: 512", "password_policy: strict", "secrets: [alpha-secrets, beta-secrets]",
    "They need not be secret: IVs are public.", "- `nx login --user <name> --password` stores a token",
    "PWD=/home/deploy", "bypass: true", "pin: 3.11", '"NextToken": "AAEAAVdoZWVsIG9mIEZvcnR1bmU="',
    "permissions: id-token: write", "password: Optional[str] = None",
    "The agent says `NX-401: token expired`.", "docker login -u AWS -p <password> https://x",
    "Basic Operations for Tables", "Authorization: Bearer <token>", "Authorization: Bearer $TOKEN",
    "postgres://user:<password>@localhost/db", "postgres://user:${PGPASSWORD}@localhost/db",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod-db", "credentials: ./creds.json",
]


@pytest.mark.parametrize("line", PROSE)
def test_prose_placeholders_and_references_are_untouched(line):
    assert redact_lines([line]) == ((line,), ())
    assert not contains_secret(line)


WEAK = ["password: changeme", "password: password", "PASSWORD=admin", "PIN: 1234",
        "passphrase: letmein", "secret: s"]


def test_weak_passwords_are_values_and_one_character_is_not():
    assert [contains_secret(line) for line in WEAK] == [True, True, True, True, True, False]


def test_find_secrets_gives_columns_and_kinds_without_values():
    text = "first line\nexport DB_PASSWORD=hunter22 AKIAIOSFODNN7REALLYX"
    spans = find_secrets(text)
    line = text.split("\n")[1]
    assert [(s.line, line[s.start:s.end], s.kind) for s in spans] == [
        (2, "hunter22", "password-assignment"), (2, "AKIAIOSFODNN7REALLYX", "aws-access-key")]


def test_a_value_is_judged_under_its_key():
    assert secret_kind_under_name("db_password", "hunter2") == "password-assignment"
    assert secret_kind_under_name("clientSecret", "correct horse") == "secret-assignment"
    assert secret_kind_under_name("password", "${DB_PASSWORD}") is None
    assert secret_kind_under_name("token_url", "https://x/token") is None
    assert secret_kind_under_name("title", "hunter2") is None
    assert redact_data({"password": "see the vault", "PIN": 4821}) == \
        {"password": "see the vault", "PIN": "[REDACTED:pin-assignment]"}


def test_overlapping_shapes_hide_their_union():
    line = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlX2J5dGVz"
    (clean,), findings = redact_lines([line])
    assert clean == "Authorization: Bearer [REDACTED:jwt]"
    assert [f.kind for f in findings] == ["jwt"]


def test_a_service_account_key_on_one_line_is_hidden_whole():
    line = '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n",'
    clean, findings = redact_lines([line, '  "client_email": "svc@p.iam.gserviceaccount.com"'])
    assert clean[0] == "[REDACTED:private-key]" and "MIIEvQ" not in clean[0]
    assert clean[1].endswith('"svc@p.iam.gserviceaccount.com"') and len(findings) == 1


HOSTILE_UNITS = ["eyJ.", "eyJabcdefgh.", "a=", "://", "QUJD+/", "password: ", "token=token ",
                 'password: "', "<password>", ";pwd={", "Password=a;", "Authorization: ",
                 "a_password: the ", "--token ", "hooks.slack.com/services/", "1234567890:AA",
                 "Basic QUJD", "sig=", "x.token: ", "password: ${"]


@pytest.mark.timeout(60)  # a hang guard: linear work is a fraction of a second, quadratic minutes
@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_redaction_finishes_on_hostile_lines_of_every_new_shape(unit):
    """The time itself is a benchmark figure (benchmarks/test_redaction_speed.py)."""
    line = unit * (200_000 // len(unit))
    for tail in ("", "\u00e9!", " x"):
        clean, _ = redact_lines([line + tail])
        assert len(clean) == 1


def test_no_line_of_the_frozen_benchmark_vault_is_redacted():
    """The vault talks about secrets (rotation, where they live) but holds none."""
    notes = sorted((ROOT / "benchmarks" / "fixtures" / "vault").rglob("*.md"))
    assert notes
    hits = [(path.name, f.line) for path in notes
            for f in redact_lines(path.read_text(encoding="utf-8").split("\n"))[1]]
    assert hits == []


def test_no_line_of_the_locomo_conversations_is_redacted():
    """A real conversational corpus: every redaction there would be a word lost to search."""
    if not LOCOMO.is_dir():
        pytest.fail(f"{LOCOMO} not present: the evaluation set lies in ../shared/eval beside the checkout")
    hits = [(path.name, f.line) for path in sorted(LOCOMO.rglob("*.md"))
            for f in redact_lines(path.read_text(encoding="utf-8").split("\n"))[1]]
    assert hits == []


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


@pytest.mark.parametrize("kind,secret,template", SECRETS)
def test_a_line_is_judged_the_same_when_seen_again_short_or_long(kind, secret, template):
    # Short clean lines are remembered between calls, the rest judged afresh: a line must
    # hide its secret every time, and a remembered line must not leak into another's verdict.
    short = template.format(secret)
    long = "padding words " * 60 + short
    for line in (short, long, short, long):
        (clean,), findings = redact_lines([line])
        assert secret not in clean and [f.kind for f in findings] == [kind]
    assert redact_lines(["the build is green again", short])[1][0].line == 2


def test_only_lines_found_clean_are_remembered():
    # What the redaction remembers between calls must never hold a secret value.
    from memory.domain import secrets
    line = "AWS key AKIAIOSFODNN7EXAMPLE for the deploy"
    redact_lines([line, "the build is green again"])
    assert line not in secrets._CLEAN_LINES
    assert "the build is green again" in secrets._CLEAN_LINES


# -- evasions: the text as a reader sees it -----------------------------------------------
# Each line hid its secret from the filter before: the line (or lines), then pieces of the
# secret none of which may survive, then text around it that must stay as written.
GH = "ghp_" + "Ab1" * 12
EVASIONS = {
    "zero-width space": (f"token ghp_\u200b{GH[4:]} ok", ["Ab1Ab1"], ["token ", " ok"]),
    "zero-width joiner and non-joiner": (f"key AK\u200dIA\u200cIOSFODNN7EXAMPLE.", ["IOSFODNN"],
                                         ["key ", "."]),
    "word joiner": (f"sk-\u2060{'Zx9' * 10}", ["Zx9Zx9"], []),
    "soft hyphen": (f"use AKIA\u00adIOSF\u00adODNN7EXAMPLE here", ["ODNN7"], ["use ", " here"]),
    "byte order mark": (f"{GH[:7]}\ufeff{GH[7:]}", ["Ab1Ab1"], []),
    "invisible in a label": ("pass\u200bword: hunter2x now", ["hunter2x"], ["pass\u200bword: "]),
    "fullwidth letters": ("key ＡＫＩＡIOSFODNN7EXAMPLE end", ["IOSFODNN"], ["key ", " end"]),
    "fullwidth label": ("ｐａｓｓｗｏｒｄ: hunter2x", ["hunter2x"], ["ｐａｓｓｗｏｒｄ: "]),
    "bold prefix": (f"**ghp_**{GH[4:]}", ["Ab1Ab1"], []),
    "italic prefix": ("_AKIA_IOSFODNN7EXAMPLE_", ["IOSFODNN"], []),
    "strikethrough prefix": (f"~~sk-~~{'Zx9' * 10}", ["Zx9Zx9"], []),
    "code span prefix": (f"`ghp_`{GH[4:]}", ["Ab1Ab1"], []),
    "emphasis inside a label": ("pass**word**: hunter2x", ["hunter2x"], ["pass**word**: "]),
    "emphasis around a label": ("_password_: hunter2x", ["hunter2x"], ["_password_: "]),
    "character references": (f"key gh&#112;_&#8203;{GH[4:]} ok", ["Ab1Ab1", "#112"], ["key "]),
    "soft hyphen as a reference": ("AKIA&shy;IOSFODNN7EXAMPLE", ["IOSFODNN"], []),
    "html tags inside": (f"<em>ghp_</em>{GH[4:]} and AK<b></b>IAIOSFODNN7EXAMPLE",
                         ["Ab1Ab1", "IOSFODNN"], ["<em>", " and "]),
    "html comment inside": (f"ghp_<!-- -->{GH[4:]}", ["Ab1Ab1"], []),
    "markdown escape": (f"use ghp\\_{GH[4:]} now", ["Ab1Ab1"], ["use ", " now"]),
}
WRAPPED = {
    "a token over two lines": (["token ghp_Ab1Ab1Ab1Ab1", "Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1 done"],
                               ["Ab1Ab1"], ["token ", " done"]),
    "an indented continuation": (["aws key AKIAIOSFOD", "    NN7EXAMPLE", "next"],
                                 ["IOSFOD", "NN7EXAMPLE"], ["aws key ", "    ", "next"]),
    "over three lines": (["sk-Zx9Zx9", "Zx9Zx9Zx9Zx9", "Zx9Zx9Zx9Zx9 ok"], ["Zx9Zx9"], [" ok"]),
    "between word lines": (["see", "AKIAIOSFOD", "NN7EXAMPLE", "Thanks"], ["IOSFOD", "NN7EX"],
                           ["see\n", "\nThanks"]),
    "after a line continuation": (["aws AKIAIOSFOD\\", "NN7EXAMPLE done"], ["IOSFOD", "NN7EX"],
                                  ["aws ", " done"]),
    "in a quote": (["> token ghp_Ab1Ab1Ab1Ab1", "> Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1"], ["Ab1Ab1"],
                   ["> token ", "\n> "]),
}
COMBINED = {
    "wrapped, zero-width and bold": (["key **ghp_**Ab1\u200bAb1Ab1Ab1", "Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1"],
                                     ["Ab1Ab1"], ["key **"]),
    "fullwidth and italic": (["_ＡＫＩＡ_ＩＯＳＦODNN7EXAMPLE"], ["ODNN7"], []),
    "soft hyphens and code marks": ([f"`gh\u00adp_`{GH[4:]}"], ["Ab1Ab1"], []),
}


def _assert_hidden(lines, gone, kept):
    clean, findings = redact_lines(lines)
    text = "\n".join(clean)
    assert findings and "[REDACTED:" in text
    assert [piece for piece in gone if piece in text] == []
    assert [piece for piece in kept if piece not in text] == []
    assert len(clean) == len(lines) and redact_lines(clean)[0] == clean


@pytest.mark.parametrize("case", sorted(EVASIONS))
def test_invisible_folded_and_emphasised_secrets_are_hidden(case):
    line, gone, kept = EVASIONS[case]
    _assert_hidden([line], gone, kept)


@pytest.mark.parametrize("case", sorted(WRAPPED))
def test_a_value_wrapped_over_lines_is_hidden_on_each_line(case):
    _assert_hidden(*WRAPPED[case])


@pytest.mark.parametrize("case", sorted(COMBINED))
def test_evasions_combined_are_hidden(case):
    _assert_hidden(*COMBINED[case])


def test_spans_of_a_seen_secret_are_columns_of_the_line_as_written():
    assert find_secrets("x ＡＫ\u200bＩＡIOSFODNN7EXAMPLE y") == (
        SecretSpan(1, 2, 23, "aws-access-key"),)
    assert find_secrets("token ghp_Ab1Ab1Ab1Ab1\n  Ab1Ab1Ab1Ab1Ab1Ab1Ab1Ab1 done") == (
        SecretSpan(1, 6, 22, "github-token"), SecretSpan(2, 2, 26, "github-token"))


def test_contains_secret_and_front_matter_see_through_too():
    assert contains_secret("ghp_\u200b" + GH[4:])
    assert redact_data({"pass\u200bword": "hunter2x"}) == {
        "pass\u200bword": "[REDACTED:password-assignment]"}
    assert secret_kind_under_name("ｔｏｋｅｎ", "abc123def") == "token-assignment"


ARMOURS = ["-----begin private key-----", "-----Begin Rsa Private Key-----",
           "----- BEGIN OPENSSH PRIVATE KEY -----", "-----BEGIN PRIVATE\u200b KEY-----",
           "－－－－－BEGIN EC PRIVATE KEY－－－－－"]


@pytest.mark.parametrize("armour", ARMOURS)
def test_a_key_block_is_hidden_whatever_the_case_of_its_armour(armour):
    end = armour.replace("begin", "end").replace("Begin", "End").replace("BEGIN", "END")
    lines = ["before", armour, "Zm9vYmFyYmF6cXV4", "not base64 at all!", end, "after"]
    clean, _ = redact_lines(lines)
    assert clean == ("before", *["[REDACTED:private-key]"] * 4, "after")
    assert key_block_open_at(lines, 4) == 2


# Throwaway keys made for this test (EC, RSA, OpenSSH, encrypted PKCS#8, PGP, Ed25519):
# their bodies, with the armour taken away.
EC_KEY = ["MHcCAQEEIDRZIsS2jlJFKzhPZL5cAbESo20g5pfKjlfeSfsne8dMoAoGCCqGSM49",
          "AwEHoUQDQgAE/U0yMRgPxfLvkh38yvPpx2BxgYfAWARKbEkFda44d0qT99UtLCiD",
          "KeiJ51KdRsSyt4JC4vxCQUQ5liMvBcrObw=="]
RSA_KEY = ["MIICXAIBAAKBgQDvwiZXulhzMY9N8Yds6okDunmdvtP3c6mGRKUm011wdxgNdyVU",
           "EszMDrMlXfU+4CqYaQnkWM96ntD1NOke41OOSPp37YAmDwJ3cPM8KgrRhQzqsYyO",
           "nDpVh7cL2NyueFszpUCDkDHLYS7Q4A11cMpyDWAqqUYqXMcLaovB+tw0FQIDAQAB",
           "AoGANmkwPG6Mzi+sHvs2SbB8Qb1bBkKdZiX4jgEcHdCP/wr4CW5FqWvO0GxxmYRW"]
OPENSSH_KEY = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz",
               "c2gtZWQyNTUxOQAAACAAFOEbJE2xUrj3r0UycbYO+rU/z9l0RiaJHw0XI7pCxQAA",
               "AIhryWfCa8lnwgAAAAtzc2gtZWQyNTUxOQAAACAAFOEbJE2xUrj3r0UycbYO+rU/"]
ENCRYPTED_KEY = ["MIH0MF8GCSqGSIb3DQEFDTBSMDEGCSqGSIb3DQEFDDAkBBB0wEOYJKNsnNp9i6qG",
                 "Ri4aAgIIADAMBggqhkiG9w0CCQUAMB0GCWCGSAFlAwQBKgQQMh+NWxuXGSt0yPFL"]
PGP_KEY = ["lFgEaw9mpxYJKwYBBAHaRw8BAQdAtPYRl5wbaHSl1eeVFzVbPlykHIwcme90l1kk",
           "VtVw6JsAAP9YklCLILgk7w0iv5kBJg4GIYrsLFXVXQZtnzDMRq86QA04tBV0IDx0"]
ED25519_KEY = "MC4CAQAwBQYDK2VwBCIEIHZdVyjxwUdd1q+WSjnBtRhqTcFP28WuR4hVy6cxhyM7"
BODIES = {"ec": EC_KEY, "rsa": RSA_KEY, "openssh": OPENSSH_KEY, "encrypted": ENCRYPTED_KEY,
          "pgp": PGP_KEY}


@pytest.mark.parametrize("name", sorted(BODIES))
@pytest.mark.parametrize("layout", ["plain", "indented", "after a word line", "quoted"])
def test_a_key_body_without_armour_is_hidden_line_by_line(name, layout):
    body = list(BODIES[name])
    if layout == "indented":
        body = [f"    {row}" for row in body]
    if layout == "quoted":
        body = [f"> {row}" for row in body]
    lead = ["Internationalization"] if layout == "after a word line" else []
    lines = ["The deploy key:", *lead, *body, "Rotate it yearly."]
    clean, findings = redact_lines(lines)
    prefix = {"indented": "    ", "quoted": "> "}.get(layout, "")  # kept as written
    assert clean[len(lead) + 1:-1] == (f"{prefix}[REDACTED:private-key]",) * len(body)
    assert clean[0] == "The deploy key:" and clean[-1] == "Rotate it yearly."
    assert {f.kind for f in findings} == {"private-key"}


def test_a_key_body_after_its_name_and_wrapped_is_hidden_to_its_end():
    lines = [f"deploy_key: {EC_KEY[0]}", *EC_KEY[1:], "Rotate it yearly."]
    assert redact_lines(lines)[0] == ("deploy_key: [REDACTED:private-key]",
                                      *["[REDACTED:private-key]"] * 2, "Rotate it yearly.")


def test_a_key_body_on_one_line_of_prose_is_hidden_and_the_prose_kept():
    assert redact_text(f"deploy_key: {ED25519_KEY} (rotated)") == \
        "deploy_key: [REDACTED:private-key] (rotated)"
    assert redact_text(f"key `{''.join(EC_KEY)}`") == "key `[REDACTED:private-key]`"
    json_rows = "\\n".join(EC_KEY)  # a JSON string: its rows joined by `\n`
    assert redact_text(f'"deploy": "{json_rows}\\n"') == '"deploy": "[REDACTED:private-key]\\n"'


NOT_SECRETS = [
    ["-----BEGIN CERTIFICATE-----",  # a certificate and a public key are public
     "MIIBBDCBq6ADAgECAgEBMAoGCCqGSM49BAMCMAwxCjAIBgNVBAMMAXQwHhcNMjYw",
     "MTAxMDAwMDAwWhcNMjYwMTAyMDAwMDAwWjAMMQowCAYDVQQDDAF0MFkwEwYHKoZI",
     "-----END CERTIFICATE-----"],
    ["MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE/U0yMRgPxfLvkh38yvPpx2BxgYfA",
     "WARKbEkFda44d0qT99UtLCiDKeiJ51KdRsSyt4JC4vxCQUQ5liMvBcrObw=="],
    ["sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
    ["Headers:", "    Authorization: ***", "  Tools: * (all)"],  # a mask, then the next line
    ["`Authorization:` with Bearer, Basic", "(`AccountKey=`, `Authorization: Bearer`) stays"],
    ["- [D3:5] **Caroline**: I went to the LGBTQ support group", "- [D3:6] **Mel**: nice"],
    ["the __init__ method and _private_ names", "ｈｅｌｌｏ ｗｏｒｌｄ, a fullwidth greeting"],
    ["we spoke about the token", "budget and the password", "policy for new hires"],
]


@pytest.mark.parametrize("lines", NOT_SECRETS, ids=lambda lines: lines[0][:24])
def test_public_keys_masks_emphasis_and_wrapped_prose_stay(lines):
    assert redact_lines(lines) == (tuple(lines), ())
