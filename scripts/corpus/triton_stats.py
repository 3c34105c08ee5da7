"""Compile the corpus's Triton kernels ahead of time (no GPU) and write their code statistics.

usage: triton_stats.py TSV_OUT [names...]      (default: every kernel of triton_kernels.SPECS)

Each kernel is compiled for sm_80 (cuda 80), sm_90a (cuda 90), sm_100a (cuda 100), sm_120a (cuda 120) and
gfx942 (hip), every compile in its own process with an empty TRITON_CACHE_DIR; CORPUS_TRITON_TARGETS=a,b
(labels among those) compiles for those only. TSV_OUT gets one row per kernel and target:

  kernel  target  registers  spill  shared  mma  async_copy  vector_global  note

NVIDIA (from the PTX Triton wrote, assembled again by ptxas -v for that architecture; $PTXAS,
else .tools/bin/ptxas, else ptxas on PATH):
  registers      "Used N registers"
  spill          "N bytes spill stores"
  shared         Triton's metadata "shared" (bytes per block)
  mma            mma.sync + wgmma.mma_async + tcgen05.mma instructions in the PTX
  async_copy     cp.async.ca / cp.async.cg (non-bulk) + cp.async.bulk.tensor instructions
  vector_global  ld.global*.v2|v4|v8 + st.global*.v2|v4|v8 instructions (any element width)
AMD (from the .amdgcn text Triton wrote and the code-object metadata in it):
  registers      .vgpr_count (as reported: on gfx942 it includes the AGPRs a kernel uses; the
                 metadata's separate .agpr_count is not added)
  spill          .vgpr_spill_count
  shared         Triton's metadata "shared" (LDS bytes per workgroup)
  mma            v_mfma* instructions
  async_copy     global/buffer loads that write LDS directly (global_load_lds_*, or a
                 buffer/global load carrying the lds modifier)
  vector_global  global_load|store_dwordx2|x3|x4 + buffer_load|store_dwordx2|x3|x4 instructions
A compile that fails gives a row with "error" in registers, "-" in the other figures and the
reason in note, on one line (Triton's exception: e.g. a format the target does not support);
the reason goes to standard error too, and the run goes on with the next kernel. note is empty
where the compile succeeds.

Environment: CORPUS_TRITON_KEEP=DIR keeps every artifact (ttir, ttgir, llir, ptx/amdgcn,
cubin/hsaco, metadata, ptxas log) under DIR/<kernel>/<target>/.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGETS = [("sm_80", "cuda", 80), ("sm_90a", "cuda", 90), ("sm_100a", "cuda", 100),
           ("sm_120a", "cuda", 120), ("gfx942", "hip", "gfx942")]
COLUMNS = ["kernel", "target", "registers", "spill", "shared", "mma", "async_copy", "vector_global"]
NOTE = "note"  # the last column: why a compile failed, else empty


def find_ptxas():
    for cand in (os.environ.get("PTXAS"), os.path.join(ROOT, ".tools", "bin", "ptxas"), shutil.which("ptxas")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


# ---- one compile, in a child process -------------------------------------------------------

def compile_one(name, backend, arch, outdir):
    """Child: compile SPECS[name] for one target, write every artifact and metadata.json."""
    sys.path.insert(0, HERE)
    from triton.backends.compiler import GPUTarget
    import triton
    from triton_kernels import SPECS

    spec = SPECS[name]
    if backend == "cuda":
        target = GPUTarget("cuda", int(arch), 32)
        options = dict(spec["options"])
    else:
        target = GPUTarget("hip", arch, 64)
        options = dict(spec.get("options_hip", spec["options"]))
    src = triton.compiler.ASTSource(fn=spec["fn"], signature=spec["signature"],
                                    constexprs=spec["constexprs"], attrs=spec["attrs"])
    kernel = triton.compile(src, target=target, options=options)
    for ext, content in kernel.asm.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(os.path.join(outdir, f"{name}.{ext}"), mode) as f:
            f.write(content)
    md = kernel.metadata._asdict()
    md["target"] = vars(md["target"])
    with open(os.path.join(outdir, "metadata.json"), "w") as f:
        json.dump(md, f, indent=1, default=str)


# ---- statistics ----------------------------------------------------------------------------

def ptx_instructions(text):
    """The mnemonic of every PTX instruction (predicates stripped; directives, labels, braces,
    comments and the DWARF sections skipped)."""
    body = text.split("\t.section")[0]
    out = []
    for line in body.splitlines():
        s = line.split("//")[0].strip()
        if not s or s[0] in ".{})$" or s.endswith(":"):
            continue
        s = re.sub(r"^@!?%\w+\s+", "", s)
        tok = s.split()[0].rstrip(";")
        if re.match(r"^[a-z][a-z0-9_.:]*$", tok):
            out.append(tok)
    return out


def nvidia_stats(ptx_text, ptx_path, sm, ptxas, keep_dir):
    mn = ptx_instructions(ptx_text)
    mma = sum(1 for m in mn if m.startswith(("mma.sync", "wgmma.mma_async", "tcgen05.mma")))
    async_copy = sum(1 for m in mn if m.startswith(("cp.async.ca.", "cp.async.cg.", "cp.async.bulk.tensor")))
    vec = sum(1 for m in mn if m.startswith(("ld.global", "st.global"))
              and re.search(r"\.v(2|4|8)(\.|$)", m))
    cubin = os.path.join(os.path.dirname(ptx_path), f"ptxas.{sm}.cubin")
    p = subprocess.run([ptxas, f"-arch={sm}", "-v", ptx_path, "-o", cubin], capture_output=True, text=True)
    log = p.stdout + p.stderr
    if keep_dir:
        with open(os.path.join(keep_dir, f"ptxas.{sm}.log"), "w") as f:
            f.write(log)
    if p.returncode != 0:
        raise RuntimeError(f"ptxas -arch={sm} failed: {log.strip().splitlines()[-1] if log.strip() else p.returncode}")
    regs = re.search(r"Used (\d+) registers", log)
    spill = re.search(r"(\d+) bytes spill stores", log)
    if not regs:
        raise RuntimeError("no 'Used N registers' in ptxas -v output")
    return dict(registers=int(regs.group(1)), spill=int(spill.group(1)) if spill else 0, mma=mma,
                async_copy=async_copy, vector_global=vec)


def amdgcn_instructions(text):
    out = []
    for line in text.splitlines():
        if not line.startswith("\t") or line.startswith("\t."):
            continue
        s = line.split(";")[0].strip()
        if s and re.match(r"^[a-z][a-z0-9_]*(\s|$)", s):
            out.append(s)
    return out


def amd_stats(text):
    ins = amdgcn_instructions(text)

    def md(key):
        m = re.search(rf"^\s*(?:-\s+)?\.{key}:\s+(\d+)", text, re.M)
        if not m:
            raise RuntimeError(f"no .{key} in the amdgcn metadata")
        return int(m.group(1))

    mma = sum(1 for s in ins if s.startswith("v_mfma"))
    async_copy = sum(1 for s in ins if re.match(r"^(global|buffer)_load_lds_", s)
                     or (re.match(r"^(global|buffer)_load_", s) and re.search(r"(\s|,)lds(\s|,|$)", s)))
    vec = sum(1 for s in ins if re.match(r"^(global|buffer)_(load|store)_dwordx[234]\b", s))
    return dict(registers=md("vgpr_count"), spill=md("vgpr_spill_count"), mma=mma, async_copy=async_copy,
                vector_global=vec)


def stats_for(name, label, backend, arch, ptxas, keep_root):
    """Parent: compile in a child with a cold cache, then measure. Returns a row dict."""
    work = tempfile.mkdtemp(prefix="tile-corpus-triton-")
    try:
        outdir = os.path.join(work, "out")
        os.makedirs(outdir)
        env = dict(os.environ)
        env["TRITON_CACHE_DIR"] = os.path.join(work, "cache")
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--compile-one", name, backend, str(arch),
                            outdir], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            raise RuntimeError(f"triton.compile failed: {err}")
        with open(os.path.join(outdir, "metadata.json")) as f:
            meta = json.load(f)
        keep_dir = None
        if keep_root:
            keep_dir = os.path.join(keep_root, name, label)
            shutil.rmtree(keep_dir, ignore_errors=True)
            shutil.copytree(outdir, keep_dir)
        if backend == "cuda":
            if not ptxas:
                raise RuntimeError("no ptxas (set PTXAS or run scripts/setup.sh)")
            ptx_path = os.path.join(outdir, f"{name}.ptx")
            with open(ptx_path) as f:
                row = nvidia_stats(f.read(), ptx_path, label, ptxas, keep_dir)
        else:
            with open(os.path.join(outdir, f"{name}.amdgcn")) as f:
                row = amd_stats(f.read())
        row["shared"] = int(meta.get("shared") or 0)
        return row
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv):
    if len(argv) >= 2 and argv[1] == "--compile-one":
        compile_one(*argv[2:6])
        return 0
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tsv_out, names = argv[1], argv[2:]
    sys.path.insert(0, HERE)
    from triton_kernels import SPECS
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        print(f"triton_stats: unknown kernel(s) {', '.join(unknown)}; known: {', '.join(SPECS)}", file=sys.stderr)
        return 2
    names = names or list(SPECS)
    ptxas = find_ptxas()
    keep_root = os.environ.get("CORPUS_TRITON_KEEP")
    rows, failures = [], 0
    wanted = os.environ.get("CORPUS_TRITON_TARGETS")
    targets = [t for t in TARGETS if wanted is None or t[0] in wanted.split(",")]
    if not targets:
        print(f"triton_stats: CORPUS_TRITON_TARGETS={wanted} names none of {', '.join(t[0] for t in TARGETS)}",
              file=sys.stderr)
        return 2
    for name in names:
        for label, backend, arch in targets:
            try:
                r = stats_for(name, label, backend, arch, ptxas, keep_root)
                rows.append([name, label] + [str(r[c]) for c in COLUMNS[2:]] + [""])
                print(f"triton_stats: {name} {label}: " + " ".join(f"{c}={r[c]}" for c in COLUMNS[2:]),
                      file=sys.stderr)
            except Exception as e:  # noqa: BLE001 - one failed compile must not end the run
                failures += 1
                why = " ".join(str(e).split())[:300]
                rows.append([name, label, "error"] + ["-"] * (len(COLUMNS) - 3) + [why])
                print(f"triton_stats: {name} {label}: error  # {why}", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(tsv_out)), exist_ok=True)
    with open(tsv_out, "w") as f:
        f.write("\t".join(COLUMNS + [NOTE]) + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"triton_stats: wrote {len(rows)} rows to {tsv_out} ({failures} failed)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
