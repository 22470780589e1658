"""Guarantee 4: whatever arguments an agent sends, every tool answers with a valid result or
a one-line tool error; never a traceback, an internal error or a dead server.

Generated arguments mix valid values (to reach deep code) with hostile ones: any unicode,
NUL, huge strings, negative and huge numbers, NaN, wrong types, FTS5 syntax, paths that
try to leave the root. AI_MEMORY_HYPOTHESIS_EXAMPLES scales the number of calls.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import anyio.from_thread
import pytest
from builders import World, make_doc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from memory.entrypoints.mcp_server import build_server

EXAMPLES = int(os.environ.get("AI_MEMORY_HYPOTHESIS_EXAMPLES", "150"))
FTS_SYNTAX = ['"', '""', '"unclosed', "*", "retry*", "NEAR(", "NEAR(retry timeout, 2)", "-",
              "-retry", "AND", "OR", "NOT", "AND OR NOT", "retry AND", "^", "^retry", "a:b",
              "title:retry", "{title}: x", "(", ")", "(retry OR", "'", "\\", "+", "!", "~",
              "`", "%", "_", "retry NOT timeout", '" OR 1=1 --', "'; DROP TABLE notes; --"]
TRAVERSAL = ["../", "..", "../../etc/passwd", "/etc/passwd", "~/notes.md", "~", "C:\\x",
             "C:/Windows/win.ini", "c:x.md", "\\\\server\\share\\x.md", "//server/share/x.md",
             "Repos/../../outside.md", "..\\..\\outside.md", "Repos/api/../../../x.md",
             "./.ai-memory/index/CURRENT", ".git/config", "Repos/api/Notes/.hidden.md",
             "%2e%2e/x.md", "file:///etc/passwd", "Repos/api/Notes/Retry.md\x00.txt",
             "Repos/api/Notes/Retry.md/..", "\u202e/dm.yrter",
             "CON", "NUL.md", "Repos/api/Notes/" + "a" * 300 + ".md"]
WORDS = ["retry", "payment", "webhook", "gateway", "timeout", "ALPHA-142", "api", "backoff"]

text = st.one_of(
    st.text(max_size=50),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF,
                                   exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(FTS_SYNTAX + TRAVERSAL + WORDS),
    st.lists(st.sampled_from(FTS_SYNTAX + WORDS), min_size=1, max_size=8).map(" ".join),
    st.builds(lambda a, b: f"{a}\x00{b}", st.sampled_from(WORDS), st.sampled_from(WORDS)),
    st.sampled_from([1_999, 2_000, 2_001, 100_000, 1_000_000]).map(lambda n: "q" * n),
)
number = st.one_of(st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                   st.sampled_from([0, -1, 1, 50, 51, 4, 5, 2 ** 31, 2 ** 63, 10 ** 9 + 1]),
                   st.floats(allow_nan=True, allow_infinity=True))
hostile = st.one_of(text, number, st.booleans(), st.none(),
                    st.lists(st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
                    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))

VALID = {
    "query": st.sampled_from(WORDS).map(lambda w: f"{w} policy"),
    "identity": st.sampled_from(["retry", "timeouts", "Repos/api/Notes/Retry.md", "Timeouts"]),
    "source": st.sampled_from(["retry", "timeouts"]),
    "target": st.sampled_from(["retry", "timeouts"]),
    "memory_id": st.sampled_from(["retry", "timeouts"]),
    "status": st.sampled_from(["active", "needs-review", "superseded", "archived", "any"]),
    "mode": st.sampled_from(["index", "full"]),
    "relevance": st.sampled_from(["relevant", "irrelevant", "missing"]),
    "limit": st.integers(1, 50), "depth": st.integers(1, 4), "force": st.booleans(),
    "start_line": st.integers(1, 12), "end_line": st.integers(1, 12),
    "repository": st.just("api"), "project": st.just("apollo"), "ticket": st.just("ALPHA-142"),
    "root_scope": st.sampled_from(["work", "personal"]), "path_prefix": st.just("Repos/"),
    "note": st.just("helpful"),
}
PARAMETERS = {
    "memory_search": ["query", "root_scope", "repository", "project", "ticket", "status",
                      "path_prefix", "limit"],
    "memory_get": ["identity", "start_line", "end_line"],
    "memory_neighbors": ["identity", "depth"],
    "memory_path": ["source", "target"],
    "memory_explain": ["query", "identity", "root_scope", "repository", "project", "ticket",
                       "status", "path_prefix", "limit"],
    "memory_refresh": ["mode", "force"],
    "memory_health": [],
    "memory_feedback": ["query", "memory_id", "relevance", "note"],
}


def arguments(tool: str) -> st.SearchStrategy[dict]:
    """Each parameter absent, valid or hostile; sometimes an unknown extra one."""
    fields = {name: st.one_of(VALID[name], hostile) for name in PARAMETERS[tool]}
    extra = st.dictionaries(st.sampled_from(["extra", "__proto__", "ctx", ""]), hostile,
                            max_size=1)
    return st.builds(lambda known, more: {**more, **known},
                     st.fixed_dictionaries({}, optional=fields), extra)


@pytest.fixture(scope="module")
def call():
    """One in-memory server for the module, called from hypothesis' synchronous examples."""
    world = World([
        make_doc("Repos/api/Notes/Retry.md", "# Retry policy\n\nThe API client retries the "
                 "payment webhook three times with backoff.\nSee [[timeouts]].\n\nALPHA-142 "
                 "was the retry storm.", memory_id="retry"),
        make_doc("Repos/api/Notes/Timeouts.md", "# Timeouts\n\nThe gateway timeout is 30 "
                 "seconds.", memory_id="timeouts"),
        make_doc("Decisions/Backoff.md", "# Backoff\n\nAll clients back off exponentially."),
    ])
    assert world.refresh("full").ok
    seen: Counter = Counter()

    def call_tool(name: str, args: dict):
        result = portal.call(client.call_tool, name, args)
        seen["tool error" if result.is_error else "valid result"] += 1
        return result

    with anyio.from_thread.start_blocking_portal("asyncio") as portal:
        with portal.wrap_async_context_manager(Client(build_server(lambda: world.service))) \
                as client:
            yield call_tool
    print(f"\n[hostile-tool-input] {sum(seen.values())} calls: {dict(seen)}", file=sys.stderr)


def check(result, tool: str, args: dict) -> None:
    if result.is_error:
        message = result.content[0].text
        assert "\n" not in message and "Traceback" not in message, (tool, args, message)
        assert not message.startswith("internal error"), (tool, args, message)
        assert len(message) <= 1000
    else:
        assert isinstance(result.structured_content, dict), (tool, args)
        assert result.content and result.content[0].text, (tool, args)


HYPOTHESIS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture,
                                             HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("tool", sorted(PARAMETERS))
def test_any_arguments_get_a_valid_result_or_a_tool_error(call, tool):
    @HYPOTHESIS
    @given(args=arguments(tool))
    def run(args):
        check(call(tool, args), tool, args)
        check(call("memory_health", {}), "memory_health", {})  # the server is still up

    run()


@pytest.mark.parametrize("query", FTS_SYNTAX)
def test_fts_syntax_in_a_query_is_searched_as_text(call, query):
    for tool in ("memory_search", "memory_explain"):
        result = call(tool, {"query": query})
        check(result, tool, {"query": query})
        assert not result.is_error or "must not be empty" in result.content[0].text


@pytest.mark.parametrize("identity", TRAVERSAL)
def test_paths_leaving_the_root_are_refused_or_not_found(call, identity):
    result = call("memory_get", {"identity": identity})
    assert result.is_error, (identity, result.structured_content)
    message = result.content[0].text
    assert message.startswith(("invalid request:", "not found:", "invalid arguments")), message
