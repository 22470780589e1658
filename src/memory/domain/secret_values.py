"""Labelled secrets (`password: x`, `DB_TOKEN="two words"`, `--api-key x`, `<secret>x</secret>`):
the value after a credential's name, and the rule that tells a value from a placeholder or prose."""

from __future__ import annotations

import re
from collections.abc import Iterator

FAMILIES = ("key", "password", "pin", "token", "secret", "credentials")
KEY_QUALIFIERS = ("access", "secret", "private", "api", "auth", "signing", "encryption", "master",
                  "account", "shared", "storage", "license", "session", "hmac", "webhook", "client")
# A credential's name ends with one of these nouns (DB_PASSWORD, client-secret, apiKey); the
# group that matched names the finding. `PIN` only in capitals: "pin" is a badge or a version pin.
NOUN = (rf"(?P<key>(?:{'|'.join(KEY_QUALIFIERS)})[_\-. ]?key)"
        r"|(?P<password>passphrase|password|passwd|passcode|pwd|pass)"
        r"|(?P<pin>(?-i:PIN)(?:[_\- ]?(?i:code))?)"
        r"|(?P<token>token)|(?P<secret>secret)|(?P<credentials>credentials?)")
# Plurals end no name (`max_tokens: 512`, `secrets:` listing names): the noun is the whole tail.
LABEL = re.compile(rf"(?i)(?:{NOUN})\d*+(?![\w\-])(?P<close>[\"'`*\]]{{0,3}})(?P<gap>[ \t]*)"
                   r"(?P<sep>:=|=>|=(?!=)|:(?!:)|>)?")
# Tokens that are no credential: pagination cursors and idempotency keys (AWS NextToken,
# ClientToken), whose values are cursors and UUIDs.
CURSOR = re.compile(r"(?i)(?:next|page|continuation|starting|pagination|idempotency|request|sync"
                    r"|resume|client|update|purchase|cancel|change)[_\-. ]?\Z")
# "secret" after these is an adjective: "top secret: the plan", "must be secret: IVs are not".
PREDICATIVE = frozenset("be is are was were been being top kept stay stays remain remains".split())
PREVIOUS_WORD = re.compile(r"(\w+)[ \t]+\Z")
NAME_TAIL = re.compile(rf"(?i)(?:{NOUN})\d*\Z")
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
NOUN_HINTS = ("pass", "pwd", "secret", "token", "key", "credential")
ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

# Words that start prose, not a value: "Token: see the vault entry", "password: in 1Password".
# An unquoted value ends before the first of them, so "password: hunter2 for staging" hides
# only hunter2. A passphrase written unquoted loses its words from the first of these on.
FUNCTION_WORDS = frozenset("""
    a an the this that these those each every any some no none not all both either neither
    another such what which whose i me my mine we us our ours you your yours he him his she her
    hers it its they them their theirs in on at of to from by with without within via per for
    into onto over under about above below after before behind between through across along
    around against among near inside outside upon and or but nor so yet if unless because since
    while when where though although as than then is are was were be been being am do does did
    has have had will would shall should can could may might must never also just only still
    already always usually often sometimes here there now later soon see ask check use using
    used stored kept held saved set managed provided generated rotated read loaded fetched pulled
    injected supplied given sent found located lives comes taken defined configured same
    """.split())
# Values that say what a value is instead of being one: other types, absence, a mask.
LITERALS = frozenset("""
    true false yes no on off null none nil undefined empty unset n/a na tbd todo required
    optional str string int integer bool boolean bytes text number secretstr any object
    redacted hidden masked removed omitted elided read write
    """.split())
# A call or subscript: on a dotted or snake_case name (`vault.read()`, `get_secret()`), or with
# a name or string inside (`Optional[str]`, `getenv("DB")`); `A000()` is a password.
INSIDE = r"\s*(?:[A-Za-z_][\w.]*|\"[^\"]*\"|'[^']*')\s*"
ARGUMENT = rf"(?:\({INSIDE}\)|\[{INSIDE}\])"
CALL = (rf"[A-Za-z_]\w*[._][\w.]*(?:{ARGUMENT}|\(\)|\[\])(?:\.\w+|{ARGUMENT}|\(\))*"
        rf"|[A-Za-z_][\w.]{{2,}}{ARGUMENT}(?:\.\w+|{ARGUMENT}|\(\))*")
PLACEHOLDER = re.compile("|".join(f"(?:{form})" for form in (
    r"[*\u2022\u00b7xX#.\-_~\\]+",  # a mask: ****, xxxx, ...
    r"<[^<>]*>|\[[^\[\]]*\]|\([^()]*\)|\{\{.*\}\}|\{[^{}]*\}",  # a template slot or an aside
    r"\$[{(].*|#\{.*\}|%[A-Za-z_]\w*%|\$[A-Z_][A-Z0-9_]*",  # an interpolation, $ENV_NAME
    r"[A-Z]{2,}[A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+(?:_[0-9]+)?",  # an environment variable: DB_PASSWORD
    CALL,  # code that fetches it: getenv(NAME), vault.read(), Optional[str]
    r"[a-zA-Z][a-zA-Z0-9+.\-]*://\S*|arn:[\w\-]+:\S*",  # a URL or ARN (a URL's user:password
    # part is a shape of its own)
    r"(?:~|\.{1,2})/\S+|/[\w.\-]+(?:/[\w.\-]+)+/?|[A-Za-z]:\\\S*",  # a file that holds it
)))
IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
OPENERS = {"<": ">", "(": ")", "[": "]", "{": "}"}
QUOTES = "\"'`"
# Tokens that end a value: a comment, a cell border, a dash, an operator, a line continuation.
RUN_STOPS = frozenset({"#", "//", "|", "-", "--", "\u2014", "\u2013", "=", "->", "=>", ":=", "\\"})
STRUCTURE = re.compile(r"[\[{(<]+")  # `"credentials": [` opens a list, not a value
# An unquoted word ends at a space or a cut: a closing quote or backtick, a table bar, a `;`
# (shell and connection strings), or the `&` of a query string's next pair.
WORD = re.compile(r"(?:[^\s\"`|;&]|&(?!\w+=))+")
WORD_END = re.compile(r"[\s\"`|;]|&(?=\w+=)")
SPACE = re.compile(r"\s*")
CLOSING_EMPHASIS = re.compile(r"[ \t]*(?:[*_]{1,3}[ \t]+)?")
MARKER_START = "[REDACTED:"  # what redaction left: redacting again stops there
LONGEST = 1024  # a quoted value runs at most this far; a bracketed placeholder a quarter of it


def is_placeholder(value: str) -> bool:
    """True for a value that stands in for a secret instead of being one: empty, a mask
    (`****`), a template slot or aside (`<your key>`, `(ask Lena)`), a reference to where the
    value lives (`${DB_PASSWORD}`, `$TOKEN`, `DB_PASSWORD`, `os.environ["X"]`,
    `settings.SECRET_KEY`, a URL, a file path) or a literal of another type (`true`, `none`,
    `str`). Words are values: `changeme` or `password` is a weak password, not a placeholder."""
    text = value.strip().rstrip(".,;:!?")
    if len(text) < 2 or text.lower() in LITERALS:  # one character is a flag (0, 1, y), no secret
        return True
    return bool(PLACEHOLDER.fullmatch(text)) or _names_a_credential(text)


def _names_a_credential(text: str) -> bool:
    """A variable or setting that holds the secret: `source_credentials`, `dbPassword`,
    `settings.SECRET_KEY` (a bare `password` is a weak password, not a name)."""
    if not IDENTIFIER.fullmatch(text):
        return False
    last = text.rsplit(".", 1)[-1]
    found = NAME_TAIL.search(last)
    if not found or ("." not in text and found.start() == 0):
        return False
    before = last[found.start() - 1] if found.start() else "."
    return before in "_-." or (before.islower() and last[found.start()].isupper()) or "." in text


def name_kind(name: str) -> str | None:
    """The finding's kind when `name` names a credential (`DB_PASSWORD`, `clientSecret`,
    `api-key`), or None (`token_url`, `password_policy`, `max_tokens`)."""
    found = NAME_TAIL.search(name)
    return _kind(found) if found and _bounded(name, found) else None


def value_is_secret(value: str) -> bool:
    """Whether a value standing alone under a credential's name (a front matter field) is one:
    it is, unless it reads as a placeholder or as prose."""
    return bool(value.strip()) and _unquoted(value.strip(), 0) is not None


def may_hold_assignment(line: str, lowered: str) -> bool:
    """A cheap test before the label regex: whether a credential's noun occurs at all."""
    return any(noun in lowered for noun in NOUN_HINTS) or "PIN" in line


def assignment_spans(line: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each value after a credential's name on one line."""
    consumed = 0
    for label in LABEL.finditer(line):
        # A label inside a value already hidden is part of it; skipping it keeps a line of
        # `token=token=...` linear.
        if label.start() < consumed or not _bounded(line, label):
            continue
        at = _value_start(line, label)
        span = None if at is None else _value(line, at, _form(label))
        if span:
            consumed = span[1]
            yield span[0], span[1], _kind(label)


def _kind(label: re.Match[str]) -> str:
    return f"{_family(label)}-assignment"


def _family(label: re.Match[str]) -> str:
    return next(family for family in FAMILIES if label[family])


def _bounded(text: str, label: re.Match[str]) -> bool:
    """Short nouns need a boundary: DB_PASS but not bypass, $PWD but not a word holding pwd;
    a noun after `/` is a path (/etc/passwd)."""
    noun = label[_family(label)]
    before = text[label.start() - 1] if label.start() else ""
    if before == "/":
        return False
    if noun.lower() == "pass":
        return before in ("_", "-", ".")
    if noun.lower() == "pwd" or noun.startswith("PIN"):
        return before not in ALNUM
    return True


def _value_start(line: str, label: re.Match[str]) -> int | None:
    """Where the value begins: after the separator, or after the space of a `--flag`, or
    after the `>` of an XML element; None when the label is no assignment."""
    sep = label["sep"]
    name_start, furthest = label.start(), max(0, label.start() - 64)
    while name_start > furthest and line[name_start - 1] in NAME_CHARS:
        name_start -= 1
    if _not_a_credential(line, name_start, label):
        return None
    if sep is None:
        # A flag's value follows it in the same word list: "`--password` stores" is prose.
        flag = label["gap"] and not label["close"] and line.startswith("--", name_start)
        return label.end() if flag and not line.startswith("-", label.end()) else None
    if sep == ">" and not (name_start and line[name_start - 1] == "<"):
        return None
    # `**Password:** hunter2`: the label's closing emphasis comes before the value.
    return _skip(CLOSING_EMPHASIS, line, label.end())


def _skip(pattern: re.Pattern[str], line: str, at: int) -> int:
    """Where a pattern that may match nothing (`\\s*`) ends when matched at `at`."""
    found = pattern.match(line, at)
    return found.end() if found else at


def _form(label: re.Match[str]) -> str:
    """How far an unquoted value runs: to the closing tag in XML; one word in a shell
    assignment (`PGPASSWORD=x psql`) or after a `--flag`; over words elsewhere (YAML, INI,
    prose labels), where a scalar may hold spaces."""
    sep = label["sep"]
    if sep == ">":
        return "xml"
    if sep is None or (sep == "=" and not label["gap"] and not _spaced_after(label)):
        return "word"
    return "words"


def _spaced_after(label: re.Match[str]) -> bool:
    return label.string[label.end():label.end() + 1] in (" ", "\t")


def _not_a_credential(line: str, name_start: int, label: re.Match[str]) -> bool:
    """A segment of an ARN or URN (`...:secret:mysecret`), a cursor token, or an adjective
    ("they need not be secret: IVs are public")."""
    if name_start and line[name_start - 1] == ":":
        return True
    if label["token"] and CURSOR.search(line, name_start, label.start()):
        return True
    if not label["secret"]:
        return False
    before = PREVIOUS_WORD.search(line, max(0, name_start - 32), name_start)
    return before is not None and before[1].lower() in PREDICATIVE


def _value(line: str, at: int, form: str = "words") -> tuple[int, int] | None:
    if at >= len(line):
        return None
    if form == "xml":  # `<password>x</password>`; `<password>` alone is a slot in a command
        end = line.find("</", at, at + LONGEST)
        return None if end == -1 or is_placeholder(line[at:end]) else _trimmed(line, at, end)
    if line[at] in QUOTES:
        return _quoted(line, at)
    return _unquoted(line, at, one_word=form == "word")


def _quoted(line: str, at: int) -> tuple[int, int] | None:
    """A quoted value is a literal, whatever words it holds; unclosed, it runs to the end."""
    quote, end = line[at], at + 1
    limit = min(len(line), at + LONGEST)
    while True:
        end = line.find(quote, end, limit)
        if end == -1:
            end = limit
            break
        if quote != '"' or _escapes(line, end) % 2 == 0:
            break
        end += 1
    if is_placeholder(line[at + 1:end]):
        return None
    return _trimmed(line, at + 1, len(line) if end == limit else end)


def _escapes(line: str, at: int) -> int:
    count = 0
    while at - count > 0 and line[at - count - 1] == "\\":
        count += 1
    return count


def _unquoted(line: str, at: int, one_word: bool = False) -> tuple[int, int] | None:
    """Words up to the first function word, aside, comment or clause end: `hunter2` in
    "password: hunter2 for staging", all four in "password: correct horse battery staple"."""
    if _wrapped(line, at):
        return None
    # Judged on a window, so a long word after many labels is not read once per label; a
    # secret that fills the window runs on to the end of its word.
    limit = min(len(line), at + LONGEST)
    end = _run_end(line, at, limit, one_word)
    if end is None or end == at:
        return None
    if is_placeholder(line[at:end]):
        return _after_annotation(line, end)
    if end == limit:
        found = WORD_END.search(line, end)
        end = found.start() if found else len(line)
    return _trimmed(line, at, end)


def _wrapped(line: str, at: int) -> bool:
    """`<your key here>`, `(ask Lena)`, `${DB_PASSWORD}`, `[REDACTED:...]`: a slot, an aside
    or a reference, closed within a short reach."""
    opener = line[at]
    if opener == "$" and line[at + 1:at + 2] in ("{", "("):
        opener = line[at + 1]
    closer = OPENERS.get(opener)
    return closer is not None and line.find(closer, at, at + LONGEST // 4) != -1


def _run_end(line: str, at: int, limit: int, one_word: bool) -> int | None:
    """Where the run of value words from `at` ends; None for code that fetches the value
    with a string (`os.environ["X"]`, `getenv('X')`)."""
    start = end = at
    while at < limit and (word := WORD.match(line, at, limit)):
        core = word.group()
        if _starts_prose(core, first=end == start):
            break
        end, after = word.start() + len(core.rstrip("*")), word.end()
        quoted_next = after < len(line) and line[after] in QUOTES
        if core[-1] in "([" and quoted_next and IDENTIFIER.fullmatch(core[:-1]):
            return None
        if one_word or core[-1] in ",;.!?:" or (after < len(line) and not line[after].isspace()):
            break  # one word wanted, a clause ends, or a cut (`;`, a closing quote or bar)
        at = _skip(SPACE, line, after)
    return end


def _starts_prose(word: str, first: bool) -> bool:
    if word in RUN_STOPS or word.startswith(("#", MARKER_START)) or STRUCTURE.fullmatch(word):
        return True
    if word.startswith("(") and not first:
        return True
    return word.strip(".,;:!?*()[]{}'").lower() in FUNCTION_WORDS


def _after_annotation(line: str, end: int) -> tuple[int, int] | None:
    """`password: str = "hunter2"`: after a type or placeholder, a value may still follow `=`."""
    rest = line[end:end + 8].lstrip()
    if not rest.startswith("=") or rest.startswith("=="):
        return None
    at = line.index("=", end) + 1
    while at < len(line) and line[at] in " \t":
        at += 1
    return _value(line, at)


def _trimmed(line: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and line[start].isspace():
        start += 1
    while end > start and line[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
