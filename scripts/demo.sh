#!/usr/bin/env bash
# Sets up the toolchain (scripts/setup.sh) and runs the demo example in release mode.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# shellcheck source=scripts/env.sh
source scripts/env.sh
exec cargo run --release -p tile --example demo "$@"
