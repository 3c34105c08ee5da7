//! The CPU device runs a kernel's embedded host code: what it reports when
//! the code is what runs, how a failure inside it comes back, and the grid
//! rules of the generated launchers (empty grids, zero-length tensors, axes
//! the kernel never reads), which `interpret` keeps too.

use tile::ir::interp::HostTensor;
use tile::meta::InterpretError;
use tile::runtime::cpu::HostIsa;
use tile::runtime::UnreadGridAxis;
use tile::{tile_kernel, Device, Error, KernelCode, Tensor};

#[tile_kernel(configs(B = 4))]
fn copy<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(out, [B]).store(partition_view(x, [B]).load(pid), pid);
}

#[test]
fn the_cpu_device_runs_the_best_host_code_this_cpu_supports() {
    let dev = Device::cpu();
    let code = dev.kernel_code(&copy::<4>::kernel_spec()).unwrap();
    match HostIsa::best_here() {
        Some(isa) => assert_eq!(code, KernelCode::Host(isa)),
        None => assert_eq!(code, KernelCode::Interpreter),
    }
    assert_eq!(
        code.to_string(),
        HostIsa::best_here().map_or("interpreter", HostIsa::name)
    );
}

#[test]
fn a_failing_access_in_host_code_is_an_execution_error_and_writes_nothing_past_it() {
    let dev = Device::cpu();
    let x = dev
        .tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])
        .unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[6]).unwrap();
    let err = copy::<4>::launch(&dev, [2], (&x, &mut out)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    // The error leads with the Rust expression, where it is (the `load` of
    // `copy` above) and the tensor parameter, then the op of the tile IR.
    assert_eq!(
        err.to_string(),
        "kernel `copy` failed on device cpu: program (1, 0, 0): `partition_view(..).load(..)` at tests/cpu_device.rs:15:59 (`%3 = load %2, %0`, a view of `x`): partition [1] is partially outside the tensor (use the masked form)"
    );
    assert_eq!(out.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
}

#[test]
fn the_interpreter_names_the_same_rust_location_and_parameter() {
    let hx = HostTensor::from_vec(&[6], vec![1.0f32; 6]).unwrap();
    let mut hout = HostTensor::from_vec(&[6], vec![0.0f32; 6]).unwrap();
    let err = copy::<4>::interpret([2], (&hx, &mut hout)).unwrap_err();
    assert!(matches!(err, InterpretError::Run(_)), "{err:?}");
    assert!(
        err.to_string().starts_with(
            "program (1, 0, 0): `partition_view(..).load(..)` at tests/cpu_device.rs:15:59 (`%3 = load %2, %0`, a view of `x`): partition [1] (tile [4]) is partially outside the tensor"
        ),
        "{err}"
    );
    // The embedded IR carries the locations, in the text form's `loc(..)`.
    assert!(
        copy::<4>::ir().contains(
            r#"%3 = load %2[%0] : tile<4xf32> loc("tests/cpu_device.rs":15:59, "partition_view(..).load(..)")"#
        ),
        "{}",
        copy::<4>::ir()
    );
}

#[tile_kernel(configs(B = 4))]
fn twice<const B: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let v = partition_view(x, [B]).load_masked(pid);
    partition_view(out, [B]).store_masked(v * 2.0, pid);
}

#[test]
fn launches_on_a_stream_run_in_order_and_a_cpu_stream_reports_at_once() {
    let dev = Device::cpu();
    let x = dev
        .tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])
        .unwrap();
    let mut a: Tensor<f32> = dev.zeros(&[6]).unwrap();
    let mut b: Tensor<f32> = dev.zeros(&[6]).unwrap();
    let stream = dev.stream().unwrap();
    assert_eq!(stream.device().kind(), dev.kind());
    twice::<4>::launch_on(&stream, [2], (&x, &mut a)).unwrap();
    twice::<4>::launch_on(&stream, [2], (&a, &mut b)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(b.to_vec().unwrap(), [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);
    // An empty grid queues nothing.
    let before = a.to_vec().unwrap();
    twice::<4>::launch_on(&stream, [0], (&x, &mut a)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(a.to_vec().unwrap(), before);
    // On the CPU the failing launch reports at once; then the stream runs
    // nothing more, and says why.
    let err = copy::<4>::launch_on(&stream, [2], (&x, &mut a)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    let first = err.to_string();
    let err = twice::<4>::launch_on(&stream, [2], (&x, &mut b)).unwrap_err();
    assert!(matches!(err, Error::StreamFailed { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("kernel `twice` not launched on device cpu: an earlier launch on this stream failed ({first}); the stream runs nothing more, create a new one")
    );
    assert_eq!(b.to_vec().unwrap(), [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);
    assert!(matches!(
        stream.synchronize(),
        Err(Error::StreamFailed { refused, .. }) if refused == "synchronize"
    ));
    // A new stream runs.
    let fresh = dev.stream().unwrap();
    twice::<4>::launch_on(&fresh, [2], (&x, &mut b)).unwrap();
    fresh.synchronize().unwrap();
}

/// A zero-length problem launches the grid computed from its length, which
/// is empty: nothing runs and the launch succeeds, on the host code and in
/// the interpreter alike.
#[test]
fn zero_length_tensors_launch_an_empty_grid_that_runs_nothing() {
    let dev = Device::cpu();
    assert!(matches!(
        dev.kernel_code(&twice::<4>::kernel_spec()).unwrap(),
        KernelCode::Host(_)
    ));
    let n = 0usize;
    let x = dev.tensor_from_slice::<f32>(&[], &[n]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[n]).unwrap();
    let grid = [n.div_ceil(4) as u32];
    twice::<4>::launch(&dev, grid, (&x, &mut out)).unwrap();
    assert_eq!(out.shape(), [0]);
    assert_eq!(out.to_vec().unwrap(), Vec::<f32>::new());
    let stream = dev.stream().unwrap();
    twice::<4>::launch_on(&stream, grid, (&x, &mut out)).unwrap();
    stream.synchronize().unwrap();
    // A 2-D problem with no rows: the grid's first axis is empty.
    let (m, k, n) = (0usize, 8usize, 4usize);
    let a = dev.tensor_from_slice::<f32>(&[], &[m, k]).unwrap();
    let b = dev.zeros::<f32>(&[k, n]).unwrap();
    let mut c: Tensor<f32> = dev.zeros(&[m, n]).unwrap();
    let grid = [m.div_ceil(4) as u32, n.div_ceil(4) as u32];
    rows_times::<4, 4, 8>::launch(&dev, grid, (&a, &b, &mut c)).unwrap();
    assert_eq!(c.to_vec().unwrap(), Vec::<f32>::new());
    // The interpreter, on host tensors of no elements.
    let x = HostTensor::from_vec(&[0], Vec::<f32>::new()).unwrap();
    let mut out = HostTensor::from_vec(&[0], Vec::<f32>::new()).unwrap();
    twice::<4>::interpret([0], (&x, &mut out)).unwrap();
    assert_eq!(out.shape(), [0]);
}

/// `a · b` tile by tile: a kernel over a 2-D grid.
#[tile_kernel(configs(BM = 4, BN = 4, BK = 8))]
fn rows_times<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f32, 2>,
    b: &Tensor<f32, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let ta = partition_view(a, [BM, BK]).load_masked(pid_m, 0);
    let tb = partition_view(b, [BK, BN]).load_masked(0, pid_n);
    let acc = dot(ta, tb, zeros::<f32>([BM, BN]));
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// Several programs along an axis the kernel never reads would repeat each
/// other's work: the launcher refuses the grid before anything runs, naming
/// the kernel, the axis and the grid, and `interpret` refuses it the same
/// way; one program along it, or an empty grid, is fine.
#[test]
fn a_grid_axis_the_kernel_never_reads_is_refused_before_anything_runs() {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&[1.0f32; 8], &[8]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[8]).unwrap();
    let message = "kernel `twice`: the grid [2, 3, 1] has 3 programs along axis 1, but the kernel never reads `program_id(1)`, so they would all do the same work; use 1 there";
    let err = twice::<4>::launch(&dev, [2, 3], (&x, &mut out)).unwrap_err();
    let Error::UnreadGridAxis(unread) = &err else {
        panic!("{err:?}");
    };
    assert_eq!(
        unread,
        &UnreadGridAxis {
            kernel: "twice".into(),
            grid: [2, 3, 1],
            axis: 1,
            programs: 3
        }
    );
    assert_eq!(err.to_string(), message);
    let stream = dev.stream().unwrap();
    let err = twice::<4>::launch_on(&stream, [2, 1, 5], (&x, &mut out)).unwrap_err();
    assert!(err.to_string().contains("5 programs along axis 2"), "{err}");
    assert_eq!(out.to_vec().unwrap(), [0.0; 8], "nothing ran");
    // Axes of one program are no repetition, nor is an empty one.
    twice::<4>::launch(&dev, [2, 1, 1], (&x, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), [2.0; 8]);
    twice::<4>::launch(&dev, [2, 1, 0], (&x, &mut out)).unwrap();
    // The rule does not depend on the data: an empty grid that would repeat
    // its programs if it had any is refused too (a zero-length test input
    // does not hide the mistake).
    let err = twice::<4>::launch(&dev, [2, 0, 3], (&x, &mut out)).unwrap_err();
    assert!(matches!(err, Error::UnreadGridAxis(_)), "{err:?}");
    // A 2-D grid for a kernel that reads both axes.
    let a = dev.tensor_from_slice(&[1.0f32; 8 * 8], &[8, 8]).unwrap();
    let b = dev.tensor_from_slice(&[1.0f32; 8 * 8], &[8, 8]).unwrap();
    let mut c: Tensor<f32> = dev.zeros(&[8, 8]).unwrap();
    rows_times::<4, 4, 8>::launch(&dev, [2, 2], (&a, &b, &mut c)).unwrap();
    assert_eq!(c.to_vec().unwrap(), [8.0; 64]);
    // The interpreter keeps the rule.
    let hx = HostTensor::from_vec(&[8], vec![1.0f32; 8]).unwrap();
    let mut hout = HostTensor::from_vec(&[8], vec![0.0f32; 8]).unwrap();
    let err = twice::<4>::interpret([2, 3], (&hx, &mut hout)).unwrap_err();
    assert!(matches!(err, InterpretError::UnreadGridAxis(_)), "{err:?}");
    assert_eq!(err.to_string(), message);
    assert_eq!(hout.to_vec::<f32>().unwrap(), [0.0; 8], "nothing ran");
}

/// A crate with kernels is rebuilt when `TILE_TARGETS` or `TILE_DUMP`
/// changes: rustc records both in this test's dep-info, which cargo checks
/// before it reuses a build.
#[test]
fn the_build_depends_on_the_variables_the_macro_reads() {
    let depinfo = std::env::current_exe().unwrap().with_extension("d");
    let text =
        std::fs::read_to_string(&depinfo).unwrap_or_else(|e| panic!("{}: {e}", depinfo.display()));
    for variable in ["TILE_TARGETS", "TILE_DUMP"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("# env-dep:{variable}"))),
            "{variable} is not in {}",
            depinfo.display()
        );
    }
}

/// Rust's float constants, by their `std`/`core` paths (or `f32::consts`),
/// rounded once to the dtype named; an unknown one is a compile error
/// listing the others (`tile-macros`' ui tests).
#[tile_kernel(configs(B = 4))]
fn circles<const B: usize>(r: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let r = partition_view(r, [B]).load_masked(pid);
    let area = r * r * std::f32::consts::PI + core::f32::consts::E * f32::consts::FRAC_1_SQRT_2;
    partition_view(out, [B]).store_masked(area, pid);
}

#[test]
fn float_constants_are_rusts() {
    let dev = Device::cpu();
    let rs = [0.0f32, 1.0, 2.5, 10.0, 0.125];
    let r = dev.tensor_from_slice(&rs, &[rs.len()]).unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[rs.len()]).unwrap();
    circles::<4>::launch(&dev, [2], (&r, &mut out)).unwrap();
    let want: Vec<f32> = rs
        .iter()
        .map(|&r| {
            r * r * std::f32::consts::PI + std::f32::consts::E * std::f32::consts::FRAC_1_SQRT_2
        })
        .collect();
    assert_eq!(out.to_vec().unwrap(), want);
}

#[test]
fn the_cpu_device_runs_one_program_per_thread_at_once() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(Device::cpu().multiprocessors() as usize, threads);
}

/// A kernel whose const parameter is called `G`, as a group size often is:
/// the launchers' own const parameter (the grid's rank) must not clash.
#[tile_kernel(configs(G = 2))]
fn scaled<const G: usize>(x: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let t = partition_view(x, [G]).load(pid) * G as f32;
    partition_view(out, [G]).store(t, pid);
}

#[test]
fn a_const_parameter_may_share_a_name_with_the_launchers_generics() {
    let dev = Device::cpu();
    let x = dev
        .tensor_from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4])
        .unwrap();
    let mut out: Tensor<f32> = dev.zeros(&[4]).unwrap();
    scaled::<2>::launch(&dev, [2], (&x, &mut out)).unwrap();
    assert_eq!(out.to_vec().unwrap(), [2.0, 4.0, 6.0, 8.0]);
    let mut queued: Tensor<f32> = dev.zeros(&[4]).unwrap();
    let stream = dev.stream().unwrap();
    scaled::<2>::launch_on(&stream, [2], (&x, &mut queued)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(queued.to_vec().unwrap(), [2.0, 4.0, 6.0, 8.0]);
    let hx = HostTensor::from_vec(&[4], vec![1.0f32; 4]).unwrap();
    let mut hout = HostTensor::from_vec(&[4], vec![0.0f32; 4]).unwrap();
    scaled::<2>::interpret([2], (&hx, &mut hout)).unwrap();
    assert_eq!(hout.to_vec::<f32>().unwrap(), [2.0; 4]);
}
