//! The tensors a launch may write, kept before tuning so that every
//! candidate starts from them, and read after each candidate to check that
//! all compute the same.

use crate::error::Error;
use crate::gpu::GpuTensor;
use crate::launch::LaunchArg;
use tile_ir::interp::HostTensor;

/// A written argument as it was before tuning. On a GPU the copy shares the
/// buffer until a launch writes the argument (which then gets its own).
enum Before {
    Host(HostTensor),
    Gpu(GpuTensor),
}

/// The written arguments of a launch as they were, by position: the
/// argument's, and for a tensor of an array its index there.
pub(super) struct Saved(Vec<((usize, Option<usize>), Before)>);

/// The tensors of `arg` a launch may write, with their index in an array.
fn written<'x, 'a>(arg: &'x LaunchArg<'a>) -> Vec<(Option<usize>, &'x LaunchArg<'a>)> {
    match arg {
        LaunchArg::TensorMut(_) | LaunchArg::GpuTensorMut(_) => vec![(None, arg)],
        LaunchArg::Tensors(ts) => ts
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t, LaunchArg::TensorMut(_) | LaunchArg::GpuTensorMut(_)))
            .map(|(k, t)| (Some(k), t))
            .collect(),
        _ => Vec::new(),
    }
}

impl Saved {
    /// Keeps the tensors of `args` a launch may write.
    pub(super) fn take(args: &[LaunchArg<'_>]) -> Saved {
        let mut saved = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            for (k, t) in written(arg) {
                let before = match t {
                    LaunchArg::TensorMut(t) => Before::Host((**t).clone()),
                    LaunchArg::GpuTensorMut(t) => Before::Gpu((**t).clone()),
                    _ => continue,
                };
                saved.push(((i, k), before));
            }
        }
        Saved(saved)
    }

    /// Puts the kept tensors back into `args`.
    pub(super) fn restore(&self, args: &mut [LaunchArg<'_>]) {
        for ((i, k), before) in &self.0 {
            let arg = match (&mut args[*i], k) {
                (LaunchArg::Tensors(ts), Some(k)) => &mut ts[*k],
                (arg, _) => arg,
            };
            match (arg, before) {
                (LaunchArg::TensorMut(t), Before::Host(b)) => **t = b.clone(),
                (LaunchArg::GpuTensorMut(t), Before::Gpu(b)) => **t = b.clone(),
                _ => unreachable!("argument {i} changed kind while tuning"),
            }
        }
    }

    /// The written tensors of `args`, on the host, by position (each
    /// tensor of an array at its array's).
    pub(super) fn outputs(args: &[LaunchArg<'_>]) -> Result<Vec<(usize, HostTensor)>, Error> {
        let mut outputs = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            for (_, t) in written(arg) {
                match t {
                    LaunchArg::TensorMut(t) => outputs.push((i, (**t).clone())),
                    LaunchArg::GpuTensorMut(t) => outputs.push((i, t.download()?)),
                    _ => {}
                }
            }
        }
        Ok(outputs)
    }
}

/// Whether two candidates' outputs agree: integers equal, floats within
/// `tolerance · (1 + |a|)` of each other (NaN where the other is NaN); if
/// not, the first argument and element that differ.
pub(super) fn agree(
    a: &[(usize, HostTensor)],
    b: &[(usize, HostTensor)],
    tolerance: f64,
) -> Result<(), String> {
    for ((i, x), (_, y)) in a.iter().zip(b) {
        for (n, (u, v)) in x.to_scalars().into_iter().zip(y.to_scalars()).enumerate() {
            let (u, v) = (u.to_f64(), v.to_f64());
            let same = if x.dtype().is_float() {
                (u.is_nan() && v.is_nan()) || (u - v).abs() <= tolerance * (1.0 + u.abs())
            } else {
                u == v
            };
            if !same {
                return Err(format!(
                    "argument {i} differs at element {n} (row-major): {u} against {v}"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_agree_within_the_tolerance_and_integers_exactly() {
        let t = |v: Vec<f32>| vec![(1, HostTensor::from_vec(&[v.len()], v).unwrap())];
        assert!(agree(&t(vec![1.0, 2.0]), &t(vec![1.0005, 2.0]), 1e-3).is_ok());
        let error = agree(&t(vec![1.0, 2.0]), &t(vec![1.0, 2.1]), 1e-3).unwrap_err();
        assert_eq!(
            error,
            "argument 1 differs at element 1 (row-major): 2 against 2.0999999046325684"
        );
        assert!(agree(&t(vec![f32::NAN]), &t(vec![f32::NAN]), 0.0).is_ok());
        let i = |v: Vec<i32>| vec![(0, HostTensor::from_vec(&[v.len()], v).unwrap())];
        assert!(agree(&i(vec![3]), &i(vec![3]), 0.5).is_ok());
        assert!(agree(&i(vec![3]), &i(vec![4]), 0.5).is_err());
    }
}
