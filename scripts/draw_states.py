#!/usr/bin/env python3
"""Draw the lifecycle tables of `mcp_core/_state.py` into docs/architecture.md.

    python3 scripts/draw_states.py           # rewrite the diagrams in the doc
    python3 scripts/draw_states.py --check   # exit 1 if the doc's drawing is stale

Each table becomes a Mermaid `stateDiagram-v2` block (GitHub renders them),
written between the marker comments below; everything else in the doc is left
as it is. The drawing is derived, never edited by hand:
tests/core/test_state_table.py fails when it no longer matches the table, so
a change to the lifecycle shows up in review as a change to the picture too.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp_core._state import (  # noqa: E402  (the path above makes the checkout importable)
    INITIAL_REQUEST_STATE,
    INITIAL_SESSION_STATE,
    REQUEST_TABLE,
    SESSION_TABLE,
)

DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- state diagrams: begin (scripts/draw_states.py writes this part) -->"
END = "<!-- state diagrams: end -->"

_TITLES = {
    ("client", "outbound"): "A client's request",
    (
        "server",
        "outbound",
    ): "A legacy server's request (a ping, sampling, a request_input question)",
    ("server", "inbound"): "A client's request at the server",
    ("client", "inbound"): "A legacy server's request at the client",
}


def diagram(initial: StrEnum, rows: Mapping[StrEnum, Mapping[StrEnum, StrEnum]]) -> list[str]:
    """One `stateDiagram-v2` block: an edge per (from, to) pair, its inputs joined.

    States with no way out are drawn ending (`--> [*]`); the labels are the
    inputs' values, which `_state.py` writes to be read in a picture.
    """
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {initial.value}"]
    for state, row in rows.items():
        targets: dict[StrEnum, list[str]] = {}
        for by, target in row.items():
            targets.setdefault(target, []).append(by.value)
        for target, labels in targets.items():
            lines.append(f"    {state.value} --> {target.value}: {'; '.join(labels)}")
    for state, row in rows.items():
        if not row:
            lines.append(f"    {state.value} --> [*]")
    lines.append("```")
    return lines


def render() -> str:
    """The part of the doc between the markers, markers included."""
    out = [BEGIN, ""]
    for role, rows in SESSION_TABLE.items():
        out += [f"The session, {role} side:", ""]
        out += diagram(INITIAL_SESSION_STATE[role], rows)
        out.append("")
    for (role, direction), request_rows in REQUEST_TABLE.items():
        out += [f"{_TITLES[(role, direction)]}, as the {role} holds it:", ""]
        out += diagram(INITIAL_REQUEST_STATE[direction], request_rows)
        out.append("")
    out.append(END)
    return "\n".join(out)


def splice(text: str, drawing: str) -> str:
    """`text` with its marked part replaced by `drawing`; ValueError without markers."""
    start = text.index(BEGIN)
    stop = text.index(END, start) + len(END)
    return text[:start] + drawing + text[stop:]


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    fresh = splice(text, render())
    if "--check" in argv:
        if fresh != text:
            print(f"{DOC.relative_to(ROOT)} is stale: run python3 scripts/draw_states.py")
            return 1
        return 0
    DOC.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
