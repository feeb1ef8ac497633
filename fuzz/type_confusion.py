"""The type-confusion fuzzer at full size (`make fuzz`; not part of `make test`).

First every single change of every schema-built message of every revision, for
every target (connection states of both roles and eras, directly and through
Streamable HTTP): each field, nested ones and the `_meta` keys the engine reads,
replaced by each wrong-typed value or deleted. Then seeded random stacks of
changes until `--count` inputs were fed. The invariants are those of
`tests/fuzz/type_confusion.py`; the test suite runs a share of the same inputs.

    python fuzz/type_confusion.py                    # 1,000,000 inputs, 2 workers
    python fuzz/type_confusion.py --count 200000 --seed 7 --workers 1

Prints a running count, then a summary: inputs per target, what they came to,
and every class of failure with its first input. Exits 1 if anything failed.
The same `--seed` and `--workers` feed the same inputs.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.type_confusion import Failure, Run, full_plan, sampled_plan

PROGRESS_EVERY = 50_000


def _failure_class(exc: Failure) -> str:
    """Failures of one class share this: the exception and where it was raised, or
    the invariant that broke."""
    cause = exc.__cause__
    if cause is not None and not isinstance(cause, Failure):
        frame = traceback.extract_tb(cause.__traceback__)[-1]
        return f"{type(cause).__name__} at {Path(frame.filename).name}:{frame.lineno}"
    reason = str(exc).split("]: ", 1)[-1].split("\n", 1)[0]
    return reason.split(":", 1)[0][:80]


def work(worker: int, workers: int, seed: int, count: int) -> dict[str, Any]:
    """One worker's share: every `workers`-th enumerated input, then random ones."""
    run = Run()
    failures: Counter[str] = Counter()
    first: dict[str, str] = {}
    fed = 0
    started = time.monotonic()

    def feed(item: Any) -> None:
        nonlocal fed
        fed += 1
        try:
            run.feed(item)
        except Failure as exc:
            kind = _failure_class(exc)
            failures[kind] += 1
            first.setdefault(kind, str(exc))
        if worker == 0 and fed % PROGRESS_EVERY == 0:
            rate = fed / (time.monotonic() - started)
            print(f"  worker 0: {fed:,} inputs ({rate:,.0f}/s)", flush=True)

    for index, item in enumerate(full_plan()):
        if fed >= count:
            break
        if index % workers == worker:
            feed(item)
    enumerated = fed
    for item in sampled_plan(seed * 1000 + worker, count - fed):
        feed(item)
    by_target = {name: runner.fed for name, runner in run.runners.items()}
    return {
        "fed": fed,
        "enumerated": enumerated,
        "by_target": by_target,
        "outcomes": dict(run.outcomes()),
        "failures": dict(failures),
        "first": first,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="inputs to feed in all")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random share")
    parser.add_argument("--workers", type=int, default=2, help="processes (the machine's cores)")
    args = parser.parse_args()
    workers = max(1, args.workers)
    shares = [
        args.count // workers + (1 if i < args.count % workers else 0) for i in range(workers)
    ]
    print(f"type confusion: {args.count:,} inputs, seed {args.seed}, {workers} worker(s)")
    started = time.monotonic()
    if workers == 1:
        results = [work(0, 1, args.seed, shares[0])]
    else:
        with ProcessPoolExecutor(workers) as pool:
            futures = [pool.submit(work, i, workers, args.seed, shares[i]) for i in range(workers)]
            results = [f.result() for f in futures]
    elapsed = time.monotonic() - started

    fed = sum(r["fed"] for r in results)
    enumerated = sum(r["enumerated"] for r in results)
    by_target: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    first: dict[str, str] = {}
    for r in results:
        by_target.update(r["by_target"])
        outcomes.update(r["outcomes"])
        failures.update(r["failures"])
        for kind, text in r["first"].items():
            first.setdefault(kind, text)

    print(
        f"\nfed {fed:,} inputs ({enumerated:,} enumerated, {fed - enumerated:,} sampled) "
        f"in {elapsed:,.0f} s; {sum(failures.values()):,} failed"
    )
    print("\nby target:")
    for name, n in sorted(by_target.items()):
        print(f"  {name:36} {n:>9,}")
    print("\nwhat they came to:")
    for label, n in islice(outcomes.most_common(), 25):
        print(f"  {label:36} {n:>9,}")
    if failures:
        print(f"\n{len(failures)} class(es) of failure:")
        for kind, n in failures.most_common():
            print(f"\n  {n:,} x {kind}\n    first: {first[kind][:1500]}")
        return 1
    print("\nno failures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
