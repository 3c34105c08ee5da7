"""The same problems as `bin/gpu_bench`, through PyTorch (cuBLAS, scaled_dot_product_attention)
and Triton's tutorial kernels, printed beside tile's figures with the ratio.

    python3 reference.py TILE_TSV [TRITON_KERNELS_PY]

TILE_TSV is what `gpu_bench --tsv` wrote: one benchmark per line (name, kind, parameters,
configuration, ms, work, unit, rate, fraction of peak, error, check). Each problem is built
here at the same shape and dtype and timed the same way: device events around batches of 10
launches, the median of 5 batches. A ratio above 1 means tile is faster. Without PyTorch (the
smoke run) only tile's columns are printed; without Triton, or for problems its tutorial
kernels do not cover (bf16 and FP8 matmul, attention), its columns are empty.
"""
import importlib.util
import math
import sys

BATCH, BATCHES = 10, 5


def load_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 11:
                continue
            name, kind, params, config, ms, work, unit, rate, peak, error, check = cols[:11]
            values = dict(p.split("=") for p in params.split(",") if p)
            rows.append(dict(name=name, kind=kind, params={k: int(v) for k, v in values.items()},
                             config=config, ms=float(ms), work=float(work), unit=unit,
                             rate=float(rate), peak=peak, check=check))
    return rows


def timed(torch, fn):
    """The median time of one call of fn in ms, from events around batches of calls."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(BATCHES):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(BATCH):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / BATCH)
    return sorted(times)[BATCHES // 2]


def problems(torch, row):
    """The PyTorch and Triton calls for a row's problem: (torch_fn, triton_fn or None)."""
    p, dev = row["params"], "cuda"
    gen = torch.Generator(device=dev).manual_seed(0)
    rand = lambda *shape, dtype=torch.float32: (torch.rand(*shape, device=dev, generator=gen) * 4 - 2).to(dtype)
    kind, tk = row["kind"], TRITON
    if kind == "vector_add":
        n = p["n"]
        x, y, out = rand(n), rand(n), torch.empty(n, device=dev)
        tri = tk and (lambda: tk.add_kernel[(math.ceil(n / 1024),)](x, y, out, n, BLOCK_SIZE=1024))
        return (lambda: torch.add(x, y, out=out)), tri
    if kind in ("softmax", "layernorm"):
        r, c = p["rows"], p["cols"]
        x, out = rand(r, c), torch.empty(r, c, device=dev)
        if kind == "softmax":
            tri = tk and (lambda: tk.softmax_kernel[(r,)](out, x, x.stride(0), out.stride(0), c,
                                                          BLOCK_SIZE=1024, num_warps=4))
            return (lambda: torch.softmax(x, dim=1)), tri
        w, b = rand(c), rand(c)
        mean, rstd = torch.empty(r, device=dev), torch.empty(r, device=dev)
        tri = tk and (lambda: tk.layernorm_fwd_1block_kernel[(r,)](x, out, w, b, mean, rstd, x.stride(0), c,
                                                                   1e-5, BLOCK_SIZE=1024, num_warps=4))
        return (lambda: torch.nn.functional.layer_norm(x, (c,), w, b, 1e-5)), tri
    if kind.startswith("matmul"):
        m, n, k = p["m"], p["n"], p["k"]
        if kind == "matmul_fp8":
            a = rand(m, k).to(torch.float8_e4m3fn)
            bt = rand(n, k).to(torch.float8_e4m3fn)  # column-major B, as cuBLAS's FP8 wants
            one = torch.ones((), device=dev)
            return (lambda: torch._scaled_mm(a, bt.t(), scale_a=one, scale_b=one, out_dtype=torch.float16)), None
        if kind == "matmul_tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            a, bt = rand(m, k), rand(n, k)  # B stored [N, K], an f32 linear layer's weights
            c = torch.empty(m, n, device=dev)
            return (lambda: torch.matmul(a, bt.t(), out=c)), None
        dtype = torch.float16 if kind == "matmul_f16" else torch.bfloat16
        a, b, c = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype), torch.empty(m, n, device=dev, dtype=dtype)
        tri = None
        if tk and kind == "matmul_f16":
            grid = (math.ceil(m / 128) * math.ceil(n / 128),)
            tri = lambda: tk.matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                                                 b.stride(1), c.stride(0), c.stride(1), BLOCK_SIZE_M=128,
                                                 BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8,
                                                 num_warps=8, num_stages=3)
        return (lambda: torch.matmul(a, b, out=c)), tri
    if kind in ("attention_fwd", "attention_bwd"):
        h, s, d, causal = p["heads"], p["seq"], p["d"], bool(p["causal"])
        q, k, v = (rand(1, h, s, d, dtype=torch.float16) for _ in range(3))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        if kind == "attention_fwd":
            return (lambda: sdpa(q, k, v, is_causal=causal)), None
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        out = sdpa(q, k, v, is_causal=causal)
        dout = rand(1, h, s, d, dtype=torch.float16)
        return (lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)), None
    return None, None


def rate(row, ms):
    scale = 1e9 if row["unit"] == "TFLOP/s" else 1e6
    return row["work"] / ms / scale


def main():
    global TRITON
    if len(sys.argv) < 2:
        sys.exit("usage: reference.py TILE_TSV [TRITON_KERNELS_PY]")
    rows = load_rows(sys.argv[1])
    try:
        import torch
        if not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False")
        print(f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name()}")
    except Exception as e:  # no PyTorch: tile's columns only
        print(f"PyTorch: not used ({e})")
        torch = None
    TRITON = None
    if torch is not None and len(sys.argv) > 2:
        try:
            spec = importlib.util.spec_from_file_location("tritonref_kernels", sys.argv[2])
            TRITON = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(TRITON)
            import triton
            print(f"Triton {triton.__version__}: the tutorial kernels of {sys.argv[2]} at their fixed configurations")
        except Exception as e:
            print(f"Triton: not used ({e})")
            TRITON = None
    print("rates in TFLOP/s or GB/s; ratio = tile's rate / the other's (above 1: tile is faster)\n")
    head = f"{'benchmark':<26} {'shape':<34} {'tile':>9} {'peak':>5} {'PyTorch':>9} {'ratio':>6} {'Triton':>9} {'ratio':>6}  tile's configuration"
    print(head)
    failures = 0
    for row in rows:
        shape = " ".join(f"{k}={v}" for k, v in row["params"].items())
        peak = f"{float(row['peak']) * 100:.0f}%" if row["peak"] else "—"
        cells = []
        if torch is not None:
            try:
                torch_fn, triton_fn = problems(torch, row)
                for fn in (torch_fn, triton_fn):
                    if fn is None:
                        cells += ["—", "—"]
                        continue
                    other = rate(row, timed(torch, fn))
                    cells += [f"{other:.1f}", f"{row['rate'] / other:.2f}"]
                torch.cuda.empty_cache()
            except Exception as e:
                failures += 1
                print(f"{row['name']}: the reference failed: {e}")
                cells = ["error"] * 4
        else:
            cells = ["—"] * 4
        check = "" if row["check"] == "ok" else "  (tile's check FAILED)"
        print(f"{row['name']:<26} {shape:<34} {row['rate']:>9.1f} {peak:>5} {cells[0]:>9} {cells[1]:>6} "
              f"{cells[2]:>9} {cells[3]:>6}  {row['config']}{check}")
    sys.exit(1 if failures else 0)


TRITON = None
if __name__ == "__main__":
    main()
