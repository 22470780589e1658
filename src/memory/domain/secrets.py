"""Secret-shaped text: found in note lines and redacted before anything is returned."""

from __future__ import annotations

import re
from collections.abc import Sequence

from attrs import frozen

MARKER = "[REDACTED:{kind}]"

# Where a pattern has a `value` group only that part is hidden, so the label stays readable.
PATTERNS: tuple[tuple[str, re.Pattern], ...] = (
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    ("aws-secret-key", re.compile(
        r"(?i)(?:aws_?secret_?access_?key|secret_?access_?key)\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{40})")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}(?![\w-])")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}(?![\w-])")),
    ("openai-key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}(?![\w-])")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+(?P<value>[A-Za-z0-9_\-.=+/]{16,})")),
    # A scheme starts where a run of scheme characters starts, and is short: unanchored, a
    # long line of letters made this quadratic (minutes for one pasted megabyte).
    ("url-password", re.compile(
        r"(?<![a-zA-Z0-9+.\-])[a-zA-Z][a-zA-Z0-9+.\-]{0,31}://[^/\s:@]+:(?P<value>[^@\s/]+)@")),
    # The name may carry a prefix, as environment variables do: DB_PASSWORD, client-secret.
    ("password-assignment", re.compile(
        r"(?i)\b(?:[a-z0-9]+[_\-.]){0,4}"
        r"(?:password|passwd|pwd|secret|api[_\-]?key|access[_\-]?token|auth[_\-]?token|token)"
        r"\s*[:=]\s*[\"']?(?P<value>[^\s\"'\[]{8,})")),
)
# Text derived from notes holds markers where secrets were: reading it again finds them.
REDACTED_MARKER = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
KEY_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")
KEY_END = re.compile(r"-----END ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")


@frozen
class SecretFinding:
    line: int  # 1-based
    kind: str


def _redact_line(line: str) -> tuple[str, list[str]]:
    kinds = REDACTED_MARKER.findall(line) if "[REDACTED:" in line else []
    for kind, pattern in PATTERNS:
        def swap(m: re.Match, kind=kind) -> str:
            kinds.append(kind)
            marker = MARKER.format(kind=kind)
            if "value" not in pattern.groupindex:
                return marker
            start, end = m.span("value")
            return m.group(0)[: start - m.start()] + marker + m.group(0)[end - m.start():]
        line = pattern.sub(swap, line)
    return line, kinds


def redact_lines(lines: Sequence[str]) -> tuple[tuple[str, ...], tuple[SecretFinding, ...]]:
    """Lines with secret values replaced by a visible marker, and where they were."""
    out, findings = [], []
    in_key = False
    for number, line in enumerate(lines, 1):
        if in_key or KEY_BEGIN.search(line):
            findings.append(SecretFinding(number, "private-key"))
            in_key = not KEY_END.search(line)
            out.append(MARKER.format(kind="private-key"))
            continue
        redacted, kinds = _redact_line(line)
        findings += [SecretFinding(number, k) for k in dict.fromkeys(kinds)]
        out.append(redacted)
    return tuple(out), tuple(findings)


def key_block_open_at(lines: Sequence[str], line: int) -> int | None:
    """The 1-based line where a private key block still open at `line` begins, if any."""
    for number in range(min(line, len(lines) + 1) - 1, 0, -1):
        text = lines[number - 1]
        if "PRIVATE KEY" not in text:  # cheap test first: most lines hold no marker
            continue
        if KEY_END.search(text):
            return None
        if KEY_BEGIN.search(text):
            return number
    return None


def redact_text(text: str) -> str:
    return "\n".join(redact_lines(text.split("\n"))[0])


def redact_data(value, name: str = ""):
    """Parsed front matter with secret-shaped values replaced by the marker.

    A value is judged alone and under its key, as its line reads (`password: hunter22`):
    YAML hands back the value without the name that makes it a secret.
    """
    if isinstance(value, dict):
        return {key: redact_data(item, str(key)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(item, name) for item in value]
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    text = str(value)
    clean = redact_text(text)
    if clean != text:
        return clean
    if name and "\n" not in text:
        _, kinds = _redact_line(f"{name}: {text}")
        if kinds:
            return MARKER.format(kind=kinds[0])
    return value
