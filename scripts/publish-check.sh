#!/usr/bin/env bash
# `cargo publish --dry-run` of every published crate, in dependency order: cargo packages
# them all, then verifies each (builds it from its package alone) against a local registry
# of the packages made before it, so no crate needs to be on crates.io first. tile-standin
# (test-only stand-ins for the GPU drivers) is not published. Needs the crates.io index
# (network) for the external dependencies. Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/env.sh
source scripts/env.sh
cargo publish --workspace --dry-run --exclude tile-standin "$@"
