#!/usr/bin/env bash
# Generated code of the kernel corpus, Triton's beside tile's, in one run (no GPU needed):
#   1. Triton (TILE_TRITON_SPEC, default triton==3.9.0) into the project-local venv
#      .tools/triton-venv, installed on first use (shared with scripts/compile-vs-triton.sh);
#   2. scripts/corpus/triton_stats.py: Triton compiles each kernel of
#      scripts/corpus/triton_kernels.py for sm_80, sm_90a, sm_100a, sm_120a and gfx942, cold caches, and writes
#      registers, spills, shared memory, mma, async-copy and vector-global counts to TSV;
#   3. benches/corpus.rs: tile compiles the same kernels (examples/corpus) and prints its
#      figures beside Triton's.
# usage: scripts/corpus-vs-triton.sh [TSV]    (default target/corpus-triton.tsv)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
TSV="${1:-$ROOT/target/corpus-triton.tsv}"

say() { printf 'corpus-vs-triton: %s\n' "$*" >&2; }

# shellcheck source=scripts/triton-venv.sh
source "$ROOT/scripts/triton-venv.sh"

mkdir -p "$(dirname "$TSV")"
case "$TSV" in
/*) ;;
*) TSV="$PWD/$TSV" ;;
esac
say "Triton: every corpus kernel for sm_80, sm_90a, sm_100a and gfx942, cold caches -> $TSV"
# Triton 3.9 warns when FP fusion is left to its default; this is the default.
TRITON_DEFAULT_FP_FUSION=1 "$TRITON_PYTHON" "$ROOT/scripts/corpus/triton_stats.py" "$TSV"
say "tile: the same kernels through #[tile_kernel]"
cd "$ROOT"
cargo bench --quiet --bench corpus -- --triton "$TSV"
