#!/usr/bin/env bash
# Builds the GPU bundle: a directory (default target/gpu-bundle/) holding everything a machine
# with a GPU but without Rust, LLVM or a network needs to check tile on its device. Its one entry
# point is run.sh; its README.md says what each part measures. The bundle is at most 48 MiB
# (checked here); its smoke run (`run.sh --smoke`) uses the driver stand-ins it also carries.
#
#   bash scripts/gpu-bundle.sh [DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-$ROOT/target/gpu-bundle}"
LIMIT=$((48 * 1024 * 1024))
# shellcheck source=scripts/env.sh
source scripts/env.sh

# Release binaries: they link no LLVM (the kernels were compiled by `cargo build`).
cargo build --release --example demo --example launch_overhead --example gpu_bench \
    --example generated_check --example generated_images
# The driver stand-ins and the emulation images of the examples' sm_80 and gfx942 images, for
# the smoke run (writing the images needs LLVM, so it happens here).
cargo build --release -p tile-standin
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/smoke/images" "$OUT/reference"
cp target/release/examples/demo target/release/examples/launch_overhead \
    target/release/examples/gpu_bench "$OUT/bin/"
# The comparison with PyTorch and Triton: the script, and Triton's tutorial kernels where the
# checkout has them beside it (../shared/tritonref; without them Triton's columns stay empty).
cp scripts/gpu-bundle/reference.py "$OUT/reference/"
if [[ -f ../shared/tritonref/kernels.py ]]; then
    cp ../shared/tritonref/kernels.py "$OUT/reference/triton_kernels.py"
else
    echo "gpu bundle: no ../shared/tritonref/kernels.py, the benchmarks will not run Triton" >&2
fi
cp target/release/libtile_standin.so "$OUT/smoke/"
cargo run --quiet --release --example standin_images -- "$OUT/smoke/images"
# The differential suite's 1,000 generated programs compiled for sm_80 and sm_90a (through the
# kernel cache: a rebuild by the same compiler takes seconds), stored compressed, with the
# emulation images of seeds 0..6 for the smoke run.
cp target/release/examples/generated_check "$OUT/bin/"
generated="$(mktemp -d)"
target/release/examples/generated_images "$generated/generated" --emulation "$OUT/smoke/images"
tar czf "$OUT/generated.tar.gz" -C "$generated" generated
rm -rf "$generated"
cp scripts/gpu-bundle/run.sh scripts/gpu-bundle/README.md "$OUT/"
chmod +x "$OUT/run.sh" "$OUT/bin/"*

bytes=$(du -sb "$OUT" | cut -f1)
awk -v out="$OUT" -v b="$bytes" -v l="$LIMIT" \
    'BEGIN { printf "gpu bundle: %s, %.1f MiB (at most %d MiB)\n", out, b / 1048576, l / 1048576 }'
if ((bytes > LIMIT)); then
    echo "gpu bundle: over the limit" >&2
    exit 1
fi
