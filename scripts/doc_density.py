"""How much of a package's text says why: comment and docstring lines per line of code.

    python scripts/doc_density.py                  # mcp_core, per module and in total
    python scripts/doc_density.py --compare h11    # the same rule applied to another package

The rule, the same for every package measured (standard library only):

- a *docstring line* is a line of a docstring (`ast`: the string literal that opens a
  module, class or function body), counted from its first line to its last, blank
  lines inside it included;
- a *comment line* is a line that holds a `#` comment (`tokenize`), whether alone or
  after code;
- a *code line* is any other non-blank line that holds a token, so a line with code and a
  trailing comment counts once as code and once as comment.

Density is (comment lines + docstring lines) / code lines. A package given to
`--compare` is a directory or the name of an importable package (found without
importing it); its tests directory, if it ships one, is left out, as mcp_core has none.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Count:
    comments: int = 0
    docstrings: int = 0
    code: int = 0

    @property
    def doc(self) -> int:
        return self.comments + self.docstrings

    @property
    def density(self) -> float:
        return self.doc / self.code if self.code else 0.0

    def add(self, other: Count) -> None:
        self.comments += other.comments
        self.docstrings += other.docstrings
        self.code += other.code


def docstring_lines(tree: ast.Module) -> set[int]:
    """The line numbers covered by every docstring of a module."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            end = value.end_lineno or value.lineno
            lines.update(range(value.lineno, end + 1))
    return lines


def count_source(source: str) -> Count:
    """Comment, docstring and code lines of one module's source."""
    docs = docstring_lines(ast.parse(source))
    comments: set[int] = set()
    code: set[int] = set()
    skip = {
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.INDENT,
        tokenize.DEDENT,
        tokenize.ENCODING,
        tokenize.ENDMARKER,
    }
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments.add(token.start[0])
        elif token.type not in skip:
            for line in range(token.start[0], token.end[0] + 1):
                if line not in docs:
                    code.add(line)
    return Count(comments=len(comments), docstrings=len(docs), code=len(code))


def package_dir(target: str) -> Path:
    """A directory as given, or where an importable package lives (not imported)."""
    path = Path(target)
    if path.is_dir():
        return path
    spec = importlib.util.find_spec(target)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{target}: not a directory or an importable package")
    return Path(next(iter(spec.submodule_search_locations)))


def measure(root: Path) -> dict[str, Count]:
    """Per module (path relative to the package's parent) of every .py file under root."""
    found: dict[str, Count] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in {"tests", "test"}:
            continue
        name = str(path.relative_to(root.parent))
        found[name] = count_source(path.read_text(encoding="utf-8"))
    return found


def report(title: str, counts: dict[str, Count], *, per_module: bool) -> Count:
    total = Count()
    width = max((len(name) for name in counts), default=10)
    if per_module:
        print(f"{'module':<{width}} comments docstr   code density")
        for name, count in counts.items():
            total.add(count)
            print(
                f"{name:<{width}} {count.comments:8} {count.docstrings:7}"
                f" {count.code:6} {count.density:7.3f}"
            )
    else:
        for count in counts.values():
            total.add(count)
    print(
        f"{title} total: {total.doc:,} / {total.code:,} = {total.density:.3f}"
        f" ({total.comments:,} comment lines, {total.docstrings:,} docstring lines)"
    )
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default=str(ROOT / "mcp_core"))
    parser.add_argument("--compare", metavar="PATH", help="another package, measured alike")
    parser.add_argument("--total", action="store_true", help="totals only")
    args = parser.parse_args(argv)
    report(Path(args.package).name, measure(package_dir(args.package)), per_module=not args.total)
    if args.compare:
        other = package_dir(args.compare)
        report(other.name, measure(other), per_module=not args.total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
