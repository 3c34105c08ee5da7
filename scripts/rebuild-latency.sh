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
# usage: scripts/rebuild-latency.sh [example] [rounds]    (default: matmul 3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"
cd "$ROOT"
EXAMPLE="${1:-matmul}"
ROUNDS="${2:-3}"
unset TILE_TARGETS TILE_DEV_TARGETS TILE_CACHE TILE_DUMP

say() { printf 'rebuild-latency: %s\n' "$*" >&2; }

# Touches the example, builds it with the cargo flags and environment given
# (`--release TILE_CACHE=off`, ...), and prints the build's seconds.
timed_build() {
    local flags=() vars=()
    for arg in "$@"; do
        if [[ "$arg" == --* ]]; then flags+=("$arg"); else vars+=("$arg"); fi
    done
    touch "examples/$EXAMPLE.rs"
    local start end
    start=$(date +%s%N)
    env "${vars[@]}" cargo build --quiet "${flags[@]}" --example "$EXAMPLE" >/dev/null 2>&1 ||
        { say "failed: ${vars[*]} cargo build ${flags[*]} --example $EXAMPLE"; exit 1; }
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

say "warming up: $EXAMPLE in both profiles, which fills the cache"
cargo build --quiet --release --example "$EXAMPLE"
cargo build --quiet --example "$EXAMPLE"

names=("release, cache off" "release, cache off, -j1" "release, cache warm" "dev, cache off"
    "dev, TILE_DEV_TARGETS=host,sm_80" "dev, cache warm")
declare -a runs=("" "" "" "" "" "")
for round in $(seq "$ROUNDS"); do
    say "round $round of $ROUNDS"
    runs[0]+=" $(timed_build --release TILE_CACHE=off)"
    runs[1]+=" $(timed_build --release --jobs=1 TILE_CACHE=off)"
    runs[2]+=" $(timed_build --release)"
    runs[3]+=" $(timed_build TILE_CACHE=off)"
    runs[4]+=" $(timed_build TILE_CACHE=off TILE_DEV_TARGETS=host,sm_80)"
    runs[5]+=" $(timed_build)"
done

echo "rebuild after touch examples/$EXAMPLE.rs: cargo build [--release] --example $EXAMPLE, seconds"
printf '%-36s %8s   %s\n' "build" "median" "rounds"
for i in "${!names[@]}"; do
    # shellcheck disable=SC2086
    median=$(printf '%s\n' ${runs[$i]} | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] / 1000}')
    rounds=$(printf '%s\n' ${runs[$i]} | awk '{printf "%.2f ", $1 / 1000}')
    printf '%-36s %8.2f   %s\n' "${names[$i]}" "$median" "$rounds"
done
