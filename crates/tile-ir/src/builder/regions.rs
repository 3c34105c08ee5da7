//! The builder's ops with regions: `for` loops (with their own pipeline
//! stages or not), `while` loops, `if`/`else` and the combine functions of
//! `reduce_with` and `scan_with`, each region built by a closure.

use super::{prepend, BuildError, Builder};
use crate::function::{Region, Value};
use crate::ops::{OpFamily, OpKind};
use crate::types::Type;

impl Builder {
    /// A counted loop `for iv in (lo..hi).step_by(step)` carrying `init`.
    ///
    /// `body` receives the builder, the induction variable and the carried
    /// values, and returns the next carried values; the loop's results are
    /// the final ones.
    pub fn for_loop(
        &mut self,
        lo: Value,
        hi: Value,
        step: Value,
        init: &[Value],
        body: impl FnOnce(&mut Builder, Value, &[Value]) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        self.for_loop_staged(None, (lo, hi, step), init, body)
    }

    /// [`Builder::for_loop`] with the loop's own number of pipeline stages
    /// (`OpKind::For`'s `stages`).
    pub fn for_loop_staged(
        &mut self,
        stages: Option<u32>,
        (lo, hi, step): (Value, Value, Value),
        init: &[Value],
        body: impl FnOnce(&mut Builder, Value, &[Value]) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        let kind = OpKind::For { stages };
        let operands = prepend(&[lo, hi, step], init);
        let types = self.infer(&kind, &operands)?;
        self.open.push(Region::default());
        let iv = self.func.new_region_arg(0, self.ty(lo).clone());
        let carried: Vec<Value> = types
            .iter()
            .enumerate()
            .map(|(i, ty)| self.func.new_region_arg(i + 1, ty.clone()))
            .collect();
        let yielded = body(self, iv, &carried);
        let region = self.close_region(yielded, prepend(&[iv], &carried))?;
        Ok(self.append(kind, operands, types, vec![region]))
    }

    /// `reduce_with` (`keepdim` given) or `scan_with` (`None`) of the tiles
    /// `xs` along `axis`, folded by `combine`: it receives the builder, the
    /// accumulated values and the next elements (scalars of the tiles'
    /// dtypes) and returns the new accumulated values.
    pub fn combine(
        &mut self,
        xs: &[Value],
        axis: usize,
        keepdim: Option<bool>,
        combine: impl FnOnce(&mut Builder, &[Value], &[Value]) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        let kind = match keepdim {
            Some(keepdim) => OpKind::ReduceWith { axis, keepdim },
            None => OpKind::ScanWith { axis },
        };
        let types = self.infer(&kind, xs)?;
        let elements: Vec<Type> = xs
            .iter()
            .map(|&x| Type::Scalar(self.ty(x).dtype()))
            .collect();
        let arg_types: Vec<Type> = elements.iter().chain(&elements).cloned().collect();
        let args = self.open_loop_region(&arg_types);
        let (acc, next) = args.split_at(xs.len());
        let yielded = combine(self, acc, next);
        let region = self.close_region(yielded, args.clone())?;
        for &inner in &region.ops {
            let inner = &self.func.op(inner).kind;
            let allowed = matches!(inner.family(), OpFamily::Constant | OpFamily::Elementwise)
                || *inner == OpKind::Yield;
            if !allowed {
                return Err(BuildError::Rule {
                    op: if keepdim.is_some() { "reduce" } else { "scan" },
                    operands: String::new(),
                    message: format!(
                        "a combine function computes on scalars with operators, elementwise functions and `select`, not with `{}`",
                        inner.name()
                    ),
                });
            }
        }
        Ok(self.append(kind, xs.to_vec(), types, vec![region]))
    }

    /// A loop `while cond(carried) { carried = body(carried) }` carrying
    /// `init`.
    ///
    /// `cond` receives the builder and the carried values and returns a
    /// `bool` scalar; `body` receives them too and returns the next carried
    /// values. The loop's results are the carried values when `cond` first
    /// gives false.
    pub fn while_loop(
        &mut self,
        init: &[Value],
        cond: impl FnOnce(&mut Builder, &[Value]) -> Result<Value, BuildError>,
        body: impl FnOnce(&mut Builder, &[Value]) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        let types = self.infer(&OpKind::While, init)?;
        let carried = self.open_loop_region(&types);
        let yielded = cond(self, &carried).map(|c| vec![c]);
        let cond_region = self.close_region(yielded, carried)?;
        let carried = self.open_loop_region(&types);
        let yielded = body(self, &carried);
        let body_region = self.close_region(yielded, carried)?;
        let regions = vec![cond_region, body_region];
        Ok(self.append(OpKind::While, init.to_vec(), types, regions))
    }

    /// Opens a region whose arguments are values of `types`, returning them.
    fn open_loop_region(&mut self, types: &[Type]) -> Vec<Value> {
        self.open.push(Region::default());
        types
            .iter()
            .enumerate()
            .map(|(i, ty)| self.func.new_region_arg(i, ty.clone()))
            .collect()
    }

    /// `if cond { then } else { otherwise }`, both branches yielding values of
    /// the types `result_types`.
    pub fn if_else(
        &mut self,
        cond: Value,
        result_types: &[Type],
        then: impl FnOnce(&mut Builder) -> Result<Vec<Value>, BuildError>,
        otherwise: impl FnOnce(&mut Builder) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        self.infer(&OpKind::If, &[cond])?;
        self.open.push(Region::default());
        let yielded = then(self);
        let then_region = self.close_region(yielded, Vec::new())?;
        self.open.push(Region::default());
        let yielded = otherwise(self);
        let else_region = self.close_region(yielded, Vec::new())?;
        Ok(self.append(
            OpKind::If,
            vec![cond],
            result_types.to_vec(),
            vec![then_region, else_region],
        ))
    }

    /// Ends the innermost region with a `yield` of the body's values; on an
    /// error the region is dropped so the builder stays consistent.
    pub(super) fn close_region(
        &mut self,
        yielded: Result<Vec<Value>, BuildError>,
        args: Vec<Value>,
    ) -> Result<Region, BuildError> {
        let yielded = match yielded {
            Ok(values) => values,
            Err(e) => {
                self.open.pop();
                return Err(e);
            }
        };
        self.append(OpKind::Yield, yielded, Vec::new(), Vec::new());
        let mut region = self.open.pop().unwrap_or_default();
        region.args = args;
        Ok(region)
    }
}
