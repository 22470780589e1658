"""Credential shapes known by their form: cloud keys, git host, chat, payment and package tokens,
JWTs, webhook URLs, credentials in URLs, connection strings, HTTP headers and private key
material (a PEM, OpenSSH or PGP body, armour or not)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from attrs import frozen

# Every unbounded run either starts where a run of its own characters starts (a lookbehind
# on that class) or cannot backtrack (possessive `++`, `{n,}+`): an unanchored run retried at
# each of a long line's characters is quadratic, minutes for one pasted megabyte.
TOKEN = r"A-Za-z0-9_\-"


@frozen
class Shape:
    """One kind of secret. Where the pattern has a `value` group only that part is the secret,
    so a label (`AccountKey=`, `Authorization: Bearer`) stays readable."""

    kind: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]  # lower-case text a line must hold one of (none: always tried)
    judged: bool = False  # a labelled value may be a placeholder (secret_values.is_placeholder)
    check: Callable[[str], bool] | None = None  # a test of the value beyond its form


def _shape(kind: str, pattern: str, *hints: str, judged: bool = False,
           check: Callable[[str], bool] | None = None) -> Shape:
    return Shape(kind, re.compile(pattern), hints, judged, check)


def _is_basic_credential(value: str) -> bool:
    """HTTP Basic credentials are base64 of `user:password`; a word after "basic" is prose
    ("Basic Operations" decodes to text with a colon too, but reads as a word)."""
    if WORD.fullmatch(value):
        return False
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    text = decoded.decode("utf-8", errors="replace")
    return ":" in text and text.isprintable()


WORD = re.compile(r"[A-Za-z][a-z]*")
# Private keys in DER (PKCS#1, PKCS#8, SEC1): a SEQUENCE opening with a small version INTEGER
# then a key, a key algorithm or a key octet string; encrypted PKCS#8 opens with a PKCS#5 or
# PKCS#12 algorithm. A certificate or a public key opens otherwise.
DER_VERSIONS = (b"\x02\x01\x00", b"\x02\x01\x01")
DER_KEY_STARTS = (b"\x02", b"\x30", b"\x04")
PBE_OIDS = (b"\x2a\x86\x48\x86\xf7\x0d\x01\x05", b"\x2a\x86\x48\x86\xf7\x0d\x01\x0c")
# OpenPGP secret key and subkey packets (old and new format headers), versions 4 to 6, and
# the public-key algorithms they may carry.
PGP_OLD_TAGS = frozenset((0x94, 0x95, 0x96, 0x9C, 0x9D, 0x9E))
PGP_NEW_TAGS = frozenset((0xC5, 0xC7))
PGP_ALGORITHMS = frozenset((1, 2, 3, 16, 17, 18, 19, 22, 25, 26, 27, 28))
KEY_HEAD_CHARS = 96  # base64 of the first 72 bytes: enough to know the structure


def is_key_material(base64_text: str) -> bool:
    """Whether base64 text starts a private key: DER, an OpenSSH key or a PGP secret key."""
    head = base64_text[:min(KEY_HEAD_CHARS, len(base64_text) // 4 * 4)]
    try:
        data = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return False
    return data.startswith(b"openssh-key-v1\0") or _der_private_key(data) or _pgp_secret_key(data)


def _der_private_key(data: bytes) -> bool:
    body = data[_der_content(data, 0):] if data[:1] == b"\x30" else b""
    if body[:3] in DER_VERSIONS:
        return body[3:4] in DER_KEY_STARTS
    if body[:1] != b"\x30":
        return False
    algorithm = body[_der_content(body, 0):]
    return algorithm[:1] == b"\x06" and algorithm[2:10] in PBE_OIDS


def _der_content(data: bytes, at: int) -> int:
    """Where the content of the DER element at `at` starts (its tag and length skipped)."""
    length = data[at + 1] if len(data) > at + 1 else 0
    return at + 2 + (length - 0x80 if 0x80 < length < 0x85 else 0)


def _pgp_secret_key(data: bytes) -> bool:
    if len(data) < 8:
        return False
    if data[0] in PGP_OLD_TAGS:
        at = 1 + (1, 2, 4)[data[0] & 3]
    elif data[0] in PGP_NEW_TAGS:
        at = 2 if data[1] < 192 else 3 if data[1] < 224 else 6
    else:
        return False
    return data[at:at + 1] in (b"\x04", b"\x05", b"\x06") and \
        data[at + 5:at + 6] != b"" and data[at + 5] in PGP_ALGORITHMS

AUTH_SCHEMES = r"(?:bearer|basic|token|apikey|api-key|key|otp|sso-key|hmac|negotiate|ntlm)"
URL_END = r"[^\s\"'<>)\]`|]"
GITLAB = ("pat", "dt", "rt", "ptt", "cbt", "ft", "soat", "oas", "imt", "agent", "ffct")

SHAPES: tuple[Shape, ...] = (
    # Cloud keys.
    _shape("aws-access-key",
           r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z0-9]{16}"
           r"(?![A-Za-z0-9])", "akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "a3t"),
    _shape("aws-secret-key",
           r"(?i)(?:aws_?secret_?access_?key|secret_?access_?key)[\"'`]{0,2}\s*[:=]\s*[\"'`]?"
           r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", "secret"),
    _shape("google-api-key", rf"(?<![{TOKEN}])AIza[{TOKEN}]{{35}}", "aiza"),
    _shape("google-oauth-secret", rf"(?<![{TOKEN}])GOCSPX-[{TOKEN}]{{20,}}+", "gocspx-"),
    _shape("google-oauth-token", rf"(?<![{TOKEN}.])ya29\.[{TOKEN}]{{20,}}+", "ya29."),
    _shape("azure-client-secret",
           r"(?<![\w~.\-])[\w~.\-]{3}[0-9]Q~[\w~.\-]{31,34}(?![\w~.\-])", "q~"),
    _shape("azure-sas-signature", r"(?i)[?&;]sig=(?P<value>[A-Za-z0-9%+/=]{16,}+)", "sig="),
    _shape("connection-string-key",
           r"(?i)(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedSecret|SharedAccessSignature)"
           r"\s*=\s*(?P<value>[^;\"'\s]++)", "accountkey", "sharedaccess", "sharedsecret",
           judged=True),
    # An ODBC/ADO password after a `;` runs to the `;` that ends the pair, spaces included, or is
    # braced; first in its string it is an ordinary assignment (secret_values).
    _shape("connection-string-password",
           r"(?i);\s*(?:password|pwd)\s*=\s*"
           r"(?P<value>\{[^}]{0,256}+\}|\"[^\"]{0,256}+\"|'[^']{0,256}+'|[^;\"']++)",
           "password", "pwd", judged=True),
    _shape("digitalocean-token", r"(?<![\w])do[por]_v1_[a-f0-9]{64}", "_v1_"),
    _shape("databricks-token", r"(?<![\w])dapi[a-f0-9]{32}(?:-\d)?(?![\w])", "dapi"),
    # Git hosts.
    _shape("github-token",
           r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,}+|github_pat_[A-Za-z0-9_]{22,}+)",
           "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _shape("gitlab-token",
           rf"(?<![{TOKEN}])(?:gl(?:{'|'.join(GITLAB)})-[{TOKEN}]{{20,}}+"
           rf"|GR1348941[{TOKEN}]{{20,}}+)",
           "gr1348941", *(f"gl{kind}-" for kind in GITLAB)),
    _shape("atlassian-token", r"(?<![\w\-=.])AT(?:BB|ATT|CTT)[\w\-=.]{24,}+",
           "atbb", "atatt", "atctt"),
    # Chat tokens and webhooks.
    _shape("slack-token", rf"(?<![{TOKEN}])(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{{10,}}+",
           "xox", "xapp-"),
    _shape("slack-webhook",
           rf"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<value>[{TOKEN}/]{{8,}}+)",
           "hooks.slack.com"),
    _shape("discord-webhook",
           rf"(?i)discord(?:app)?\.com/api/webhooks/(?P<value>[0-9]+/[{TOKEN}]+)", "/api/webhooks/"),
    _shape("teams-webhook",
           rf"(?i)(?:\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/"
           rf"(?P<value>{URL_END}++)", "webhook.office.com", "outlook.office"),
    _shape("telegram-bot-token", rf"(?<![0-9])[0-9]{{8,10}}:AA[{TOKEN}]{{33}}", ":aa"),
    # Payments.
    _shape("stripe-key", r"(?<![\w])(?:(?:sk|rk)_(?:live|test)|whsec)_[A-Za-z0-9]{10,}+",
           "_live_", "_test_", "whsec_"),
    _shape("square-token",
           rf"(?<![{TOKEN}])(?:sq0(?:atp|csp)-[{TOKEN}]{{22,}}+|EAAA[{TOKEN}]{{60,}}+)",
           "sq0", "eaaa"),
    _shape("paypal-token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}",
           "access_token$"),
    # Packages, AI providers and other services.
    _shape("npm-token", r"(?<![\w])npm_[A-Za-z0-9]{36,}+", "npm_"),
    _shape("pypi-token", rf"(?<![{TOKEN}])pypi-AgE[{TOKEN}]{{40,}}+", "pypi-"),
    _shape("huggingface-token", r"(?<![\w])hf_[A-Za-z0-9]{34,}+", "hf_"),
    _shape("anthropic-key", rf"(?<![{TOKEN}])sk-ant-[{TOKEN}]{{20,}}+", "sk-ant-"),
    _shape("openai-key", rf"(?<![{TOKEN}])sk-[{TOKEN}]{{20,}}+", "sk-"),
    _shape("sendgrid-key", rf"(?<![{TOKEN}.])SG\.[{TOKEN}]{{22}}\.[{TOKEN}]{{43}}", "sg."),
    _shape("shopify-token", r"(?<![\w])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
           "shpat_", "shpca_", "shppa_", "shpss_"),
    _shape("vault-token", rf"(?<![{TOKEN}.])hv[sb]\.[{TOKEN}]{{24,}}+", "hvs.", "hvb."),
    _shape("age-secret-key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "age-secret-key-"),
    _shape("jwt", rf"(?<![{TOKEN}])eyJ[{TOKEN}]{{8,}}+\.[{TOKEN}]{{4,}}+\.[{TOKEN}]*+", "eyj"),
    # Credentials in URLs, DSNs and commands. A scheme starts where a run of scheme characters
    # starts, and is short: unanchored, a long line of letters made this quadratic.
    _shape("url-password",
           r"(?<![a-zA-Z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]{0,31}://[^/\s:@]*+:(?P<value>[^@\s/]++)@",
           "://", judged=True),
    _shape("curl-user-password",
           r"(?<![\w\-])(?:-u|--user)[ \t]*[\"']?[^\s:\"']*+:(?P<value>[^\s\"']++)", "curl",
           judged=True),
    _shape("netrc-password", r"(?i)\blogin\s+\S+\s+password\s+(?P<value>\S+)", "login", judged=True),
    # HTTP credentials: after the scheme word (Bearer, Basic, Token...), a Cookie header whole.
    _shape("basic-auth", r"(?i)(?<![\w\-])basic\s+(?P<value>[A-Za-z0-9+/]{8,}+={0,2})",
           "basic", check=_is_basic_credential),
    _shape("bearer-token", r"(?i)(?<![\w\-])bearer\s+(?P<value>[A-Za-z0-9_\-.=+/~]{16,}+)", "bearer"),
    _shape("authorization-header",
           rf"(?i)(?<![\w\-])(?:proxy-)?authorization[\"'`]?\s*[:=]\s*[\"'`]?"
           rf"(?:{AUTH_SCHEMES}\s+)?(?P<value>[^\s\"'`,;]++)", "authorization", judged=True,
           check=lambda value: not re.fullmatch(AUTH_SCHEMES, value, re.I)),
    _shape("cookie-header",
           r"(?i)(?<![\w\-])(?:set-)?cookie[\"'`]?\s*:\s*[\"'`]?(?P<value>[^=\s\"'`;]+=[^\"'`\r\n]*)",
           "cookie"),
    # A private key's body without its armour, on one line (`deploy_key: MIIEvQ...`, or in a
    # JSON string with `\n` between its rows); a body over several lines is judged as a block
    # (secrets). Every line may hold one: no hints.
    _shape("private-key",
           r"(?<![A-Za-z0-9+/])[Mlxb][A-Za-z0-9+/]{47,}+(?:(?:\\[nr])++[A-Za-z0-9+/]++)*+={0,2}",
           check=lambda value: is_key_material(re.sub(r"\\[nr]", "", value[:200]))),
)

# (hint, shape) pairs flat: one `in` per hint is most of the cost on a line holding none.
_HINTS = tuple((hint, shape) for shape in SHAPES for hint in shape.hints)
_ALWAYS = tuple(shape for shape in SHAPES if not shape.hints)


def shapes_in(lowered: str) -> list[Shape]:
    """The shapes a lower-cased line may hold, in priority order: a cheap test before regexes."""
    return [*dict.fromkeys(shape for hint, shape in _HINTS if hint in lowered), *_ALWAYS]
