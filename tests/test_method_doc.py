"""docs/method.md is the project's statement of the method: nothing cites the reference text it replaced, and every
"docs/method.md §N" (and every "reading N" of its §12) names a section (a row) that exists."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METHOD = ROOT / "docs" / "method.md"
# The retired reference's citation forms, assembled so that this file does not match itself.
_OLD = "SP" + "EC"
RETIRED = re.compile(rf"{_OLD}\.md|{_OLD} §|{_OLD} sections?\b|{_OLD}'s")
CITATION = re.compile(r"docs/method\.md`?\s*§(\d+)((?:\s*(?:and|,|–)\s*§\d+)*)")
READING = re.compile(r"(?:§12, )?readings? (\d+)(?:[–-](\d+))?")


def text_files() -> list[Path]:
    """The Python and Markdown files git knows of (tracked, or new and not ignored); every such file on disk
    outside hidden and cache folders when git is unavailable."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split("\n")
        paths = [ROOT / p for p in out if p.endswith((".py", ".md"))]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if p.suffix in (".py", ".md")
                 and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(ROOT).parts)]
    return [p for p in paths if p.is_file()]


def sections() -> set[int]:
    """The numbers N of the "## N. name" headings of docs/method.md, checked to run 1, 2, ... without a gap."""
    found = [int(n) for n in re.findall(r"^## (\d+)\. \S", METHOD.read_text(encoding="utf-8"), re.M)]
    assert found == list(range(1, len(found) + 1)), found
    return set(found)


def reading_rows() -> set[int]:
    """The row numbers of the table of readings in docs/method.md §12."""
    text = METHOD.read_text(encoding="utf-8").split("\n## 12. ", 1)[1]
    return {int(n) for n in re.findall(r"^\| (\d+) \|", text, re.M)}


def test_nothing_cites_the_retired_reference():
    assert not (ROOT / "docs" / f"{_OLD}.md").exists()
    files = text_files()
    assert METHOD in files and Path(__file__).resolve() in files  # the listing sees new files too
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in files if p.resolve() != Path(__file__).resolve()
            for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            if RETIRED.search(line)]
    assert hits == []


def test_every_method_citation_names_a_section_and_every_reading_a_row():
    have, rows = sections(), reading_rows()
    assert len(have) >= 12 and rows == set(range(1, len(rows) + 1)) and len(rows) >= 12
    cited: dict[int, list[str]] = {}
    for p in text_files():
        text = p.read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(text):
            for n in [m.group(1), *re.findall(r"§(\d+)", m.group(2))]:
                cited.setdefault(int(n), []).append(str(p.relative_to(ROOT)))
    assert cited, "no file cites docs/method.md"
    assert {n: where for n, where in cited.items() if n not in have} == {}
    own = METHOD.read_text(encoding="utf-8")
    assert {int(n) for n in re.findall(r"§(\d+)", own)} <= have  # its own cross-references too
    readings = {int(x) for m in READING.finditer(own) for x in range(int(m[1]), int(m[2] or m[1]) + 1)}
    assert readings and readings <= rows
