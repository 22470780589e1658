"""NoteBrowser over in-memory adapters: pages, cursors, redaction, the size cap, refusals."""

import pytest
from builders import World, make_doc

from memory.application.browse.notes import NoteBrowser
from memory.domain.errors import InvalidRequest, NotFound, Unavailable

FRONT = "---\nmemory_id: {id}\ntitle: {title}\n---\n"


def note(path, body="# A note\n\nSome text.", memory_id=None, **fields):
    return make_doc(path, body, memory_id=memory_id, **fields)


def browser(world, **kwargs):
    return NoteBrowser(catalogue=world.chunks, source=world.source, index=world.generations,
                       **kwargs)


def indexed(*docs):
    world = World(docs)
    assert world.refresh("index").ok
    return world


def all_pages(b, size):
    paths, cursor, pages = [], None, 0
    while True:
        page = b.page(cursor, size)
        paths += [n.path for n in page.notes]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            return paths, pages


def test_pages_cover_every_note_once_in_path_order():
    world = indexed(*(note(f"Notes/n{i:02d}.md") for i in range(7)),
                    note("Notes/é ü 100%25.md"), note("A first.md"))
    paths, pages = all_pages(browser(world), size=3)
    assert paths == sorted(n.path for n in world.chunks.notes())
    assert len(paths) == 9 and pages == 3


def test_a_cursor_keeps_its_place_when_notes_are_added_before_it():
    world = indexed(*(note(f"Notes/n{i}.md") for i in range(4)))
    b = browser(world)
    first = b.page(None, 2)
    world.source.put(note("Notes/a-new.md"))
    assert world.refresh("index").ok
    rest = b.page(first.next_cursor, 10)
    assert [n.path for n in rest.notes] == ["Notes/n2.md", "Notes/n3.md"]
    assert rest.next_cursor is None


@pytest.mark.parametrize("cursor", ["%%%not base64%%%", "/w==", "x" * 5000])
def test_a_cursor_that_was_not_given_out_is_refused(cursor):
    with pytest.raises(InvalidRequest, match="cursor"):
        browser(indexed(note("a.md"))).page(cursor)


def test_listed_titles_and_read_text_have_secret_values_redacted():
    body = FRONT.format(id="deploy", title="token ghp_abcdefghijklmnopqrstuvwxyz0123456789") \
        + "# Deploy\n\npassword: hunter2-not-a-placeholder\nDone."
    world = indexed(note("Ops/Deploy.md", body, memory_id="deploy",
                         title="token ghp_abcdefghijklmnopqrstuvwxyz0123456789"))
    b = browser(world)
    [listed] = b.page().notes
    assert "ghp_" not in listed.title and "[REDACTED" in listed.title
    read = b.read_id("deploy")
    assert read.text.startswith("---\nmemory_id: deploy\n")  # front matter kept
    assert "hunter2" not in read.text and "ghp_" not in read.text
    assert read.redacted_lines == (3, 7)
    assert not read.cut


def test_read_by_path_and_by_id_give_the_same_note():
    world = indexed(note("Repos/api/Notes/Retry Policy.md", memory_id="retry"))
    b = browser(world)
    assert b.read_path("Repos/api/Notes/Retry Policy.md") == b.read_id("retry")


def test_a_long_note_is_cut_at_a_line_and_says_where_to_read_on():
    body = "\n".join(f"{i:03d} " + "x" * 95 for i in range(1, 101))  # 100 chars a line, \n too
    world = indexed(note("Big.md", body))
    read = browser(world, max_chars=1000).read_path("Big.md")
    assert read.cut and read.lines_shown == 10 and read.line_count == 100
    shown, notice = read.text.split("\n\n[ai-memory: ")
    assert shown.splitlines() == body.splitlines()[:10]
    assert "lines 1-10 of 100" in notice and "start_line=11" in notice


def test_a_single_line_longer_than_the_cap_is_cut_inside_it():
    world = indexed(note("One.md", "y" * 5000))
    read = browser(world, max_chars=1000).read_path("One.md")
    assert read.lines_shown == 0
    assert read.text.startswith("y" * 1000 + "\n\n[ai-memory: ") and "y" * 1001 not in read.text


@pytest.mark.parametrize("path, error", [
    ("../outside.md", InvalidRequest), ("/etc/passwd.md", InvalidRequest),
    (".git/config.md", InvalidRequest), ("notes.txt", InvalidRequest),
    ("missing.md", NotFound), ("a.md\x00", InvalidRequest), ("x" * 2000 + ".md", InvalidRequest),
])
def test_paths_outside_the_root_or_not_indexed_are_refused(path, error):
    with pytest.raises(error):
        browser(indexed(note("a.md"))).read_path(path)


def test_a_note_on_disk_but_not_yet_indexed_is_not_offered():
    world = indexed(note("a.md"))
    world.source.put(note("later.md"))
    with pytest.raises(NotFound, match="no indexed note"):
        browser(world).read_path("later.md")


def test_without_an_index_listing_is_empty_and_reading_says_what_to_run():
    world = World([note("a.md")])
    b = browser(world)
    assert b.page().notes == () and b.page().next_cursor is None
    with pytest.raises(Unavailable, match="not indexed: .*ai-memory refresh"):
        b.read_path("a.md")


def test_a_note_saved_a_moment_ago_is_offered_after_the_same_catch_up_searches_run():
    from memory.application.refresh.freshness import FreshnessPolicy
    world = indexed(note("a.md"))
    world.source.put(note("later.md"))
    policy = FreshnessPolicy(source=world.source, index=world.generations,
                             indexer=world.indexer, embedder=world.embedder, clock=world.clock)
    b = browser(world, before_read=policy.before_search)
    assert "later.md" in [n.path for n in b.page().notes]
    assert b.read_path("later.md").note.path == "later.md"
