//! Checking the arguments of a launch against the kernel's parameters.

use super::{Arg, InterpError};
use crate::function::Function;
use crate::types::{Type, ALIGNED_TENSOR};

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
                if h.shape().iter().any(|&e| i32::try_from(e).is_err()) {
                    return Err(mismatch(format!(
                        "{} with every extent at most {}",
                        Type::Tensor(*t),
                        i32::MAX
                    )));
                }
                if let Some(reason) = t.misalignment(h.shape(), h.strides(), h.offset()) {
                    return Err(InterpError::Arg {
                        index,
                        param: param.name.clone(),
                        expected: format!("{} ({ALIGNED_TENSOR})", Type::Tensor(*t)),
                        found: format!(
                            "{} with strides {:?}: {reason}",
                            describe(arg),
                            h.strides()
                        ),
                    });
                }
            }
            (Some(ty @ (Type::Scalar(_) | Type::Tensor(_))), _) => {
                return Err(mismatch(ty.to_string()))
            }
            (Some(ty), _) => {
                return Err(mismatch(format!(
                    "a scalar or tensor parameter (the kernel declares {ty})"
                )))
            }
            (None, _) => return Err(mismatch("a parameter value inside the function".into())),
        }
    }
    Ok(())
}

/// An argument as messages show it: `i32 scalar 7`, `tensor<f32, 2> of shape [4, 5]`.
fn describe(arg: &Arg) -> String {
    match arg {
        Arg::Scalar(s) => format!("{} scalar {s}", s.dtype()),
        Arg::Tensor(h) => format!(
            "tensor<{}, {}> of shape {:?}",
            h.dtype(),
            h.shape().len(),
            h.shape()
        ),
    }
}
