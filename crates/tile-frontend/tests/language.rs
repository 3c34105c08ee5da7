//! The language inside `#[tile_kernel]`, feature by feature: each kernel is
//! lowered, optimized, printed, parsed back and run by the reference
//! interpreter, and its output is checked.

use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::{BinaryOp, Scalar, UnaryOp};

/// Runs `src` (attribute `attr`) over `grid` and returns the arguments.
fn run(attr: &str, src: &str, grid: [u32; 3], mut args: Vec<Arg>) -> Vec<Arg> {
    let item: syn::ItemFn = syn::parse_str(src).expect("kernel parses");
    let lowered = match tile_frontend::translate_kernel(attr.parse().expect("attribute"), &item) {
        Ok(v) => v,
        Err(e) => panic!("lowering failed: {e}"),
    };
    let (_, mut f) = lowered.into_iter().next().expect("one specialization");
    tile_codegen::driver::optimize(&mut f).expect("passes");
    let f = tile_ir::text::parse_function(&f.to_string()).expect("IR parses back");
    if let Err(e) = interp::run(&f, grid, &mut args) {
        panic!("interpreter: {e}\n{f}");
    }
    args
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, v).expect("tensor"))
}

fn i32s(shape: &[usize], v: Vec<i32>) -> Arg {
    Arg::Tensor(HostTensor::from_vec(shape, v).expect("tensor"))
}

fn out_f32(a: &Arg) -> Vec<f32> {
    match a {
        Arg::Tensor(t) => t.to_vec::<f32>().expect("f32"),
        _ => panic!("not a tensor"),
    }
}

fn out_i32(a: &Arg) -> Vec<i32> {
    match a {
        Arg::Tensor(t) => t.to_vec::<i32>().expect("i32"),
        _ => panic!("not a tensor"),
    }
}

#[test]
fn loops_carry_values_and_step() {
    // out[0..4] = sum over i in (0..10).step_by(3) of i, as a tile, and a
    // scalar counter of iterations broadcast into out[4..8].
    let src = r#"
fn k(out: &mut Tensor<i32>) {
    let mut acc = zeros::<i32>([4]);
    let mut n = 0;
    for i in (0..10).step_by(3) {
        acc += i;
        n = n + 1;
    }
    let v = partition_view(out, [4]);
    v.store(acc, 0);
    v.store(n, 1);
}
"#;
    let args = run("", src, [1, 1, 1], vec![i32s(&[8], vec![0; 8])]);
    assert_eq!(out_i32(&args[0]), [18, 18, 18, 18, 4, 4, 4, 4]);
}

#[test]
fn if_else_yields_values_and_merges_assignments() {
    let src = r#"
fn k(out: &mut Tensor<f32>, flag: i32) {
    let mut t = full([4], 1.0);
    let s = if flag > 0 {
        t = t * 3.0;
        2.0
    } else if flag == 0 {
        5.0
    } else {
        t = t - 1.0;
        7.0
    };
    partition_view(out, [4]).store(t + s, 0);
}
"#;
    for (flag, want) in [(1, 5.0), (0, 6.0), (-1, 7.0)] {
        let args = run(
            "",
            src,
            [1, 1, 1],
            vec![f32s(&[4], vec![0.0; 4]), Arg::Scalar(Scalar::I32(flag))],
        );
        assert_eq!(out_f32(&args[0]), [want; 4], "flag {flag}");
    }
}

#[test]
fn compile_time_if_picks_a_branch_per_specialization() {
    let src = r#"
fn k<const B: usize>(out: &mut Tensor<f32>) {
    let t = if B > 2 { iota::<f32>([B]) } else { full([B], 9.0) };
    partition_view(out, [B]).store(t, 0);
}
"#;
    let args = run(
        "configs(B = 4)",
        src,
        [1, 1, 1],
        vec![f32s(&[4], vec![0.0; 4])],
    );
    assert_eq!(out_f32(&args[0]), [0.0, 1.0, 2.0, 3.0]);
    let args = run(
        "configs(B = 2)",
        src,
        [1, 1, 1],
        vec![f32s(&[2], vec![0.0; 2])],
    );
    assert_eq!(out_f32(&args[0]), [9.0, 9.0]);
}

#[test]
fn helpers_are_inlined_and_return_tuples() {
    let src = r#"
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    #[tile_fn]
    fn stats(t: Tile) -> (Tile, Tile) {
        (t.sum_keepdim(0), t.max_along_keepdim(0))
    }
    #[tile_fn]
    fn twice(a: f32) -> f32 {
        let b = a * 2.0;
        return b;
    }
    let t = partition_view(x, [4]).load(0);
    let (s, m) = stats(t);
    partition_view(out, [4]).store(twice(t) + s - m, 0);
}
"#;
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[4], vec![1.0, 2.0, 3.0, 4.0]),
            f32s(&[4], vec![0.0; 4]),
        ],
    );
    // 2x + 10 - 4
    assert_eq!(out_f32(&args[1]), [8.0, 10.0, 12.0, 14.0]);
}

#[test]
fn movement_ops() {
    let src = r#"
fn k(out: &mut Tensor<f32, 2>) {
    let t = iota::<f32>([2, 3]);
    let a = t.permute([1, 0]).flip([0]);
    let b = a.reshape([2, 3]).slice([0..2, 1..3]);
    let c = b.pad([0, 1], [0, 0], -1.0);
    let d = cat([c, t.slice([0..2, (0..3).step_by(2)])], 1);
    let e = d.slice([0..1, ..]).expand([2, 5]);
    partition_view(out, [4, 5]).store(cat([d, e], 0), 0, 0);
}
"#;
    let args = run("", src, [1, 1, 1], vec![f32s(&[4, 5], vec![0.0; 20])]);
    // t = [[0,1,2],[3,4,5]]; tᵀ flipped on axis 0 = [[2,5],[1,4],[0,3]];
    // reshaped [[2,5,1],[4,0,3]]; columns 1..3 = [[5,1],[0,3]]; padded with
    // -1 before: [[-1,5,1],[-1,0,3]]; t's columns 0 and 2: [[0,2],[3,5]].
    let d = [-1.0, 5.0, 1.0, 0.0, 2.0, -1.0, 0.0, 3.0, 3.0, 5.0];
    let mut want = d.to_vec();
    want.extend_from_slice(&d[..5]);
    want.extend_from_slice(&d[..5]);
    assert_eq!(out_f32(&args[0]), want);
}

#[test]
fn reductions_scans_and_argmax() {
    let src = r#"
fn k(x: &Tensor<f32, 2>, sums: &mut Tensor<f32>, arg: &mut Tensor<i32>, scan: &mut Tensor<f32, 2>) {
    let t = partition_view(x, [2, 3]).load(0, 0);
    partition_view(sums, [2]).store(t.sum(1) + t.min_along(1) * 0.0, 0);
    partition_view(arg, [2]).store(t.argmax(1), 0);
    partition_view(scan, [2, 3]).store(t.cumsum(1), 0, 0);
}
"#;
    let x = vec![1.0, 5.0, 2.0, 7.0, 0.0, 3.0];
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[2, 3], x),
            f32s(&[2], vec![0.0; 2]),
            i32s(&[2], vec![0; 2]),
            f32s(&[2, 3], vec![0.0; 6]),
        ],
    );
    assert_eq!(out_f32(&args[1]), [8.0, 10.0]);
    assert_eq!(out_i32(&args[2]), [1, 0]);
    assert_eq!(out_f32(&args[3]), [1.0, 6.0, 8.0, 7.0, 7.0, 10.0]);
}

#[test]
fn scalars_casts_and_literal_typing() {
    let src = r#"
fn k(out: &mut Tensor<f32>, n: i64) {
    let pid = program_id(0);
    let grid = num_programs(0);
    let half = iota::<f16>([4]) * 2 + 0.5;
    let m = (n as i32).max(3) - pid;
    let flag = pid == 0 && !(grid > 5);
    let v = select(flag, half.cast::<f32>(), m as f32);
    partition_view(out, [4]).store(v.min(f32::INFINITY) + (-1.5f32).abs(), pid);
}
"#;
    let args = run(
        "",
        src,
        [2, 1, 1],
        vec![f32s(&[8], vec![0.0; 8]), Arg::Scalar(Scalar::I64(2))],
    );
    // program 0: half = [0.5, 2.5, 4.5, 6.5], + 1.5; program 1: m = 3 - 1 = 2, + 1.5
    assert_eq!(out_f32(&args[0]), [2.0, 4.0, 6.0, 8.0, 3.5, 3.5, 3.5, 3.5]);
}

#[test]
fn views_load_with_padding_and_runtime_fill() {
    let src = r#"
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>, fill: f32) {
    let t = partition_view(x, [4]).load_masked_with(Padding::Value(-2.0), 1);
    let u = full([4], fill);
    partition_view(out, [4]).store_masked(t.max(u), 1);
}
"#;
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[6], vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            f32s(&[6], vec![9.0; 6]),
            Arg::Scalar(Scalar::F32(-3.0)),
        ],
    );
    assert_eq!(out_f32(&args[1]), [9.0, 9.0, 9.0, 9.0, 4.0, 5.0]);
}

#[test]
fn pow_as_a_method_a_builtin_and_a_compile_time_fold() {
    let src = r#"
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>, e: f32) {
    let v = partition_view(x, [4]).load(0);
    let o = partition_view(out, [4]);
    o.store(v.powf(2.0), 0);
    o.store(pow(v, e), 1);
    o.store(v.powf(v) + pow(2, 10), 2);
    o.store(zeros::<f32>([4]) + pow(-8.0, 1.0 / 3.0), 3);
}
"#;
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[4], vec![1.0, 2.0, 3.0, 4.0]),
            f32s(&[16], vec![0.0; 16]),
            Arg::Scalar(Scalar::F32(0.5)),
        ],
    );
    let out = out_f32(&args[1]);
    assert_eq!(out[..4], [1.0, 4.0, 9.0, 16.0]);
    let roots: Vec<f32> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .map(|v| v.sqrt() as f32)
        .collect();
    assert_eq!(out[4..8], roots[..]);
    assert_eq!(out[8..12], [1025.0, 1028.0, 1051.0, 1280.0]);
    // A negative base to a non-integer power is NaN, folded at compile time.
    assert!(out[12..].iter().all(|v| v.is_nan()), "{out:?}");
}

#[test]
fn pow_rejects_integer_tiles_and_negative_integer_exponents() {
    let lower = |body: &str| {
        let src = format!("fn k(out: &mut Tensor<f32>) {{ {body} }}");
        let item: syn::ItemFn = syn::parse_str(&src).expect("kernel parses");
        match tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item) {
            Ok(_) => panic!("`{body}` lowered"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        lower("let t = iota::<i32>([4]).powf(iota::<i32>([4]));"),
        "`pow`: pow needs a float dtype, found i32"
    );
    assert_eq!(
        lower("let t = zeros::<f32>([4]) + pow(2, -1);"),
        "`pow` of compile-time integers needs an exponent from 0 and a result that fits; write a float (`2.0`) for a float power"
    );
}

#[test]
fn the_math_library_as_methods_and_builtins() {
    let src = r#"
fn k(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let v = partition_view(x, [4]).load(0);
    let w = partition_view(y, [4]).load(0);
    let o = partition_view(out, [4]);
    o.store(v.tan(), 0);
    o.store(v.asin(), 1);
    o.store(v.acos(), 2);
    o.store(v.atan(), 3);
    o.store(v.sinh(), 4);
    o.store(v.cosh(), 5);
    o.store(v.asinh(), 6);
    o.store((v + 1.5).acosh(), 7);
    o.store(v.atanh(), 8);
    o.store(v.sigmoid(), 9);
    o.store(v.ln_1p(), 10);
    o.store(v.log1p(), 11);
    o.store(v.exp_m1(), 12);
    o.store(v.expm1(), 13);
    o.store(v.erfc(), 14);
    o.store(v.cbrt(), 15);
    o.store(v.atan2(w), 16);
    o.store(atan2(v, w), 17);
    o.store(v.hypot(w), 18);
    o.store(hypot(v, w) + hypot(3.0, 4.0) + atan2(0.0, -1.0), 19);
}
"#;
    let xs = vec![-0.75f32, 0.0, 0.25, 0.5];
    let ys = vec![2.0f32, -3.0, 0.5, -0.125];
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[4], xs.clone()),
            f32s(&[4], ys.clone()),
            f32s(&[80], vec![0.0; 80]),
        ],
    );
    let out = out_f32(&args[2]);
    let unary = |op: UnaryOp, v: f32| {
        tile_ir::eval::unary(op, Scalar::F32(v))
            .expect("math op")
            .to_f64() as f32
    };
    let binary = |op: BinaryOp, a: f32, b: f32| {
        tile_ir::eval::binary(op, Scalar::F32(a), Scalar::F32(b))
            .expect("math op")
            .to_f64() as f32
    };
    // Each row: a function of one operand (of x plus a shift) or of two
    // (plus a constant), in the kernel's order.
    enum Row {
        Of(UnaryOp, f32),
        Of2(BinaryOp, f32),
    }
    use Row::{Of, Of2};
    let rows = [
        Of(UnaryOp::Tan, 0.0),
        Of(UnaryOp::Asin, 0.0),
        Of(UnaryOp::Acos, 0.0),
        Of(UnaryOp::Atan, 0.0),
        Of(UnaryOp::Sinh, 0.0),
        Of(UnaryOp::Cosh, 0.0),
        Of(UnaryOp::Asinh, 0.0),
        Of(UnaryOp::Acosh, 1.5),
        Of(UnaryOp::Atanh, 0.0),
        Of(UnaryOp::Sigmoid, 0.0),
        Of(UnaryOp::Log1p, 0.0),
        Of(UnaryOp::Log1p, 0.0),
        Of(UnaryOp::Expm1, 0.0),
        Of(UnaryOp::Expm1, 0.0),
        Of(UnaryOp::Erfc, 0.0),
        Of(UnaryOp::Cbrt, 0.0),
        Of2(BinaryOp::Atan2, 0.0),
        Of2(BinaryOp::Atan2, 0.0),
        Of2(BinaryOp::Hypot, 0.0),
        Of2(BinaryOp::Hypot, 5.0),
    ];
    for (row, f) in rows.iter().enumerate() {
        for i in 0..4 {
            let want = match *f {
                Of(op, shift) => unary(op, xs[i] + shift),
                Of2(op, plus) if plus != 0.0 => {
                    binary(op, xs[i], ys[i]) + plus + std::f64::consts::PI as f32
                }
                Of2(op, _) => binary(op, xs[i], ys[i]),
            };
            assert_eq!(
                out[4 * row + i].to_bits(),
                want.to_bits(),
                "row {row}, element {i}: {} against {want}",
                out[4 * row + i]
            );
        }
    }
    assert_eq!(out[2 * 4 + 1], std::f32::consts::FRAC_PI_2);
}

/// `round` (halves away from zero), `round_ties_even` (halves to even)
/// and `clamp` (`max` then `min`: a NaN stays NaN).
#[test]
fn rounding_and_clamping() {
    let src = r#"
fn k(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let v = partition_view(x, [8]).load(0);
    let o = partition_view(out, [8]);
    o.store(v.round(), 0);
    o.store(v.round_ties_even(), 1);
    o.store(v.clamp(-1.0, 1.5), 2);
    o.store((v * 2.0).round_ties_even().clamp(-3.0, 3.0), 3);
}
"#;
    let xs = vec![0.5f32, 1.5, 2.5, -0.5, -2.5, 0.49999997, f32::NAN, -7.25];
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![f32s(&[8], xs.clone()), f32s(&[32], vec![0.0; 32])],
    );
    let out = out_f32(&args[1]);
    let clamp = |v: f32, lo: f32, hi: f32| {
        if v.is_nan() {
            f32::NAN
        } else {
            v.max(lo).min(hi)
        }
    };
    for (i, &x) in xs.iter().enumerate() {
        let want = [
            x.round(),
            x.round_ties_even(),
            clamp(x, -1.0, 1.5),
            clamp((x * 2.0).round_ties_even(), -3.0, 3.0),
        ];
        for (row, w) in want.iter().enumerate() {
            let got = out[8 * row + i];
            assert!(
                got.to_bits() == w.to_bits() || (got.is_nan() && w.is_nan()),
                "row {row}, {x}: {got} against {w}"
            );
        }
    }
    assert_eq!(&out[..5], &[1.0, 2.0, 3.0, -1.0, -3.0]);
    assert_eq!(&out[8..13], &[0.0, 2.0, 2.0, -0.0, -2.0]);
}

#[test]
fn math_functions_reject_integers() {
    let lower = |body: &str| {
        let src = format!("fn k(out: &mut Tensor<f32>) {{ {body} }}");
        let item: syn::ItemFn = syn::parse_str(&src).expect("kernel parses");
        match tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item) {
            Ok(_) => panic!("`{body}` lowered"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        lower("let t = iota::<i32>([4]).sigmoid();"),
        "`sigmoid`: sigmoid needs a float dtype, found i32"
    );
    assert_eq!(
        lower("let t = iota::<i32>([4]).atan2(iota::<i32>([4]));"),
        "`atan2`: atan2 needs a float dtype, found i32"
    );
    assert_eq!(
        lower("let t = zeros::<f32>([4]) + hypot(3, 4);"),
        "`hypot` of compile-time integers: write floats (`3.0`)"
    );
}

#[test]
fn bitcast_reads_the_bits_as_another_dtype() {
    let src = r#"
fn k(x: &Tensor<f32>, bits: &mut Tensor<u32>, back: &mut Tensor<f32>, halves: &mut Tensor<i16>) {
    let v = partition_view(x, [4]).load(0);
    let b = v.bitcast::<u32>();
    partition_view(bits, [4]).store(b, 0);
    // Clearing the sign bit through the integer view is `abs`, NaN payload kept.
    partition_view(back, [4]).store((b & 0x7fff_ffff).bitcast::<f32>(), 0);
    let h = v.cast::<f16>().bitcast::<i16>();
    partition_view(halves, [4]).store(h, 0);
}
"#;
    let payload = f32::from_bits(0xffc0_1234);
    let xs = vec![1.0f32, -2.5, payload, -0.0];
    let args = run(
        "",
        src,
        [1, 1, 1],
        vec![
            f32s(&[4], xs.clone()),
            Arg::Tensor(HostTensor::from_vec(&[4], vec![0u32; 4]).expect("tensor")),
            f32s(&[4], vec![0.0; 4]),
            Arg::Tensor(HostTensor::from_vec(&[4], vec![0i16; 4]).expect("tensor")),
        ],
    );
    let Arg::Tensor(bits) = &args[1] else {
        panic!("a tensor")
    };
    let bits = bits.to_vec::<u32>().expect("u32");
    assert_eq!(bits, xs.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    let back: Vec<u32> = out_f32(&args[2]).iter().map(|v| v.to_bits()).collect();
    assert_eq!(back, [0x3f80_0000, 0x4020_0000, 0x7fc0_1234, 0]);
    let Arg::Tensor(halves) = &args[3] else {
        panic!("a tensor")
    };
    // 1.0, -2.5 and -0.0 in f16; the cast canonicalizes the NaN.
    assert_eq!(
        halves.to_vec::<i16>().expect("i16"),
        [0x3c00, 0xc100u16 as i16, 0x7e00, 0x8000u16 as i16]
    );
}

#[test]
fn bitcast_and_type_arguments_are_checked() {
    let lower = |body: &str| {
        let src = format!("fn k(out: &mut Tensor<f32>) {{ {body} }}");
        let item: syn::ItemFn = syn::parse_str(&src).expect("kernel parses");
        match tile_frontend::translate_kernel(proc_macro2::TokenStream::new(), &item) {
            Ok(_) => panic!("`{body}` lowered"),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        lower("let t = zeros::<f32>([4]).bitcast::<f16>();"),
        "`bitcast` keeps the width: f32 has 32 bits and f16 16; the dtypes of f32's width are i32, u32"
    );
    assert_eq!(
        lower("let t = zeros::<u8>([4]).bitcast::<bool>();"),
        "`bitcast` reinterprets bits, which `bool` does not have: u8 to bool; use `cast::<bool>()`"
    );
    assert_eq!(
        lower("let t = zeros::<f32>([4]).bitcast();"),
        "write the target dtype: `.bitcast::<u32>()`"
    );
    assert!(lower("let t = zeros::<f32>([4]).reinterpret::<u32>();")
        .starts_with("no method `reinterpret` on tile<4xf32>; the methods are"));
    assert_eq!(
        lower("let t = zeros::<f32>([4]).exp::<f32>();"),
        "`exp` takes no type arguments"
    );
}
