"""docs/authorization.md's "Driving the flow from your own loop" runs as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "authorization.md"
SECTION = "## Driving the flow from your own loop"


def section_blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return re.findall(
        r"```python[^\n]*\n(.*?)```", text[start : end if end >= 0 else None], re.DOTALL
    )


def test_the_driving_example_runs_against_the_fake_authorization_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = section_blocks()
    assert len(blocks) == 2  # the first authorization (saved as first_login.py), then the restart
    (tmp_path / "first_login.py").write_text(blocks[0], encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "first_login", raising=False)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    try:
        exec(compile(blocks[1], str(DOC), "exec"), namespace)
    finally:
        sys.modules.pop("first_login", None)
    world = namespace["world"]
    log = world.log  # type: ignore[attr-defined]
    assert [method for method, _ in log] == ["GET", "GET", "POST", "BROWSE", "POST", "POST"]
    assert namespace["saved"]["tokens"]["scope"] == "files:read"  # type: ignore[index]
