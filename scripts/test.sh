#!/usr/bin/env bash
# Sets up the toolchain (scripts/setup.sh), then runs every test of the workspace: unit,
# integration, example and bench targets, then the doc tests, then builds the crate graphs of
# tests/crate-graphs (scripts/crate-graphs.sh). Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
# tile-macros (no tests of its own) is left out of the selection: selected, a proc macro's
# dependencies take its features in the normal build too, and `static-llvm` would link all of
# LLVM into every test binary (some 13 GB of them) instead of only into the macro.
cargo test --workspace --exclude tile-macros --all-targets "$@"
cargo test --workspace --exclude tile-macros --doc "$@"
# Crate graphs holding the runtime beside cudarc as candle and cubecl set it up.
bash scripts/crate-graphs.sh
