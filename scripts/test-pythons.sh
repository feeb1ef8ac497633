#!/usr/bin/env bash
# The test suite again on each newer CPython this machine has.
#
#   scripts/test-pythons.sh            # or: make test-pythons
#
# `make test` runs on the machine's python3 (3.11 here, the floor pyproject.toml
# declares). Code that depends on the version (asyncio's eager tasks, taken natively
# from 3.12 on: mcp_adapters/backends/_eager.py) has a second path there, and a bug
# on that path passes `make test` unseen: session 23 found one this way (a task
# factory bypassed on 3.12+ only). So: for each of PYTHONS (default "3.13 3.12")
# found as `pythonX.Y` that runs, or under pyenv's versions, make .venv-X.Y
# (git-ignored) with the dev extras, then run the suite there. Prints one line per
# version; a version not on the machine is said and skipped. Exits non-zero when
# the suite fails on a version that was found.
#
# Environment: PYTHONS (versions, newest first), PYTEST_ARGS (default
# "-n 3 --dist loadgroup -p no:cacheprovider"; pyproject.toml adds -q).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHONS=${PYTHONS:-"3.13 3.12"}
PYTEST_ARGS=${PYTEST_ARGS:-"-n 3 --dist loadgroup -p no:cacheprovider"}

find_python() {
    local version=$1 candidate
    # A pyenv shim exists for every installed version but runs only the selected
    # ones: ask the interpreter itself, not `command -v`.
    if "python$version" -c 'import sys' >/dev/null 2>&1; then
        command -v "python$version"
        return 0
    fi
    for candidate in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version".*/bin/python"$version"; do
        if [ -x "$candidate" ] && "$candidate" -c 'import sys' >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

failed=0
for version in $PYTHONS; do
    if ! python=$(find_python "$version"); then
        echo "Python $version: not on this machine, skipped"
        continue
    fi
    venv=".venv-$version"
    if [ ! -f "$venv/.installed" ] || [ pyproject.toml -nt "$venv/.installed" ]; then
        "$python" -m venv "$venv" &&
            "$venv/bin/pip" install -q --upgrade pip &&
            "$venv/bin/pip" install -q -e '.[dev]' &&
            touch "$venv/.installed" || {
            echo "Python $version ($python): the venv could not be made"
            failed=1
            continue
        }
    fi
    echo "Python $version ($("$venv/bin/python" -V 2>&1)): running the suite"
    # (As `make unit`: caches written, so each server subprocess compiles once.)
    # shellcheck disable=SC2086
    if PYTHONDONTWRITEBYTECODE= "$venv/bin/pytest" $PYTEST_ARGS; then
        echo "Python $version: passed"
    else
        echo "Python $version: FAILED"
        failed=1
    fi
done
exit $failed
