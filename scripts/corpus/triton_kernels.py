"""Triton side of the kernel corpus: real public GPU kernels, rewritten one for one.

Each kernel below follows a published Triton kernel (named in its header comment: repository,
file, function, revision) with the same computation, the same order of operations, the same
memory-access structure and the configuration its own launcher picks for the corpus sizes. The
code is our own; branches that the launcher's constexpr arguments switch off are left out
(each kernel asserts the constexpr values it implements), while the runtime parameter lists
keep the source's, so the compiled signatures match what the source's launch would compile.

Revisions read:
  Liger-Kernel      linkedin/Liger-Kernel v0.8.2 (000be609; identical in these files at ead96b61)
  flash-attention   Dao-AILab/flash-attention flash_attn/flash_attn_triton.py (last changed f1a73d07)
  sglang            sgl-project/sglang python/sglang/srt/layers/attention/triton_ops/decode_attention.py
                    (read at 03cd2ec4)
  triton tutorials  triton-lang/triton python/tutorials/02-fused-softmax.py (read at fd237c7c),
                    04-low-memory-dropout.py (at 7fd47243), 05-layer-norm.py (at 54569929),
                    10-block-scaled-matmul.py (at 02ef6b5b)

SPECS maps a corpus name to what triton.compiler.ASTSource and triton.compile need:
  fn, signature (arg -> "*bf16" | "i32" | "fp32" | "constexpr" ...), constexprs, attrs
  (arg index tuple -> [["tt.divisibility", 16]], what the JIT infers for 16-byte aligned pointers
  and ints divisible by 16), options (num_warps, num_stages) and, where the source's launcher
  picks a different configuration on ROCm, options_hip.
Specialization follows Triton's JIT: an int argument equal to 1 (a unit stride) becomes
constexpr 1, None becomes constexpr None, Python floats are fp32, ints divisible by 16 get
divisibility 16.
"""
import triton
import triton.language as tl
from triton.language.extra.libdevice import rsqrt as _rsqrt
from triton.language.extra.libdevice import tanh as _tanh

_LLAMA = tl.constexpr(0)  # Liger's _CASTING_MODE_LLAMA
_LOG2E = tl.constexpr(1.4426950408889634)


def _next_pow2(n):
    return 1 << (n - 1).bit_length()


def _liger_calculate_settings(n, hip=False):
    """Liger-Kernel ops/utils.py calculate_settings: (BLOCK_SIZE, num_warps)."""
    block = _next_pow2(n)
    assert block <= 65536
    if block >= 32768:
        warps = 16 if hip else 32
    elif block >= 8192:
        warps = 16
    elif block >= 2048:
        warps = 8
    else:
        warps = 4
    return block, warps


# ---------------------------------------------------------------------------------------------
# 1. rms_norm
# Source: linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py, _rms_norm_forward_kernel,
# launched by rms_norm_forward (the one-row kernel: BLOCK_SIZE > 256), casting_mode "llama",
# elementwise_affine, offset 0.0. Config: calculate_settings(4096) -> BLOCK_SIZE 4096, 8 warps;
# num_stages not passed (Triton default).
@triton.jit
def rms_norm_fwd(Y, stride_y, X, stride_x, W, stride_w, Rstd, stride_rstd, n_cols, eps, offset,
                 casting_mode: tl.constexpr, elementwise_affine: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    tl.static_assert(casting_mode == _LLAMA)
    tl.static_assert(elementwise_affine)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=in_row, other=0)  # bf16
    w = tl.load(W + cols, mask=in_row, other=0)  # bf16
    xf = x.to(tl.float32)
    eps32 = eps.to(tl.float32)
    off32 = offset.to(tl.float32)
    r = _rsqrt(tl.sum(xf * xf, axis=0) / n_cols + eps32)
    tl.store(Rstd + row * stride_rstd, r)
    # llama: normalize in f32, round to the input dtype, then scale by (offset + w) (f32 math)
    xn = (xf * r).to(x.dtype)
    tl.store(Y + row * stride_y + cols, xn * (off32 + w), mask=in_row)


# ---------------------------------------------------------------------------------------------
# 2. rms_norm_backward
# Source: Liger-Kernel ops/rms_norm.py, _rms_norm_backward_kernel, launched by rms_norm_backward
# (grid = SM count, rows_per_program = ceil(n_rows / sm_count), dW partial rows in f32,
# in_place=True so dX aliases dY), casting_mode "llama", elementwise_affine, offset 0.0.
# Config: BLOCK_SIZE 4096 and 8 warps from the forward's calculate_settings(4096).
@triton.jit
def rms_norm_bwd(dY, stride_dy, dX, stride_dx, X, stride_x, X_dtype: tl.constexpr, W, stride_w,
                 Rstd, stride_rstd, dW, stride_dw, n_rows, n_cols, offset, rows_per_program,
                 casting_mode: tl.constexpr, elementwise_affine: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    tl.static_assert(casting_mode == _LLAMA)
    tl.static_assert(elementwise_affine)
    block = tl.program_id(0).to(tl.int64)
    first = block * rows_per_program
    last = tl.minimum((block + 1) * rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    dw_acc = tl.zeros((BLOCK_SIZE, ), dtype=tl.float32)
    w = tl.load(W + cols, mask=in_row, other=0.0)
    w = w + offset.to(tl.float32)  # f32 from here on
    for r in range(first, last):
        dy = tl.load(dY + r * stride_dy + cols, mask=in_row, other=0.0)  # bf16
        x = tl.load(X + r * stride_x + cols, mask=in_row, other=0.0)  # bf16
        rs = tl.load(Rstd + r * stride_rstd)
        x = x.to(tl.float32)
        m = (dy * w).to(tl.float32)
        dx = rs * m
        dx += rs * (-(1 / n_cols) * rs * rs * tl.sum(m * x, axis=0) * x)
        # llama: x_hat rounded to bf16, the product dy * x_hat in bf16, accumulated in f32
        dw_acc += dy * (x * rs).to(X_dtype)
        tl.store(dX + r * stride_dx + cols, dx.to(X_dtype), mask=in_row)
    tl.store(dW + block * stride_dw + cols, dw_acc, mask=in_row)


# ---------------------------------------------------------------------------------------------
# 3. fused_add_rms_norm
# Source: Liger-Kernel src/liger_kernel/ops/fused_add_rms_norm.py,
# _fused_add_rms_norm_forward_kernel, launched by fused_add_rms_norm_forward, casting_mode
# "llama", offset 0.0. Config: calculate_settings(4096) -> BLOCK_SIZE 4096, 8 warps; the launcher
# passes num_stages=2.
@triton.jit
def fused_add_rms_norm_fwd(Y, stride_y, S, stride_s, X, stride_x, R, stride_r, W, stride_w, Rstd,
                           stride_rstd, n_cols, eps, offset, casting_mode: tl.constexpr,
                           BLOCK_SIZE: tl.constexpr):
    tl.static_assert(casting_mode == _LLAMA)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    x = tl.load(X + row * stride_x + cols, mask=in_row, other=0)
    res = tl.load(R + row * stride_r + cols, mask=in_row, other=0)
    s = x + res  # bf16 add: the new residual
    tl.store(S + row * stride_s + cols, s, mask=in_row)
    w = tl.load(W + cols, mask=in_row, other=0)
    sf = s.to(tl.float32)
    eps32 = eps.to(tl.float32)
    off32 = offset.to(tl.float32)
    r = _rsqrt(tl.sum(sf * sf, axis=0) / n_cols + eps32)
    tl.store(Rstd + row * stride_rstd, r)
    sn = (sf * r).to(s.dtype)
    tl.store(Y + row * stride_y + cols, sn * (off32 + w), mask=in_row)


# ---------------------------------------------------------------------------------------------
# 4. layer_norm
# Source: Liger-Kernel src/liger_kernel/ops/layer_norm.py, _layer_norm_forward_kernel, launched
# by layer_norm_forward. Config: calculate_settings(4096) -> BLOCK_SIZE 4096, 8 warps.
# Note: Liger allocates Mean and RSTD with X's dtype (bf16 here), and the kernel rounds them
# to that dtype before storing.
@triton.jit
def layer_norm_fwd(Y, stride_y, X, stride_x, W, stride_w, B, stride_b, Mean, stride_mean, Rstd,
                   stride_rstd, n_cols, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    wf = tl.load(W + cols, mask=in_row, other=0.0).to(tl.float32)
    bf = tl.load(B + cols, mask=in_row, other=0.0).to(tl.float32)
    x = tl.load(X + row * stride_x + cols, mask=in_row, other=0.0)
    xf = x.to(tl.float32)
    mu = tl.sum(xf, axis=0) / n_cols
    xc = xf - mu
    xc0 = tl.where(in_row, xc, 0.0)
    r = _rsqrt(tl.sum(xc0 * xc0, axis=0) / n_cols + eps.to(tl.float32))
    tl.store(Mean + row * stride_mean, mu.to(x.dtype))
    tl.store(Rstd + row * stride_rstd, r.to(x.dtype))
    y = xc * r * wf + bf
    tl.store(Y + row * stride_y + cols, y.to(x.dtype), mask=in_row)


# ---------------------------------------------------------------------------------------------
# 5. swiglu
# Source: Liger-Kernel src/liger_kernel/ops/swiglu.py, _swiglu_forward_kernel, launched by
# swiglu_forward on the non-Blackwell path (one program per row), gate_multiplier 1.0 (a
# runtime fp32 argument). Config: calculate_settings(11008) -> BLOCK_SIZE 16384, 16 warps.
@triton.jit
def swiglu_fwd(a_ptr, b_ptr, c_ptr, stride, gate_multiplier, n_cols: tl.constexpr,
               BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    base = row * stride
    gate = tl.load(a_ptr + base + cols, mask=in_row, other=0).to(tl.float32) * gate_multiplier.to(tl.float32)
    up = tl.load(b_ptr + base + cols, mask=in_row, other=0)
    act = gate * tl.sigmoid(gate)  # tl.sigmoid(x) = 1 / (1 + exp(-x))
    tl.store(c_ptr + base + cols, act.cast(up.dtype) * up, mask=in_row)


# ---------------------------------------------------------------------------------------------
# 6. geglu
# Source: Liger-Kernel src/liger_kernel/ops/geglu.py, _geglu_tanh_forward_kernel, launched by
# geglu_forward. Config: calculate_settings(11008) -> BLOCK_SIZE 16384, 16 warps.
@triton.jit
def geglu_tanh_fwd(a_ptr, b_ptr, c_ptr, stride, n_cols: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    in_row = cols < n_cols
    base = row * stride
    g = tl.load(a_ptr + base + cols, mask=in_row, other=0).to(tl.float32)
    up = tl.load(b_ptr + base + cols, mask=in_row, other=0)
    # GELU, tanh form: 0.5 * g * (1 + tanh(sqrt(2/pi) * (g + 0.044715 * g^3)))
    g3 = g * g * g
    t = _tanh(0.7978845608028654 * (g + 0.044715 * g3))
    act = 0.5 * g * (1 + t)
    tl.store(c_ptr + base + cols, act.cast(up.dtype) * up, mask=in_row)


# ---------------------------------------------------------------------------------------------
# 7. rope
# Source: Liger-Kernel src/liger_kernel/ops/rope.py, _triton_rope with BACKWARD_PASS False,
# launched by rope_forward: grid bsz*seq_len, q/k made contiguous as [bsz, seq, heads, hd] and
# rotated in place, cos/sin [cos_bs=1, seq, hd]. Config: pad_n_qh 32, pad_n_kh 8, pad_hd 128,
# BLOCK_SIZE = max(pad_n_qh, pad_n_kh) = 32 (unused by the kernel); no num_warps/num_stages
# passed, so Triton's defaults (4 warps).
@triton.jit
def rope_fwd(q_ptr, q_row_stride, k_ptr, k_row_stride, cos, cos_row_stride, sin, sin_row_stride, sl,
             bs: tl.constexpr, cos_bs: tl.constexpr, n_qh: tl.constexpr, n_kh: tl.constexpr,
             hd: tl.constexpr, pad_n_qh: tl.constexpr, pad_n_kh: tl.constexpr, pad_hd: tl.constexpr,
             BLOCK_SIZE: tl.constexpr, BACKWARD_PASS: tl.constexpr):
    tl.static_assert(cos_bs == 1)
    tl.static_assert(not BACKWARD_PASS)
    tok = tl.program_id(0).to(tl.int64)
    q_ptr = q_ptr + tok * q_row_stride
    k_ptr = k_ptr + tok * k_row_stride
    pos = tok % sl  # the cos/sin row of this token (cos_bs == 1: shared over the batch)
    half = tl.arange(0, pad_hd // 2)
    half_ok = half < hd // 2
    c = tl.load(cos + pos * cos_row_stride + half, mask=half_ok, other=0)
    s = tl.load(sin + pos * sin_row_stride + half, mask=half_ok, other=0)
    qh = tl.arange(0, pad_n_qh)
    kh = tl.arange(0, pad_n_kh)
    q_lo = qh[:, None] * hd + half[None, :]
    k_lo = kh[:, None] * hd + half[None, :]
    q_ok = (qh[:, None] < n_qh) & half_ok[None, :]
    k_ok = (kh[:, None] < n_kh) & half_ok[None, :]
    q1 = tl.load(q_ptr + q_lo, mask=q_ok, other=0).to(s.dtype)
    k1 = tl.load(k_ptr + k_lo, mask=k_ok, other=0).to(s.dtype)
    q2 = tl.load(q_ptr + (q_lo + hd // 2), mask=q_ok, other=0).to(s.dtype)
    k2 = tl.load(k_ptr + (k_lo + hd // 2), mask=k_ok, other=0).to(s.dtype)
    # [x1, x2] -> [x1 * cos - x2 * sin, x2 * cos + x1 * sin], in the tensors' dtype (bf16)
    tl.store(q_ptr + q_lo, q1 * c - q2 * s, mask=q_ok)
    tl.store(q_ptr + (q_lo + hd // 2), q2 * c + q1 * s, mask=q_ok)
    tl.store(k_ptr + k_lo, k1 * c - k2 * s, mask=k_ok)
    tl.store(k_ptr + (k_lo + hd // 2), k2 * c + k1 * s, mask=k_ok)


# ---------------------------------------------------------------------------------------------
# 8. cross_entropy
# Source: Liger-Kernel src/liger_kernel/ops/cross_entropy.py, liger_cross_entropy_kernel,
# launched by cross_entropy_forward with weight None, lse_square_scale 0.0, label_smoothing 0.0,
# reduction "mean", softcap None, no z-loss / token accuracy / predicted tokens, and
# HAS_GRADIENTS True (logits require grad: the gradient overwrites X in place).
# Config: BLOCK_SIZE = min(MAX_FUSED_SIZE = 65536 // 2, next_pow2(32000)) = 32768;
# num_warps 32 on CUDA (pre-Blackwell, any dtype), 16 on ROCm (is_hip()).
@triton.jit
def cross_entropy_fwd(X_ptr, X_stride, Y_ptr, Y_stride, weight_ptr, loss_ptr, z_loss_ptr, loss_stride,
                      token_accuracy_ptr, token_accuracy_stride, predicted_tokens_ptr,
                      predicted_tokens_stride, n_cols, n_non_ignore, sum_non_ignore_weight, weight_sum,
                      ignore_index, lse_square_scale: tl.constexpr, label_smoothing: tl.constexpr,
                      reduction: tl.constexpr, softcap, RETURN_Z_LOSS: tl.constexpr,
                      RETURN_TOKEN_ACCURACY: tl.constexpr, RETURN_PREDICTED_TOKENS: tl.constexpr,
                      BLOCK_SIZE: tl.constexpr, HAS_WEIGHT: tl.constexpr, HAS_SOFTCAPPING: tl.constexpr,
                      HAS_GRADIENTS: tl.constexpr):
    tl.static_assert(not HAS_WEIGHT and not HAS_SOFTCAPPING and HAS_GRADIENTS)
    tl.static_assert(not RETURN_Z_LOSS and not RETURN_TOKEN_ACCURACY and not RETURN_PREDICTED_TOKENS)
    tl.static_assert(label_smoothing == 0.0)
    tl.static_assert(reduction == "mean")
    row = tl.program_id(0).to(tl.int64)
    target = tl.load(Y_ptr + row * Y_stride)
    X_ptr += row * X_stride
    if target == ignore_index:
        for start in range(0, n_cols, BLOCK_SIZE):
            offs = start + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + offs, 0.0, mask=offs < n_cols)
        return
    loss_ptr += row * loss_stride
    # pass 1: online max / sum of exponentials (exp via exp2 with a log2(e) scale)
    run_max = float("-inf")
    run_sum = 0.0
    x_target = tl.load(X_ptr + target).cast(tl.float32)
    eps = label_smoothing / n_cols
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        xb = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf")).cast(tl.float32)
        new_max = tl.maximum(run_max, tl.max(xb))
        run_sum = run_sum * tl.exp2((run_max - new_max) * _LOG2E) + tl.sum(tl.exp2((xb - new_max) * _LOG2E))
        run_max = new_max
    lse = run_max + tl.log(run_sum)
    # pass 2: gradient softmax(x) / N written over the logits
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        xb = tl.load(X_ptr + offs, mask=offs < n_cols, other=float("-inf")).cast(tl.float32)
        g = tl.exp2((xb - run_max) * _LOG2E) / run_sum
        g += 2 * lse_square_scale * lse * g
        g += -eps
        g = g / n_non_ignore
        tl.store(X_ptr + offs, g, mask=offs < n_cols)
    # the target's gradient, recomputed once in f32 and written after the loop's store
    tl.debug_barrier()
    g_t = tl.exp2((x_target - run_max) * _LOG2E) / run_sum
    g_t += 2 * lse_square_scale * lse * g_t
    g_t += -eps
    g_t += -(1 - label_smoothing)
    g_t = g_t / n_non_ignore
    tl.store(X_ptr + target, g_t)
    tl.debug_barrier()
    loss = lse - x_target
    z = lse_square_scale * lse * lse
    loss = loss / n_non_ignore
    z = z / n_non_ignore
    loss += z
    tl.store(loss_ptr, loss)


# ---------------------------------------------------------------------------------------------
# 9. kl_div
# Source: Liger-Kernel src/liger_kernel/ops/kl_div.py, _kldiv_kernel_forward, launched by
# kldiv_forward_triton with log_target False and reduction "batchmean" (default; any reduction
# but "none" compiles the same kernel: one f32 sum per row), eps 1e-10 (runtime fp32).
# Config: BLOCK_SIZE = min(MAX_FUSED_SIZE = 65536 // 4, next_pow2(32000)) = 16384;
# num_warps = get_num_warps(16384) = 16 (CUDA and ROCm).
@triton.jit
def kldiv_fwd(y_ptr, y_stride, gt_ptr, gt_stride, loss_ptr, loss_stride, n_cols, eps,
              BLOCK_SIZE: tl.constexpr, log_target: tl.constexpr, reduction: tl.constexpr):
    tl.static_assert(not log_target)
    tl.static_assert(reduction != 0)
    row = tl.program_id(0).to(tl.int64)
    y_ptr += row * y_stride
    gt_ptr += row * gt_stride
    loss_ptr += row * loss_stride
    lanes = tl.arange(0, BLOCK_SIZE)
    acc = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + lanes
        ok = offs < n_cols
        y = tl.load(y_ptr + offs, mask=ok, other=0.0)
        t = tl.load(gt_ptr + offs, mask=ok, other=0.0)
        # KL(t || exp(y)) = t * (log t - y), log clamped at eps
        acc += tl.sum(t * (tl.log(tl.maximum(t, eps)) - y), axis=0)
    tl.store(loss_ptr, acc)


# ---------------------------------------------------------------------------------------------
# 10. jsd
# Source: Liger-Kernel src/liger_kernel/ops/jsd.py, _jsd_kernel, launched by jsd_forward with
# beta 0.5 and no shift_labels (HAS_LABEL False, label_ptr a dummy f32 tensor, n_non_ignore =
# BT). Writes the unreduced loss [BT, V] and dX [BT, V], both f32.
# Config: BLOCK_SIZE = min(MAX_FUSED_SIZE = 65536, next_pow2(32000)) = 32768; the launcher
# passes no num_warps, so Triton's default 4 warps (for a 32768-wide f32 block).
@triton.jit
def jsd_fwd(X_ptr, X_stride, Y_ptr, Y_stride, loss_ptr, loss_stride, dX_ptr, dX_stride, label_ptr,
            beta: tl.constexpr, n_non_ignore, ignore_index: tl.constexpr, n_cols,
            BLOCK_SIZE: tl.constexpr, HAS_LABEL: tl.constexpr):
    tl.static_assert(not HAS_LABEL)
    tl.static_assert(beta != 0.0 and beta != 1.0)
    row = tl.program_id(0).to(tl.int64)
    X_ptr += row * X_stride
    dX_ptr += row * dX_stride
    Y_ptr += row * Y_stride
    loss_ptr += row * loss_stride
    for start in range(0, n_cols, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        ok = offs < n_cols
        lq = tl.load(X_ptr + offs, mask=ok, other=float("-inf")).to(tl.float32)  # log Q
        lp = tl.load(Y_ptr + offs, mask=ok, other=float("-inf")).to(tl.float32)  # log P
        top = tl.maximum(tl.max(lq, axis=0), tl.max(lp, axis=0))
        e_top = tl.exp(top)
        q = tl.exp(lq - top) * e_top
        p = tl.exp(lp - top) * e_top
        bp = beta * p
        bq = (1 - beta) * q
        mix = bp + bq
        log_mix = tl.log(mix)
        loss = bp * lp + bq * lq - mix * log_mix
        dx = bq * (lq - log_mix)
        inv_n = 1.0 / n_non_ignore
        tl.store(loss_ptr + offs, loss * inv_n, mask=ok)
        tl.store(dX_ptr + offs, dx * inv_n, mask=ok)


# ---------------------------------------------------------------------------------------------
# 11. embedding
# Source: Liger-Kernel src/liger_kernel/ops/experimental/embedding.py, embedding_forward_kernel,
# launched by LigerEmbeddingFunction.forward: grid (cdiv(n_ids, BLOCK_SIZE_M),
# cdiv(embedding_dim, BLOCK_SIZE_N)), BLOCK_SIZE_M = BLOCK_SIZE_N =
# next_pow2(min(128, embedding_dim)) = 128; no num_warps passed (Triton default 4).
@triton.jit
def embedding_fwd(embeddings_ptr, indices_ptr, output_ptr, n_elements, embedding_dim: tl.constexpr,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cols = tl.program_id(1) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    row_ok = rows < n_elements
    ids = tl.load(indices_ptr + rows, mask=row_ok, other=0)  # i64
    ok = row_ok[:, None] & (cols < embedding_dim)[None, :]
    vals = tl.load(embeddings_ptr + (ids[:, None] * embedding_dim + cols[None, :]), mask=ok, other=0.0)
    tl.store(output_ptr + (rows[:, None] * embedding_dim + cols[None, :]), vals, mask=ok)


# ---------------------------------------------------------------------------------------------
# 12. flash_attn_fwd / flash_attn_fwd_causal
# Source: Dao-AILab/flash-attention flash_attn/flash_attn_triton.py, _fwd_kernel, launched by
# _flash_attn_forward: q, k, v, out [batch, seqlen, nheads, headdim] f16, Lse and TMP
# [batch, nheads, seqlen_q_rounded] f32, no bias (BIAS_TYPE "none", Bias None), EVEN_M, EVEN_N,
# EVEN_HEADDIM true (seqlen 1024, headdim 64 == BLOCK_HEADDIM). Config: BLOCK_M = BLOCK_N = 128,
# BLOCK_HEADDIM = max(next_pow2(64), 16) = 64, num_warps 4 (headdim <= 64), num_stages 1.
# The source's tl.dot(q, k, trans_b=True) (Triton 2.0 API) is written tl.dot(q, tl.trans(k)).
@triton.jit
def flash_attn_fwd(Q, K, V, Bias, Out, Lse, TMP, softmax_scale, stride_qb, stride_qh, stride_qm,
                   stride_kb, stride_kh, stride_kn, stride_vb, stride_vh, stride_vn, stride_bb, stride_bh,
                   stride_bm, stride_ob, stride_oh, stride_om, nheads, seqlen_q, seqlen_k,
                   seqlen_q_rounded, headdim, CACHE_KEY_SEQLEN_Q, CACHE_KEY_SEQLEN_K,
                   BIAS_TYPE: tl.constexpr, IS_CAUSAL: tl.constexpr, BLOCK_HEADDIM: tl.constexpr,
                   EVEN_M: tl.constexpr, EVEN_N: tl.constexpr, EVEN_HEADDIM: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BIAS_TYPE == "none")
    tl.static_assert(EVEN_M and EVEN_N and EVEN_HEADDIM)
    start_m = tl.program_id(0)
    off_hb = tl.program_id(1)
    off_b = off_hb // nheads
    off_h = off_hb % nheads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_HEADDIM)
    q_ptrs = Q + off_b * stride_qb + off_h * stride_qh + (offs_m[:, None] * stride_qm + offs_d[None, :])
    k_ptrs = K + off_b * stride_kb + off_h * stride_kh + (offs_n[:, None] * stride_kn + offs_d[None, :])
    v_ptrs = V + off_b * stride_vb + off_h * stride_vh + (offs_n[:, None] * stride_vn + offs_d[None, :])
    t_ptrs = TMP + off_hb * seqlen_q_rounded + offs_m
    lse_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    acc = tl.zeros([BLOCK_M, BLOCK_HEADDIM], dtype=tl.float32)
    q = tl.load(q_ptrs)
    if IS_CAUSAL:
        end_n = tl.minimum((start_m + 1) * BLOCK_M, seqlen_k)
    else:
        end_n = seqlen_k
    for start_n in range(0, end_n, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs + start_n * stride_kn)
        qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        qk += tl.dot(q, tl.trans(k))
        if IS_CAUSAL:
            qk += tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], 0, float("-inf"))
        # no bias: softmax_scale folded into the exponent (mul + sub -> fma)
        m_ij = tl.maximum(tl.max(qk, 1) * softmax_scale, lse_i)
        p = tl.exp(qk * softmax_scale - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        acc_scale = tl.exp(m_i - m_ij)
        # the source's workaround: round-trip the row scale through the TMP scratch buffer
        tl.store(t_ptrs, acc_scale)
        acc_scale = tl.load(t_ptrs)
        acc = acc * acc_scale[:, None]
        v = tl.load(v_ptrs + start_n * stride_vn)
        p = p.to(v.dtype)
        acc += tl.dot(p, v)
        m_i = m_ij
        l_new = tl.exp(lse_i - m_ij) + l_ij
        lse_i = m_ij + tl.log(l_new)
    o_scale = tl.exp(m_i - lse_i)
    tl.store(t_ptrs, o_scale)
    o_scale = tl.load(t_ptrs)
    acc = acc * o_scale[:, None]
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(Lse + off_hb * seqlen_q_rounded + offs_m, lse_i)
    offs_d = tl.arange(0, BLOCK_HEADDIM)
    out_ptrs = Out + off_b * stride_ob + off_h * stride_oh + (offs_m[:, None] * stride_om + offs_d[None, :])
    tl.store(out_ptrs, acc)


# ---------------------------------------------------------------------------------------------
# 13. flash_attn_bwd_preprocess, flash_attn_bwd / flash_attn_bwd_causal
# Source: the same file, _bwd_preprocess_do_o_dot and _bwd_kernel (with _bwd_kernel_one_col_block
# inlined), launched by _flash_attn_backward: do, q, k, v, o [batch, seqlen, nheads, headdim] f16,
# dq_accum the same shape in f32 (zeroed by the autotune config's pre_hook), dk, dv f16, lse and
# delta [batch, nheads, seqlen_q_rounded] f32; no bias, EVEN_M, EVEN_N, EVEN_HEADDIM true (seqlen
# 1024, headdim 64). The preprocess: BLOCK_M 128, BLOCK_HEADDIM 64, Triton's default 4 warps. The
# backward: the autotune list's sequence-parallel config (BLOCK_M = BLOCK_N = 128,
# SEQUENCE_PARALLEL True: grid (cdiv(seqlen_k, BLOCK_N), batch * nheads), dq added with
# tl.atomic_add), 8 warps, 1 stage.
@triton.jit
def flash_attn_bwd_preprocess(Out, DO, Delta, stride_ob, stride_oh, stride_om, stride_dob, stride_doh,
                              stride_dom, nheads, seqlen_q, seqlen_q_rounded, headdim,
                              BLOCK_M: tl.constexpr, BLOCK_HEADDIM: tl.constexpr):
    start_m = tl.program_id(0)
    off_hb = tl.program_id(1)
    off_b = off_hb // nheads
    off_h = off_hb % nheads
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_HEADDIM)
    inside = (offs_m[:, None] < seqlen_q) & (offs_d[None, :] < headdim)
    o = tl.load(Out + off_b * stride_ob + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :],
                mask=inside, other=0.0).to(tl.float32)
    do = tl.load(DO + off_b * stride_dob + off_h * stride_doh + offs_m[:, None] * stride_dom
                 + offs_d[None, :], mask=inside, other=0.0).to(tl.float32)
    tl.store(Delta + off_hb * seqlen_q_rounded + offs_m, tl.sum(o * do, axis=1))


@triton.jit
def flash_attn_bwd(Q, K, V, Bias, DO, DQ, DK, DV, LSE, D, softmax_scale, stride_qb, stride_qh, stride_qm,
                   stride_kb, stride_kh, stride_kn, stride_vb, stride_vh, stride_vn, stride_bb, stride_bh,
                   stride_bm, stride_dob, stride_doh, stride_dom, stride_dqb, stride_dqh, stride_dqm,
                   stride_dkb, stride_dkh, stride_dkn, stride_dvb, stride_dvh, stride_dvn, nheads,
                   seqlen_q, seqlen_k, seqlen_q_rounded, headdim, CACHE_KEY_SEQLEN_Q, CACHE_KEY_SEQLEN_K,
                   BIAS_TYPE: tl.constexpr, IS_CAUSAL: tl.constexpr, BLOCK_HEADDIM: tl.constexpr,
                   SEQUENCE_PARALLEL: tl.constexpr, EVEN_M: tl.constexpr, EVEN_N: tl.constexpr,
                   EVEN_HEADDIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tl.static_assert(BIAS_TYPE == "none")
    tl.static_assert(SEQUENCE_PARALLEL)
    tl.static_assert(EVEN_M and EVEN_N and EVEN_HEADDIM)
    off_hb = tl.program_id(1)
    off_b = off_hb // nheads
    off_h = off_hb % nheads
    Q += off_b * stride_qb + off_h * stride_qh
    K += off_b * stride_kb + off_h * stride_kh
    V += off_b * stride_vb + off_h * stride_vh
    DO += off_b * stride_dob + off_h * stride_doh
    DQ += off_b * stride_dqb + off_h * stride_dqh
    DK += off_b * stride_dkb + off_h * stride_dkh
    DV += off_b * stride_dvb + off_h * stride_dvh
    D += off_hb * seqlen_q_rounded
    LSE += off_hb * seqlen_q_rounded
    start_n = tl.program_id(0)
    # the column block's body (ATOMIC_ADD): the first query block that sees a key of this block
    begin_m = ((start_n * BLOCK_N) // BLOCK_M) * BLOCK_M if IS_CAUSAL else 0
    offs_qm = begin_m + tl.arange(0, BLOCK_M)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_HEADDIM)
    q_ptrs = Q + (offs_qm[:, None] * stride_qm + offs_d[None, :])
    k_ptrs = K + (offs_n[:, None] * stride_kn + offs_d[None, :])
    v_ptrs = V + (offs_n[:, None] * stride_vn + offs_d[None, :])
    do_ptrs = DO + (offs_qm[:, None] * stride_dom + offs_d[None, :])
    dq_ptrs = DQ + (offs_qm[:, None] * stride_dqm + offs_d[None, :])
    dv = tl.zeros([BLOCK_N, BLOCK_HEADDIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N, BLOCK_HEADDIM], dtype=tl.float32)
    dv_ptrs = DV + (offs_n[:, None] * stride_dvn + offs_d[None, :])
    dk_ptrs = DK + (offs_n[:, None] * stride_dkn + offs_d[None, :])
    if begin_m >= seqlen_q:
        tl.store(dv_ptrs, dv)
        tl.store(dk_ptrs, dk)
        return
    k = tl.load(k_ptrs)
    v = tl.load(v_ptrs)
    num_block_m = tl.cdiv(seqlen_q, BLOCK_M)
    for start_m in range(begin_m, num_block_m * BLOCK_M, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        offs_m_curr = start_m + offs_m
        q = tl.load(q_ptrs)
        qk = tl.dot(q, tl.trans(k))
        if IS_CAUSAL:
            qk = tl.where(offs_m_curr[:, None] >= (offs_n[None, :]), qk, float("-inf"))
        lse_i = tl.load(LSE + offs_m_curr)
        p = tl.exp(qk * softmax_scale - lse_i[:, None])
        do = tl.load(do_ptrs)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))
        Di = tl.load(D + offs_m_curr)
        ds = (p * (dp - Di[:, None]) * softmax_scale).to(q.dtype)
        dk += tl.dot(tl.trans(ds), q)
        dq = tl.dot(ds, k)
        tl.atomic_add(dq_ptrs, dq)
        dq_ptrs += BLOCK_M * stride_dqm
        q_ptrs += BLOCK_M * stride_qm
        do_ptrs += BLOCK_M * stride_dom
    tl.store(dv_ptrs, dv)
    tl.store(dk_ptrs, dk)


# Source: triton-lang/triton python/tutorials/03-matrix-multiplication.py, matmul_kernel with
# ACTIVATION="leaky_relu": f16 A [M, K] and B [K, N], f16 C, grouped program ids. Config: the
# tutorial's first CUDA one at N = 128 tiles: BLOCK 128x128x64, GROUP_SIZE_M 8, 8 warps, 3 stages;
# the JIT specializes the unit strides (stride_ak, stride_bn, stride_cn) to 1.
@triton.jit
def _leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def matmul_leaky_relu(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = _leaky_relu(acc).to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# Source: triton-lang/triton python/tutorials/09-persistent-matmul.py, matmul_kernel_persistent
# (and its _compute_pid): f16 A [M, K], B [K, N], f16 C, NUM_SMS programs each looping over the
# tiles in grouped order. Config: 128x128x64, GROUP_SIZE_M 8, 8 warps, 3 stages, NUM_SMS 132
# (an H100's); the JIT specializes the unit strides to 1.
@triton.jit
def _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                      stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    tile_id_c = start_pid - NUM_SMS
    offs_k_for_mask = tl.arange(0, BLOCK_SIZE_K)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        offs_am = tl.where(offs_am < M, offs_am, 0)
        offs_bn = tl.where(offs_bn < N, offs_bn, 0)
        offs_am = tl.max_contiguous(tl.multiple_of(offs_am, BLOCK_SIZE_M), BLOCK_SIZE_M)
        offs_bn = tl.max_contiguous(tl.multiple_of(offs_bn, BLOCK_SIZE_N), BLOCK_SIZE_N)
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
            b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
            a = tl.load(a_ptrs, mask=offs_k_for_mask[None, :] < K - ki * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k_for_mask[:, None] < K - ki * BLOCK_SIZE_K, other=0.0)
            acc = tl.dot(a, b, acc)
        tile_id_c += NUM_SMS
        pid_m, pid_n = _compute_pid(tile_id_c, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, acc.to(tl.float16), mask=c_mask)


# Source: triton-lang/triton python/tutorials/10-block-scaled-matmul.py (read at 02ef6b5b),
# block_scaled_matmul_kernel for the format "mxfp8": e4m3 A [M, K] and B, one e8m0 scale per 32
# elements along K, an f32 accumulator over BLOCK_K slabs of K, each a
# tl.dot_scaled(a, scale_a, "e4m3", b, scale_b, "e4m3", acc), C rounded to f16 (the output of
# the tutorial's check and benchmark), programs walking M first (pid % num_pid_m). The tutorial
# is written for Blackwell's block-scaled tensor cores (TMA descriptors, B stored [N, K] and
# read as b.T, scales packed (M // 128, K // 128, 32, 4, 4) and unpacked in registers to the
# [M, K // 32] tl.dot_scaled takes); this is the same product on plain pointers for targets
# without them: B [K, N], the scales stored as tl.dot_scaled takes them ([M, K // 32] and
# [N, K // 32]), loads and stores masked at the edges where the tutorial's TMA clips.
# Config: BLOCK 128x128x128 (the tutorial's mxfp8 BLOCK_K; its BLOCK_N 256 on Triton's default 4
# warps suits Blackwell, whose accumulator lives in tensor memory, not in 256 registers per
# thread), 8 warps, 4 stages (the tutorial's NUM_STAGES) on CUDA; on ROCm, which the tutorial
# does not run on, Triton's AMD default of 2 stages: 4 would take 97 KiB of LDS (3: 65 KiB),
# beyond gfx942's 64 KiB. K divisible by 512, as the tutorial's 8192 to 16384, so that the
# scale rows are 16-byte multiples; the unit strides are 1. Triton 3.9 compiles it for sm_90a
# and gfx942 and rejects it for sm_80, whose fp8 types do not include e4m3 (fp8e4nv).
@triton.jit
def block_scaled_matmul(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                        stride_asm, stride_ask, stride_bk, stride_bn, stride_bsn, stride_bsk, stride_cm,
                        stride_cn, VEC_SIZE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr):
    tl.static_assert(VEC_SIZE == 32)
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    offs_am = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_bn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    offs_s = tl.arange(0, BLOCK_K // VEC_SIZE)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    sa_ptrs = a_scale_ptr + (offs_am[:, None] * stride_asm + offs_s[None, :] * stride_ask)
    sb_ptrs = b_scale_ptr + (offs_bn[:, None] * stride_bsn + offs_s[None, :] * stride_bsk)
    in_m = offs_am[:, None] < M
    in_n = offs_bn[None, :] < N
    groups = K // VEC_SIZE
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        s_left = groups - k * (BLOCK_K // VEC_SIZE)
        a = tl.load(a_ptrs, mask=in_m & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & in_n, other=0.0)
        scale_a = tl.load(sa_ptrs, mask=in_m & (offs_s[None, :] < s_left), other=0)
        scale_b = tl.load(sb_ptrs, mask=(offs_bn[:, None] < N) & (offs_s[None, :] < s_left), other=0)
        acc = tl.dot_scaled(a, scale_a, "e4m3", b, scale_b, "e4m3", acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
        sa_ptrs += (BLOCK_K // VEC_SIZE) * stride_ask
        sb_ptrs += (BLOCK_K // VEC_SIZE) * stride_bsk
    c_ptrs = c_ptr + (offs_am[:, None] * stride_cm + offs_bn[None, :] * stride_cn)
    tl.store(c_ptrs, acc.to(tl.float16), mask=in_m & in_n)

# Source: vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/
# triton_scaled_mm.py (read at 03f95201), scaled_mm_kernel as triton_scaled_mm launches it for FP8
# W8A8: e4m3 (fp8e4nv) activations [M, K] with one f32 scale per row, weights with one f32 scale
# per output column, an f32 accumulator over BLOCK_SIZE_K slabs of K, then scale_a * acc and
# scale_b * that, the tile rounded to bf16, no bias. vLLM stores the weights [N, K] and passes
# weight.t(): stride_bk is 1. Config: the launcher's tile for M above 128, 128x128x128, and
# Triton's default 4 warps and 3 stages; K, N and M's strides divisible by 16.
@triton.jit
def scaled_mm(a_ptr, b_ptr, scale_a_ptr, scale_b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
              stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
              BLOCK_SIZE_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    rows = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    cols = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)
    ks = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
    in_m = rows < M
    in_n = cols < N
    a_ptrs = a_ptr + stride_am * rows[:, None] + stride_ak * ks[None, :]
    b_ptrs = b_ptr + stride_bk * ks[:, None] + stride_bn * cols[None, :]
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        in_k = ks < K
        a = tl.load(a_ptrs, mask=in_m[:, None] & in_k[None, :])
        b = tl.load(b_ptrs, mask=in_k[:, None] & in_n[None, :])
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        ks += BLOCK_SIZE_K
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    scale_a = tl.load(scale_a_ptr + rows[:, None], in_m[:, None])
    acc = scale_a * acc
    scale_b = tl.load(scale_b_ptr + cols[:, None], in_n[:, None])
    acc = scale_b.T * acc
    c_ptrs = c_ptr + stride_cm * rows[:, None] + stride_cn * cols[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=in_m[:, None] & in_n[None, :])

# Source: vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py (read at
# 000d1458), fused_moe_kernel without quantization (use_fp8_w8a8, use_int8_w8a8 and
# use_int8_w8a16 False), as invoke_fused_moe_kernel launches it: bf16 hidden states A [M, K],
# expert weights B [E, N, K] (stride_bk 1), C [M * top_k, N] rows of the token copies, the copies
# sorted by expert and padded to blocks (sorted_token_ids, expert_ids, num_tokens_post_padded
# from moe_align_block_size), MUL_ROUTED_WEIGHT True, compute_type bf16. Config: get_default_config
# for more tokens than experts, 64x64x32 and GROUP_SIZE_M 8, with Triton's default 4 warps and
# 3 stages; top_k 2; K, N and the row strides divisible by 16.
@triton.jit
def fused_moe(a_ptr, b_ptr, c_ptr, topk_weights_ptr, sorted_token_ids_ptr, expert_ids_ptr,
              num_tokens_post_padded_ptr, N, K, EM, num_valid_tokens, stride_am, stride_ak, stride_be,
              stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr,
              BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
              MUL_ROUTED_WEIGHT: tl.constexpr, top_k: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    off_experts = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + stride_cn * offs_cn[None, :]
    c_mask = token_mask[:, None] & (offs_cn[None, :] < N)
    if off_experts == -1:
        tl.store(c_ptrs, tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.bfloat16), mask=c_mask)
        return
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int64)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + off_experts * stride_be + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K), other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if MUL_ROUTED_WEIGHT:
        moe_weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
        accumulator = accumulator * moe_weight[:, None]
    tl.store(c_ptrs, accumulator.to(tl.bfloat16), mask=c_mask)

# Source: sgl-project/sglang python/sglang/srt/layers/attention/triton_ops/decode_attention.py
# (read at 03cd2ec4), _fwd_kernel_stage1 as _decode_att_m_fwd launches it for heads that share
# no keys (kv_group_num 1): BLOCK 64 (8 on ROCm, where the launcher also takes 1 warp: the NVIDIA
# configuration is compiled for every target here), MIN_BLOCK_KV 32, head 128, no logit cap or
# temperature, 4 warps, 2 stages; q [batch, heads, 128] and the pools [slots, heads, 128] in bf16,
# the slots' indices i32.
@triton.jit
def decode_attention(Q, K_Buffer, V_Buffer, sm_scale_withk, kv_indptr, kv_indices, Att_Out, Att_Lse,
                     num_kv_splits, stride_qbs, stride_qh, stride_buf_kbs, stride_buf_kh,
                     stride_buf_vbs, stride_buf_vh, stride_mid_ob, stride_mid_oh, stride_mid_os,
                     kv_group_num: tl.constexpr, BLOCK_DMODEL: tl.constexpr, BLOCK_DV: tl.constexpr,
                     BLOCK_N: tl.constexpr, MIN_BLOCK_KV: tl.constexpr, logit_cap: tl.constexpr,
                     Lk: tl.constexpr, Lv: tl.constexpr, xai_temperature_len: tl.constexpr):
    tl.static_assert(logit_cap == 0)
    tl.static_assert(xai_temperature_len <= 0)
    batch = tl.program_id(0)
    head = tl.program_id(1)
    split = tl.program_id(2)
    kv_head = head // kv_group_num
    d = tl.arange(0, BLOCK_DMODEL)
    dv = tl.arange(0, BLOCK_DV)
    first = tl.load(kv_indptr + batch)
    seq = tl.load(kv_indptr + batch + 1) - first
    splits = tl.load(num_kv_splits + batch)
    per_split = tl.cdiv(tl.cdiv(seq, splits), MIN_BLOCK_KV) * MIN_BLOCK_KV
    lo = per_split * split
    hi = tl.minimum(lo + per_split, seq)
    e_max = -float("inf")
    e_sum = 0.0
    acc = tl.zeros([BLOCK_DV], dtype=tl.float32)
    if hi > lo:
        q = tl.load(Q + batch * stride_qbs + head * stride_qh + d, mask=d < Lk, other=0.0)
        for start in range(lo, hi, BLOCK_N):
            n = start + tl.arange(0, BLOCK_N)
            live = n < hi
            slot = tl.load(kv_indices + first + n, mask=live, other=0)
            k = tl.load(K_Buffer + slot[:, None] * stride_buf_kbs + kv_head * stride_buf_kh + d[None, :],
                        mask=live[:, None] & (d[None, :] < Lk), other=0.0)
            qk = tl.sum(q[None, :] * k, 1)
            qk *= sm_scale_withk
            qk = tl.where(live, qk, float("-inf"))
            v = tl.load(V_Buffer + slot[:, None] * stride_buf_vbs + kv_head * stride_buf_vh + dv[None, :],
                        mask=live[:, None] & (dv[None, :] < Lv), other=0.0)
            new_max = tl.maximum(tl.max(qk, 0), e_max)
            rescale = tl.exp(e_max - new_max)
            p = tl.exp(qk - new_max)
            acc *= rescale
            acc += tl.sum(p[:, None] * v, 0)
            e_sum = e_sum * rescale + tl.sum(p, 0)
            e_max = new_max
        at = batch * stride_mid_ob + head * stride_mid_oh + split * stride_mid_os
        tl.store(Att_Out + at + dv, acc / e_sum, mask=dv < Lv)
        tl.store(Att_Lse + at // Lv, e_max + tl.log(e_sum))


# ---------------------------------------------------------------------------------------------
# Triton's tutorials that are not matmuls, at triton-lang/triton (each file as read at a commit:
# 02-fused-softmax.py fd237c7c, 04-low-memory-dropout.py 7fd47243, 05-layer-norm.py 54569929).

# Source: python/tutorials/02-fused-softmax.py, softmax_kernel, launched by softmax(): f32 rows,
# BLOCK_SIZE = next_power_of_2(n_cols), num_warps 8, and persistent programs (SMs x occupancy,
# at most n_rows) that walk the rows num_programs(0) apart in a tl.range loop of num_stages
# stages (the constexpr argument: 4 where the device has more than 200,000 bytes of shared memory
# per block, else 2). Config: the benchmark's M = 4096 rows of N = 4096 -> BLOCK_SIZE 4096,
# num_stages 2 (an A100's 166 KiB, and MI300's 64 KiB; SPECS holds one set of constexprs for
# both NVIDIA targets).
@triton.jit
def fused_softmax(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                  BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    for r in tl.range(first, n_rows, step, num_stages=num_stages):
        lanes = tl.arange(0, BLOCK_SIZE)
        inside = lanes < n_cols
        v = tl.load(input_ptr + r * input_row_stride + lanes, mask=inside, other=-float("inf"))
        shifted = v - tl.max(v, axis=0)
        e = tl.exp(shifted)
        tl.store(output_ptr + r * output_row_stride + lanes, e / tl.sum(e, axis=0), mask=inside)


# Source: python/tutorials/04-low-memory-dropout.py, _seeded_dropout, launched by
# seeded_dropout(): f32 x, p and seed from Python (fp32, i32), BLOCK_SIZE 1024, Triton's default
# 4 warps. Config: n_elements divisible by 16 (activations; the tutorial's own toy input has 10).
@triton.jit
def seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    inside = offs < n_elements
    v = tl.load(x_ptr + offs, mask=inside)
    keep = tl.rand(seed, offs) > p
    tl.store(output_ptr + offs, tl.where(keep, v / (1 - p), 0.0), mask=inside)


# Source: python/tutorials/05-layer-norm.py, _layer_norm_fwd_fused, launched by
# LayerNorm.forward: f16 X, Y, W, B, f32 Mean and Rstd, three passes over the row in BLOCK_SIZE
# chunks (sum, centred squares, normalize). Config: the tutorial's test, M = 1151 rows of
# N = 8192 in f16: BLOCK_SIZE = min(65536 // 2, next_power_of_2(8192)) = 8192,
# num_warps = min(max(8192 // 256, 1), 8) = 8.
@triton.jit
def layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    total = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        total += tl.load(X + offs, mask=offs < N, other=0.).to(tl.float32)
    mean = tl.sum(total, axis=0) / N
    squares = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        xc = tl.load(X + offs, mask=offs < N, other=0.).to(tl.float32)
        xc = tl.where(offs < N, xc - mean, 0.)
        squares += xc * xc
    rstd = 1 / tl.sqrt(tl.sum(squares, axis=0) / N + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for start in range(0, N, BLOCK_SIZE):
        offs = start + tl.arange(0, BLOCK_SIZE)
        inside = offs < N
        w = tl.load(W + offs, mask=inside)
        b = tl.load(B + offs, mask=inside)
        xc = tl.load(X + offs, mask=inside, other=0.).to(tl.float32)
        tl.store(Y + offs, (xc - mean) * rstd * w + b, mask=inside)


# Source: python/tutorials/05-layer-norm.py, _layer_norm_bwd_dx_fused, launched by
# LayerNorm.backward: dx of one row, and the row's dW and dB terms (f32, as w was widened) added
# into partial row row % GROUP_SIZE_M (f16) under that group's spin lock (Lock[g]; Lock[G + g]
# says whether the row was written yet), a debug_barrier before the release. Config: N = 8192
# -> GROUP_SIZE_M 96, BLOCK_SIZE_N 8192 and 8 warps from the forward pass.
@triton.jit
def layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                            GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE_N)
    inside = offs < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    g = row % GROUP_SIZE_M
    Lock += g
    Count = Lock + GROUP_SIZE_M
    DW = DW + g * N + offs
    DB = DB + g * N + offs
    x = tl.load(X + offs, mask=inside, other=0).to(tl.float32)
    dy = tl.load(DY + offs, mask=inside, other=0).to(tl.float32)
    w = tl.load(W + offs, mask=inside).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(inside, (x - mean) * rstd, 0.)
    wdy = tl.where(inside, w * dy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + offs, (wdy - (xhat * c1 + c2)) * rstd, mask=inside)
    dw = (dy * xhat).to(w.dtype)
    db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    if tl.load(Count) == 0:
        tl.atomic_xchg(Count, 1)
    else:
        dw += tl.load(DW, mask=inside)
        db += tl.load(DB, mask=inside)
    tl.store(DW, dw, mask=inside)
    tl.store(DB, db, mask=inside)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


# Source: python/tutorials/05-layer-norm.py, _layer_norm_bwd_dwdb, launched by
# LayerNorm.backward on cdiv(N, 128) programs with M = min(GROUP_SIZE_M, rows): the partial
# rows summed in f32 tiles of BLOCK_SIZE_M x BLOCK_SIZE_N, stored into f16 dW and dB.
# Config: M = 96, N = 8192, BLOCK_SIZE_M 32, BLOCK_SIZE_N 128, Triton's default 4 warps.
@triton.jit
def layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr,
                        BLOCK_SIZE_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for start in range(0, M, BLOCK_SIZE_M):
        rows = start + tl.arange(0, BLOCK_SIZE_M)
        ok = (rows[:, None] < M) & (cols[None, :] < N)
        at = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + at, mask=ok, other=0.)
        db += tl.load(DB + at, mask=ok, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


# ---------------------------------------------------------------------------------------------
D16 = [["tt.divisibility", 16]]


def _spec(fn, types, consts, aligned, num_warps, num_stages=None, hip_warps=None, hip_stages=None):
    """types: arg -> Triton type for every runtime argument; consts: arg -> value for every
    constexpr (including JIT-specialized 1s and Nones); aligned: args with divisibility 16;
    hip_warps, hip_stages: options of their own on ROCm (options_hip)."""
    sig = {}
    for name in fn.arg_names:
        if name in consts:
            sig[name] = "constexpr"
        else:
            sig[name] = types[name]
    missing = [n for n in fn.arg_names if n not in sig]
    assert not missing, missing
    opts = dict(num_warps=num_warps)
    if num_stages is not None:
        opts["num_stages"] = num_stages
    spec = dict(fn=fn, signature=sig, constexprs=dict(consts),
                attrs={(fn.arg_names.index(n), ): D16 for n in aligned}, options=opts)
    if hip_warps is not None or hip_stages is not None:
        spec["options_hip"] = dict(opts)
        if hip_warps is not None:
            spec["options_hip"]["num_warps"] = hip_warps
        if hip_stages is not None:
            spec["options_hip"]["num_stages"] = hip_stages
    return spec


H = 4096  # hidden size of the norms
_NB, _NW = _liger_calculate_settings(H)  # 4096, 8
I = 11008  # LLaMA-7B intermediate size
_GB, _GW = _liger_calculate_settings(I)  # 16384, 16
VOCAB = 32000

SPECS = {
    "rms_norm": _spec(
        rms_norm_fwd,
        {"Y": "*bf16", "stride_y": "i32", "X": "*bf16", "stride_x": "i32", "W": "*bf16", "Rstd": "*fp32",
         "n_cols": "i32", "eps": "fp32", "offset": "fp32"},
        {"stride_w": 1, "stride_rstd": 1, "casting_mode": 0, "elementwise_affine": True,
         "BLOCK_SIZE": _NB},
        ["Y", "stride_y", "X", "stride_x", "W", "Rstd", "n_cols"], _NW),
    "rms_norm_backward": _spec(
        rms_norm_bwd,
        {"dY": "*bf16", "stride_dy": "i32", "dX": "*bf16", "stride_dx": "i32", "X": "*bf16",
         "stride_x": "i32", "W": "*bf16", "Rstd": "*fp32", "dW": "*fp32", "stride_dw": "i32",
         "n_rows": "i32", "n_cols": "i32", "offset": "fp32", "rows_per_program": "i32"},
        {"X_dtype": tl.bfloat16, "stride_w": 1, "stride_rstd": 1, "casting_mode": 0,
         "elementwise_affine": True, "BLOCK_SIZE": _NB},
        ["dY", "stride_dy", "dX", "stride_dx", "X", "stride_x", "W", "Rstd", "dW", "stride_dw", "n_rows",
         "n_cols"], _NW),
    "fused_add_rms_norm": _spec(
        fused_add_rms_norm_fwd,
        {"Y": "*bf16", "stride_y": "i32", "S": "*bf16", "stride_s": "i32", "X": "*bf16", "stride_x": "i32",
         "R": "*bf16", "stride_r": "i32", "W": "*bf16", "Rstd": "*fp32", "n_cols": "i32", "eps": "fp32",
         "offset": "fp32"},
        {"stride_w": 1, "stride_rstd": 1, "casting_mode": 0, "BLOCK_SIZE": _NB},
        ["Y", "stride_y", "S", "stride_s", "X", "stride_x", "R", "stride_r", "W", "Rstd", "n_cols"],
        _NW, num_stages=2),
    "layer_norm": _spec(
        layer_norm_fwd,
        {"Y": "*bf16", "stride_y": "i32", "X": "*bf16", "stride_x": "i32", "W": "*bf16", "B": "*bf16",
         "Mean": "*bf16", "Rstd": "*bf16", "n_cols": "i32", "eps": "fp32"},
        {"stride_w": 1, "stride_b": 1, "stride_mean": 1, "stride_rstd": 1, "BLOCK_SIZE": _NB},
        ["Y", "stride_y", "X", "stride_x", "W", "B", "Mean", "Rstd", "n_cols"], _NW),
    "swiglu": _spec(
        swiglu_fwd,
        {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "stride": "i32", "gate_multiplier": "fp32"},
        {"n_cols": I, "BLOCK_SIZE": _GB},
        ["a_ptr", "b_ptr", "c_ptr", "stride"], _GW),
    "geglu": _spec(
        geglu_tanh_fwd,
        {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "stride": "i32"},
        {"n_cols": I, "BLOCK_SIZE": _GB},
        ["a_ptr", "b_ptr", "c_ptr", "stride"], _GW),
    "rope": _spec(
        rope_fwd,
        {"q_ptr": "*bf16", "q_row_stride": "i32", "k_ptr": "*bf16", "k_row_stride": "i32", "cos": "*bf16",
         "cos_row_stride": "i32", "sin": "*bf16", "sin_row_stride": "i32", "sl": "i32"},
        {"bs": 1, "cos_bs": 1, "n_qh": 32, "n_kh": 8, "hd": 128, "pad_n_qh": 32, "pad_n_kh": 8,
         "pad_hd": 128, "BLOCK_SIZE": 32, "BACKWARD_PASS": False},
        ["q_ptr", "q_row_stride", "k_ptr", "k_row_stride", "cos", "cos_row_stride", "sin",
         "sin_row_stride", "sl"], 4),
    "cross_entropy": _spec(
        cross_entropy_fwd,
        {"X_ptr": "*fp32", "X_stride": "i32", "Y_ptr": "*i64", "loss_ptr": "*fp32",
         "token_accuracy_stride": "i32", "predicted_tokens_stride": "i32", "n_cols": "i32",
         "n_non_ignore": "i32", "sum_non_ignore_weight": "i32", "weight_sum": "fp32", "ignore_index": "i32"},
        {"Y_stride": 1, "weight_ptr": None, "z_loss_ptr": None, "loss_stride": 1, "token_accuracy_ptr": None,
         "predicted_tokens_ptr": None, "lse_square_scale": 0.0, "label_smoothing": 0.0, "reduction": "mean",
         "softcap": None, "RETURN_Z_LOSS": False, "RETURN_TOKEN_ACCURACY": False,
         "RETURN_PREDICTED_TOKENS": False, "BLOCK_SIZE": min(65536 // 2, _next_pow2(VOCAB)),
         "HAS_WEIGHT": False, "HAS_SOFTCAPPING": False, "HAS_GRADIENTS": True},
        ["X_ptr", "X_stride", "Y_ptr", "loss_ptr", "token_accuracy_stride", "predicted_tokens_stride",
         "n_cols", "n_non_ignore", "sum_non_ignore_weight"], 32, hip_warps=16),
    "kl_div": _spec(
        kldiv_fwd,
        {"y_ptr": "*fp32", "y_stride": "i32", "gt_ptr": "*fp32", "gt_stride": "i32", "loss_ptr": "*fp32",
         "n_cols": "i32", "eps": "fp32"},
        {"loss_stride": 1, "BLOCK_SIZE": min(65536 // 4, _next_pow2(VOCAB)), "log_target": False,
         "reduction": 3},
        ["y_ptr", "y_stride", "gt_ptr", "gt_stride", "loss_ptr", "n_cols"], 16),
    "jsd": _spec(
        jsd_fwd,
        {"X_ptr": "*fp32", "X_stride": "i32", "Y_ptr": "*fp32", "Y_stride": "i32", "loss_ptr": "*fp32",
         "loss_stride": "i32", "dX_ptr": "*fp32", "dX_stride": "i32", "label_ptr": "*fp32",
         "n_non_ignore": "i32", "n_cols": "i32"},
        {"beta": 0.5, "ignore_index": -100, "BLOCK_SIZE": min(65536, _next_pow2(VOCAB)), "HAS_LABEL": False},
        ["X_ptr", "X_stride", "Y_ptr", "Y_stride", "loss_ptr", "loss_stride", "dX_ptr", "dX_stride",
         "label_ptr", "n_non_ignore", "n_cols"], 4),
    "embedding": _spec(
        embedding_fwd,
        {"embeddings_ptr": "*fp32", "indices_ptr": "*i64", "output_ptr": "*fp32", "n_elements": "i32"},
        {"embedding_dim": 4096, "BLOCK_SIZE_M": _next_pow2(min(128, 4096)),
         "BLOCK_SIZE_N": _next_pow2(min(128, 4096))},
        ["embeddings_ptr", "indices_ptr", "output_ptr", "n_elements"], 4),
}

_FA_TYPES = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "Lse": "*fp32", "TMP": "*fp32",
             "softmax_scale": "fp32"}
_FA_INTS = ["stride_qb", "stride_qh", "stride_qm", "stride_kb", "stride_kh", "stride_kn", "stride_vb",
            "stride_vh", "stride_vn", "stride_bb", "stride_bh", "stride_bm", "stride_ob", "stride_oh",
            "stride_om", "nheads", "seqlen_q", "seqlen_k", "seqlen_q_rounded", "headdim",
            "CACHE_KEY_SEQLEN_Q", "CACHE_KEY_SEQLEN_K"]
_FA_TYPES.update({n: "i32" for n in _FA_INTS})
# seqlen 1024, headdim 64, nheads 32 (the repo's benchmark: dim 2048 / headdim 64): every int
# argument (strides, seqlens, the cache keys 1024 // 32, the bias strides 0) is divisible by 16.
for _causal in (False, True):
    SPECS["flash_attn_fwd_causal" if _causal else "flash_attn_fwd"] = _spec(
        flash_attn_fwd, _FA_TYPES,
        {"Bias": None, "BIAS_TYPE": "none", "IS_CAUSAL": _causal, "BLOCK_HEADDIM": 64, "EVEN_M": True,
         "EVEN_N": True, "EVEN_HEADDIM": True, "BLOCK_M": 128, "BLOCK_N": 128},
        ["Q", "K", "V", "Out", "Lse", "TMP"] + _FA_INTS, 4, num_stages=1)
SPECS["flash_attn_bwd_preprocess"] = _spec(
    flash_attn_bwd_preprocess,
    {"Out": "*fp16", "DO": "*fp16", "Delta": "*fp32", **{n: "i32" for n in [
        "stride_ob", "stride_oh", "stride_om", "stride_dob", "stride_doh", "stride_dom", "nheads",
        "seqlen_q", "seqlen_q_rounded", "headdim"]}},
    {"BLOCK_M": 128, "BLOCK_HEADDIM": 64},
    ["Out", "DO", "Delta", "stride_ob", "stride_oh", "stride_om", "stride_dob", "stride_doh", "stride_dom",
     "nheads", "seqlen_q", "seqlen_q_rounded", "headdim"], 4)
_FA_BWD_INTS = [f"stride_{t}{a}" for t in ("q", "k", "v", "b", "do", "dq", "dk", "dv")
                for a in ("b", "h", "m" if t in ("q", "b", "do", "dq") else "n")]
_FA_BWD_INTS += ["nheads", "seqlen_q", "seqlen_k", "seqlen_q_rounded", "headdim", "CACHE_KEY_SEQLEN_Q",
                 "CACHE_KEY_SEQLEN_K"]
_FA_BWD_TYPES = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DQ": "*fp32", "DK": "*fp16",
                 "DV": "*fp16", "LSE": "*fp32", "D": "*fp32", "softmax_scale": "fp32",
                 **{n: "i32" for n in _FA_BWD_INTS}}
for _causal in (False, True):
    SPECS["flash_attn_bwd_causal" if _causal else "flash_attn_bwd"] = _spec(
        flash_attn_bwd, _FA_BWD_TYPES,
        {"Bias": None, "BIAS_TYPE": "none", "IS_CAUSAL": _causal, "BLOCK_HEADDIM": 64,
         "SEQUENCE_PARALLEL": True, "EVEN_M": True, "EVEN_N": True, "EVEN_HEADDIM": True, "BLOCK_M": 128,
         "BLOCK_N": 128},
        ["Q", "K", "V", "DO", "DQ", "DK", "DV", "LSE", "D"] + _FA_BWD_INTS, 8, num_stages=1)
SPECS["matmul_leaky_relu"] = _spec(
    matmul_leaky_relu,
    {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
     "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
    {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128,
     "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8},
    ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"], 8, num_stages=3)
SPECS["matmul_persistent"] = _spec(
    matmul_persistent,
    {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
     "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"},
    {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128,
     "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8, "NUM_SMS": 132},
    ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"], 8, num_stages=3)
SPECS["block_scaled_matmul"] = _spec(
    block_scaled_matmul,
    {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8", "c_ptr": "*fp16",
     "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_asm": "i32", "stride_bk": "i32",
     "stride_bsn": "i32", "stride_cm": "i32"},
    {"stride_ak": 1, "stride_ask": 1, "stride_bn": 1, "stride_bsk": 1, "stride_cn": 1, "VEC_SIZE": 32,
     "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128},
    ["a_ptr", "a_scale_ptr", "b_ptr", "b_scale_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_asm",
     "stride_bk", "stride_bsn", "stride_cm"], 8, num_stages=4, hip_stages=2)

SPECS["scaled_mm"] = _spec(
    scaled_mm,
    {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32",
     "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_bn": "i32",
     "stride_cm": "i32"},
    {"stride_ak": 1, "stride_bk": 1, "stride_cn": 1, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128,
     "BLOCK_SIZE_K": 128},
    ["a_ptr", "b_ptr", "scale_a_ptr", "scale_b_ptr", "c_ptr", "N", "K", "stride_am", "stride_bn",
     "stride_cm"], 4, num_stages=3)

SPECS["fused_moe"] = _spec(
    fused_moe,
    {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "topk_weights_ptr": "*fp32",
     "sorted_token_ids_ptr": "*i32", "expert_ids_ptr": "*i32", "num_tokens_post_padded_ptr": "*i32",
     "N": "i32", "K": "i32", "EM": "i32", "num_valid_tokens": "i32", "stride_am": "i32",
     "stride_be": "i32", "stride_bn": "i32", "stride_cm": "i32"},
    {"stride_ak": 1, "stride_bk": 1, "stride_cn": 1, "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64,
     "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "MUL_ROUTED_WEIGHT": True, "top_k": 2},
    ["a_ptr", "b_ptr", "c_ptr", "topk_weights_ptr", "sorted_token_ids_ptr", "expert_ids_ptr",
     "num_tokens_post_padded_ptr", "N", "K", "stride_am", "stride_be", "stride_bn", "stride_cm"], 4,
    num_stages=3)

SPECS["decode_attention"] = _spec(
    decode_attention,
    {"Q": "*bf16", "K_Buffer": "*bf16", "V_Buffer": "*bf16", "sm_scale_withk": "fp32",
     "kv_indptr": "*i32", "kv_indices": "*i32", "Att_Out": "*fp32", "Att_Lse": "*fp32",
     "num_kv_splits": "*i32", "stride_qbs": "i32", "stride_qh": "i32", "stride_buf_kbs": "i32",
     "stride_buf_kh": "i32", "stride_buf_vbs": "i32", "stride_buf_vh": "i32", "stride_mid_ob": "i32",
     "stride_mid_oh": "i32", "stride_mid_os": "i32"},
    {"kv_group_num": 1, "BLOCK_DMODEL": 128, "BLOCK_DV": 128, "BLOCK_N": 64, "MIN_BLOCK_KV": 32,
     "logit_cap": 0.0, "Lk": 128, "Lv": 128, "xai_temperature_len": -1},
    ["Q", "K_Buffer", "V_Buffer", "kv_indptr", "kv_indices", "Att_Out", "Att_Lse", "num_kv_splits",
     "stride_qbs", "stride_qh", "stride_buf_kbs", "stride_buf_kh", "stride_buf_vbs", "stride_buf_vh",
     "stride_mid_ob", "stride_mid_oh", "stride_mid_os"], 4,
    num_stages=2)

# Triton's tutorials: softmax over the benchmark's 4096 x 4096 f32, layer norm over the test's
# 1151 x 8192 f16 (every stride and size divisible by 16), dropout over n_elements divisible by 16.
SPECS["fused_softmax"] = _spec(
    fused_softmax,
    {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32", "output_row_stride": "i32",
     "n_rows": "i32", "n_cols": "i32"},
    {"BLOCK_SIZE": _next_pow2(4096), "num_stages": 2},
    ["output_ptr", "input_ptr", "input_row_stride", "output_row_stride", "n_rows", "n_cols"], 8)
SPECS["seeded_dropout"] = _spec(
    seeded_dropout,
    {"x_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32", "p": "fp32", "seed": "i32"},
    {"BLOCK_SIZE": 1024},
    ["x_ptr", "output_ptr", "n_elements"], 4)
_LN_N = 8192
_LN_BLOCK = min(65536 // 2, _next_pow2(_LN_N))  # 8192
_LN_WARPS = min(max(_LN_BLOCK // 256, 1), 8)  # 8
_LN_GROUP = 64 if _LN_N > 8192 else 96 if _LN_N > 4096 else 128 if _LN_N > 1024 else 256  # 96
SPECS["layer_norm_fwd_fused"] = _spec(
    layer_norm_fwd_fused,
    {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32",
     "stride": "i32", "N": "i32", "eps": "fp32"},
    {"BLOCK_SIZE": _LN_BLOCK},
    ["X", "Y", "W", "B", "Mean", "Rstd", "stride", "N"], _LN_WARPS)
SPECS["layer_norm_bwd_dx_fused"] = _spec(
    layer_norm_bwd_dx_fused,
    {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
     "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"},
    {"GROUP_SIZE_M": _LN_GROUP, "BLOCK_SIZE_N": _LN_BLOCK},
    ["DX", "DY", "DW", "DB", "X", "W", "Mean", "Rstd", "Lock", "stride", "N"], _LN_WARPS)
SPECS["layer_norm_bwd_dwdb"] = _spec(
    layer_norm_bwd_dwdb,
    {"DW": "*fp16", "DB": "*fp16", "FINAL_DW": "*fp16", "FINAL_DB": "*fp16", "M": "i32", "N": "i32"},
    {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128},
    ["DW", "DB", "FINAL_DW", "FINAL_DB", "M", "N"], 4)
