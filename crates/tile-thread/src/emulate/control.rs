//! Uniform loops (`for`, `while`) in the emulator (an `if` is in `run_op`).

use super::{Emulator, LockstepError, LockstepFault, MAX_LOOP_ITERATIONS};
use crate::program::{Op, OpId};
use tile_ir::Scalar;

impl Emulator<'_> {
    /// Runs a `for` whose bounds are uniform across the block; returns the
    /// final carried values.
    pub(super) fn run_for(
        &mut self,
        id: OpId,
        op: &Op,
        x: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let (Some(body), [lo, hi, step, inits @ ..]) = (op.regions.first(), x) else {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed("`for` needs bounds and a body".into()),
            ));
        };
        let lo = self.uniform(id, "the lower bound", lo)?;
        let hi = self.uniform(id, "the upper bound", hi)?;
        let step = self.uniform(id, "the step", step)?;
        let (Some(mut i), Some(end), Some(s)) = (lo.to_i128(), hi.to_i128(), step.to_i128()) else {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed("non-integer loop bounds".into()),
            ));
        };
        if s <= 0 || body.args.len() != inits.len() + 1 {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed("a loop step below 1 or a body of the wrong arity".into()),
            ));
        }
        let mut carried = inits.to_vec();
        let mut count = 0u64;
        while i < end {
            self.count_iteration(id, &mut count)?;
            let iv = Scalar::wrapping_from_i128(lo.dtype(), i).ok_or_else(|| {
                self.error(
                    Some(id),
                    None,
                    LockstepFault::Malformed("loop counter dtype".into()),
                )
            })?;
            self.define(id, body.args[0], vec![iv; self.threads as usize])?;
            for (&a, v) in body.args[1..].iter().zip(carried) {
                self.define(id, a, v)?;
            }
            carried = self.run_region(body)?.unwrap_or_default();
            i += s;
        }
        Ok(carried)
    }

    /// Runs a `while` whose condition is uniform across the block; returns
    /// the final carried values.
    pub(super) fn run_while(
        &mut self,
        id: OpId,
        op: &Op,
        inits: &[Vec<Scalar>],
    ) -> Result<Vec<Vec<Scalar>>, LockstepError> {
        let [cond, body] = op.regions.as_slice() else {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::Malformed("`while` needs a condition and a body".into()),
            ));
        };
        let mut carried = inits.to_vec();
        let mut count = 0u64;
        loop {
            for (&a, v) in cond.args.iter().zip(&carried) {
                self.define(id, a, v.clone())?;
            }
            let yielded = self.run_region(cond)?.unwrap_or_default();
            let Some(go) = yielded.first() else {
                return Err(self.error(
                    Some(id),
                    None,
                    LockstepFault::Malformed("the loop condition yields nothing".into()),
                ));
            };
            if self.uniform(id, "the loop condition", go)? != Scalar::Bool(true) {
                return Ok(carried);
            }
            self.count_iteration(id, &mut count)?;
            for (&a, v) in body.args.iter().zip(carried) {
                self.define(id, a, v)?;
            }
            carried = self.run_region(body)?.unwrap_or_default();
        }
    }

    /// Counts one more iteration of loop `id`, failing past the limit.
    fn count_iteration(&self, id: OpId, count: &mut u64) -> Result<(), LockstepError> {
        *count += 1;
        if *count > MAX_LOOP_ITERATIONS {
            return Err(self.error(
                Some(id),
                None,
                LockstepFault::IterationLimit {
                    limit: MAX_LOOP_ITERATIONS,
                },
            ));
        }
        Ok(())
    }
}
