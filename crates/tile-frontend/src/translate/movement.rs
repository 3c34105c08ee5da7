//! Movement methods: `reshape`, `permute`, `transpose`, `expand`,
//! `broadcast_to`, `flip`, `slice` and `pad`. Shapes and axes are
//! compile-time lists; the typing rules of the IR check the rest.

use super::control::strip_parens;
use super::{Translator, Val};
use syn::{Expr, ExprMethodCall, RangeLimits};
use tile_ir::{Shape, Value};

const MOVEMENT: [&str; 8] = [
    "reshape",
    "permute",
    "transpose",
    "expand",
    "broadcast_to",
    "flip",
    "slice",
    "pad",
];

/// Whether `name` is a movement method.
pub(crate) fn is_movement(name: &str) -> bool {
    MOVEMENT.contains(&name)
}

impl Translator<'_> {
    /// Lowers the movement method `name` on the tile `x` of shape `shape`.
    pub(crate) fn movement(
        &mut self,
        x: Value,
        shape: &Shape,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let rank = shape.rank();
        let out = match name {
            "reshape" | "expand" | "broadcast_to" => {
                let a = self.argn(args, 1, &format!("{name}([shape])"), m)?;
                let to = self.shape_arg(a[0])?;
                match name {
                    "reshape" => self.ir(m, |b| b.reshape(x, &to))?,
                    "expand" => self.ir(m, |b| b.expand(x, &to))?,
                    _ => self.ir(m, |b| b.broadcast(x, &to))?,
                }
            }
            "permute" => {
                let a = self.argn(args, 1, "permute([axes])", m)?;
                let perm = self.usize_list(a[0], "a permutation")?;
                self.ir(m, |b| b.permute(x, &perm))?
            }
            "transpose" => {
                let perm = match args {
                    [] if rank == 2 => vec![1, 0],
                    [] => {
                        return Err(self.err(
                            m,
                            format!("`transpose()` swaps the axes of a rank-2 tile, but {shape} has rank {rank}: use `transpose(a, b)` or `permute([..])`"),
                        ))
                    }
                    [p, q] => {
                        let of = format!("the tile of shape {shape}");
                        let (p, q) = (self.axis_arg(p, rank, &of)?, self.axis_arg(q, rank, &of)?);
                        let mut perm: Vec<usize> = (0..rank).collect();
                        perm.swap(p, q);
                        perm
                    }
                    _ => return Err(self.err(m, "`transpose` takes no arguments (rank 2) or two axes")),
                };
                self.ir(m, |b| b.permute(x, &perm))?
            }
            "flip" => {
                let a = self.argn(args, 1, "flip([axes])", m)?;
                let axes = self.usize_list(a[0], "an axis")?;
                self.ir(m, |b| b.flip(x, &axes))?
            }
            "slice" => {
                let a = self.argn(args, 1, "slice([start..stop, ...])", m)?;
                let elems = self.array_elems(a[0], "the slice of each axis")?;
                if elems.len() != rank {
                    return Err(self.err(
                        a[0],
                        format!(
                            "`slice` needs one range per axis of {shape}, found {}",
                            elems.len()
                        ),
                    ));
                }
                let (mut start, mut stop, mut step) = (Vec::new(), Vec::new(), Vec::new());
                for (axis, e) in elems.into_iter().enumerate() {
                    let (lo, hi, st) = self.slice_range(e, shape.dims()[axis])?;
                    start.push(lo);
                    stop.push(hi);
                    step.push(st);
                }
                self.ir(m, |b| b.slice(x, &start, &stop, &step))?
            }
            _ => {
                let a = self.argn(args, 3, "pad([low..], [high..], value)", m)?;
                let low = self.usize_list(a[0], "a padding amount")?;
                let high = self.usize_list(a[1], "a padding amount")?;
                let v = self.expr(a[2])?;
                if !v.is_const() {
                    return Err(self.err(a[2], "the padding value is a compile-time constant"));
                }
                let dtype = self.ty(x).dtype();
                let value = self.scalar_of(&v, dtype, a[2])?;
                self.ir(m, |b| b.pad(x, &low, &high, value))?
            }
        };
        Ok(Val::Ir(out))
    }

    /// One axis of a slice: `a..b`, `a..`, `..b`, `..`, or
    /// `(a..b).step_by(s)`.
    fn slice_range(&mut self, e: &Expr, extent: usize) -> syn::Result<(usize, usize, usize)> {
        let (range, step) = match e {
            Expr::MethodCall(mc) if mc.method == "step_by" && mc.args.len() == 1 => {
                let s = self.const_usize(&mc.args[0], "a slice step")?;
                (strip_parens(&mc.receiver), s)
            }
            other => (other, 1),
        };
        let Expr::Range(r) = range else {
            return Err(self.err(
                e,
                "each axis of a slice is a range `start..stop`, optionally `.step_by(s)`",
            ));
        };
        if matches!(r.limits, RangeLimits::Closed(_)) {
            return Err(self.err(r, "write slices with exclusive ends: `start..stop`"));
        }
        let lo = match &r.start {
            Some(s) => self.const_usize(s, "a slice start")?,
            None => 0,
        };
        let hi = match &r.end {
            Some(s) => self.const_usize(s, "a slice end")?,
            None => extent,
        };
        Ok((lo, hi, step))
    }
}
