"""Guarantee 4 on the real stack (SQLite FTS5, MarkdownNoteSource, Graphify): FTS5 syntax is
searched as text, and no path, however written, reads outside the memory root: not `../`,
absolute, `~`, drive or UNC forms, hidden folders, nor symlinks leading out of the root.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from live_root import LiveRoot, mcp_caller

EXAMPLES = int(os.environ.get("AI_MEMORY_REAL_STACK_EXAMPLES", "5")) * 10
SEEN: Counter = Counter()
CANARY = "outsidecanary7731"
FTS_SYNTAX = ['"', '""', '"unclosed', "*", "retry*", "NEAR(", "NEAR(retry timeout, 2)", "-",
              "-retry", "AND", "OR", "NOT", "AND OR NOT", "retry AND", "^", "^retry",
              "title:retry", "{title indexed}: retry", "(", "(retry OR", "'", "\\", "+",
              "retry NOT timeout", '" OR 1=1 --', "'; DROP TABLE notes; --", "chunk_fts",
              "rank MATCH 'x'", "\x01\x7f", "𝔯𝔢𝔱𝔯𝔶", "ＲＥＴＲＹ", "e\u0301", "retry" * 400]
NOTES = {
    "Repos/api/Notes/Retry.md": "# Retry policy\n\nThe API client retries the payment "
                                "webhook three times.\nSee [[Timeouts]].\n",
    "Repos/api/Notes/Timeouts.md": "# Timeouts\n\nThe gateway timeout is 30 seconds.\n",
    "Decisions/Backoff.md": "# Backoff\n\nAll clients back off exponentially (NEAR the "
                            "limit, AND OR NOT).\n",
}


def escapes(root: LiveRoot, outside) -> dict[str, str]:
    """Paths that must never be served: rel path -> why."""
    return {
        "Repos/api/Notes/Escape.md": "symlink to a note outside the root",
        "Repos/api/Notes/Relative.md": "relative symlink leaving the root",
        "Repos/api/Notes/Passwd.md": "symlink to /etc/passwd",
        "Repos/api/Linked/Inner.md": "note inside a symlinked folder outside the root",
        ".hidden/Hidden.md": "hidden folder",
        ".ai-memory/index/CURRENT": "derived state",
        "../outside/Secret.md": "parent traversal",
        "Repos/../../outside/Secret.md": "traversal in the middle",
        "..\\outside\\Secret.md": "Windows separators",
        str(outside / "Secret.md"): "absolute path",
        "~/Secret.md": "home",
        "C:\\outside\\Secret.md": "drive",
        "C:Secret.md": "drive-relative",
        "\\\\server\\share\\Secret.md": "UNC",
        "//server/share/Secret.md": "UNC, forward slashes",
        "file:///etc/passwd": "URL",
        "Repos/api/Notes/Retry.md\x00/../../outside/Secret.md": "NUL",
    }


@pytest.fixture(scope="module")
def stack(tmp_path_factory, embedder):
    base = tmp_path_factory.mktemp("hostile-input")
    outside = base / "outside"
    (outside / "Folder").mkdir(parents=True)
    for path in (outside / "Secret.md", outside / "Folder" / "Inner.md"):
        path.write_text(f"# Outside\n\nThe {CANARY} must never be served.\n", encoding="utf-8")
    root = LiveRoot.create(base / "memory", NOTES)
    notes = root.path / "Repos/api/Notes"
    (notes / "Escape.md").symlink_to(outside / "Secret.md")
    (notes / "Relative.md").symlink_to(os.path.join("..", "..", "..", "..", "outside",
                                                    "Secret.md"))
    (notes / "Passwd.md").symlink_to("/etc/passwd")
    (root.path / "Repos/api/Linked").symlink_to(outside / "Folder", target_is_directory=True)
    root.write(".hidden/Hidden.md", f"# Hidden\n\n{CANARY}\n")
    service = root.service(embedder)
    report = service.refresh("full")
    assert report.ok, report
    def counted(name: str, arguments: dict):
        result = call(name, arguments)
        SEEN["tool error" if result.is_error else "valid result"] += 1
        return result

    with mcp_caller(service) as call:
        yield root, outside, report, counted
    print(f"\n[hostile-input-real-stack] {sum(SEEN.values())} calls: {dict(SEEN)}",
          file=sys.stderr)


def check(result, where) -> dict | None:
    """A one-line tool error (None) or the structured result; never the canary."""
    text = " ".join(c.text for c in result.content if hasattr(c, "text"))
    assert CANARY not in text and CANARY not in repr(result.structured_content), where
    if result.is_error:
        assert "\n" not in text and "Traceback" not in text, (where, text)
        assert not text.startswith("internal error"), (where, text)
        return None
    assert isinstance(result.structured_content, dict), where
    return result.structured_content


pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges")


def test_symlinks_leaving_the_root_are_skipped_with_a_warning(stack):
    root, _, report, _ = stack
    warnings = "\n".join(report.warnings)
    for rel in ("Repos/api/Notes/Escape.md", "Repos/api/Notes/Relative.md",
                "Repos/api/Linked"):
        assert rel in warnings and "outside the memory root" in warnings, (rel, warnings)


@pytest.mark.parametrize("query", FTS_SYNTAX)
def test_fts_syntax_is_searched_as_text(stack, query):
    _, _, _, call = stack
    for tool in ("memory_search", "memory_explain"):
        result = check(call(tool, {"query": query[:2000]}), (tool, query))
        assert result is not None, (tool, query)  # never an error: it is only text


def test_operators_written_in_a_note_are_found_as_words(stack):
    _, _, _, call = stack
    packet = check(call("memory_search", {"query": 'NEAR the limit, AND OR NOT'}), "words")
    assert packet["items"] and packet["items"][0]["path"] == "Decisions/Backoff.md"


def test_no_path_reads_outside_the_root(stack):
    root, outside, _, call = stack
    for identity, why in escapes(root, outside).items():
        result = call("memory_get", {"identity": identity})
        assert check(result, (identity, why)) is None, (identity, why)
        assert result.content[0].text.startswith(("invalid request", "not found",
                                                  "invalid arguments")), (identity, why)
        for tool, args in (("memory_neighbors", {"identity": identity}),
                           ("memory_path", {"source": identity, "target": "Retry"}),
                           ("memory_explain", {"query": "retry", "identity": identity}),
                           ("memory_feedback", {"query": "q", "memory_id": identity,
                                                "relevance": "missing"})):
            check(call(tool, args), (tool, identity))
    asked = call("memory_search", {"query": f"{CANARY} must never be served"})
    assert not asked.is_error  # the query itself names the canary; no item may hold it
    assert all(CANARY not in repr(item) for item in asked.structured_content["items"])


@pytest.mark.parametrize("prefix", ["../", "..", "/etc", "~", "~/notes", "C:\\", "c:/x",
                                    "\\\\server\\share", "//server/share", "Repos/../../x"])
def test_a_path_prefix_outside_the_root_is_refused(stack, prefix):
    _, _, _, call = stack
    result = call("memory_search", {"query": "retry", "path_prefix": prefix})
    assert check(result, prefix) is None and "invalid request" in result.content[0].text


HOSTILE_TEXT = st.one_of(st.text(max_size=40), st.sampled_from(FTS_SYNTAX),
                         st.lists(st.sampled_from(FTS_SYNTAX + ["retry", "webhook"]),
                                  min_size=1, max_size=6).map(" ".join))


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(query=HOSTILE_TEXT, identity=st.one_of(HOSTILE_TEXT, st.sampled_from(
    ["Retry", "Repos/api/Notes/Retry.md", "../outside/Secret.md", "Repos/api/Linked/Inner.md"])),
    prefix=st.one_of(st.none(), HOSTILE_TEXT))
def test_generated_queries_identities_and_prefixes(stack, query, identity, prefix):
    _, _, _, call = stack
    search = {"query": query} if prefix is None else {"query": query, "path_prefix": prefix}
    check(call("memory_search", search), search)
    check(call("memory_get", {"identity": identity}), identity)
    check(call("memory_explain", {"query": query, "identity": identity}), identity)
