//! Checking the arguments of a launch against the kernel's parameters.

use super::HostTensor;
use super::{Arg, InterpError};
use crate::function::Function;
use crate::types::{TensorType, Type, ALIGNED_TENSOR};

/// Checks the count, and each argument against its parameter: a scalar of
/// the parameter's dtype, or a tensor of its dtype and rank whose extents fit
/// the `i32` that `dim` returns, and aligned where the type promises it
/// ([`crate::TensorType::misalignment`]).
pub(super) fn check(func: &Function, args: &[Arg]) -> Result<(), InterpError> {
    if args.len() != func.params.len() {
        return Err(InterpError::ArgCount {
            kernel: func.name.clone(),
            expected: func.params.len(),
            found: args.len(),
        });
    }
    for (index, (param, arg)) in func.params.iter().zip(args).enumerate() {
        let declared = func.values.get(param.value).map(|info| &info.ty);
        let mismatch = |expected: String| InterpError::Arg {
            index,
            param: param.name.clone(),
            expected,
            found: describe(arg),
        };
        match (declared, arg) {
            (Some(Type::Scalar(d)), Arg::Scalar(s)) if s.dtype() == *d => {}
            (Some(Type::Tensor(t)), Arg::Tensor(h))
                if h.dtype() == t.dtype && h.shape().len() == t.rank =>
            {
                check_tensor(t, h).map_err(|(expected, found)| InterpError::Arg {
                    index,
                    param: param.name.clone(),
                    expected,
                    found,
                })?
            }
            (Some(Type::Tensors(t)), Arg::Tensors(hs))
                if hs
                    .iter()
                    .all(|h| h.dtype() == t.dtype && h.shape().len() == t.rank) =>
            {
                if i32::try_from(hs.len()).is_err() {
                    return Err(mismatch(format!(
                        "{} of at most {} tensors",
                        Type::Tensors(*t),
                        i32::MAX
                    )));
                }
                for (k, h) in hs.iter().enumerate() {
                    check_tensor(t, h).map_err(|(expected, found)| InterpError::Arg {
                        index,
                        param: param.name.clone(),
                        expected: format!("tensors each {expected}"),
                        found: format!("tensor {k}: {found}"),
                    })?
                }
            }
            (Some(ty @ (Type::Scalar(_) | Type::Tensor(_) | Type::Tensors(_))), _) => {
                return Err(mismatch(ty.to_string()))
            }
            (Some(ty), _) => {
                return Err(mismatch(format!(
                    "a scalar, tensor or tensor-array parameter (the kernel declares {ty})"
                )))
            }
            (None, _) => return Err(mismatch("a parameter value inside the function".into())),
        }
    }
    Ok(())
}

/// Checks tensor `h` against a parameter (or tensor-array element) of type
/// `t` whose dtype and rank it has: its extents fit `i32` and it keeps the
/// alignment promise. The error is what was expected and what was found.
fn check_tensor(t: &TensorType, h: &HostTensor) -> Result<(), (String, String)> {
    let found = || describe_tensor(h);
    if h.shape().iter().any(|&e| i32::try_from(e).is_err()) {
        return Err((
            format!(
                "{} with every extent at most {}",
                Type::Tensor(*t),
                i32::MAX
            ),
            found(),
        ));
    }
    if let Some(reason) = t.misalignment(h.shape(), h.strides(), h.offset()) {
        return Err((
            format!("{} ({ALIGNED_TENSOR})", Type::Tensor(*t)),
            format!("{} with strides {:?}: {reason}", found(), h.strides()),
        ));
    }
    Ok(())
}

/// A tensor as messages show it: `tensor<f32, 2> of shape [4, 5]`.
fn describe_tensor(h: &HostTensor) -> String {
    format!(
        "tensor<{}, {}> of shape {:?}",
        h.dtype(),
        h.shape().len(),
        h.shape()
    )
}

/// An argument as messages show it: `i32 scalar 7`, `tensor<f32, 2> of shape [4, 5]`.
fn describe(arg: &Arg) -> String {
    match arg {
        Arg::Scalar(s) => format!("{} scalar {s}", s.dtype()),
        Arg::Tensor(h) => describe_tensor(h),
        Arg::Tensors(hs) => match hs.first() {
            Some(h) => format!("{} tensors<{}, {}>", hs.len(), h.dtype(), h.shape().len()),
            None => "an empty tensor array".into(),
        },
    }
}
