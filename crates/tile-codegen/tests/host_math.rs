//! Host code computes every math-library function (`UnaryOp::MATH`,
//! `BinaryOp::MATH`) exactly as the interpreter does, bit for bit, through
//! the math table the runtime fills with the oracle's functions: one kernel
//! applying each function to the same inputs, in f64 and in f32.

mod common;

use common::host_agrees;
use tile_ir::builder::{BuildError, Builder};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::{BinaryOp, DType, Function, Padding, Scalar, TensorType, Type, UnaryOp};

const BLOCK: usize = 64;

/// `out[k, i] = f_k(x[i])` for the unary functions, then `f_k(x[i], y[i])`
/// for the binary ones, in `dtype`.
fn every_math_function(dtype: DType) -> Result<Function, BuildError> {
    let tensor = |rank| {
        Type::Tensor(TensorType {
            dtype,
            rank,
            aligned: false,
        })
    };
    let mut b = Builder::new("every_math_function");
    let (x, y, out) = (
        b.param("x", tensor(1)),
        b.param("y", tensor(1)),
        b.param("out", tensor(2)),
    );
    let pid = b.program_id(0)?;
    let vx = b.partition_view(x, &[BLOCK])?;
    let vy = b.partition_view(y, &[BLOCK])?;
    let vo = b.partition_view(out, &[1, BLOCK])?;
    let tx = b.load_masked(vx, &[pid], Padding::Zero)?;
    let ty = b.load_masked(vy, &[pid], Padding::Zero)?;
    let mut results = Vec::new();
    for &op in UnaryOp::MATH {
        results.push(b.unary(op, tx)?);
    }
    for &op in BinaryOp::MATH {
        results.push(b.binary(op, tx, ty)?);
    }
    for (row, r) in results.into_iter().enumerate() {
        let k = b.constant(Scalar::I32(row as i32))?;
        let r = b.reshape(r, &[1, BLOCK])?;
        b.store_masked(r, vo, &[k, pid])?;
    }
    b.finish()
}

#[test]
fn host_code_computes_every_math_function_like_the_interpreter() {
    let functions = UnaryOp::MATH.len() + BinaryOp::MATH.len();
    // Specials, then values over many magnitudes, of both signs.
    let mut xs = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.5,
    ];
    xs.extend((0..120).map(|i| {
        let v = 1.37f64.powi(i - 60);
        if i % 2 == 0 {
            v
        } else {
            -v
        }
    }));
    let ys: Vec<f64> = xs.iter().rev().copied().collect();
    let n = xs.len();
    for dtype in [DType::F64, DType::F32] {
        let values = |v: &[f64]| -> Vec<Scalar> {
            v.iter()
                .map(|&v| tile_ir::eval::cast(Scalar::F64(v), dtype))
                .collect()
        };
        let args = vec![
            Arg::Tensor(HostTensor::from_scalars(dtype, &[n], &values(&xs)).unwrap()),
            Arg::Tensor(HostTensor::from_scalars(dtype, &[n], &values(&ys)).unwrap()),
            Arg::Tensor(
                HostTensor::from_scalars(
                    dtype,
                    &[functions, n],
                    &vec![Scalar::zero(dtype); functions * n],
                )
                .unwrap(),
            ),
        ];
        let func = every_math_function(dtype).unwrap();
        host_agrees(&func, [n.div_ceil(BLOCK) as u32, 1, 1], args);
    }
}
