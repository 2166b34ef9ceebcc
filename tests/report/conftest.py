"""Recorded result files for the plot, HTML and comparison tests, and headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import recorded

#: Debian's package; scripts/test installs it when run as root.
CHROMIUM = "/usr/bin/chromium"
#: Only stops a hung browser; a page of this size renders in about a second.
CHROMIUM_TIMEOUT_S = 120


class Results:
    """Recorded v1 documents (tests/data/v1), all from real sweeps, on targets t1 and t2:

    - a:       sfmw, mfmw x 1 MiB, 2 MiB per rank on target t1, 2 ranks, 2 iterations
    - again:   the same points as `a` once more (3 iterations)
    - one:     the same patterns and sizes on t1 with 1 rank
    - t2:      sfmw x 1 MiB, 2 MiB on target t2, 2 ranks, 2 iterations
    - single:  mfmw 1 MiB on t1, 2 ranks, 1 iteration
    - timed:   mfmw x 1 MiB, 2 MiB on t1, 2 ranks, 1 iteration, each phase for 0.2 s (so
               every phase spans many of the engine's 10 ms intervals)
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.t1, self.t2 = recorded.T1, recorded.T2
        self.a = recorded.selected(
            recorded.V1 / "file-2ranks.jsonl", root / "a.jsonl", pattern=("sfmw", "mfmw")
        )
        self.again = recorded.V1 / "file-2ranks-again.jsonl"
        self.one = recorded.V1 / "file-1rank.jsonl"
        self.t2_file = recorded.V1 / "file-t2-2ranks.jsonl"
        self.single = recorded.V1 / "file-single.jsonl"
        self.timed = recorded.V1 / "file-timed.jsonl"

    def combined(self, name: str, *parts: Path) -> Path:
        """One file holding the documents of `parts`, in order."""
        path = self.root / name
        path.write_text("".join(p.read_text() for p in parts))
        return path


@pytest.fixture(scope="session")
def results(tmp_path_factory) -> Results:
    return Results(tmp_path_factory.mktemp("results"))


@pytest.fixture(scope="session")
def page_of():
    """page_of(*sources) -> the page `hpcio report SOURCES --html` writes, less its figures
    (report_page with no plots): for tests of the page's tables and warnings, where drawing
    would be most of the time. test_html's `report` page and test_plots check the figures."""
    from hpcio.report.html import report_page
    from hpcio.report.plots import PlotSet
    from hpcio.results import io as results_io

    def page(*sources: Path) -> str:
        docs = [doc for source in sources for doc in results_io.read(source)]
        return report_page(docs, PlotSet((), ()), [str(source) for source in sources])

    return page


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """chromium(*args, url) -> CompletedProcess of headless Chromium on `url` with a fresh
    profile and no network services; skips when Debian's chromium is not installed."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"headless Chromium not installed ({CHROMIUM}); scripts/test installs it")
    binary = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")

    def run(*args: str, url: str) -> subprocess.CompletedProcess[str]:
        profile = tmp_path_factory.mktemp("chromium-profile")
        command = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
            url,
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    return run


class Page(HTMLParser):
    """What the tests look at in a page: images, tables (cells with data-value), details
    blocks, the text, and the attributes that could load something."""

    def __init__(self, text):
        super().__init__()
        self.images = {}  # id -> attributes
        self.tables = {}  # id -> [[(text, data-value), ...], ...] including the header row
        self.details = {}  # id -> text
        self.sources = []  # every src and href
        self.tags = set()
        self.text = []
        self._table = self._row = self._cell = self._details = None
        self.feed(text)
        self.text = " ".join(" ".join(self.text).split())

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.sources += [attrs[k] for k in ("src", "href") if k in attrs]
        if tag == "img":
            self.images[attrs.get("id")] = attrs
        elif tag == "table":
            self._table = self.tables.setdefault(attrs.get("id"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._table.append(self._row)
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ["", attrs.get("data-value")]
        elif tag == "details":
            self._details = attrs.get("id")
            self.details[self._details] = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append((self._cell[0].strip(), self._cell[1]))
            self._cell = None
        elif tag == "table":
            self._table = self._row = None
        elif tag == "details":
            self._details = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell[0] += data
        if self._details is not None:
            self.details[self._details] += data

    def study_table_id(self, title_start, target_url):
        """The id of the one study table whose title starts with `title_start` and names
        `target_url` among its targets."""
        slug = re.sub(r"[^a-z0-9]+", "-", f"{title_start} on").lower().strip("-")
        url = re.sub(r"[^a-z0-9]+", "-", target_url.lower()).strip("-")
        (found,) = [i for i in self.tables if i.startswith(f"table-{slug}-") and url in i]
        return found

    def rows(self, table_id):
        """Header texts, then each row's cells as {header: (text, data-value)}."""
        header, *body = self.tables[table_id]
        names = [text for text, _ in header]
        return names, [dict(zip(names, row, strict=True)) for row in body]


@pytest.fixture(scope="session")
def parse_page():
    """parse_page(html_text) -> Page: images, tables, details blocks and text of a page."""
    return Page
