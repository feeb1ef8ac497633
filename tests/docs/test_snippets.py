"""Every fenced python and sh block of README.md and docs/ runs as written.

The convention the pages follow is docs/snippets.md; `snippets.py` runs it.
The first test runs the real pages, one test per page; the others feed the
runner small pages of their own, to show it fails where it should.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .snippets import ROOT, PageRun, SnippetError, pages


@pytest.mark.parametrize("page", pages(), ids=lambda page: str(page.relative_to(ROOT)))
def test_every_snippet_of_the_page_runs_as_written(page: Path, tmp_path: Path) -> None:
    PageRun(page, tmp_path).run()


def test_the_pages_are_readme_and_everything_under_docs() -> None:
    found = {str(page.relative_to(ROOT)) for page in pages()}
    assert {"README.md", "docs/quickstart.md", "docs/porting.md", "docs/snippets.md"} <= found
    assert found == {"README.md", *(str(p.relative_to(ROOT)) for p in ROOT.glob("docs/**/*.md"))}


# ------------------------------------------------------- the runner itself


def run_page(tmp_path: Path, text: str, *, example: str | None = None) -> int:
    """Run `text` as a page of a repository holding only `examples/whole.py`."""
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    if example is not None:
        (repo / "examples").mkdir()
        (repo / "examples" / "whole.py").write_text(example)
    page = repo / "docs" / "page.md"
    page.write_text(text)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return PageRun(page, scratch, root=repo).run()


PASSING = """\
A module and a program that imports it:

```python file=greet.py
def greet(name):
    return f"Hello, {name}!"
```

```python
from greet import greet

print(greet("docs"))
```

```text output
Hello, docs!
```

```sh
python -c 'print(8000 != 8000 + 0)'   # the port is the same number everywhere
test -f greet.py
```

```text output
False
```

```sh norun="installs from PyPI"
pip install something
```

```json
{"not": "run"}
```
"""


def test_a_page_that_follows_the_convention_runs(tmp_path: Path) -> None:
    assert run_page(tmp_path, PASSING) == 2


@pytest.mark.parametrize(
    ("page", "complaint"),
    [
        ("```python\nraise SystemExit(3)\n```\n", "page.md:1: the program exited with 3"),
        ("```sh\nfalse\n```\n", "page.md:1: `false` exited with 1"),
        (
            "```python\nprint('yes')\n```\n\n```text output\nno\n```\n",
            "page.md:5: the output block does not match what page.md:1 prints",
        ),
        ("```text output\nnothing ran\n```\n", "an output block follows no block that runs"),
        ("```python file=lonely.py\nx = 1\n```\n", "file=lonely.py is used by no later block"),
        ("```sh norun\nrm -rf /\n```\n", "norun needs its reason"),
        ('```sh norun="broken"\nif then fi\n```\n', "bash -n exited"),
        ("```python skip\npass\n```\n", "unknown block attribute 'skip'"),
        ("```python\nprint(1)\n", "the block is never closed"),
        ("```python fragment=examples/none.py\nx = 1\n```\n", "fragment=examples/none.py: no such"),
    ],
)
def test_a_page_that_breaks_it_fails_naming_the_block(
    tmp_path: Path, page: str, complaint: str
) -> None:
    with pytest.raises(SnippetError, match=re.escape(complaint)):
        run_page(tmp_path, page)


WHOLE = "import sys\n\n\ndef main():\n    print(sys.argv)\n    return 0\n"


def test_a_fragment_must_be_lines_of_its_example_in_order(tmp_path: Path) -> None:
    ok = "```python fragment=examples/whole.py\ndef main():\n    return 0\n```\n"
    assert run_page(tmp_path / "ok", ok, example=WHOLE) == 0
    drifted = "```python fragment=examples/whole.py\ndef main():\n    return 1\n```\n"
    with pytest.raises(SnippetError, match=r"fragment line not in examples/whole\.py"):
        run_page(tmp_path / "drifted", drifted, example=WHOLE)
    reordered = "```python fragment=examples/whole.py\n    return 0\ndef main():\n```\n"
    with pytest.raises(SnippetError, match="in order"):
        run_page(tmp_path / "reordered", reordered, example=WHOLE)


SERVER = """\
```python file=server.py
from mcp_adapters.server import MCPServer

mcp = MCPServer("Demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    return a + b
```

```sh
python -m mcp_adapters run server.py --transport ws   # Client("ws://127.0.0.1:8000{path}")
```
"""


def test_a_served_client_target_must_reach_the_server(tmp_path: Path) -> None:
    assert run_page(tmp_path / "ok", SERVER.format(path="/mcp")) == 1
    with pytest.raises(SnippetError, match=r'Client\("ws://127.0.0.1:\d+/nope"\) cannot reach'):
        run_page(tmp_path / "wrong", SERVER.format(path="/nope"))
