#!/usr/bin/env bash
# Compile time of the Triton tutorial kernels, Triton's beside tile's, in one run (no GPU needed):
#   1. Triton (TILE_TRITON_SPEC, default triton==3.9.0) into the project-local venv
#      .tools/triton-venv, installed on first use;
#   2. scripts/triton_compile_times.py: Triton compiles each kernel of kernels.py
#      ($TRITONREF/kernels.py, default ../shared/tritonref) for cuda:80, cold caches;
#   3. benches/compile_vs_triton.rs: tile compiles the same kernels for sm_80, gfx942, gfx1100
#      and x86_64-v3 and prints both side by side.
# usage: scripts/compile-vs-triton.sh [runs]    (default 5; the table goes to standard output)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
RUNS="${1:-5}"
TRITONREF="${TRITONREF:-$ROOT/../shared/tritonref}"
KERNELS="$TRITONREF/kernels.py"

say() { printf 'compile-vs-triton: %s\n' "$*" >&2; }

[[ -f "$KERNELS" ]] || { say "no $KERNELS (set TRITONREF to the directory of kernels.py)"; exit 1; }
# shellcheck source=scripts/triton-venv.sh
source "$ROOT/scripts/triton-venv.sh"

TIMES="$(mktemp -t tile-triton-times.XXXXXX)"
trap 'rm -f "$TIMES"' EXIT
say "Triton: $RUNS cold-cache compiles per kernel for cuda:80"
# Triton 3.9 warns when FP fusion is left to its default; this is the default.
TRITON_DEFAULT_FP_FUSION=1 "$TRITON_PYTHON" "$ROOT/scripts/triton_compile_times.py" \
    "$KERNELS" cuda:80 "$RUNS" "$TIMES"
say "tile: the same kernels through #[tile_kernel]"
cd "$ROOT"
cargo bench --quiet --bench compile_vs_triton -- --triton-times "$TIMES" --runs "$RUNS"
