"""Summarise conformance-suite runs against the expected-failures list.

    python examples/conformance/summarize.py --expected FILE RUN [RUN ...]

Each RUN is `MODE:SPEC:DIR`, where MODE is `server` or `client`, SPEC the
`--spec-version` the suite ran at, and DIR the suite's `-o` output directory
(one `checks.json` per scenario) with the suite's own output in `DIR/suite.log`.

A scenario fails when any of its checks is a FAILURE (warnings are shown, not
counted); a scenario the suite reported but wrote no checks for counts as
failed too. Exit status: 0 when every failure is expected, 1 when something
unexpected failed; expected failures that passed are reported (stale entries)
but only fail the run with --strict.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
_SUMMARY = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed(?:, (\d+) warnings)?")
_SKIPPED = re.compile(r"^- (\S+): skipped|^SKIPPED: scenario '([^']+)'")


@dataclass
class Result:
    mode: str
    spec: str
    scenario: str
    passed: int = 0
    failed: int = 0
    warnings: int = 0
    checks: int = 0  # every check, INFO and SKIPPED included
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: bool = False

    @property
    def ok(self) -> bool:
        # Not a single check recorded means the scenario never really ran.
        return self.failed == 0 and self.checks > 0


@dataclass
class Expectation:
    mode: str
    pattern: str
    spec: str
    reason: str
    hits: int = 0

    def matches(self, result: Result) -> bool:
        return (
            self.mode in (result.mode, "*")
            and self.spec in (result.spec, "*")
            and fnmatch.fnmatchcase(result.scenario, self.pattern)
        )


def read_expected(path: Path) -> list[Expectation]:
    """Lines `MODE SCENARIO-GLOB [SPEC] # reason`; every entry must give a reason."""
    out = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line, _, reason = raw.partition("#")
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (2, 3) or fields[0] not in ("server", "client", "*"):
            sys.exit(f"{path}:{number}: expected `MODE SCENARIO [SPEC] # reason`, got {raw!r}")
        if not reason.strip():
            sys.exit(f"{path}:{number}: every expected failure needs a reason after '#'")
        spec = fields[2] if len(fields) == 3 else "*"
        out.append(Expectation(fields[0], fields[1], spec, reason.strip()))
    return out


def _scenario_of(checks_file: Path, root: Path, mode: str) -> str:
    name = _STAMP.sub("", checks_file.parent.relative_to(root).as_posix())
    prefix = "server-"
    return name[len(prefix) :] if mode == "server" and name.startswith(prefix) else name


def read_run(mode: str, spec: str, root: Path) -> list[Result]:
    results: dict[str, Result] = {}
    log = root / "suite.log"
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            if found := _SUMMARY.match(line.strip()):
                _, name, passed, failed, warnings = found.groups()
                p, f, w = int(passed), int(failed), int(warnings or 0)
                results[name] = Result(mode, spec, name, p, f, w, checks=p + f + w)
            elif found := _SKIPPED.match(line.strip()):
                name = found[1] or found[2]
                results[name] = Result(mode, spec, name, skipped=True)
    for checks_file in sorted(root.rglob("checks.json")):
        name = _scenario_of(checks_file, root, mode)
        try:
            checks = json.loads(checks_file.read_text())
        except ValueError:
            continue
        result = results[name] = Result(mode, spec, name, checks=len(checks))
        for check in checks:
            status = check.get("status")
            label = f"{check.get('id')} ({check.get('name')})"
            message = (check.get("errorMessage") or "").splitlines()
            detail = f"{label}: {message[0][:200]}" if message else label
            if status == "SUCCESS":
                result.passed += 1
            elif status == "FAILURE":
                result.failed += 1
                result.failures.append(detail)
            elif status == "WARNING":
                result.warnings += 1
                result.notes.append(detail)
    if not results:
        results["(suite did not run)"] = Result(mode, spec, "(suite did not run)", failed=1)
    return [r for _, r in sorted(results.items())]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--expected", type=Path, required=True)
    parser.add_argument("--strict", action="store_true", help="stale expectations fail the run")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    expected = read_expected(args.expected)
    passed = failed = expected_failed = unexpected = stale = 0
    for run in args.runs:
        mode, spec, directory = run.split(":", 2)
        print(f"\n== {mode} scenarios at {spec}")
        for result in read_run(mode, spec, Path(directory)):
            if result.skipped:
                print(f"  SKIP  {result.scenario}")
                continue
            rule = next((e for e in expected if e.matches(result)), None)
            if rule is not None:
                rule.hits += 1
            counts = f"{result.passed} passed, {result.failed} failed"
            if result.warnings:
                counts += f", {result.warnings} warnings"
            if result.ok:
                passed += 1
                tag = "PASS" if not result.warnings else "PASS*"
                if rule is not None:
                    stale += 1
                    tag = "XPASS"
                print(f"  {tag:5} {result.scenario} ({counts})")
                if rule is not None:
                    print(f"        listed as expected to fail ({rule.reason}): remove the entry")
            else:
                failed += 1
                if rule is not None:
                    expected_failed += 1
                    print(f"  XFAIL {result.scenario} ({counts}) - {rule.reason}")
                    continue
                unexpected += 1
                print(f"  FAIL  {result.scenario} ({counts})")
                for detail in result.failures[:8]:
                    print(f"        - {detail}")
            for note in result.notes[:8]:
                print(f"        ~ {note}")
    print(
        f"\n{passed} passed, {failed} failed "
        f"({expected_failed} expected, {unexpected} unexpected; "
        f"{stale} expected failure(s) passed)"
    )
    return 1 if unexpected or (args.strict and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
