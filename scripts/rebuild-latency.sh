#!/usr/bin/env bash
# Rebuild latency of an example after `touch examples/<example>.rs` (its kernels unchanged), side by
# side in one run, the ways of building alternating round by round (medians of the rounds):
#   release, cache off         TILE_CACHE=off: every kernel expanded again for every default target
#   release, cache off, -j1    the same with one job: no jobserver token, so each kernel's targets
#                              compile one at a time
#   release, cache warm        the same build with the kernel cache (what a user gets)
#   dev, cache off             a debug build, every default target
#   dev, TILE_DEV_TARGETS      the debug build for host and sm_80 only (docs/guide.md), cache off
#   dev, cache warm            the debug build, every default target, with the cache
#   check, cache off           `cargo check`: the front end and the checks without LLVM, no device
#                              code (docs/guide.md, "Build time"), every default target
#   dev, TILE_TARGETS=<t>      (set `targets`) the debug build for one default target alone, cache
#                              off, for each target: the per-target split of `dev, cache off`
# usage: scripts/rebuild-latency.sh [example] [rounds] [set]    (default: matmul 3 all)
#   set: `all` (every way above but the per-target ones), `check` (the check and the dev
#   builds, no release build), or `targets` (dev, cache off, then each target alone)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
cd "$ROOT"
EXAMPLE="${1:-matmul}"
ROUNDS="${2:-3}"
SET="${3:-all}"
unset TILE_TARGETS TILE_DEV_TARGETS TILE_CACHE TILE_DUMP

say() { printf 'rebuild-latency: %s\n' "$*" >&2; }

# Touches the example, runs the cargo command (`build` or `check`) with the flags and environment
# given (`--release TILE_CACHE=off`, ...) on it, and prints the milliseconds it took.
timed_build() {
    local command="$1" flags=() vars=()
    shift
    for arg in "$@"; do
        if [[ "$arg" == --* ]]; then flags+=("$arg"); else vars+=("$arg"); fi
    done
    touch "examples/$EXAMPLE.rs"
    local start end
    start=$(date +%s%N)
    env "${vars[@]}" cargo "$command" --quiet "${flags[@]}" --example "$EXAMPLE" >/dev/null 2>&1 ||
        { say "failed: ${vars[*]} cargo $command ${flags[*]} --example $EXAMPLE"; exit 1; }
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

# Each way of building: its name, then the arguments of `timed_build`.
ways=()
if [[ "$SET" == all ]]; then
    ways+=("release, cache off|build --release TILE_CACHE=off"
        "release, cache off, -j1|build --release --jobs=1 TILE_CACHE=off"
        "release, cache warm|build --release")
elif [[ "$SET" == targets ]]; then
    ways+=("dev, cache off|build TILE_CACHE=off")
    for target in sm_80 sm_86 sm_89 sm_90 gfx90a gfx942 gfx9-4-generic gfx1100 gfx12-generic host; do
        ways+=("dev, TILE_TARGETS=$target|build TILE_CACHE=off TILE_TARGETS=$target")
    done
elif [[ "$SET" != check ]]; then
    say "unknown set \`$SET\`: \`all\`, \`check\` or \`targets\`"
    exit 2
fi
if [[ "$SET" != targets ]]; then
    ways+=("dev, cache off|build TILE_CACHE=off"
        "dev, TILE_DEV_TARGETS=host,sm_80|build TILE_CACHE=off TILE_DEV_TARGETS=host,sm_80"
        "dev, cache warm|build"
        "check, cache off|check TILE_CACHE=off")
fi

say "warming up: $EXAMPLE, which fills the cache"
if [[ "$SET" == all ]]; then cargo build --quiet --release --example "$EXAMPLE"; fi
cargo build --quiet --example "$EXAMPLE"
cargo check --quiet --example "$EXAMPLE"

runs=()
for _ in "${ways[@]}"; do runs+=(""); done
for round in $(seq "$ROUNDS"); do
    say "round $round of $ROUNDS"
    for i in "${!ways[@]}"; do
        # shellcheck disable=SC2086
        runs[i]+=" $(timed_build ${ways[i]#*|})"
    done
done

echo "rebuild after touch examples/$EXAMPLE.rs: cargo build|check [--release] --example $EXAMPLE, seconds"
printf '%-36s %8s   %s\n' "build" "median" "rounds"
for i in "${!ways[@]}"; do
    # shellcheck disable=SC2086
    median=$(printf '%s\n' ${runs[$i]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] / 1000}')
    rounds=$(printf '%s\n' ${runs[$i]} | awk '{printf "%.2f ", $1 / 1000}')
    printf '%-36s %8.2f   %s\n' "${ways[$i]%%|*}" "$median" "$rounds"
done
