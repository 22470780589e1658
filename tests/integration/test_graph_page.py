"""`ai-memory graph --html` on a real root, opened in headless Chromium.

Chromium is required, never skipped: scripts/bootstrap.sh installs it as root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest
from headless_chromium import Page, chromium, file_url

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
NOTES = {
    "Repos/payments-api/Notes/Webhook Retries.md": """\
        ---
        tags: [webhooks]
        related: ["[[Gateway Timeouts]]"]
        ---
        # Webhook retries

        Retried three times; see PAY-142.
        """,
    "Repos/payments-api/Notes/Gateway Timeouts.md": "# Gateway Timeouts\n\n30 seconds.\n",
    "Repos/payments-api/Tickets/PAY-142/_ticket.md": "# PAY-142 duplicate charges\n\nFixed.\n",
    "Repos/ledger/Notes/Reconciliation.md": """\
        ---
        tags: [month-end]
        ---
        # Ledger reconciliation

        Runs on the first of the month.
        """,
    "Ops/Token rotation.md": f"---\ntitle: rotate {SECRET} monthly\n---\n# Rotation\n\nMonthly.\n",
}
TEXTS = "Array.from(document.querySelectorAll('.textpoint text')).map(t => t.textContent)"


def run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memory", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **OFFLINE})


def make_root(base: Path, mode: str) -> Path:
    for rel, text in NOTES.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text), encoding="utf-8")
    done = run("refresh", "--mode", mode, "--root", str(base))
    assert done.returncode == 0, done.stderr[-3000:]
    return base


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_root(tmp_path_factory.mktemp("graph") / "memory", "full")


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    assert executable, "chromium is needed: apt-get install chromium (bootstrap does it as root)"
    page = Page(executable)
    page.send("Emulation.setDeviceMetricsOverride", width=1400, height=1000,
              deviceScaleFactor=1, mobile=False)
    yield page
    page.close()


def draw(root: Path, target: Path, *flags: str) -> dict:
    done = run("graph", "--root", str(root), "--html", str(target), "--json", *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def shown(browser: Page, page: Path) -> list[str]:
    browser.requests.clear()
    browser.problems.clear()
    browser.open(file_url(page))
    browser.wait_until("document.querySelectorAll('.textpoint text').length > 0")
    assert browser.problems == []
    assert browser.requests == [file_url(page)]  # the page itself, nothing else
    return browser.evaluate(TEXTS)


def test_the_recorder_sees_requests_and_errors(browser, tmp_path):
    """The checks below could fail: a page that asks the network and errs is caught."""
    page = tmp_path / "bad.html"
    page.write_text('<img src="http://127.0.0.1:9/x.png"><script>console.error("boom");'
                    "</script>", encoding="utf-8")
    browser.open(file_url(page))
    assert any(url.startswith("http://127.0.0.1:9/") for url in browser.requests)
    assert any("boom" in problem for problem in browser.problems)


def test_a_scoped_page_shows_its_notes_and_not_the_others(root, browser, tmp_path):
    summary = draw(root, tmp_path / "payments.html", "--repository", "payments-api")
    labels = shown(browser, tmp_path / "payments.html")
    assert {"Webhook retries", "Gateway Timeouts", "PAY-142 duplicate charges",
            "payments-api", "PAY-142", "webhooks"} <= set(labels)
    assert "Ledger reconciliation" not in labels and "ledger" not in labels
    assert "month-end" not in labels  # a tag only a note outside the scope carries
    assert summary["notes"] == 4  # three of payments-api and the cross-cutting one
    assert summary["scope"] == "repository payments-api"


def test_the_whole_memory_shows_every_note(root, browser, tmp_path):
    summary = draw(root, tmp_path / "all.html")
    labels = shown(browser, tmp_path / "all.html")
    assert {"Ledger reconciliation", "Webhook retries", "month-end", "ledger"} <= set(labels)
    assert summary["notes"] == len(NOTES)


def test_hovering_and_clicking_a_note_tells_its_path(root, browser, tmp_path):
    draw(root, tmp_path / "all.html")
    shown(browser, tmp_path / "all.html")
    x, y = browser.evaluate(  # the first point of the notes' trace (the edges' trace is 0)
        "(() => { const r = document.querySelectorAll('.scatterlayer .trace')[1]"
        ".querySelector('.point').getBoundingClientRect();"
        " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    browser.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    browser.wait_until("document.querySelectorAll('.hovertext').length > 0")
    for kind in ("mousePressed", "mouseReleased"):
        browser.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                     clickCount=1)
    browser.wait_until("document.getElementById('picked').textContent.includes('.md')")
    picked = browser.evaluate("document.getElementById('picked').textContent")
    assert picked.startswith("note: ") and "memory_id " in picked
    assert browser.problems == [] and browser.requests == [file_url(tmp_path / "all.html")]


def test_a_secret_in_a_title_never_reaches_the_page(root, tmp_path):
    draw(root, tmp_path / "all.html")
    html = (tmp_path / "all.html").read_text(encoding="utf-8")
    assert SECRET not in html and "[REDACTED:" in html


def test_the_page_loads_nothing_from_anywhere(root, tmp_path):
    draw(root, tmp_path / "all.html")
    html = (tmp_path / "all.html").read_text(encoding="utf-8")
    assert "<script src=" not in html and "<link " not in html
    assert "default-src 'none'" in html  # and the browser is told to refuse any load


def test_too_many_nodes_or_no_graph_are_clear_errors(root, tmp_path):
    crowded = run("graph", "--root", str(root), "--html", str(tmp_path / "x.html"),
                  "--max-nodes", "3")
    assert crowded.returncode == 2 and "--max-nodes" in crowded.stderr
    bare = make_root(tmp_path / "bare", "index")
    missing = run("graph", "--root", str(bare), "--html", str(tmp_path / "y.html"))
    assert missing.returncode == 1 and "refresh --mode full" in missing.stderr
    assert "Traceback" not in crowded.stderr + missing.stderr
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "y.html").exists()


def test_a_scope_no_note_has_and_a_graph_behind_the_index_are_said(root, tmp_path):
    empty = run("graph", "--root", str(root), "--html", str(tmp_path / "nope.html"),
                "--repository", "payments-apl")
    assert empty.returncode == 0, empty.stderr[-3000:]
    assert "scope matches no note" in empty.stderr and "closest: payments-api" in empty.stderr
    assert "scope matches no note" in (tmp_path / "nope.html").read_text(encoding="utf-8")
    later = tmp_path / "later"
    make_root(later, "full")
    (later / "Ops/Queue.md").write_text("# Queue\n\nWritten after the graph.\n", encoding="utf-8")
    assert run("refresh", "--root", str(later)).returncode == 0  # the index only
    behind = draw(later, tmp_path / "behind.html")
    assert any("graph behind index by 1 notes" in w for w in behind["warnings"]), behind
    assert "graph behind index" in (tmp_path / "behind.html").read_text(encoding="utf-8")
