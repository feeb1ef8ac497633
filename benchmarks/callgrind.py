"""Instruction counts with callgrind, for the profilers of one side of a real exchange.

`benchmarks/profile_stdio.py --by ir` and `benchmarks/profile_http.py --by ir` run one
side under `valgrind --tool=callgrind --instr-atstart=no` (collection off), switch
collection on after the warm-up (`callgrind_control -i on PID`), dump after the measured
calls (`callgrind_control -d PID`) and divide the dump's total by the calls. Instruction
counts do not move with the machine's load, so two trees or two eras can be compared on a
shared machine where wall-clock rounds cannot. About 50 times slower than running free.
"""

from __future__ import annotations

import glob
import subprocess


def command(out_file: str, argv: list[str]) -> list[str]:
    """`argv` run under callgrind with collection off; dumps go to `out_file` (`%p` in it
    becomes the process id)."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out_file}",
        *argv,
    ]


def control(pid: int, *args: str) -> None:
    """`callgrind_control ARGS PID`: `-i on` / `-i off` switch collection, `-d` dumps."""
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def instructions(out_prefix: str) -> int:
    """The instructions of the dump `control(pid, "-d")` wrote under `out_prefix` (its
    first numbered part; the dump at exit holds only what ran after it)."""
    for name in sorted(glob.glob(out_prefix + "*.1")):
        with open(name) as f:
            for line in f:
                if line.startswith("totals:"):
                    return int(line.split()[1])
    raise RuntimeError(f"no callgrind dump under {out_prefix}")
