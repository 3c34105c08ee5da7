"""Times Triton's ahead-of-time compilation of the tutorial kernels, without a GPU.

usage: python triton_compile_times.py KERNELS_PY TARGET RUNS OUT_TSV
  KERNELS_PY  a kernels.py with SPECS (../shared/tritonref/kernels.py)
  TARGET      cuda:80 | cuda:90 | hip:gfx942

Each kernel is compiled RUNS + 1 times in this process, each time into a new,
empty TRITON_CACHE_DIR (a cold cache): the first compile of the first kernel
also pays Triton's one-time start-up, so the first run of each kernel is kept
apart and the median of the other RUNS is reported, as the Rust side reports
the median of warm runs. Triton's compile listener gives the time of each
stage; "to PTX" is the whole compile less its last stage (ptxas making the
cubin) and the writing of its cache, which is what tile's expansion does for
an sm_* target (it embeds PTX; the driver assembles it).
"""
import os
import shutil
import statistics
import sys
import tempfile
import time

kernels_py, target_name, runs, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

start = time.perf_counter()
import triton  # noqa: E402
from triton import knobs  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402

import_s = time.perf_counter() - start
sys.path.insert(0, os.path.dirname(os.path.abspath(kernels_py)))
from kernels import SPECS  # noqa: E402

backend, arch = target_name.split(":")
target = GPUTarget("cuda", int(arch), 32) if backend == "cuda" else GPUTarget("hip", arch, 64)
last_stage = "cubin" if backend == "cuda" else "hsaco"

stages = {}


def listener(*, src, metadata, metadata_group, times, cache_hit):
    stages.clear()
    stages["cache_hit"] = cache_hit
    stages["stages_us"] = dict(times.lowering_stages)
    stages["store_results_us"] = times.store_results


knobs.compilation.listener = listener


def compile_once(spec):
    """Seconds for one cold-cache compile, and the seconds of its last stage and cache store."""
    cache = tempfile.mkdtemp(prefix="tile-triton-cache-")
    os.environ["TRITON_CACHE_DIR"] = cache
    try:
        src = triton.compiler.ASTSource(fn=spec["fn"], signature=spec["signature"],
                                        constexprs=spec["constexprs"], attrs=spec["attrs"])
        t0 = time.perf_counter()
        triton.compile(src, target=target, options=dict(spec["options"]))
        total = time.perf_counter() - t0
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert not stages["cache_hit"], "a cold cache hit"
    tail = (stages["stages_us"].get(last_stage, 0) + stages["store_results_us"]) / 1e6
    return total, tail


lines = [f"# triton {triton.__version__} {target_name} runs={runs} import_s={import_s:.3f}",
         "# kernel\tnum_warps\tfirst_s\tmedian_s\tmedian_to_ptx_s"]
for name, spec in SPECS.items():
    first, _ = compile_once(spec)
    timed = [compile_once(spec) for _ in range(runs)]
    median = statistics.median(t for t, _ in timed)
    to_ptx = statistics.median(t - tail for t, tail in timed)
    lines.append(f"{name}\t{spec['options'].get('num_warps')}\t{first:.4f}\t{median:.4f}\t{to_ptx:.4f}")
    print(f"triton {name}: {median * 1e3:.1f} ms ({to_ptx * 1e3:.1f} to PTX)", file=sys.stderr)

with open(out_path, "w") as f:
    f.write("\n".join(lines) + "\n")
