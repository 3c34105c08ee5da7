//! The runtime's CUDA and HIP paths, unchanged, on a machine without a GPU:
//! the driver stand-ins (`tile-standin`) are put on `LD_LIBRARY_PATH` as
//! `libcuda.so` and `libamdhip64.so`, so `Device::best()` finds a "CUDA"
//! device and `Device::hip(0)` a "HIP" one, and every example kernel runs
//! on each through `tile-runtime`'s device memory, module loading, argument
//! packing, launch and status record: its sm_80 PTX and its gfx942 code
//! object checked by the stand-ins as the drivers check them, and executed
//! through the emulation target. The results must pass the examples' checks
//! and equal the CPU device's bit for bit.
//!
//! A kernel that prints (`show`) gives the CPU device's lines on each, read
//! back from the print area after its status record.
//!
//! The autotuner runs there too: it times `copy`'s two specializations on
//! each stand-in device, from copies of the output in device memory.
//!
//! A second stand-in reports compute capability 9.0: the matmuls run its
//! sm_90 PTX, and the tutorial-sized ones sm_90a's, on `wgmma` (one with
//! its operands copied by the TMA, through the tensor maps the runtime
//! builds with the stand-in's `cuTensorMapEncodeTiled`), the FP8 matmul
//! sm_90a's on `mma.sync.m16n8k32`, and the FP8 and TF32 linear layers
//! (`x · wᵀ`) sm_90a's on `wgmma.m64nNk32` and `m64nNk8`, their operands
//! copied by the TMA too. A third
//! reports 10.0, a Blackwell B200: every example runs there as a binary
//! built for the default targets does, on sm_90's PTX.
//!
//! Driver libraries are opened once per process, so the examples run in
//! child processes (this test binary again, running the ignored tests
//! [`on_the_stand_ins`] and [`on_a_hopper_stand_in`]) with the environment
//! set.

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
#[path = "support/standin_child.rs"]
mod standin_child;
#[path = "../examples/common/standin_images.rs"]
mod standin_images;
#[path = "../examples/kernels/transpose.rs"]
mod transpose;
#[path = "../examples/kernels/vector_add.rs"]
mod vector_add;

use common::{Example, Inputs};
use standin_images::{matmuls, tutorial_matmuls, write_images, BLACKWELL, HOPPER, NEWEST, TARGETS};
use tile::meta::KernelInfo;
use tile::{tile_kernel, Device, Error, KernelCode, Tensor};
use tile_codegen::{Gfx, Target};

/// The name of the child test.
const CHILD: &str = "on_the_stand_ins";

/// The name of the Hopper child test.
const HOPPER_CHILD: &str = "on_a_hopper_stand_in";

/// The name of the Blackwell child test.
const BLACKWELL_CHILD: &str = "on_a_blackwell_stand_in";

/// The name of the RTX 50 (compute capability 12.0) child test.
const SM120_CHILD: &str = "on_an_sm120_stand_in";

/// The name of the child test of CDNA 4 and RDNA 4 stand-ins.
const NEWEST_AMD_CHILD: &str = "on_the_newest_amd_stand_ins";

/// A copy whose unmasked accesses carry bounds checks: a grid one block
/// too long fails the check of the load. Its two specializations are the
/// autotuner's candidates on the stand-ins.
#[tile_kernel(configs(B = 4), configs(B = 8))]
fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
}

/// A kernel that prints a line per program and one per element: on a GPU
/// its lines come back from the print area after the status record.
#[tile_kernel(configs(B = 8))]
fn show<const B: usize>(x: &Tensor<f32>) {
    let pid = program_id(0);
    device_print!("program {} of {}", pid, num_programs(0));
    device_print!("x = {}", partition_view(x, [B]).load(pid));
}

/// The generic AMD processors among the default targets.
const GENERIC: [Target; 2] = [
    Target::Amdgpu(Gfx::Gfx94Generic),
    Target::Amdgpu(Gfx::Gfx12Generic),
];

/// Every kernel of the examples, [`copy`] and [`show`].
fn kernels() -> Vec<&'static KernelInfo> {
    let mut all = standin_images::example_kernels();
    all.extend([&show::<8>::INFO, &copy::<4>::INFO]);
    all
}

#[test]
fn the_examples_run_through_the_driver_stand_ins() {
    use tile::runtime::driver::GpuApi;
    let dir = standin_child::standin_dir("standin", &[GpuApi::Cuda, GpuApi::Hip]);
    let images = write_images(&dir.0, &kernels(), &TARGETS);
    assert_eq!(
        images, 65,
        "thirty-two specializations (the examples, `copy`'s two and `show`) have sm_80 PTX and gfx942 code objects, the TF32 linear layer sm_80 PTX"
    );
    let hopper = write_images(&dir.0, &matmuls(), &HOPPER);
    assert_eq!(
        hopper, 16,
        "nine matmul specializations have sm_90 PTX, the two FP8, the TF32, the TMA, the two tutorial-sized and the persistent ones sm_90a PTX"
    );
    let blackwell = write_images(&dir.0, &kernels(), &BLACKWELL);
    assert_eq!(
        blackwell, 39,
        "the thirty-three have sm_90 PTX, the two tutorial-sized matmuls, the TF32 linear layer and the MXFP8 matmul's three tiles sm_100a PTX too"
    );
    let tma = &matmul::matmul_f16_tma::<128, 128, 64>::INFO;
    let linear_f8 = &matmul::linear_f8::<128, 128, 128>::INFO;
    let linear_tf32 = &matmul::linear_tf32::<128, 128, 32>::INFO;
    assert_eq!(write_images(&dir.0, &[tma, linear_f8], &BLACKWELL[1..]), 2);
    assert_eq!(
        write_images(&dir.0, &[tma, linear_f8, linear_tf32], &NEWEST[..1]),
        3,
        "the TMA matmul and the linear layers have sm_120a PTX, its operands copied by the TMA"
    );
    assert_eq!(
        write_images(&dir.0, &tutorial_matmuls(), &NEWEST),
        6,
        "the two tutorial-sized matmuls have sm_120a PTX, gfx950 and gfx1200 code objects"
    );
    let mxfp8 = &scaled_matmul::matmul_mxfp8::<64, 64, 64>::INFO;
    assert_eq!(
        write_images(&dir.0, &[mxfp8], &NEWEST[..2]),
        6,
        "the MXFP8 matmul's three tiles have sm_120a PTX and gfx950 code objects"
    );
    // Of its sm_100a images, the 128×128 tile's alone multiplies on the
    // block-scaled `tcgen05.mma` (the others' tiles are too narrow for it).
    for spec in mxfp8.specializations {
        let image = spec.images.iter().find(|i| i.target == "sm_100a");
        let ptx = std::str::from_utf8(image.expect("an sm_100a image").bytes).unwrap();
        assert_eq!(
            ptx.contains("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"),
            spec.label == "BM=128,BN=128,BK=64",
            "{}",
            spec.label
        );
    }
    assert_eq!(
        write_images(&dir.0, &[&vector_add::vector_add::<1024>::INFO], &GENERIC),
        2,
        "vector_add, built for the default targets, has gfx9-4-generic and gfx12-generic code objects"
    );
    let scaled = [
        mxfp8,
        &scaled_matmul::matmul_mxfp4::<64, 64, 64>::INFO,
        &scaled_matmul::matmul_nvfp4::<64, 64, 64>::INFO,
        &scaled_matmul::matmul_bf16_mxfp4::<64, 64, 64>::INFO,
    ];
    assert_eq!(
        write_images(&dir.0, &scaled, &GENERIC),
        12,
        "the block-scaled matmuls' six specializations have gfx9-4-generic and gfx12-generic code objects"
    );
    standin_child::run_child(&dir.0, CHILD, &[]);
    standin_child::run_child(&dir.0, HOPPER_CHILD, &[("TILE_STANDIN_SM", "90")]);
    standin_child::run_child(&dir.0, BLACKWELL_CHILD, &[("TILE_STANDIN_SM", "100")]);
    standin_child::run_child(&dir.0, SM120_CHILD, &[("TILE_STANDIN_SM", "120")]);
    for gfx in ["gfx950", "gfx1200"] {
        standin_child::run_child(&dir.0, NEWEST_AMD_CHILD, &[("TILE_STANDIN_GFX", gfx)]);
    }
}

/// Runs `launch` on both devices with the same inputs; their outputs must
/// be equal bit for bit.
fn same_on_both(kernel: &str, gpu: &Device, launch: impl Fn(&Device) -> Tensor<f32>) {
    let read = |t: Tensor<f32>| t.to_vec().expect("read back");
    let (on_gpu, on_cpu) = (read(launch(gpu)), read(launch(&Device::cpu())));
    let differ = on_gpu
        .iter()
        .zip(&on_cpu)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(
        differ, 0,
        "{kernel}: {differ} elements differ from the CPU device's"
    );
}

/// Every example on `dev`, whose kernels must run as `target`'s image,
/// passes its check; softmax and matmul equal the CPU device's results; a
/// kernel's failed bounds check comes back from its status record.
/// Runs every example on `dev`, each kernel on `target`'s image but those
/// `specific` names (by the start of their row), on the target beside it.
fn examples_on(dev: &Device, target: Target, specific: &[(&str, Target)]) {
    let examples: [Example; 13] = [
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
    ];
    // The stand-ins report two multiprocessors (CUDA's attribute, HIP's
    // `multiProcessorCount`): the persistent matmul's grid.
    assert_eq!(dev.multiprocessors(), 2, "{dev}");
    let mut rows = Vec::new();
    for run in examples {
        rows.extend(run(dev, &mut Inputs::default()).expect("the example runs"));
    }
    assert!(
        common::print_table(dev, &rows),
        "an example's check failed on {dev}"
    );
    for row in &rows {
        let name = specific
            .iter()
            .find(|(kernel, _)| row.kernel.starts_with(kernel))
            .map_or(target, |&(_, t)| t)
            .to_string();
        assert!(
            matches!(row.code, KernelCode::Gpu(t) if t == name),
            "{} ran as {}",
            row.kernel,
            row.code
        );
    }

    let mut rng = Inputs::default();
    let (rows, cols) = (37, 200);
    let xs = rng.take(rows * cols);
    same_on_both("softmax", dev, |d| {
        let x = d.tensor_from_slice(&xs, &[rows, cols]).unwrap();
        let mut out = d.zeros::<f32>(&[rows, cols]).unwrap();
        let grid = [rows.div_ceil(4) as u32];
        softmax::softmax::<4, 256>::launch(d, grid, (&x, &mut out)).unwrap();
        out
    });
    let (m, n, k) = (70, 45, 50);
    let (a, b) = (rng.take(m * k), rng.take(k * n));
    same_on_both("matmul", dev, |d| {
        let a = d.tensor_from_slice(&a, &[m, k]).unwrap();
        let b = d.tensor_from_slice(&b, &[k, n]).unwrap();
        let mut c = d.zeros::<f32>(&[m, n]).unwrap();
        let grid = [m.div_ceil(32) as u32, n.div_ceil(32) as u32];
        matmul::matmul::<32, 32, 16>::launch(d, grid, (&a, &b, &mut c)).unwrap();
        c
    });

    let printed = lines_of_show(dev);
    assert_eq!(printed.len(), 3 * 9, "{printed:?}");
    assert_eq!(printed, lines_of_show(&Device::cpu()));

    let x = dev
        .tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])
        .unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[6]).unwrap();
    // An empty grid runs nothing (the driver, which refuses one, is not
    // asked), nor does the empty grid of a zero-length problem, whose
    // tensors own no device memory.
    copy::<4>::launch(dev, [0], (&x, &mut out)).unwrap();
    let empty = dev.tensor_from_slice::<f32>(&[], &[0]).unwrap();
    let mut empty_out: Tensor<f32> = dev.zeros(&[0]).unwrap();
    let grid = [empty.shape()[0].div_ceil(4) as u32];
    copy::<4>::launch(dev, grid, (&empty, &mut empty_out)).unwrap();
    assert_eq!(empty_out.to_vec().unwrap(), Vec::<f32>::new());
    // Programs along an axis `copy` never reads are refused before the
    // driver runs any (it would run this grid, in bounds on axis 0).
    let err = copy::<4>::launch(dev, [1, 2], (&x, &mut out)).unwrap_err();
    assert!(matches!(err, Error::UnreadGridAxis(_)), "{err:?}");
    assert_eq!(out.to_vec().unwrap(), [0.0; 6], "nothing ran");
    let err = copy::<4>::launch(dev, [2], (&x, &mut out)).unwrap_err();
    assert!(matches!(err, Error::DeviceCheck { .. }), "{err:?}");
    // The line of `copy`'s load in this file.
    let line = 1 + include_str!("standin.rs")
        .lines()
        .position(|l| l.contains("store(partition_view(x, [B]).load(pid), pid)"))
        .expect("copy's load");
    assert_eq!(
        err.to_string(),
        format!("kernel `copy` failed on device {dev}: program (1, 0, 0): check 0: `partition_view(..).load(..)` at tests/standin.rs:{line}:59 (`%3 = load %2, %0`, a view of `x`): partition index [1, 0, 0, 0] reaches outside the tensor")
    );
}

/// The lines [`show`] prints on `dev` over three programs, sorted (a GPU's
/// threads write one print's lines in any order).
fn lines_of_show(dev: &Device) -> Vec<String> {
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&lines);
    dev.on_print(move |line| sink.lock().unwrap().push(line.to_string()));
    let values: Vec<f32> = (0..24).map(|i| i as f32 * 0.25).collect();
    let x = dev.tensor_from_slice(&values, &[24]).unwrap();
    show::<8>::launch(dev, [3], (&x,)).unwrap();
    let mut lines = lines.lock().unwrap().clone();
    lines.sort();
    lines
}

#[test]
#[ignore = "run by the_examples_run_through_the_driver_stand_ins, with the stand-ins as the drivers"]
fn on_the_stand_ins() {
    let cuda = Device::best().expect("a device");
    assert_eq!(
        cuda.to_string(),
        "cuda:0",
        "the CUDA stand-in is the best device"
    );
    examples_on(&cuda, TARGETS[0], &[]);
    autotune_on(&cuda);
    let hip = Device::hip(0).expect("the HIP stand-in");
    assert_eq!(hip.to_string(), "hip:0");
    examples_on(&hip, TARGETS[1], &[]);
    autotune_on(&hip);
}

/// The autotuner on a GPU: both of `copy`'s specializations are timed from
/// the output as it was (sevens, in device memory), the chosen one then
/// writes it once, and the choice is reused without timing.
fn autotune_on(dev: &Device) {
    use tile::autotune::{Autotuner, Candidate};
    let dir = standin_child::Scratch(std::env::temp_dir().join(format!(
        "tile-standin-autotune-{dev}-{}",
        std::process::id()
    )));
    let tuner = Autotuner::in_dir(&dir.0).with_progress(|_| {});
    let candidates = [
        Candidate {
            spec: copy::<4>::kernel_spec(),
            grid: [16, 1, 1],
        },
        Candidate {
            spec: copy::<8>::kernel_spec(),
            grid: [8, 1, 1],
        },
    ];
    let values: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let x = dev.tensor_from_slice(&values, &[64]).expect("x");
    for timed in [2, 2] {
        let mut out = dev.tensor_from_slice(&[7.0f32; 64], &[64]).expect("out");
        let mut args = [(&x).into(), (&mut out).into()];
        tuner
            .launch(dev, &[64], &candidates, &mut args)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.to_vec().expect("read back"), values, "{dev}");
        assert_eq!(tuner.timed(), timed, "{dev}: timed once, then reused");
    }
}

/// Compute capability 10.0 (B200): the kernels, built for the default
/// targets, run sm_90's PTX (no sm_90a image runs there), every example
/// passing its check as on the default stand-in.
#[test]
#[ignore = "run by the_examples_run_through_the_driver_stand_ins, with a Blackwell stand-in as the driver"]
fn on_a_blackwell_stand_in() {
    let cuda = Device::best().expect("a device");
    // The tutorial-sized matmuls, the FP8 and TF32 linear layers and the
    // MXFP8 matmul, built for sm_100a, run its images (the TMA ones with
    // their tensor maps; the MXFP8 matmul's 128×128 tile on the block-scaled
    // tcgen05.mma, as `the_examples_run_through_the_driver_stand_ins`
    // checks); every other kernel on sm_90's PTX.
    let tcgen05 = [
        "matmul bf16 128x128x64",
        "matmul f16 128x128x64",
        "matmul f16 TMA 128x128x64",
        "linear f8e4m3",
        "linear tf32",
        "matmul mxfp8",
    ];
    let specific = tcgen05.map(|kernel| (kernel, BLACKWELL[1]));
    examples_on(&cuda, BLACKWELL[0], &specific);
}

/// The tutorial-sized matmuls on `dev` pass their checks, each run as
/// `target`'s image.
fn tutorial_matmuls_on(dev: &Device, target: &'static str) {
    let mut rng = Inputs::default();
    let (m, n, k) = (130, 70, 90);
    let (a, b) = (rng.take(m * k), rng.take(k * n));
    let rows = matmul::run_tutorial(dev, (&a, &b), (m, n, k)).expect("the matmuls run");
    assert!(common::print_table(dev, &rows), "a matmul's check failed");
    let ran: Vec<KernelCode> = rows.iter().map(|r| r.code).collect();
    assert_eq!(ran, [KernelCode::Gpu(target); 2], "{dev}");
}

/// Compute capability 12.0 (RTX 50), which has neither `wgmma` nor
/// tcgen05: the tutorial-sized matmuls, the TMA matmul and the linear
/// layers, built for sm_120a, run its `mma.sync` images (the last three
/// with the TMA's copies, through the tensor maps the runtime builds), and
/// the MXFP8 matmul its block-scaled `mma.sync`; the other matmuls, and a
/// kernel built for the default targets, sm_90's PTX.
#[test]
#[ignore = "run by the_examples_run_through_the_driver_stand_ins, with an RTX 50 stand-in as the driver"]
fn on_an_sm120_stand_in() {
    let cuda = Device::best().expect("a device");
    let rows = matmul::run(&cuda, &mut Inputs::default()).expect("the matmuls run");
    assert!(
        common::print_table(&cuda, &rows),
        "a matmul's check failed on {cuda}"
    );
    let sm120a = [
        "matmul bf16 128x128x64",
        "matmul f16 128x128x64",
        "matmul f16 TMA 128x128x64",
        "linear f8e4m3",
        "linear tf32",
    ];
    for row in &rows {
        let want = match sm120a.iter().any(|k| row.kernel.starts_with(k)) {
            true => "sm_120a",
            false => "sm_90",
        };
        assert_eq!(row.code, KernelCode::Gpu(want), "{}", row.kernel);
    }
    assert_eq!(
        rows.iter()
            .filter(|r| r.code == KernelCode::Gpu("sm_120a"))
            .count(),
        sm120a.len(),
        "every sm_120a kernel ran"
    );
    let rows = vector_add::run(&cuda, &mut Inputs::default()).expect("vector_add runs");
    assert!(
        common::print_table(&cuda, &rows),
        "vector_add's check failed"
    );
    assert!(rows.iter().all(|r| r.code == KernelCode::Gpu("sm_90")));
    scaled_matmuls_on(&cuda, ("sm_120a", "sm_90"));
}

/// The block-scaled matmuls on `dev` pass their checks, the MXFP8 ones
/// (both tiles) run as `native`'s image and the others as `other`'s.
fn scaled_matmuls_on(dev: &Device, (native, other): (&'static str, &'static str)) {
    let rows = scaled_matmul::run(dev, &mut Inputs::default()).expect("the matmuls run");
    assert!(
        common::print_table(dev, &rows),
        "a scaled matmul's check failed"
    );
    for row in &rows {
        let want = match row.kernel.starts_with("matmul mxfp8") {
            true => native,
            false => other,
        };
        assert_eq!(row.code, KernelCode::Gpu(want), "{}", row.kernel);
    }
}

/// A CDNA 4 or RDNA 4 stand-in (`TILE_STANDIN_GFX`): the kernels built for
/// its processor, the tutorial-sized matmuls and on gfx950 the MXFP8
/// matmul, run its code objects and pass their checks; a kernel built for
/// the default targets has no image of its processor and runs its
/// family's generic one (`gfx9-4-generic`, `gfx12-generic`).
#[test]
#[ignore = "run by the_examples_run_through_the_driver_stand_ins, with a CDNA 4 or RDNA 4 stand-in as the driver"]
fn on_the_newest_amd_stand_ins() {
    let gfx = std::env::var("TILE_STANDIN_GFX").expect("the stand-in's processor");
    let hip = Device::hip(0).expect("the HIP stand-in");
    let target = match gfx.as_str() {
        "gfx950" => "gfx950",
        "gfx1200" => "gfx1200",
        other => panic!("{other} is not a processor the newest stand-ins are"),
    };
    tutorial_matmuls_on(&hip, target);
    let generic = tile_abi::amd_generic::family_of(target).expect("a generic family");
    // gfx950 runs the MXFP8 matmuls on its scaled MFMA (the 128×64 tile) and
    // its bf16 MFMA (the 64×64 one); gfx1200's is not among their targets.
    let mxfp8 = if target == "gfx950" { target } else { generic };
    scaled_matmuls_on(&hip, (mxfp8, generic));
    let rows = vector_add::run(&hip, &mut Inputs::default()).expect("vector_add runs");
    assert!(
        common::print_table(&hip, &rows),
        "vector_add's check failed"
    );
    assert!(
        rows.iter().all(|r| r.code == KernelCode::Gpu(generic)),
        "vector_add on {gfx} ran as {}",
        rows[0].code
    );
}

#[test]
#[ignore = "run by the_examples_run_through_the_driver_stand_ins, with a Hopper stand-in as the driver"]
fn on_a_hopper_stand_in() {
    let cuda = Device::best().expect("a device");
    let rows = matmul::run(&cuda, &mut Inputs::default()).expect("the matmuls run");
    assert!(
        common::print_table(&cuda, &rows),
        "a matmul's check failed on {cuda}"
    );
    let ran: Vec<String> = rows.iter().map(|r| r.code.to_string()).collect();
    let want: Vec<String> = [
        "sm_90", "sm_90", "sm_90a", "sm_90a", "sm_90a", "sm_90a", "sm_90a", "sm_90a",
    ]
    .iter()
    .map(|t| KernelCode::Gpu(t).to_string())
    .collect();
    assert_eq!(
        ran, want,
        "compute capability 9.0 runs wgmma's images where built"
    );
    // The persistent matmul loops over its tiles on wgmma, one program per
    // multiprocessor the stand-in reports.
    let rows = persistent::run(&cuda, &mut Inputs::default()).expect("the matmul runs");
    assert!(common::print_table(&cuda, &rows), "its check failed");
    assert_eq!(rows[0].code, KernelCode::Gpu("sm_90a"));
    assert!(rows[0].shape.ends_with("grid 2"), "{}", rows[0].shape);
    // Rows of 90 f16 elements (180 bytes) are no tensor map's: the launch
    // of the TMA kernel says which argument breaks which requirement, and
    // runs nothing.
    let a = cuda.zeros::<tile::f16>(&[130, 90]).unwrap();
    let b = cuda.zeros::<tile::f16>(&[90, 72]).unwrap();
    let mut c = cuda.zeros::<f32>(&[130, 72]).unwrap();
    let error = matmul::matmul_f16_tma::<128, 128, 64>::launch(&cuda, [2, 1], (&a, &b, &mut c))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "kernel `matmul_f16_tma`, argument `a` on device cuda:0: expected a tensor the TMA can copy from (the kernel's image for this device takes a tensor map of it), found f16 of shape [130, 90] and strides [90, 1]: the tensor's row stride is 180 bytes; a tensor map needs a positive multiple of 16 below 2^40"
    );
}
