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
# cargo unpacks the packages it verifies against into $CARGO_HOME/registry/src/-<digest>/ (a
# local registry's directory) and reuses an unpacked one of the same version on the next run,
# so a second run would verify against the first run's sources: remove this project's.
for unpacked in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/tile-*; do
    [[ -d "$unpacked" ]] && rm -rf "$unpacked"
done
cargo publish --workspace --dry-run --exclude tile-standin "$@"
