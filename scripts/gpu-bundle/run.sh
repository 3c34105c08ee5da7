#!/usr/bin/env bash
# The GPU bundle's entry point (README.md beside it says what it runs and needs).
#
#   ./run.sh [--out DIR] [--smoke]
#
# --out DIR  where the results go (default: results/ beside this script): at most 8 files.
# --smoke    run against the driver stand-ins in smoke/ instead of a GPU driver (how the
#            bundle is checked where it is built); no sanitizers.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="$HERE/results"
SMOKE=0
SANITIZER_SECONDS="${SANITIZER_SECONDS:-150}"
# The benchmarks' time limit; what they measured before it stays in the results.
BENCH_SECONDS="${BENCH_SECONDS:-1200}"
# The generated programs' time limit (the driver compiles 2,000 PTX modules one by one).
GENERATED_SECONDS="${GENERATED_SECONDS:-1200}"
while (($#)); do
    case "$1" in
        --out) OUT="$2"; shift 2 ;;
        --smoke) SMOKE=1; shift ;;
        *) echo "usage: run.sh [--out DIR] [--smoke]" >&2; exit 2 ;;
    esac
done
mkdir -p "$OUT"
LOG="$OUT/run.log"
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }

if ((SMOKE)); then
    export LD_LIBRARY_PATH="$HERE/smoke${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export TILE_STANDIN_IMAGES="$HERE/smoke/images"
    for lib in libcuda.so.1 libcuda.so libamdhip64.so; do
        ln -sf libtile_standin.so "$HERE/smoke/$lib"
    done
    say "run.sh: smoke run against the driver stand-ins in $HERE/smoke"
fi
say "run.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
if command -v nvidia-smi >/dev/null 2>&1; then
    say "run.sh: NVIDIA driver found: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
else
    say "run.sh: no nvidia-smi (no NVIDIA driver tools)"
fi
if command -v rocminfo >/dev/null 2>&1; then
    say "run.sh: ROCm found: $(rocminfo 2>/dev/null | grep -m1 -o 'gfx[0-9a-f]*')"
else
    say "run.sh: no rocminfo (no ROCm)"
fi

status=0
say "== correctness: every example on the device and on the CPU device"
"$HERE/bin/demo" --check --json "$OUT/check.json" 2>&1 | tee "$OUT/check.txt" | tee -a "$LOG" >/dev/null
check=${PIPESTATUS[0]}
cat "$OUT/check.txt"
((check == 0)) || status=1

say "== generated programs: the differential suite's 1,000 programs on the device against the interpreter"
GENERATED="$(mktemp -d)"
trap 'rm -rf "$GENERATED"' EXIT
tar xzf "$HERE/generated.tar.gz" -C "$GENERATED"
if ((SMOKE)); then
    # The seeds whose emulation images smoke/images holds, on a Hopper stand-in (which runs
    # sm_80's and sm_90a's PTX, as an H200 does).
    TILE_STANDIN_SM=90 "$HERE/bin/generated_check" --images "$GENERATED/generated" --seeds 0..6 \
        --json "$OUT/generated.json" 2>&1 | tee -a "$LOG"
else
    timeout "$GENERATED_SECONDS" "$HERE/bin/generated_check" --images "$GENERATED/generated" \
        --json "$OUT/generated.json" 2>&1 | tee -a "$LOG"
fi
code=${PIPESTATUS[0]}
say "generated_check: exit $code"
((code == 0)) || status=1

if ((!SMOKE)) && command -v compute-sanitizer >/dev/null 2>&1; then
    say "== sanitizers: the examples under compute-sanitizer"
    for tool in memcheck racecheck synccheck; do
        # A sanitizer slows kernels by orders of magnitude: each tool gets a bounded time, and
        # running out of it is reported as such (exit 124), not as a finding.
        timeout "$SANITIZER_SECONDS" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$HERE/bin/demo" >>"$OUT/sanitizers.txt" 2>&1
        code=$?
        if ((code == 124)); then
            say "compute-sanitizer --tool $tool: stopped after ${SANITIZER_SECONDS}s"
        else
            say "compute-sanitizer --tool $tool: exit $code"
        fi
        timeout "$SANITIZER_SECONDS" compute-sanitizer --tool "$tool" --error-exitcode 1 \
            "$HERE/bin/generated_check" --images "$GENERATED/generated" --sample 50 \
            >>"$OUT/sanitizers.txt" 2>&1
        code=$?
        say "compute-sanitizer --tool $tool, 50 generated programs: exit $code"
        ((code == 0)) || status=1
        ((code == 0)) || status=1
    done
else
    say "== sanitizers: skipped ($( ((SMOKE)) && echo 'smoke run' || echo 'no compute-sanitizer'))"
fi

say "== launch overhead: tile's launch against a raw cuLaunchKernel, host time"
if ((SMOKE)); then
    # The stand-in checks launches without running them, as the bench does.
    export TILE_STANDIN_LAUNCH=check
fi
"$HERE/bin/launch_overhead" >"$OUT/launch.txt" 2>&1
code=$?
cat "$OUT/launch.txt" | tee -a "$LOG"
say "launch_overhead: exit $code"
((code == 0)) || status=1

say "== benchmarks: tile at the autotuner's configurations, then PyTorch and Triton on the same problems"
if ((SMOKE)); then
    unset TILE_STANDIN_LAUNCH
    bench_args=(--smoke)
else
    bench_args=()
fi
timeout "$BENCH_SECONDS" "$HERE/bin/gpu_bench" "${bench_args[@]}" --tsv "$OUT/bench.tsv" \
    >"$OUT/bench.txt" 2>&1
code=$?
((code == 124)) && echo "gpu_bench: stopped after ${BENCH_SECONDS}s" >>"$OUT/bench.txt"
cat "$OUT/bench.txt" | tee -a "$LOG"
say "gpu_bench: exit $code"
((code == 0)) || status=1
if command -v python3 >/dev/null 2>&1; then
    echo >>"$OUT/bench.txt"
    python3 "$HERE/reference/reference.py" "$OUT/bench.tsv" "$HERE/reference/triton_kernels.py" \
        >"$OUT/compare.tmp" 2>&1
    code=$?
    cat "$OUT/compare.tmp" >>"$OUT/bench.txt"
    cat "$OUT/compare.tmp" | tee -a "$LOG"
    rm -f "$OUT/compare.tmp"
    say "reference.py: exit $code"
    ((code == 0)) || status=1
else
    say "reference.py: skipped (no python3)"
fi

say "run.sh: done, exit $status; results in $OUT"
exit "$status"
