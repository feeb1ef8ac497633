"""docs/authorization.md's "Driving the flow from your own loop" runs as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "authorization.md"
SECTION = "## Driving the flow from your own loop"


def section_blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(r"```python\n(.*?)```", text[start : end if end >= 0 else None], re.DOTALL)


def test_the_driving_example_runs_against_the_fake_authorization_server() -> None:
    blocks = section_blocks()
    assert len(blocks) == 2  # the first authorization, then the restart
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    world = namespace["world"]
    log = world.log  # type: ignore[attr-defined]
    assert [method for method, _ in log] == ["GET", "GET", "POST", "BROWSE", "POST", "POST"]
    assert namespace["saved"]["tokens"]["scope"] == "files:read"  # type: ignore[index]
