//! The CPU device runs a kernel's embedded host code: what it reports when
//! the code is what runs, and how a failure inside it comes back.

use tile::runtime::cpu::HostIsa;
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
    assert_eq!(
        err.to_string(),
        "kernel `copy` failed on device cpu: program (1, 0, 0): `%3 = load %2, %0`: partition [1] is partially outside the tensor (use the masked form)"
    );
    assert_eq!(out.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 0.0, 0.0]);
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
    // On the CPU the failing launch reports at once, and nothing is pending.
    let err = copy::<4>::launch_on(&stream, [2], (&x, &mut a)).unwrap_err();
    assert!(matches!(err, Error::Execution { .. }), "{err:?}");
    stream.synchronize().unwrap();
    assert_eq!(b.to_vec().unwrap(), [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]);
    // An empty grid queues nothing.
    let before = a.to_vec().unwrap();
    twice::<4>::launch_on(&stream, [0], (&x, &mut a)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(a.to_vec().unwrap(), before);
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
