//! The five example kernels build, and their metadata is reachable.
use tile::tile_kernel;

#[tile_kernel(configs(BLOCK = 1024), configs(BLOCK = 256), num_warps = 4, targets = "sm_80,host")]
fn vector_add<const BLOCK: usize>(x: &Tensor<f32>, y: &Tensor<f32>, out: &mut Tensor<f32>) {
    let pid = program_id(0);
    let px = partition_view(x, [BLOCK]);
    let py = partition_view(y, [BLOCK]);
    partition_view(out, [BLOCK]).store_masked(px.load_masked(pid) + py.load_masked(pid), pid);
}

#[tile_kernel(configs(BR = 2, BC = 128))]
pub fn softmax<const BR: usize, const BC: usize>(x: &Tensor<f32, 2>, out: &mut Tensor<f32, 2>) {
    #[tile_fn]
    fn row_softmax(t: Tile) -> Tile {
        let e = (t - t.max_along_keepdim(1)).exp();
        e / e.sum_keepdim(1)
    }
    let pid = program_id(0);
    let t = partition_view(x, [BR, BC]).load_masked_with(Padding::NegInf, pid, 0);
    partition_view(out, [BR, BC]).store_masked(row_softmax(t), pid, 0);
}

#[tile_kernel(configs(BM = 32, BN = 32, BK = 16), configs(BM = 64, BN = 64, BK = 32))]
fn matmul<const BM: usize, const BN: usize, const BK: usize>(
    a: &Tensor<f16, 2>,
    b: &Tensor<f16, 2>,
    c: &mut Tensor<f32, 2>,
) {
    let (pid_m, pid_n) = (program_id(0), program_id(1));
    let va = partition_view(a, [BM, BK]);
    let vb = partition_view(b, [BK, BN]);
    let mut acc = zeros::<f32>([BM, BN]);
    for kk in 0..cdiv(a.dim(1), BK) {
        acc = dot(va.load_masked(pid_m, kk), vb.load_masked(kk, pid_n), acc);
    }
    partition_view(c, [BM, BN]).store_masked(acc, pid_m, pid_n);
}

/// No parameters at all: the argument tuples are `()`.
#[tile_kernel]
fn nothing() {
    let _ = program_id(0) + 1;
}

/// One scalar parameter: a one-element tuple.
#[tile_kernel]
fn scalar_only(a: bf16) {
    let _ = a * 2.0;
}

fn main() {
    nothing::interpret([1], ()).unwrap();
    nothing::launch(&tile::Device::cpu(), [1, 1, 1], ()).unwrap();
    scalar_only::interpret([1], (tile::__private::half::bf16::from_f32(1.0),)).unwrap();
    assert_eq!(nothing::spec().label, "default");

    assert_eq!(vector_add::<1024>::INFO.num_warps, 4);
    // `host` stands for the host levels of this architecture.
    let mut targets = vec!["sm_80"];
    targets.extend(tile::runtime::cpu::HostIsa::for_this_architecture().iter().map(|isa| isa.name()));
    assert_eq!(vector_add::<1024>::INFO.targets, targets);
    assert_eq!(vector_add::<256>::spec().label, "BLOCK=256");
    assert!(vector_add::<512>::try_spec().is_err());
    assert_eq!(softmax::<2, 128>::INFO.params.len(), 2);
    assert!(matmul::<64, 64, 32>::spec().ir.contains(" = dot "));
    assert_eq!(matmul::<32, 32, 16>::INFO.specializations.len(), 2);

    // End to end through the reference interpreter, with a partial tile.
    use tile::ir::interp::HostTensor;
    let n = 300;
    let xs: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = HostTensor::from_vec(&[n], xs.clone()).unwrap();
    let y = HostTensor::from_vec(&[n], vec![0.5f32; n]).unwrap();
    let mut out = HostTensor::zeros(tile::ir::DType::F32, &[n]);
    vector_add::<256>::interpret([2], (&x, &y, &mut out)).unwrap();
    let got = out.to_vec::<f32>().unwrap();
    assert!(got.iter().zip(&xs).all(|(g, x)| *g == x + 0.5));

    // Arguments are checked against the parameters at run time.
    let wrong = HostTensor::zeros(tile::ir::DType::F32, &[4, 4]);
    let mut out2 = HostTensor::zeros(tile::ir::DType::F32, &[4, 4]);
    assert!(softmax::<2, 128>::interpret([1], (&wrong, &mut out2)).is_ok());
    assert!(vector_add::<256>::interpret([1], (&wrong, &y, &mut out)).is_err());
}
