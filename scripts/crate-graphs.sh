#!/usr/bin/env bash
# Builds tests/crate-graphs/*: crates whose dependency graphs hold `tile-runtime`
# (with its cudarc conversions) beside cudarc as candle and cubecl configure it,
# each its own workspace (candle's `dynamic-linking` would link libcuda into every
# binary of the project's). Building them is the test: cargo unifies the features,
# and cudarc's build script refuses conflicting ones.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
for graph in tests/crate-graphs/*/; do
    echo "crate graph: $graph"
    cargo build --manifest-path "$graph/Cargo.toml" --target-dir target/crate-graphs
done
