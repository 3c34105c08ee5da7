//! The typing rules of structured control flow, as far as its operands type it (the verifier checks
//! the regions).

use super::checks::*;
use super::RuleResult;
use crate::dtype::DType;
use crate::ops::OpKind;
use crate::types::Type;

/// The result types of a control-flow op of `kind` applied to operands of the given
/// types.
pub(super) fn infer(kind: &OpKind, operands: &[&Type]) -> RuleResult<Option<Vec<Type>>> {
    match kind {
        OpKind::For { stages } => {
            if let Some(n) = stages.filter(|n| !(1..=8).contains(n)) {
                return Err(format!("a loop's stages are 1 to 8, found {n}"));
            }
            if operands.len() < 3 {
                return Err(format!(
                    "for needs a lower bound, an upper bound and a step, found {} operands",
                    operands.len()
                ));
            }
            let bound = operands[0];
            let integer = matches!(bound, Type::Scalar(d) if d.is_int());
            if !integer || operands[1] != bound || operands[2] != bound {
                return Err(format!(
                    "the bounds and step must be scalars of one integer dtype, found {}, {} and {}",
                    operands[0], operands[1], operands[2]
                ));
            }
            for carried in &operands[3..] {
                data(carried, "a carried value")?;
            }
            Ok(Some(operands[3..].iter().map(|t| (*t).clone()).collect()))
        }
        OpKind::While => {
            for carried in operands {
                data(carried, "a carried value")?;
            }
            Ok(Some(operands.iter().map(|t| (*t).clone()).collect()))
        }
        OpKind::If => {
            arity(operands, 1)?;
            if *operands[0] != Type::Scalar(DType::Bool) {
                return Err(format!(
                    "the condition must be a bool scalar (block-uniform), found {}; use select for a tile condition",
                    operands[0]
                ));
            }
            Ok(None)
        }
        OpKind::Yield => Ok(Some(Vec::new())),
        other => Err(format!("`{}` is not a control-flow op", other.name())),
    }
}
