#!/usr/bin/env bash
# Pin the book's full CPU package set: requirements.txt resolved by uv into requirements.lock,
# every package (dependencies of dependencies too) at one exact version, for CPython 3.11 on
# x86-64 Linux (CI and Binder; soupsieve 4.1 needs 3.11.5 or newer). `make book` and `make test`
# install from the lock; requirements.txt stays the ranges a reader may install newer within.
#
# uv is a maintainer's tool, not a dependency of the book (pip install uv). uv prefers the
# versions already in requirements.lock, so a re-run changes only what requirements.txt no
# longer allows; `tools/lock.sh --upgrade` takes the newest of everything.
#
# torch's CPU build (torch==X+cpu, no CUDA packages) is not on PyPI: by default it comes from
# PyTorch's CPU index; TORCH_WHEELS=DIR takes it from a directory of wheels instead (where that
# index is out of reach, as on the machine that made the first lock: TORCH_WHEELS=/opt/wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null || { echo "tools/lock.sh: needs uv on the PATH (pip install uv)" >&2; exit 1; }
if [ -n "${TORCH_WHEELS:-}" ]; then
  torch_source=(--find-links "$TORCH_WHEELS")
else
  torch_source=(--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match)
fi
# lengthgen itself (the `-e .` of requirements.txt) is installed from the checkout, not pinned.
uv pip compile requirements.txt -o requirements.lock --quiet \
  --python-version 3.11.5 --python-platform x86_64-manylinux_2_28 \
  --no-emit-package lengthgen "${torch_source[@]}" --custom-compile-command tools/lock.sh "$@"
