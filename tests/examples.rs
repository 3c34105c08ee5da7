//! Every example kernel on the CPU device equals the reference interpreter
//! bit for bit, and passes its check against plain Rust.

#[path = "../examples/kernels/atomics.rs"]
mod atomics;
#[path = "../examples/kernels/attention.rs"]
mod attention;
#[path = "../examples/kernels/checked.rs"]
mod checked;
#[allow(dead_code)] // the examples' `main` helpers are not used here
#[path = "../examples/common/mod.rs"]
mod common;
#[path = "../examples/kernels/grouped.rs"]
mod grouped;
#[path = "../examples/kernels/layernorm.rs"]
mod layernorm;
#[path = "../examples/kernels/layernorm_backward.rs"]
mod layernorm_backward;
#[path = "../examples/kernels/matmul.rs"]
mod matmul;
#[path = "../examples/kernels/packed.rs"]
mod packed;
#[path = "../examples/kernels/persistent.rs"]
mod persistent;
#[path = "../examples/kernels/scaled_matmul.rs"]
mod scaled_matmul;
#[path = "../examples/kernels/softmax.rs"]
mod softmax;
#[path = "../examples/kernels/transpose.rs"]
mod transpose;
#[path = "../examples/kernels/vector_add.rs"]
mod vector_add;

use common::{Example, Inputs};
use tile::ir::interp::HostTensor;
use tile::{bf16, f16, f4e2m1, f8e4m3, f8e8m0, Device, Element, KernelCode, Tensor};

fn host<T: Element>(shape: &[usize], values: &[T]) -> HostTensor {
    HostTensor::from_vec(shape, values.to_vec()).expect("host tensor")
}

fn device<T: Element>(dev: &Device, shape: &[usize], values: &[T]) -> Tensor<T> {
    dev.tensor_from_slice(values, shape).expect("device tensor")
}

/// Asserts that the device's result has the interpreter's bytes.
fn assert_same<T: Element>(kernel: &str, got: &Tensor<T>, want: &HostTensor) {
    let got = host(got.shape(), &got.to_vec().expect("read back"));
    assert_eq!(
        got.data(),
        want.data(),
        "{kernel}: the CPU device differs from the interpreter"
    );
}

fn assert_checks_pass(run: Example) {
    let rows = run(&Device::cpu(), &mut Inputs::default()).expect("example runs");
    // The CPU device runs the embedded host code, not the interpreter.
    let best =
        tile::runtime::cpu::HostIsa::best_here().map_or(KernelCode::Interpreter, KernelCode::Host);
    for row in rows {
        assert_eq!(row.code, best, "{}", row.kernel);
        assert!(
            row.max_error <= row.tolerance,
            "{}: error {} above {}",
            row.kernel,
            row.max_error,
            row.tolerance
        );
    }
}

#[test]
fn every_example_passes_its_reference_check() {
    for run in [
        vector_add::run,
        softmax::run,
        layernorm::run,
        layernorm_backward::run,
        matmul::run,
        scaled_matmul::run,
        persistent::run,
        grouped::run,
        transpose::run,
        packed::run,
        attention::run,
        atomics::run,
        checked::run,
    ] {
        assert_checks_pass(run);
    }
}

#[test]
fn vector_add_equals_the_interpreter() {
    let (dev, n) = (Device::cpu(), 5000);
    let mut rng = Inputs::default();
    let (xs, ys) = (rng.take(n), rng.take(n));
    let mut out = device(&dev, &[n], &vec![0.0f32; n]);
    let grid = [n.div_ceil(1024) as u32];
    let (x, y) = (device(&dev, &[n], &xs), device(&dev, &[n], &ys));
    vector_add::vector_add::<1024>::launch(&dev, grid, (&x, &y, &mut out)).expect("launch");
    let mut want = host(&[n], &vec![0.0f32; n]);
    vector_add::vector_add::<1024>::interpret(
        grid,
        (&host(&[n], &xs), &host(&[n], &ys), &mut want),
    )
    .expect("interpret");
    assert_same("vector_add", &out, &want);
}

#[test]
fn scaled_matmuls_equal_the_interpreter() {
    let dev = Device::cpu();
    let (m, n, k) = (70, 45, 96);
    let mut rng = Inputs::default();
    let fp4 =
        |v: Vec<f32>| -> Vec<f4e2m1> { v.iter().map(|&x| f4e2m1::from_f32(x * 3.0)).collect() };
    let (a, b) = (fp4(rng.take(m * k)), fp4(rng.take(k * n)));
    let grid = [m.div_ceil(64) as u32, n.div_ceil(64) as u32];
    let zeros = vec![0.0f32; m * n];

    // NVFP4: E4M3 scales per 16.
    let nv = |v: Vec<f32>| -> Vec<f8e4m3> {
        v.iter()
            .map(|&x| f8e4m3::from_f32(x.abs() + 0.25))
            .collect()
    };
    let (sa, sb) = (nv(rng.take(m * k / 16)), nv(rng.take(n * k / 16)));
    let mut out = device(&dev, &[m, n], &zeros);
    let args = (
        &device(&dev, &[m, k], &a),
        &device(&dev, &[m, k / 16], &sa),
        &device(&dev, &[k, n], &b),
        &device(&dev, &[n, k / 16], &sb),
    );
    scaled_matmul::matmul_nvfp4::<64, 64, 64>::launch(
        &dev,
        grid,
        (args.0, args.1, args.2, args.3, &mut out),
    )
    .expect("launch");
    let mut want = host(&[m, n], &zeros);
    scaled_matmul::matmul_nvfp4::<64, 64, 64>::interpret(
        grid,
        (
            &host(&[m, k], &a),
            &host(&[m, k / 16], &sa),
            &host(&[k, n], &b),
            &host(&[n, k / 16], &sb),
            &mut want,
        ),
    )
    .expect("interpret");
    assert_same("matmul_nvfp4", &out, &want);

    // bf16 activations by MXFP4 weights with E8M0 scales per 32.
    let act: Vec<bf16> = rng.take(m * k).iter().map(|&x| bf16::from_f32(x)).collect();
    let sb: Vec<f8e8m0> = rng
        .take(n * k / 32)
        .iter()
        .map(|&x| f8e8m0::from_f32((x * 2.0).round().exp2()))
        .collect();
    let mut out = device(&dev, &[m, n], &zeros);
    scaled_matmul::matmul_bf16_mxfp4::<64, 64, 64>::launch(
        &dev,
        grid,
        (
            &device(&dev, &[m, k], &act),
            &device(&dev, &[k, n], &b),
            &device(&dev, &[n, k / 32], &sb),
            &mut out,
        ),
    )
    .expect("launch");
    let mut want = host(&[m, n], &zeros);
    scaled_matmul::matmul_bf16_mxfp4::<64, 64, 64>::interpret(
        grid,
        (
            &host(&[m, k], &act),
            &host(&[k, n], &b),
            &host(&[n, k / 32], &sb),
            &mut want,
        ),
    )
    .expect("interpret");
    assert_same("matmul_bf16_mxfp4", &out, &want);
}

#[test]
fn softmax_and_layernorm_equal_the_interpreter() {
    let dev = Device::cpu();
    let mut rng = Inputs::default();
    let (rows, cols) = (37, 200);
    let xs = rng.take(rows * cols);
    let x = device(&dev, &[rows, cols], &xs);
    let mut out = device(&dev, &[rows, cols], &vec![0.0f32; rows * cols]);
    // The specializations the CPU runs (eight rows a program) and the GPUs.
    let grid = [rows.div_ceil(8) as u32];
    softmax::softmax::<8, 256>::launch(&dev, grid, (&x, &mut out)).expect("launch");
    let mut want = host(&[rows, cols], &vec![0.0f32; rows * cols]);
    softmax::softmax::<8, 256>::interpret(grid, (&host(&[rows, cols], &xs), &mut want))
        .expect("interpret");
    assert_same("softmax", &out, &want);
    let mut out = device(&dev, &[rows, cols], &vec![0.0f32; rows * cols]);
    let grid = [rows.div_ceil(4) as u32];
    softmax::softmax::<4, 256>::launch(&dev, grid, (&x, &mut out)).expect("launch");
    assert_same("softmax", &out, &want);

    let (ws, bs) = (rng.take(cols), rng.take(cols));
    let (w, b) = (device(&dev, &[cols], &ws), device(&dev, &[cols], &bs));
    let grid = [rows.div_ceil(8) as u32];
    layernorm::layernorm::<8, 384>::launch(&dev, grid, (&x, &w, &b, &mut out, 1e-5))
        .expect("launch");
    layernorm::layernorm::<8, 384>::interpret(
        grid,
        (
            &host(&[rows, cols], &xs),
            &host(&[cols], &ws),
            &host(&[cols], &bs),
            &mut want,
            1e-5,
        ),
    )
    .expect("interpret");
    assert_same("layernorm", &out, &want);
}

#[test]
fn matmuls_equal_the_interpreter() {
    let dev = Device::cpu();
    let mut rng = Inputs::default();
    let (m, n, k) = (70, 45, 50);
    let (a_vals, b_vals) = (rng.take(m * k), rng.take(k * n));
    let (a, b) = (
        device(&dev, &[m, k], &a_vals),
        device(&dev, &[k, n], &b_vals),
    );
    let mut c = device(&dev, &[m, n], &vec![0.0f32; m * n]);
    let mut want = host(&[m, n], &vec![0.0f32; m * n]);
    let grid = [m.div_ceil(64) as u32, n.div_ceil(64) as u32];
    matmul::matmul::<64, 64, 32>::launch(&dev, grid, (&a, &b, &mut c)).expect("launch");
    matmul::matmul::<64, 64, 32>::interpret(
        grid,
        (&host(&[m, k], &a_vals), &host(&[k, n], &b_vals), &mut want),
    )
    .expect("interpret");
    assert_same("matmul", &c, &want);

    let a16: Vec<f16> = a_vals.iter().map(|&v| f16::from_f32(v)).collect();
    let b16: Vec<f16> = b_vals.iter().map(|&v| f16::from_f32(v)).collect();
    let (a, b) = (device(&dev, &[m, k], &a16), device(&dev, &[k, n], &b16));
    let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
    matmul::matmul_f16::<32, 32, 16>::launch(&dev, grid, (&a, &b, &mut c)).expect("launch");
    matmul::matmul_f16::<32, 32, 16>::interpret(
        grid,
        (&host(&[m, k], &a16), &host(&[k, n], &b16), &mut want),
    )
    .expect("interpret");
    assert_same("matmul_f16", &c, &want);
}

#[test]
fn transposes_and_attention_equal_the_interpreter() {
    let dev = Device::cpu();
    let mut rng = Inputs::default();
    let (m, n) = (224, 160);
    let xs = rng.take(m * n);
    let x = device(&dev, &[m, n], &xs);
    let mut out = device(&dev, &[n, m], &vec![0.0f32; m * n]);
    let mut want = host(&[n, m], &vec![0.0f32; m * n]);
    let grid = [(m / 32) as u32, (n / 32) as u32];
    transpose::transpose_lview::<224, 160, 32, 32>::launch(&dev, grid, (&x, &mut out))
        .expect("launch");
    transpose::transpose_lview::<224, 160, 32, 32>::interpret(
        grid,
        (&host(&[m, n], &xs), &mut want),
    )
    .expect("interpret");
    assert_same("transpose_lview", &out, &want);

    let (seq, d) = (45, 64);
    let (qs, ks, vs) = (rng.take(seq * d), rng.take(seq * d), rng.take(seq * d));
    let (q, k, v) = (
        device(&dev, &[seq, d], &qs),
        device(&dev, &[seq, d], &ks),
        device(&dev, &[seq, d], &vs),
    );
    let mut out = device(&dev, &[seq, d], &vec![0.0f32; seq * d]);
    let mut want = host(&[seq, d], &vec![0.0f32; seq * d]);
    let grid = [seq.div_ceil(16) as u32];
    attention::attention::<16, 16, 64>::launch(&dev, grid, (&q, &k, &v, &mut out, 0.125))
        .expect("launch");
    attention::attention::<16, 16, 64>::interpret(
        grid,
        (
            &host(&[seq, d], &qs),
            &host(&[seq, d], &ks),
            &host(&[seq, d], &vs),
            &mut want,
            0.125,
        ),
    )
    .expect("interpret");
    assert_same("attention", &out, &want);
}

#[test]
fn packed_sequences_equal_the_interpreter_and_bad_windows_are_errors() {
    let dev = Device::cpu();
    let mut rng = Inputs::default();
    let cu = packed::cumulative_lengths();
    let (rows, d, batch) = (*cu.last().unwrap() as usize, 64, cu.len() - 1);
    let xs = rng.take(rows * d);
    let x = device(&dev, &[rows, d], &xs);
    let lengths = device(&dev, &[cu.len()], &cu);
    let mut out = device(&dev, &[batch, d], &vec![0.0f32; batch * d]);
    let mut want = host(&[batch, d], &vec![0.0f32; batch * d]);
    let grid = [batch as u32];
    packed::mean_pool::<16, 64>::launch(&dev, grid, (&x, &lengths, &mut out)).expect("launch");
    packed::mean_pool::<16, 64>::interpret(
        grid,
        (&host(&[rows, d], &xs), &host(&[cu.len()], &cu), &mut want),
    )
    .expect("interpret");
    assert_same("mean_pool", &out, &want);
    // Lengths that go down make a window of negative extent: the launch's
    // error names the view and says what is wrong.
    let bad = device(&dev, &[3], &[0, 20, 10]);
    let e = packed::mean_pool::<16, 64>::launch(&dev, [2], (&x, &bad, &mut out)).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("program (1, 0, 0)")
            && text.contains("partition_view")
            && text
                .contains("a partition view's window at a negative offset or of a negative extent"),
        "{text}"
    );
}

/// Every PTX image the macro embedded for the example kernels, for every
/// specialization and sm target, assembles with `ptxas -arch=<sm>`; every
/// HSACO image is a linked AMDGPU ELF code object that `llvm-objdump`
/// disassembles, with the kernel in it; every host image is a shared object
/// for an instruction-set level of this architecture, with the kernel in it
/// and nothing to import but C library functions.
#[test]
fn every_embedded_image_is_accepted_by_the_vendor_tools() {
    use tile::meta::KernelInfo;
    use tile::ImageKind;
    use tile_codegen::tools;
    let infos: [&KernelInfo; 16] = [
        &vector_add::vector_add::<1024>::INFO,
        &softmax::softmax::<4, 256>::INFO,
        &layernorm::layernorm::<8, 384>::INFO,
        &layernorm_backward::layernorm_backward::<256, 4>::INFO,
        &layernorm_backward::layernorm_backward_dwdb::<4, 256>::INFO,
        &matmul::matmul::<32, 32, 16>::INFO,
        &matmul::matmul_f16::<32, 32, 16>::INFO,
        &matmul::matmul_f16_large::<128, 128, 64>::INFO,
        &matmul::matmul_bf16_large::<128, 128, 64>::INFO,
        &persistent::matmul_persistent::<64, 64, 32, 4>::INFO,
        &grouped::grouped_matmul::<64, 64, 32>::INFO,
        &transpose::transpose::<32, 32>::INFO,
        &transpose::transpose_lview::<224, 160, 32, 32>::INFO,
        &packed::mean_pool::<16, 64>::INFO,
        &attention::attention::<16, 16, 64>::INFO,
        &attention::attention_f16::<64, 32, 64>::INFO,
    ];
    let levels: Vec<&str> = tile::runtime::cpu::HostIsa::for_this_architecture()
        .iter()
        .map(|isa| isa.name())
        .collect();
    let mut expected = vec![
        "sm_80",
        "sm_86",
        "sm_89",
        "sm_90",
        "gfx90a",
        "gfx942",
        "gfx9-4-generic",
        "gfx1100",
        "gfx12-generic",
    ];
    expected.extend(&levels);
    // The 8-row softmax and layernorm are built for the host only, the f16
    // attention for every target but gfx1100; the rest for all.
    let host_only = |name: &str, label: &str| {
        matches!(
            (name, label),
            ("softmax", "BR=8,BC=256") | ("layernorm", "BR=8,BC=384")
        )
    };
    let mut tensor_cores: Vec<&str> = expected[..6].to_vec();
    tensor_cores.extend(&levels);
    // The persistent matmul names its targets: the defaults before the
    // generic ones, and sm_90a for wgmma; the tutorial-sized matmuls the
    // current generation's tensor cores too: sm_100a's tcgen05.mma,
    // sm_120a's mma.sync, gfx950's and gfx1200's MFMA and WMMA.
    let mut with_hopper = vec![
        "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "gfx90a", "gfx942", "gfx1100",
    ];
    with_hopper.extend(&levels);
    let mut current = with_hopper.clone();
    current.insert(5, "sm_100a");
    current.insert(6, "sm_120a");
    current.insert(9, "gfx950");
    current.insert(11, "gfx1200");
    let mut checked = 0;
    for info in infos {
        for spec in info.specializations {
            let targets: Vec<&str> = spec.images.iter().map(|i| i.target).collect();
            let want = if host_only(info.name, spec.label) {
                &levels
            } else if info.name == "attention_f16" {
                &tensor_cores
            } else if info.name.ends_with("_large") {
                &current
            } else if info.name == "matmul_persistent" {
                &with_hopper
            } else {
                &expected
            };
            assert_eq!(&targets, want, "{} ({})", info.name, spec.label);
            for image in spec.images {
                match image.kind {
                    ImageKind::Ptx => {
                        let sm = tile_codegen::Sm::ALL
                            .into_iter()
                            .find(|s| s.name() == image.target)
                            .expect("an sm target");
                        let ptx = std::str::from_utf8(image.bytes).expect("PTX is text");
                        tools::assemble_ptx(ptx, sm)
                            .unwrap_or_else(|e| panic!("{} ({}): {e}", info.name, spec.label));
                    }
                    ImageKind::Hsaco => {
                        assert_eq!(&image.bytes[..4], b"\x7fELF");
                        let listing =
                            tools::disassemble(image.bytes).unwrap_or_else(|e| panic!("{e}"));
                        assert!(
                            listing.contains(&format!("<{}>:", info.name)),
                            "{}",
                            info.name
                        );
                    }
                    ImageKind::Host => {
                        assert_eq!(&image.bytes[..4], b"\x7fELF");
                        let listing =
                            tools::disassemble(image.bytes).unwrap_or_else(|e| panic!("{e}"));
                        assert!(listing.contains("<tile_host_kernel>:"), "{}", info.name);
                        let imports = tools::undefined_dynamic_symbols(image.bytes)
                            .unwrap_or_else(|e| panic!("{e}"));
                        assert!(
                            imports.iter().all(
                                |s| tile_codegen::host::C_LIBRARY_IMPORTS.contains(&s.as_str())
                            ),
                            "{} ({}, {}) imports {imports:?}",
                            info.name,
                            spec.label,
                            image.target
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert_eq!(
        checked,
        13 * expected.len()
            + with_hopper.len()
            + 2 * current.len()
            + tensor_cores.len()
            + 2 * levels.len(),
        "thirteen specializations for the default targets, the persistent matmul for its own and \
         sm_90a, the two tutorial-sized ones for the current generation's too, one for six GPU \
         targets and the host, two for the host"
    );
}

/// The tensor and scalar arguments of `func`: a tensor parameter of shape
/// `shapes[i]` (its dtype from the kernel) with values from `rng`, a scalar
/// parameter `scalar`.
fn host_args(
    func: &tile::ir::Function,
    shapes: &[&[usize]],
    scalar: f32,
    rng: &mut Inputs,
) -> Vec<tile::ir::interp::Arg> {
    use tile::ir::interp::Arg;
    use tile::ir::{Scalar, Type};
    let mut shapes = shapes.iter();
    func.params
        .iter()
        .map(|p| match func.ty(p.value) {
            Type::Tensor(t) => {
                let shape = shapes.next().expect("a shape per tensor parameter");
                let values: Vec<Scalar> = rng
                    .take(shape.iter().product())
                    .into_iter()
                    .map(|v| tile::ir::eval::cast(Scalar::F32(v), t.dtype))
                    .collect();
                Arg::Tensor(HostTensor::from_scalars(t.dtype, shape, &values).expect("tensor"))
            }
            Type::Scalar(d) => Arg::Scalar(tile::ir::eval::cast(Scalar::F32(scalar), *d)),
            other => panic!("a parameter of type {other}"),
        })
        .collect()
}

/// Every specialization of every example kernel, as the macro built its tile
/// IR, compiled by the host back end (`tile_codegen::host`) and run over
/// shapes with partial edge tiles: byte-identical to the interpreter.
#[test]
fn every_example_on_the_host_back_end_equals_the_interpreter() {
    use tile::ir::interp;
    use tile::meta::KernelInfo;
    use tile::runtime::cpu::{HostIsa, HostLibrary};
    use tile::LaunchArg;
    use tile_codegen::host;
    use tile_codegen::CodegenOptions;
    let isa = HostIsa::best_here().expect("host code runs on this CPU");
    const ROWS: usize = 37;
    const COLS: usize = 200;
    const SEQ: usize = 45;
    const M: usize = 70;
    const N: usize = 45;
    const K: usize = 50;
    // A kernel, its tensor shapes and the extents its grid covers.
    type Case = (&'static KernelInfo, Vec<&'static [usize]>, [usize; 2]);
    let cases: [Case; 9] = [
        (
            &vector_add::vector_add::<1024>::INFO,
            vec![&[5000]; 3],
            [5000, 1],
        ),
        (
            &softmax::softmax::<4, 256>::INFO,
            vec![&[ROWS, COLS]; 2],
            [ROWS, 1],
        ),
        (
            &layernorm::layernorm::<8, 384>::INFO,
            vec![&[ROWS, COLS], &[COLS], &[COLS], &[ROWS, COLS]],
            [ROWS, 1],
        ),
        (
            &matmul::matmul::<32, 32, 16>::INFO,
            vec![&[M, K], &[K, N], &[M, N]],
            [M, N],
        ),
        (
            &matmul::matmul_f16::<32, 32, 16>::INFO,
            vec![&[M, K], &[K, N], &[M, N]],
            [M, N],
        ),
        (
            &transpose::transpose::<32, 32>::INFO,
            vec![&[M, N], &[N, M]],
            // Its first grid axis walks the columns of `x`.
            [N, M],
        ),
        (
            &transpose::transpose_lview::<224, 160, 32, 32>::INFO,
            vec![&[224, 160], &[160, 224]],
            [224, 160],
        ),
        (
            &attention::attention::<16, 16, 64>::INFO,
            vec![&[SEQ, 64]; 4],
            [SEQ, 1],
        ),
        (
            &attention::attention_f16::<64, 32, 64>::INFO,
            vec![&[SEQ, 64]; 4],
            [SEQ, 1],
        ),
    ];
    let mut rng = Inputs::default();
    let mut ran = 0;
    for (info, shapes, extent) in cases {
        for spec in info.specializations {
            let func = tile::ir::text::parse_function(spec.ir).expect("the embedded IR parses");
            let block = |name: &str| {
                let at = info.const_params.iter().position(|p| *p == name);
                at.map_or(1, |i| spec.values[i] as usize)
            };
            // Each kernel's first grid axis tiles rows (BLOCK, BR, BM) and
            // its second columns (BN).
            let first = ["BLOCK", "BR", "BM"]
                .iter()
                .map(|p| block(p))
                .max()
                .unwrap_or(1);
            let grid = [
                extent[0].div_ceil(first) as u32,
                extent[1].div_ceil(block("BN")) as u32,
                1,
            ];
            let args = host_args(&func, &shapes, 0.125, &mut rng);
            let mut want = args.clone();
            interp::run(&func, grid, &mut want).expect("the interpreter runs");
            let mut got = args;
            let image = host::compile(&func, isa, &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("{} ({}): {e}", info.name, spec.label));
            // SAFETY: `image` is what `host::compile` produced for `func`,
            // with its own list of checks.
            let library = unsafe {
                HostLibrary::load(
                    image.shared_object(),
                    isa,
                    func.clone(),
                    image.checks().to_vec(),
                )
            }
            .expect("the host code loads");
            let mut launch: Vec<LaunchArg<'_>> = got.iter_mut().map(LaunchArg::from).collect();
            let result = library.run(grid, &mut launch);
            drop(launch);
            match result {
                Ok(()) => {
                    ran += 1;
                    assert!(
                        got == want,
                        "{} ({}): the host back end differs from the interpreter",
                        info.name,
                        spec.label
                    );
                }
                Err(e) => panic!("{} ({}): {e}", info.name, spec.label),
            }
        }
    }
    assert_eq!(ran, 12, "every specialization of every example");
}

/// The f16 attention's sm_80 PTX computes both products on tensor cores:
/// per k-step, 2×2 blocks per warp for the scores (64×32, four steps of
/// D = 64) and 2×4 for the output (64×64, two steps of 32 keys).
#[test]
fn attention_f16_uses_tensor_cores_for_both_products() {
    let info = &attention::attention_f16::<64, 32, 64>::INFO;
    let spec = &info.specializations[0];
    let ptx = spec
        .images
        .iter()
        .find(|i| i.target == "sm_80")
        .map(|i| std::str::from_utf8(i.bytes).expect("PTX is text"))
        .expect("an sm_80 image");
    let mma = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
    assert_eq!(ptx.matches(mma).count(), 4 * 4 + 8 * 2);
    assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
}
