"""Questions that ask for a credential's value: memory never holds one (notes are redacted and
agents are told not to store secrets), so such a question has no answer in memory; notes on
where a secret is kept or how it rotates are leads, not answers.

The rule, over general features of the question rather than a list of phrasings:
1. a credential is named as the head of a noun phrase (`the prod db password`, not
   `the password policy` nor `password reset flow`), definite (`the`, `our`, a modifier: not
   `a token of thanks`, `what is a JWT`);
2. that noun phrase is the object of a request for a value: `what is/was ...`, `what did we set
   ... to`, `give/tell/show/send/paste me ...`, `I need ...`, `do you know ...`, `remind me
   of ...`, or the question is the noun phrase alone (`staging api key?`, `value of X`);
3. nothing in it asks about the credential instead (where, how, who, when, why, which,
   whether, if, about; `stored`, `expires`, `used for`): such questions memory can answer.
When in doubt it answers no: a false "no answer" hides notes that could have helped.
"""

from __future__ import annotations

import re

from attrs import frozen

from memory.domain.secret_values import name_kind
from memory.domain.seen_text import SeenText

NOUNS = {  # credential nouns of one to three words, singular; plurals are derived
    "password", "passwd", "passphrase", "passcode", "credential", "credentials", "creds",
    "apikey", "otp", "api key", "access key", "secret key", "secret access key", "private key",
    "signing key", "ssh key", "gpg key", "pgp key", "encryption key", "master key",
    "license key", "deploy key", "account key", "storage key", "client secret", "app secret",
    "shared secret", "webhook secret", "api secret", "jwt secret", "signing secret",
    "connection string",
    "access token", "auth token", "api token", "bearer token", "refresh token", "bot token",
    "session token", "personal access token", "recovery code", "backup code", "2fa code",
    "pin code", "pin number", "login details", "login info", "login credentials",
}
TERMS = {tuple(n.split()) for n in NOUNS} | {(*n.split()[:-1], n.split()[-1] + "s") for n in NOUNS}
# Words that name a credential only in context: `the slack token`, `the secret for the
# webhook`, but not `a token of thanks`, `the secret to a happy life`, `her secret`.
AMBIGUOUS = {"token", "tokens", "secret", "secrets", "login"}
ABOUT = {"where", "how", "who", "whom", "whose", "when", "why", "which", "whether", "if",
         "about", "wherever", "whenever"}
TAIL_ABOUT = {"stored", "kept", "saved", "located", "held", "live", "lives", "expire", "expires",
              "expired", "expiring", "expiry", "mean", "means", "rotated", "rotate", "rotates",
              "generated", "issued", "revoked", "leaked", "work", "works", "look", "looks",
              "formatted", "encrypted", "hashed", "valid", "invalid", "required", "allowed"}
COPULA = {"is", "are", "was", "were"}
DO = {"did", "do", "does", "have", "has", "had", "was", "were"}
SETTING = {"set", "change", "changed", "make", "made", "use", "used", "pick", "picked",
           "choose", "chose", "put", "reset", "rotate", "rotated", "update", "updated",
           "setting", "using", "picking", "choosing", "putting", "changing"}
REQUEST = {"give", "gimme", "tell", "show", "send", "paste", "print", "share", "reveal",
           "display", "provide", "post", "dm", "list", "dump", "output", "fetch", "get", "grab",
           "copy", "type", "spell", "echo", "read", "find", "lookup", "retrieve", "return",
           "recall", "hand", "forward", "drop", "spit", "text", "email", "message"}
# `would you mind sending`, `mind pasting`: a request as a gerund after "mind".
GERUNDS = {word + "ing" for word in REQUEST} | {"giving", "sharing", "typing", "pasting",
                                               "sending", "getting", "dropping", "emailing"}
PARTICLES = {"over", "out", "across", "along", "up"}  # `send over`, `spit out`, `look up`
NEED = {"need", "want", "like", "require", "needs", "wants"}
KNOW = {"know", "have", "remember", "recall", "got"}
ASKED = {"you", "we", "anyone", "anybody", "someone", "somebody", "u"}
MODALS = {"can", "could", "would", "will", "may"}
RECIPIENTS = {"me", "us", "him", "her", "them"}
DEFINITE = {"the", "this", "that", "these", "those", "our", "my", "your", "their", "its", "his",
            "her", "current", "new", "old", "actual", "real", "exact", "same"}
PERSONAL = {"his", "her", "their"}
INDEFINITE = {"a", "an", "any", "some", "another", "no", "every", "each"}
FILLERS = {"hey", "hi", "hello", "ok", "okay", "so", "um", "uh", "please", "pls", "plz", "btw",
           "also", "and", "now", "quick", "question", "quickly", "again", "just", "yo", "oh"}
# Closed-class words: they end a noun phrase, so a credential before one is its head, and one
# inside the words before it means the credential is not the object asked for.
CLOSED = ABOUT | COPULA | DO | RECIPIENTS | INDEFINITE | {
    "for", "to", "of", "on", "in", "at", "by", "with", "from", "into", "as", "than", "and", "or",
    "but", "that", "what", "i", "we", "you", "it", "they", "he", "she", "be", "been", "being",
    "am", "can", "could", "will", "would", "should", "shall", "may", "might", "must", "not",
    "please", "again", "now", "here", "there", "used", "set", "value", "values", "itself", "'s",
    "asap", "urgently", "quickly", "today", "right", "thanks", "thx", "pls", "plz", "handy",
    "this", "these", "those"}
ACTIONS = {  # verbs that act on a credential: an imperative of one asks to act, not to tell
    "reset", "rotate", "revoke", "renew", "refresh", "regenerate", "generate", "create", "store",
    "save", "keep", "encrypt", "hash", "expire", "invalidate", "configure", "setup", "update",
    "delete", "remove", "add", "change", "enable", "disable", "disabled", "enabled", "check",
    "verify", "validate", "test", "audit", "scan", "leak", "leaked", "commit", "manage", "sync",
    "issue", "request", "obtain", "protect", "hide", "mask", "redact", "explain", "describe",
    "compare", "document", "write", "inject", "mount", "pass", "load", "parse", "decode",
    "encode", "sign", "copying", "rotating", "resetting", "storing", "sharing", "using"}
WORD = re.compile(r"[A-Za-z0-9_]+(?:[-.][A-Za-z0-9_]+)*|'s|[?.!;,]")
CONTRACTIONS = ((re.compile(r"(?i)\b(what|where|who|how|when|why|that|it|there|here)'s\b"), r"\1 is"),
                (re.compile(r"(?i)\bwhats\b"), "what is"), (re.compile(r"(?i)n't\b"), " not"),
                (re.compile(r"(?i)\bi'd\b"), "i would"), (re.compile(r"(?i)\bi'm\b"), "i am"),
                (re.compile(r"(?i)\b(we|you|they)'re\b"), r"\1 are"))
BARE_TAIL = {"for", "of", "on", "in", "at", "please", "value", "values", "again", "now", "here"}
BREAKS = {"?", ".", "!", ";", ",", "and", "but", "or", "then"}


@frozen
class SecretQuestion:
    """Whether a question asks for a credential's value, which credential, and why."""

    asks_for_value: bool
    credential: str | None
    reason: str


def asks_for_secret_value(query: str) -> bool:
    """True for a question or request asking for the value of a credential."""
    return judge_secret_question(query).asks_for_value


def judge_secret_question(query: str) -> SecretQuestion:
    """The rule of this module applied to `query`, with the feature that decided it."""
    words = _words(query)
    about = ABOUT & {w.lower() for w in words}
    named, reason = _first_request(_clauses(words), asking=not about)
    if reason:
        return SecretQuestion(True, named, reason)
    if named is None:
        return SecretQuestion(False, None, "names no credential as the thing asked for")
    if about:
        return SecretQuestion(False, named, f"asks about the credential ({min(about)}), not for it")
    return SecretQuestion(False, named, "names a credential but asks for no value")


def _first_request(clauses: list[list[str]], asking: bool) -> tuple[str | None, str | None]:
    """The first credential named, and the frame that asks for its value if one does."""
    named, opening = None, True
    for clause in clauses:
        found = _credential(clause)
        if found is None:
            if named and asking and _asks_what_it_is(clause):
                return named, "asks what the credential named before is"
            opening = opening and not _without_fillers([w.lower() for w in clause])
            continue
        named = named or " ".join(clause[found[0]:found[1]])
        reason = _value_request(clause, *found, opening) if asking else None
        if reason:
            return named, reason
        opening = False
    return named, None


def _words(query: str) -> list[str]:
    # Read as a reader would: `the pass\u200bword`, fullwidth letters and `pass**word**` too.
    text = SeenText.of(query).read().replace("\u2019", "'")
    for pattern, replacement in CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return WORD.findall(text)


def _clauses(words: list[str]) -> list[list[str]]:
    clauses: list[list[str]] = []
    current: list[str] = []
    for word in words:
        if word.lower() in BREAKS:
            clauses.append(current)
            current = []
        else:
            current.append(word)
    return [c for c in [*clauses, current] if c]


def _credential(clause: list[str]) -> tuple[int, int] | None:
    """(start, end) of the first credential named as the head of its noun phrase."""
    lowered = [w.lower() for w in clause]
    for start in range(len(clause)):
        end = _term_end(clause, lowered, start)
        if end and _is_head(lowered, end) and _names_credential(lowered, start, end):
            return start, end
    return None


def _term_end(clause: list[str], lowered: list[str], start: int) -> int | None:
    for size in (3, 2, 1):
        if tuple(lowered[start:start + size]) in TERMS and start + size <= len(clause):
            return start + size
    word = clause[start]
    if word in ("PIN", "PINs") or lowered[start] in AMBIGUOUS:
        return start + 1
    # An identifier naming a credential: AWS_SECRET_ACCESS_KEY, DB_PASSWORD, githubToken.
    if ("_" in word or word[1:] != word[1:].lower()) and name_kind(word):
        return start + 1
    return None


def _is_head(lowered: list[str], end: int) -> bool:
    """The credential ends its noun phrase: `password policy` is a policy; `the password for
    staging`, `the password?` and `the password's value` are the password."""
    if end == len(lowered):
        return True
    after = lowered[end]
    if after == "'s":
        return lowered[end + 1:end + 2] in (["value"], ["values"])
    return after in CLOSED or after.isdigit()


def _names_credential(lowered: list[str], start: int, end: int) -> bool:
    """An ambiguous word names a credential only with a modifier before it or `for` after it,
    and never as `a token of...`, `the secret to...`, `her secret`."""
    if lowered[start] not in AMBIGUOUS or end - start > 1:
        return True
    before = lowered[start - 1] if start else ""
    after = lowered[end] if end < len(lowered) else ""
    if after in ("of", "to") or before in PERSONAL or before in INDEFINITE:
        return False
    modified = bool(before) and before not in CLOSED and before not in DEFINITE
    return modified or after == "for"


def _asks_what_it_is(clause: list[str]) -> bool:
    """`I forgot the admin password, what is it?`: a pronoun for the credential just named."""
    words = _without_fillers([w.lower() for w in clause])
    return len(words) >= 3 and words[0] == "what" and words[1] in COPULA and \
        words[2] in ("it", "they") and all(w in BARE_TAIL for w in words[3:])


def _value_request(clause: list[str], start: int, end: int, opening: bool) -> str | None:
    """The frame asking for the credential's value, or None. A question that is the noun
    phrase alone counts only when nothing came before it (`explain X and the API key`)."""
    lowered = [w.lower() for w in clause]
    before, after = _polite(_without_fillers(lowered[:start])), lowered[end:]
    if after and (after[-1] in ("for", "about", "with", "from") or TAIL_ABOUT & set(after)):
        return None  # `what is the key for?`, `the token expires`: asks about it
    if not _definite(before, clause[start:end], after):
        return None
    frames = (_copula, _setting, _which_credential, _request, _need, _know, _remind)
    for frame in (*frames, _bare) if opening else frames:
        reason = frame(before, lowered[start:end], after)
        if reason:
            return reason
    return None


def _polite(words: list[str]) -> list[str]:
    """`could you remind me`, `can u send`: the request without its politeness."""
    if words[:1] and words[0] in MODALS and words[1:2] in (["you"], ["u"]):
        return _without_fillers(words[2:])
    return words


def _without_fillers(words: list[str]) -> list[str]:
    at = 0
    while at < len(words) and words[at] in FILLERS:
        at += 1
    return words[at:]


def _definite(before: list[str], term: list[str], after: list[str]) -> bool:
    """`what is a JWT`, `what are API keys`: a definition; an identifier alone (`what is
    DB_PASSWORD`) is one too unless its value is asked (`... set to`)."""
    if INDEFINITE & set(before):
        return False
    if len(before) >= 2 and before[-2] == "what" and before[-1] in COPULA:  # nothing between
        identifier = any("_" in w or not w.islower() for w in term)
        return identifier and ("set" in after or "value" in after)
    return True


def _noun_phrase(words: list[str]) -> bool:
    """Determiners, then modifiers: `the prod db`, `our`, `the value of the`; no closed-class
    word inside, no verb acting on the credential, no determiner after a modifier."""
    if "of" in words and words[words.index("of") - 1:words.index("of")] in (["value"], ["values"]):
        words = words[words.index("of") + 1:]
    modifier_seen = False
    for word in words:
        if word in DEFINITE and not modifier_seen:
            continue
        if word == "'s" and modifier_seen:
            continue
        if word in CLOSED or word in ACTIONS or word in DEFINITE:
            return False
        modifier_seen = True
    return True


def _bare(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`staging api key?`, `password for the prod db`, `value of AWS_SECRET_ACCESS_KEY`; not a
    statement about the credential (`passwords must be long`)."""
    if after[:1] and after[0] not in BARE_TAIL:
        return None
    return "the question is the credential alone" if _noun_phrase(before) else None


def _copula(before: list[str], term: list[str], after: list[str]) -> str | None:
    if before[:1] == ["what"] and before[1:2] and before[1] in COPULA and _noun_phrase(before[2:]):
        return "asks what the credential is"
    return None


def _setting(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`what did we set the redis password to`, `what did they change the PIN to`."""
    if before[:1] != ["what"] or before[1:2] == [] or before[1] not in DO:
        return None
    verbs = [i for i, w in enumerate(before) if w in SETTING]
    if not verbs:
        return None
    rest = before[verbs[0] + 1:]
    rest = rest[1:] if rest[:1] == ["as"] else rest  # `what did we use as the password`
    return "asks what the credential was set to" if _noun_phrase(rest) else None


def _which_credential(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`what password did we set for redis`: an unmistakable credential noun and a verb that
    gives it a value (`what credentials does the job need` asks which, memory may know)."""
    if before == ["what"] and term[0] not in AMBIGUOUS and SETTING & set(after):
        return "asks which value the credential has"
    return None


def _request(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`give me`, `send us over`, `could I get`, `tell me what ... is`: a request for it."""
    words = _as_imperative(before)
    if not words or words[0] not in REQUEST:
        return None
    rest = words[1:]
    for optional in (PARTICLES, RECIPIENTS, PARTICLES, {"what"}):
        rest = rest[1:] if rest[:1] and rest[0] in optional else rest
    return "requests the credential" if _noun_phrase(rest) else None


def _as_imperative(words: list[str]) -> list[str] | None:
    """`I need you to send`, `can I get`, `mind sending`: the request as a plain imperative;
    None for a request for permission (`can I share my password with...`)."""
    if words[:1] in (["i"], ["we"]) and words[1:2] and words[1] in NEED \
            and words[2:4] == ["you", "to"]:
        return words[4:]
    if words[:1] and words[0] in MODALS and words[1:2] in (["i"], ["we"]):
        return ["give", *words[3:]] if words[2:3] in (["get"], ["have"], ["see"]) else None
    if words[:1] == ["mind"] and words[1:2] and words[1] in GERUNDS:
        return ["give", *words[2:]]
    return words


def _need(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`I need the staging token`, `we would like to know the admin password`, `I'm looking
    for the Cloudflare token`."""
    if before[:1] and before[0] in NEED:
        before = ["i", *before]  # `need the Heroku API key asap`
    if before[:1] not in (["i"], ["we"]):
        return None
    words = before[1:]
    if words[:1] == ["would"]:
        words = words[1:]
    if words[:3] in (["am", "looking", "for"], ["are", "looking", "for"]):
        words = ["need", *words[3:]]
    if not words or words[0] not in NEED:
        return None
    words = words[1:]
    if words[:1] == ["to"] and words[1:2] and words[1] in ("know", "see", "get", "have"):
        words = words[2:]
    return "says it needs the credential" if _noun_phrase(words) else None


def _know(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`do you know the wifi password`, `does anyone have the admin PIN`."""
    words = before[1:] if before[:1] and before[0] in ("do", "does", "did") else before
    if len(words) >= 2 and words[0] in ASKED and words[1] in KNOW and _noun_phrase(words[2:]):
        return "asks whether the credential is known"
    return None


def _remind(before: list[str], term: list[str], after: list[str]) -> str | None:
    """`remind me of the admin PIN`, `remind me what the staging password is`."""
    if before[:2] not in (["remind", "me"], ["remind", "us"]):
        return None
    words = before[2:]
    if words[:1] in (["of"], ["what"]):
        words = words[1:]
    return "asks to be reminded of the credential" if _noun_phrase(words) else None
