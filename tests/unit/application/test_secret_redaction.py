"""Guarantee 7: evidence never carries a secret. Notes are generated with secrets of common
shapes at random places (plain lines, headings, code blocks, private key blocks of any
length, opening far above the cited lines or never closed); whatever is searched for,
no item's text, title or heading and no line memory_get returns holds a secret value, and
health lists every note that holds one.
"""

from __future__ import annotations

import os
import random
import re
import string
from collections import Counter

import pytest
from attrs import frozen
from builders import World, make_doc
from figures import printed_at_teardown
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.domain.secret_values import is_placeholder
from memory.domain.secrets import redact_data, redact_lines

SEEN: Counter = Counter()
MARKER = re.compile(r"\[REDACTED:[a-z-]+\]")
EXAMPLES = int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "50"))
WORDS = ["deploy", "staging", "database", "rotate", "vault", "webhook", "backup", "cluster",
         "ingress", "replica", "tenant", "gateway"]
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
KEY_KINDS = ["RSA ", "OPENSSH ", "", "EC ", "ENCRYPTED ", "DSA "]


def chars(alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=low, max_size=high)


# (line template, secret value): the template holds {} where the value goes.
SHAPES = [
    st.tuples(st.just("aws key {} for the backup job"), chars(UPPER_DIGITS, 16, 16).map(
        lambda v: "AKIA" + v)),
    st.tuples(st.just("aws_secret_access_key = {}"), chars(ALNUM + "/+", 40, 40)),
    st.tuples(st.just("export GOOGLE_KEY={}"), chars(ALNUM + "_-", 35, 35).map(
        lambda v: "AIza" + v)),
    st.tuples(st.just("token {} for CI"), chars(ALNUM, 36, 40).map(lambda v: "ghp_" + v)),
    st.tuples(st.just("slack {} here"), chars(ALNUM, 12, 30).map(lambda v: "xoxb-" + v)),
    st.tuples(st.just("OPENAI_API_KEY is {}"), chars(ALNUM, 24, 40).map(lambda v: "sk-" + v)),
    st.tuples(st.sampled_from(["curl -H 'Authorization: Bearer {}'", "bearer {}"]),
              chars(ALNUM + "-._", 20, 40).map(lambda v: "t" + v)),
    st.tuples(st.sampled_from(["postgres://admin:{}@db.internal:5432/app",
                               "DATABASE_URL=mysql://svc:{}@10.0.0.7/prod",
                               "https://deploy:{}@git.example.com/repo.git"]),
              chars(ALNUM + "!$*()-_", 10, 24).filter(lambda v: not is_placeholder(v))),
    # A drawn value that reads as a reference (`OTEL_SDK_DISABLED`, an environment
    # variable's name; `%APPDATA%`) is not a secret: is_placeholder's own tests cover it.
    st.tuples(st.sampled_from(["password: {}", "db_password = {}", "api_key={}"]),
              chars(ALNUM + "!$%-_", 10, 24).filter(lambda v: not is_placeholder(v))),
]


@frozen
class Secret:
    lines: tuple[str, ...]  # what is written into the note
    values: tuple[str, ...]  # what must never come back
    flagged: int = 0  # which of the lines health must list


@st.composite
def shaped(draw) -> Secret:
    template, value = draw(st.one_of(*SHAPES))
    line = template.format(value)
    style = draw(st.sampled_from(["plain", "heading", "list", "fenced"]))
    if style == "heading":
        return Secret(lines=(f"## {line}",), values=(value,))
    if style == "list":
        return Secret(lines=(f"- {draw(st.sampled_from(WORDS))}: {line}",), values=(value,))
    if style == "fenced":
        return Secret(lines=("```sh", line, "```"), values=(value,), flagged=1)
    return Secret(lines=(line,), values=(value,))


@st.composite
def key_block(draw) -> Secret:
    """A private key block of up to 260 lines (PEM or PGP), sometimes with words inside it
    that a search can hit, sometimes never closed."""
    kind = draw(st.sampled_from(KEY_KINDS))
    pgp = draw(st.booleans())
    label = "PGP PRIVATE KEY BLOCK" if pgp else f"{kind}PRIVATE KEY"
    long = draw(st.booleans())  # PGP keys run past a hundred lines
    size = draw(st.integers(120, 260) if long else st.integers(1, 30))
    # Key material from a drawn seed: drawing every character would overflow hypothesis'
    # buffer, and it would then hardly ever try a long block.
    rng = random.Random(draw(st.integers(0, 2 ** 32)))
    body = ["".join(rng.choice(ALNUM + "+/") for _ in range(64)) for _ in range(size)]
    for _ in range(draw(st.integers(0, 3))):
        # Words near the end of a long block are what a search cites far below its BEGIN.
        at = draw(st.sampled_from([len(body), len(body) - 1, 0])) if draw(st.booleans()) \
            else draw(st.integers(0, len(body)))
        body.insert(max(0, at), f"Comment: {draw(st.sampled_from(WORDS))} signer"
                                f"{draw(st.integers(0, 999))}")
    end = [f"-----END {label}-----"] if draw(st.integers(0, 9)) else []
    return Secret(lines=(f"-----BEGIN {label}-----", *body, *end),
                  values=(*[b for b in body if not b.startswith("Comment:")], "PRIVATE KEY"))


@st.composite
def notes(draw, number: int) -> tuple[str, list[str], list[Secret], list[int]]:
    """(path, lines, secrets, line numbers of the secrets' first lines)."""
    lines = [f"# {draw(st.sampled_from(WORDS))} notes {number}", ""]
    secrets, at = [], []
    for _ in range(draw(st.integers(1, 8))):
        for _ in range(draw(st.integers(0, 30))):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=7, unique=True))
            lines.append(" ".join([*words, f"line{len(lines) + 1}"]))
        if draw(st.integers(0, 3)):
            secret = draw(st.one_of(shaped(), key_block()))
            at.append(len(lines) + 1 + secret.flagged)
            lines.extend(secret.lines)
            secrets.append(secret)
    return f"Repos/ops/Notes/Note {number}.md", lines, secrets, at


@st.composite
def roots(draw):
    return [draw(notes(i)) for i in range(draw(st.integers(1, 4)))]


figures = printed_at_teardown("secrets", SEEN)


def leaked(text: str, values: list[str]) -> list[str]:
    text = MARKER.sub("", text)  # a generated value may spell a marker's kind
    return [v[:12] + "..." for v in values if v in text]


HYPOTHESIS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                             HealthCheck.large_base_example])


@HYPOTHESIS
@given(root=roots(), extra=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_no_evidence_and_no_read_returns_a_secret(root, extra):
    world = World([make_doc(path, "\n".join(lines), memory_id=f"note-{i}")
                   for i, (path, lines, _, _) in enumerate(root)])
    assert world.refresh("index").ok
    values = [v for _, _, secrets, _ in root for s in secrets for v in s.values]
    # Queries: every word near the secrets, words inside key blocks, and the values
    # themselves (an agent may paste one to ask where it is used).
    queries = {" ".join(extra), *(f"{w} notes" for w in WORDS)}
    queries |= {line for _, lines, secrets, _ in root for s in secrets for line in s.lines
                if line.startswith("Comment:")}
    queries |= {v for _, _, secrets, _ in root for s in secrets
                for v in (*s.values[:2], *s.values[-3:]) if v != "PRIVATE KEY"}
    SEEN["notes"] += len(root)
    SEEN["secrets"] += sum(len(secrets) for _, _, secrets, _ in root)
    for query in sorted(queries):
        SEEN["searches"] += 1
        packet = world.service.search(query, limit=50, status="any")
        SEEN["items checked"] += len(packet.items)
        for item in packet.items:
            assert not leaked(f"{item.text}\n{item.title}\n{item.heading}", values), \
                (query, item.citation, item.text[:300])
    for i, (path, lines, secrets, at) in enumerate(root):
        for start in sorted({1, *at, *(a + 101 for a in at), *(a + 150 for a in at)}):
            if start > len(lines):
                continue
            got = world.service.get(f"note-{i}", start_line=start)
            SEEN["reads checked"] += 1
            text = "\n".join(line.text for line in got.lines)
            assert not leaked(text, values), (path, start)
            assert not leaked(repr(got.front_matter), values)
    listed = {entry.path: entry for entry in world.service.health().notes_with_secrets}
    holding = {path: at for path, _, secrets, at in root if secrets}
    assert set(listed) == set(holding)
    for path, at in holding.items():
        assert at[0] in listed[path].lines, (path, at, listed[path])


HOSTILE_UNITS = ["a", "a-", "a.", "a1", "AKIA", "x:", "@", "a://b:", "sk-", "bearer ", "token=",
                 "-----BEGIN "]


@pytest.mark.timeout(60)  # a hang guard: linear work is milliseconds, quadratic was minutes
@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_redaction_finishes_on_hostile_lines(unit):
    """A pasted line of 200,000 characters must not stall a search (it did: minutes,
    quadratic). The time itself is a benchmark figure (benchmarks/test_redaction_speed.py)."""
    line = unit * (200_000 // len(unit))
    clean, findings = redact_lines([line, line])
    assert len(clean) == 2 and all(f.line in (1, 2) for f in findings)


def test_front_matter_values_are_judged_alone_and_under_their_key():
    data = {"title": "Deploy", "password": "hunter2hunter2", "tags": ["ops", "db"],
            "db": {"pwd": 12345678, "url": "postgres://app:pgpass1234@db/app"},
            "tokens": ["ghp_" + "a1" * 18], "retries": 3, "draft": False,
            "deploy_key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"}
    clean = redact_data(data)
    assert clean["title"] == "Deploy" and clean["tags"] == ["ops", "db"]
    assert clean["retries"] == 3 and clean["draft"] is False
    assert clean["password"] == "[REDACTED:password-assignment]"
    assert clean["db"]["pwd"] == "[REDACTED:password-assignment]"
    assert "pgpass1234" not in clean["db"]["url"] and "ghp_" not in clean["tokens"][0]
    assert "MIIEow" not in clean["deploy_key"]
