//! Sorting along the last axis: `x.sort()` and `x.sort_descending()`, a
//! bitonic sorting network built from reshape, flip, compare and select, so
//! every stage runs it as is.
//!
//! The last extent `n = 2^k` must be a power of two. Stage `s = 1..=k` sorts
//! blocks of `m = 2^s` elements from sorted halves: first each element of a
//! block meets its mirror image (`i` and `m - 1 - i`, a flip of the block),
//! then each half-cleaner of distance `d = m/4, .., 1` pairs `i` with
//! `i ± d` (a flip of the axis of extent 2 in the block seen as `[2, d]`).
//! In each pair the element on the left keeps the one that goes first:
//!
//! ```text
//! [.., n] -> [.., n/m, m] (mirror) or [.., n/2d, 2, d] (half-cleaner)
//! partner = flip(x, that axis);  left = (index in the block) < half
//! x = select(left ? before(partner, x) : before(x, partner), partner, x)
//! ```
//!
//! Both elements of a pair decide on the same comparison, so every step is a
//! permutation. `before(a, b)` is `a < b`, and for floats also "`b` is NaN
//! and `a` is not": NaNs count as greater than every number (as in PyTorch),
//! so they come last ascending and first descending, never duplicated (IEEE
//! `min`/`max` would copy a NaN into both places). `sort_descending` is the
//! ascending sort flipped. The network is not stable: equal elements (`-0.0`
//! and `+0.0`, NaNs of different payloads) may come in any order.

use super::{Translator, Val};
use quote::ToTokens;
use syn::{Expr, ExprMethodCall};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, Shape, Value};

/// Whether `name` is a sort method.
pub(crate) fn is_sort(name: &str) -> bool {
    matches!(name, "sort" | "sort_descending")
}

impl Translator<'_> {
    /// Lowers `x.sort()` or `x.sort_descending()` (`name`) of the tile `x`
    /// of shape `shape`.
    pub(crate) fn sort(
        &mut self,
        x: Value,
        shape: &Shape,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        self.argn(args, 0, &format!("{name}()"), m)?;
        let ty = self.ty(x);
        let d = ty.dtype();
        if !(d.is_int() || d.is_float()) {
            return Err(self.err(
                &m.method,
                format!("`{name}` orders integers and floats, found {ty}"),
            ));
        }
        let dims = shape.dims();
        let Some(last) = dims.len().checked_sub(1) else {
            return Ok(Val::Ir(x));
        };
        let n = dims[last];
        if !n.is_power_of_two() {
            return Err(self.err(
                &m.method,
                format!("`{name}` sorts along the last axis with a bitonic network, which needs a power-of-two extent, but {ty} has {n} there: pad the tile with `pad` to {} (with a value that sorts last) and slice the result", n.next_power_of_two()),
            ));
        }
        let mut out = x;
        for s in 1..=n.trailing_zeros() {
            out = self.sort_step(out, dims, 1 << s, true, m)?;
            for j in (0..s - 1).rev() {
                out = self.sort_step(out, dims, 2 << j, false, m)?;
            }
        }
        if name == "sort_descending" {
            out = self.ir(m, |b| b.flip(out, &[last]))?;
        }
        Ok(Val::Ir(out))
    }

    /// One compare-exchange step over blocks of `block` elements of the last
    /// axis of `x` (of shape `dims`): each element meets its mirror image in
    /// the block if `mirror`, else the element half a block away.
    fn sort_step(
        &mut self,
        x: Value,
        dims: &[usize],
        block: usize,
        mirror: bool,
        node: &dyn ToTokens,
    ) -> syn::Result<Value> {
        let Some((&n, lead)) = dims.split_last() else {
            return Ok(x);
        };
        let half = block / 2;
        let inner: Vec<usize> = if mirror { vec![block] } else { vec![2, half] };
        let mut view_shape = lead.to_vec();
        view_shape.push(n / block);
        view_shape.extend(&inner);
        let axis = view_shape.len() - inner.len();
        let view = self.ir(node, |b| b.reshape(x, &view_shape))?;
        let partner = self.ir(node, |b| b.flip(view, &[axis]))?;
        let left = self.left_half(&inner, half, &view_shape, node)?;
        let first = self.before(partner, view, node)?;
        let second = self.before(view, partner, node)?;
        let swap = self.ir(node, |b| b.select(left, first, second))?;
        let sorted = self.ir(node, |b| b.select(swap, partner, view))?;
        self.ir(node, |b| b.reshape(sorted, dims))
    }

    /// The bool tile of `shape` that holds where the row-major index in the
    /// trailing block `inner` is below `half`.
    fn left_half(
        &mut self,
        inner: &[usize],
        half: usize,
        shape: &[usize],
        node: &dyn ToTokens,
    ) -> syn::Result<Value> {
        let Ok(half) = i32::try_from(half) else {
            return Err(self.err(
                node,
                format!("a last extent of {} is too large to sort", 2 * half),
            ));
        };
        let index = self.ir(node, |b| b.iota(inner, DType::I32))?;
        let bound = self.ir(node, |b| b.full(Scalar::I32(half), inner))?;
        let left = self.ir(node, |b| b.cmp(CmpPred::Lt, index, bound))?;
        self.ir(node, |b| b.broadcast(left, shape))
    }

    /// Whether `a` goes before `b` ascending: `a < b`, or `b` is a NaN and
    /// `a` is not.
    fn before(&mut self, a: Value, b: Value, node: &dyn ToTokens) -> syn::Result<Value> {
        let less = self.ir(node, |bld| bld.cmp(CmpPred::Lt, a, b))?;
        if !self.ty(a).dtype().is_float() {
            return Ok(less);
        }
        let b_nan = self.ir(node, |bld| bld.cmp(CmpPred::Ne, b, b))?;
        let a_number = self.ir(node, |bld| bld.cmp(CmpPred::Eq, a, a))?;
        let nan_last = self.ir(node, |bld| bld.binary(BinaryOp::And, b_nan, a_number))?;
        self.ir(node, |bld| bld.binary(BinaryOp::Or, less, nan_last))
    }
}
