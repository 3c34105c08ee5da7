//! `for` and `if`: structured control flow on block-uniform scalars.

use super::value::RtValue;
use super::{Fault, InterpError, Machine};
use crate::function::{Op, OpId};
use crate::scalar::Scalar;

impl<'a> Machine<'a> {
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
        let fail = |m: &Self, fault| Err(m.error(id, fault));
        let (Some(lo), Some(hi), Some(step), [body]) = (
            operands.first(),
            operands.get(1),
            operands.get(2),
            op.regions.as_slice(),
        ) else {
            return fail(
                self,
                Fault::Type("`for` needs bounds, a step and one region".into()),
            );
        };
        let bounds = (|| {
            Ok::<_, Fault>((
                lo.integer("lo")?,
                hi.integer("hi")?,
                step.integer("step")?,
                lo.scalar("lo")?.dtype(),
            ))
        })();
        let (lo, hi, step, dtype) = match bounds {
            Ok(b) => b,
            Err(fault) => return fail(self, fault),
        };
        if step <= 0 {
            return fail(self, Fault::NonPositiveStep { step });
        }
        let mut carried = operands[3..].to_vec();
        let mut iv = lo;
        let mut iterations = 0u64;
        while iv < hi {
            if iterations == self.options.max_loop_iterations {
                return fail(
                    self,
                    Fault::IterationLimit {
                        limit: self.options.max_loop_iterations,
                    },
                );
            }
            iterations += 1;
            let mut entry = vec![RtValue::Scalar(
                Scalar::wrapping_from_i128(dtype, iv).unwrap_or(Scalar::I64(0)),
            )];
            entry.extend(carried);
            self.bind_values(&body.args, entry, "loop argument")
                .map_err(|f| self.error(id, f))?;
            carried = match self.run_region(body)? {
                Some(next) => next,
                None => {
                    return fail(
                        self,
                        Fault::Type("the loop body does not end with `yield`".into()),
                    )
                }
            };
            iv += step;
        }
        Ok(carried)
    }

    /// `if %cond`: runs the then region when `cond` is true, else the else
    /// region; the results are the values its `yield` gives.
    pub(super) fn run_if(
        &mut self,
        id: OpId,
        op: &'a Op,
        operands: &[RtValue],
    ) -> Result<Vec<RtValue>, InterpError> {
        let cond = match operands {
            [RtValue::Scalar(Scalar::Bool(c))] => *c,
            _ => {
                return Err(self.error(
                    id,
                    Fault::Type("the condition must be one bool scalar".into()),
                ))
            }
        };
        let [then, otherwise] = op.regions.as_slice() else {
            return Err(self.error(
                id,
                Fault::Type("`if` needs a then and an else region".into()),
            ));
        };
        match self.run_region(if cond { then } else { otherwise })? {
            Some(values) => Ok(values),
            None => Err(self.error(
                id,
                Fault::Type("the branch does not end with `yield`".into()),
            )),
        }
    }
}
