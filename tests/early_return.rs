//! Guard clauses, a kernel's early `return`s as Triton kernels write them
//! (`if pid >= n: return`): on the CPU device and in the interpreter,
//! against plain Rust. Two guards in sequence, one that stores before it
//! returns, and a helper defined after them.

use tile::ir::interp::HostTensor;
use tile::{tile_kernel, Device, Tensor};

/// Program `p` doubles its block of `x` into `y`, unless it starts past
/// `limit` (it does nothing) or it is the last program (it writes -1s).
#[tile_kernel(configs(B = 4))]
fn guarded<const B: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>, limit: i32) {
    let pid = program_id(0);
    if pid * B as i32 >= limit {
        return;
    }
    let vy = partition_view(y, [B]);
    if pid + 1 == num_programs(0) {
        vy.store(full([B], -1.0f32), pid);
        return;
    }
    #[tile_fn]
    fn twice(t: Tile) -> Tile {
        t * 2.0
    }
    vy.store(twice(partition_view(x, [B]).load(pid)), pid);
}

fn reference(x: &[f32], programs: usize, limit: usize) -> Vec<f32> {
    let mut y = vec![0.0; x.len()];
    for p in 0..programs {
        if p * 4 >= limit {
            continue;
        }
        for i in p * 4..p * 4 + 4 {
            y[i] = if p + 1 == programs { -1.0 } else { x[i] * 2.0 };
        }
    }
    y
}

#[test]
fn guard_clauses_end_programs_early() {
    let dev = Device::cpu();
    let values: Vec<f32> = (0..24).map(|i| i as f32 - 7.5).collect();
    let x = dev.tensor_from_slice(&values, &[24]).unwrap();
    for limit in [24, 13, 0] {
        let mut y: Tensor<f32> = dev.zeros(&[24]).unwrap();
        guarded::<4>::launch(&dev, [6], (&x, &mut y, limit)).unwrap();
        let want = reference(&values, 6, limit as usize);
        assert_eq!(y.to_vec().unwrap(), want, "limit {limit}");
        let hx = HostTensor::from_vec(&[24], values.clone()).unwrap();
        let mut hy = HostTensor::zeros(tile::ir::DType::F32, &[24]);
        guarded::<4>::interpret([6], (&hx, &mut hy, limit)).unwrap();
        assert_eq!(
            hy.to_vec::<f32>().unwrap(),
            want,
            "interpreter, limit {limit}"
        );
    }
}
