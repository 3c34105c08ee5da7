//! `for`, `while` and `if`: structured control flow on block-uniform scalars.

use super::value::RtValue;
use super::{Fault, InterpError, Interpreter};
use crate::dtype::DType;
use crate::function::{Op, OpId, Region};
use crate::scalar::Scalar;

/// The bounds, step, induction dtype and body of a `for`.
struct LoopHeader<'a> {
    lo: i128,
    hi: i128,
    step: i128,
    dtype: DType,
    body: &'a Region,
}

impl<'a> Interpreter<'a> {
    /// `for %iv = lo to hi step s iter(init...)`: runs the body for
    /// `iv = lo, lo + s, ...` while `iv < hi`, computed exactly (the
    /// induction variable never wraps), each iteration's `yield` giving the
    /// next carried values; the results are the last carried values.
    pub(super) fn run_for(
        &mut self,
        id: OpId,
        op: &'a Op,
        operands: &[RtValue],
    ) -> Result<Vec<RtValue>, InterpError> {
        let header = loop_header(op, operands).map_err(|f| self.error(id, f))?;
        let limit = self.options.max_loop_iterations;
        let mut carried = operands[3..].to_vec();
        let mut iv = header.lo;
        let mut iterations = 0u64;
        while iv < header.hi {
            if iterations == limit {
                return Err(self.error(id, Fault::IterationLimit { limit }));
            }
            iterations += 1;
            // lo <= iv < hi, so iv fits the bounds' dtype.
            let iv_value = Scalar::wrapping_from_i128(header.dtype, iv).unwrap_or(Scalar::I64(0));
            let mut entry = vec![RtValue::Scalar(iv_value)];
            entry.extend(carried);
            self.bind_values(&header.body.args, entry, "loop argument")
                .map_err(|f| self.error(id, f))?;
            carried = self.run_region(header.body)?.ok_or_else(|| {
                self.error(
                    id,
                    Fault::Type("the loop body does not end with `yield`".into()),
                )
            })?;
            iv += header.step;
        }
        Ok(carried)
    }

    /// `while iter(init...)`: runs the condition region on the carried
    /// values, and while it gives true the body, whose `yield` gives the
    /// next carried values; the results are the carried values the
    /// condition last saw.
    pub(super) fn run_while(
        &mut self,
        id: OpId,
        op: &'a Op,
        operands: &[RtValue],
    ) -> Result<Vec<RtValue>, InterpError> {
        let [cond, body] = op.regions.as_slice() else {
            let fault = Fault::Type("`while` needs two regions".into());
            return Err(self.error(id, fault));
        };
        let limit = self.options.max_loop_iterations;
        let mut carried = operands.to_vec();
        let mut iterations = 0u64;
        loop {
            self.bind_values(&cond.args, carried.clone(), "loop argument")
                .map_err(|f| self.error(id, f))?;
            let go = match self.run_region(cond)?.as_deref() {
                Some([RtValue::Scalar(Scalar::Bool(go))]) => *go,
                _ => {
                    let fault = Fault::Type("the loop condition must yield a bool scalar".into());
                    return Err(self.error(id, fault));
                }
            };
            if !go {
                return Ok(carried);
            }
            if iterations == limit {
                return Err(self.error(id, Fault::IterationLimit { limit }));
            }
            iterations += 1;
            self.bind_values(&body.args, carried, "loop argument")
                .map_err(|f| self.error(id, f))?;
            carried = self.run_region(body)?.ok_or_else(|| {
                self.error(
                    id,
                    Fault::Type("the loop body does not end with `yield`".into()),
                )
            })?;
        }
    }

    /// `if %cond`: runs the then region when `cond` is true, else the else
    /// region; the results are the values its `yield` gives.
    pub(super) fn run_if(
        &mut self,
        id: OpId,
        op: &'a Op,
        operands: &[RtValue],
    ) -> Result<Vec<RtValue>, InterpError> {
        let (cond, then, otherwise) = match (operands, op.regions.as_slice()) {
            ([RtValue::Scalar(Scalar::Bool(c))], [then, otherwise]) => (*c, then, otherwise),
            _ => {
                let fault = Fault::Type("`if` needs one bool scalar and two regions".into());
                return Err(self.error(id, fault));
            }
        };
        self.run_region(if cond { then } else { otherwise })?
            .ok_or_else(|| {
                self.error(
                    id,
                    Fault::Type("the branch does not end with `yield`".into()),
                )
            })
    }
}

/// Reads and checks a `for`'s bounds, step and region.
fn loop_header<'a>(op: &'a Op, operands: &[RtValue]) -> Result<LoopHeader<'a>, Fault> {
    let (Some(lo), Some(hi), Some(step), [body]) = (
        operands.first(),
        operands.get(1),
        operands.get(2),
        op.regions.as_slice(),
    ) else {
        return Err(Fault::Type(
            "`for` needs bounds, a step and one region".into(),
        ));
    };
    let dtype = lo.scalar("the lower bound")?.dtype();
    let header = LoopHeader {
        lo: lo.integer("the lower bound")?,
        hi: hi.integer("the upper bound")?,
        step: step.integer("the step")?,
        dtype,
        body,
    };
    if header.step <= 0 {
        return Err(Fault::NonPositiveStep { step: header.step });
    }
    Ok(header)
}
