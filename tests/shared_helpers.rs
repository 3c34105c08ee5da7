//! `#[tile_fn]` helpers at module level, shared by the kernels that name
//! them in `uses(..)`: by path, through a `use`, from another module, one
//! helper calling another, `pub` helpers of another crate
//! (`tile-helpers-fixture`, two of them of one name), on the CPU device and
//! in the interpreter.

use tile::ir::interp::HostTensor;
use tile::{tile_fn, tile_kernel, Device, Tensor};

mod activations {
    use tile::tile_fn;

    /// `max(x, 0)²`.
    #[tile_fn]
    pub(crate) fn relu_squared(t: Tile) -> Tile {
        let r = max(t, 0.0);
        r * r
    }

    /// The tile and its sum along the first axis.
    #[tile_fn]
    pub fn with_total(t: Tile) -> (Tile, Tile) {
        (t, t.sum_keepdim(0))
    }
}

/// `x · 2 + offset`, where `offset` is a scalar the caller passes.
#[tile_fn]
fn twice_plus(t: Tile, offset: f32) -> Tile {
    t * 2.0 + offset
}

/// `relu_squared(x) · 2 + 1`: a shared helper calling two others, which
/// the kernel names too.
#[tile_fn]
fn activated(t: Tile) -> Tile {
    twice_plus(relu_squared(t), 1.0)
}

#[tile_kernel(
    configs(B = 16),
    uses(activations::relu_squared, twice_plus, activated)
)]
fn activate<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let pid = program_id(0);
    let t = partition_view(x, [B]).load(pid);
    partition_view(y, [B]).store(activated(t), pid);
}

mod normalize {
    use super::activations::with_total;
    use tile::tile_kernel;

    /// Each block divided by its sum.
    #[tile_kernel(configs(B = 8), uses(with_total, crate::activations::relu_squared))]
    pub fn shares<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>) {
        let pid = program_id(0);
        let (t, total) = with_total(relu_squared(partition_view(x, [B]).load(pid)));
        partition_view(y, [B]).store(t / total, pid);
    }
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 7) as f32 - 2.5).collect()
}

#[test]
fn a_kernel_inlines_helpers_named_by_path() {
    let dev = Device::cpu();
    let x = inputs(32);
    let xt = dev.tensor_from_slice(&x, &[32]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[32]).unwrap();
    activate::<16>::launch(&dev, [2], (&xt, &mut y)).unwrap();
    let want: Vec<f32> = x
        .iter()
        .map(|v| v.max(0.0) * v.max(0.0) * 2.0 + 1.0)
        .collect();
    assert_eq!(y.to_vec().unwrap(), want);
    let mut yh = HostTensor::zeros(tile::ir::DType::F32, &[32]);
    activate::<16>::interpret([2], (&HostTensor::from_vec(&[32], x).unwrap(), &mut yh)).unwrap();
    assert_eq!(yh.to_vec::<f32>().unwrap(), want);
}

#[test]
fn helpers_reach_kernels_in_other_modules_through_use_and_crate_paths() {
    let dev = Device::cpu();
    let x = inputs(24);
    let xt = dev.tensor_from_slice(&x, &[24]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[24]).unwrap();
    normalize::shares::<8>::launch(&dev, [3], (&xt, &mut y)).unwrap();
    let want: Vec<f32> = x
        .chunks(8)
        .flat_map(|block| {
            let sq: Vec<f32> = block.iter().map(|v| v.max(0.0) * v.max(0.0)).collect();
            let total: f32 = sq.iter().sum();
            sq.into_iter().map(move |v| v / total).collect::<Vec<_>>()
        })
        .collect();
    let got = y.to_vec().unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{got:?} against {want:?}"
        );
    }
    // The helpers are inlined: the IR has no trace of a call.
    let ir = normalize::shares::<8>::ir();
    assert!(ir.contains("reduce sum"), "{ir}");
}

/// `silu(x) + relu_squared(x)`, with both helpers (and the one
/// `relu_squared` calls) from another crate.
#[tile_kernel(
    configs(B = 16),
    uses(
        tile_helpers_fixture::activations::silu,
        tile_helpers_fixture::activations::relu_squared,
        tile_helpers_fixture::squared
    )
)]
fn from_another_crate<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let pid = program_id(0);
    let t = partition_view(x, [B]).load(pid);
    partition_view(y, [B]).store(silu(t) + relu_squared(t), pid);
}

/// `x² + 1` from the other crate's `poly::squared`, a helper of the same
/// name as its crate root's `squared`.
#[tile_kernel(configs(B = 16), uses(tile_helpers_fixture::poly::squared))]
fn same_name_elsewhere<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>) {
    let pid = program_id(0);
    partition_view(y, [B]).store(squared(partition_view(x, [B]).load(pid)), pid);
}

#[test]
fn kernels_inline_public_helpers_of_another_crate() {
    let dev = Device::cpu();
    let x = inputs(32);
    let xt = dev.tensor_from_slice(&x, &[32]).unwrap();
    let mut y: Tensor<f32> = dev.zeros(&[32]).unwrap();
    from_another_crate::<16>::launch(&dev, [2], (&xt, &mut y)).unwrap();
    let got = y.to_vec().unwrap();
    for (v, g) in x.iter().zip(&got) {
        let want = v / ((-v).exp() + 1.0) + v.max(0.0) * v.max(0.0);
        assert!(
            (want - g).abs() <= 1e-6 * want.abs().max(1.0),
            "{v}: {g} vs {want}"
        );
    }
    let mut yh = HostTensor::zeros(tile::ir::DType::F32, &[32]);
    let xh = HostTensor::from_vec(&[32], x.clone()).unwrap();
    from_another_crate::<16>::interpret([2], (&xh, &mut yh)).unwrap();
    assert_eq!(yh.to_vec::<f32>().unwrap(), got);

    same_name_elsewhere::<16>::launch(&dev, [2], (&xt, &mut y)).unwrap();
    let want: Vec<f32> = x.iter().map(|v| v * v + 1.0).collect();
    assert_eq!(y.to_vec().unwrap(), want);
}
