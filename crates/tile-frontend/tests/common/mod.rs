//! The five example kernels written in Rust syntax, shared by the tests of
//! the front end.

/// `(attribute tokens, kernel item)` for each example, by name.
pub const EXAMPLES: [(&str, &str, &str); 5] = [
    (
        "vector_add",
        "configs(BLOCK = 1024)",
        r#"
fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let px = partition_view(x, [BLOCK]);
    let py = partition_view(y, [BLOCK]);
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}
"#,
    ),
    (
        "softmax",
        "configs(BR = 2, BC = 128)",
        r#"
fn softmax<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid = program_id(0);
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    let e = (t - t.max_along_keepdim(1)).exp();
    let y = e / e.sum_keepdim(1);
    partition_view(out, [BR, BC]).store_masked(y, pid, 0);
}
"#,
    ),
    (
        "layernorm",
        "configs(BR = 2, BC = 128)",
        r#"
fn layernorm<const BR: usize, const BC: usize>(
    x: &Tensor<f32, 2>,
    w: &Tensor<f32>,
    bias: &Tensor<f32>,
    out: &mut Tensor<f32, 2>,
    eps: f32,
) {
    let pid = program_id(0);
    let cols = x.dim(1);
    let n = cols.cast::<f32>();
    let t = partition_view(x, [BR, BC]).load_masked(pid, 0);
    let mean = t.sum_keepdim(1) / n;
    let inside = iota::<i32>([BC]).broadcast_to([BR, BC]) < cols;
    let centered = select(inside, t - mean, zeros::<f32>([BR, BC]));
    let var = (centered * centered).sum_keepdim(1) / n;
    let rstd = (var + eps).rsqrt();
    let wt = partition_view(w, [BC]).load_masked(0);
    let bt = partition_view(bias, [BC]).load_masked(0);
    let y = fma(centered * rstd, wt, bt);
    partition_view(out, [BR, BC]).store_masked(y, pid, 0);
}
"#,
    ),
    (
        "matmul",
        "configs(BM = 32, BN = 32, BK = 16)",
        r#"
fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BK, BN]);
    let k_tiles = (a.dim(1) + (BK - 1)) / BK;
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..k_tiles {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}
"#,
    ),
    (
        "transpose",
        "configs(BM = 32, BN = 16)",
        r#"
fn transpose<const BM: usize, const BN: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    let pid_m = program_id(0);
    let pid_n = program_id(1);
    let t = partition_view(x, [BM, BN]).load_masked(pid_m, pid_n);
    partition_view(out, [BN, BM]).store_masked(t.transpose(), pid_n, pid_m);
}
"#,
    ),
];
