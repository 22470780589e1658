"""File names from titles and explicit note paths: valid on Windows, macOS and Linux."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.domain.errors import InvalidRequest
from memory.domain.file_names import (MAX_COMPONENT_BYTES, MAX_PATH_CHARS, RESERVED_STEMS,
                                      component_problem, note_file_name, writable_note_path)


@pytest.mark.parametrize("path", [
    "../outside.md", "Repos/../../outside.md", "/etc/passwd.md", "C:/Users/x.md",
    "C:\\Users\\x.md", "~/notes/x.md", "//server/share/x.md", ".ai-memory/x.md",
    ".git/x.md", "Repos/.hidden/x.md", "Repos/api/.x.md", "Repos/api/notes.txt", "",
])
def test_paths_leaving_the_root_or_entering_hidden_folders_are_refused(path):
    with pytest.raises(InvalidRequest):
        writable_note_path(path)


@pytest.mark.parametrize("name", [
    "CON.md", "con.md", "Nul.md", "aux.tar.md", "COM1.md", "lpt9.md", "COM\u00b9.md",
    "CON .md", "conin$.md",
])
def test_windows_device_names_are_refused(name):
    with pytest.raises(InvalidRequest, match="reserved by Windows"):
        writable_note_path(f"Decisions/{name}")


@pytest.mark.parametrize("name", ["a<b.md", "a>b.md", 'a"b.md', "a|b.md", "a?b.md",
                                  "a*b.md", "a:b.md"])
def test_characters_windows_forbids_are_refused(name):
    with pytest.raises(InvalidRequest, match="not allowed in Windows"):
        writable_note_path(f"Decisions/{name}")


@pytest.mark.parametrize("path", ["Decisions/tab\there.md", "Decisions/nl\nx.md",
                                  "Decisions/bell\x07.md", "Decisions/del\x7f.md",
                                  "Decisions/rtl\u202eexe.md", "Decisions/nul\x00.md"])
def test_control_and_direction_characters_are_refused(path):
    with pytest.raises(InvalidRequest):
        writable_note_path(path)


@pytest.mark.parametrize("path", ["Decisions/trailing./x.md", "Decisions/space /x.md",
                                  "Decisions/ lead.md", "Decisions/x.md."])
def test_names_windows_would_rewrite_are_refused(path):
    with pytest.raises(InvalidRequest):
        writable_note_path(path)


def test_too_long_names_and_paths_are_refused():
    with pytest.raises(InvalidRequest, match="longer than 255 bytes"):
        writable_note_path("Decisions/" + "\u00e9" * 130 + ".md")  # 260 UTF-8 bytes
    with pytest.raises(InvalidRequest, match=f"longer than {MAX_PATH_CHARS}"):
        writable_note_path("/".join(["folder"] * 40) + "/x.md")


def test_a_valid_path_is_normalised_to_nfc_and_forward_slashes():
    decomposed = unicodedata.normalize("NFD", "Repos/api/Notes/caf\u00e9.md")
    assert writable_note_path(decomposed) == "Repos/api/Notes/caf\u00e9.md"
    assert writable_note_path("Repos\\api\\Notes\\x.md") == "Repos/api/Notes/x.md"


@pytest.mark.parametrize("title, name", [
    ("Idempotent retries in payments-api", "idempotent-retries-in-payments-api.md"),
    ("Fix: `DuplicateChargeError` on retry!", "fix-duplicatechargeerror-on-retry.md"),
    ("CON", "con-note.md"), ("com\u00b2", "com2-note.md"), ("???", "note.md"),
    ("...hidden", "hidden.md"), ("\u00dcber Caching", "\u00fcber-caching.md"),
    ("a/b\\c:d", "a-b-c-d.md"),
])
def test_file_names_from_titles(title, name):
    assert note_file_name(title) == name


@given(st.text(max_size=400))
def test_any_title_gives_a_name_valid_everywhere(title):
    name = note_file_name(title)
    assert component_problem(name) is None
    assert name.endswith(".md") and len(name.encode()) <= MAX_COMPONENT_BYTES
    assert name.split(".", 1)[0].upper() not in RESERVED_STEMS
    assert writable_note_path(f"Decisions/{name}") == f"Decisions/{name}"
