//! tinygrad's shape-changing movement methods, each a composition of the
//! IR's `reshape`, `broadcast`, `slice` and `cat` (no new op, so every
//! stage runs them): `squeeze`, `unsqueeze`, `flatten`, `unflatten`,
//! `repeat`, `repeat_interleave`, `roll`, `split`, `chunk`, and the
//! builtin `stack`. Shapes, axes and counts are compile-time values.

use super::{Translator, Val};
use syn::{Expr, ExprCall, ExprMethodCall};
use tile_ir::{Shape, Value};

/// The methods of this module.
const METHODS: [&str; 9] = [
    "squeeze",
    "unsqueeze",
    "flatten",
    "unflatten",
    "repeat",
    "repeat_interleave",
    "roll",
    "split",
    "chunk",
];

/// Whether `name` is one of this module's methods.
pub(crate) fn is_reshaping(name: &str) -> bool {
    METHODS.contains(&name)
}

impl Translator<'_> {
    /// Lowers the method `name` on the tile `x` of shape `shape`.
    pub(crate) fn reshaping(
        &mut self,
        x: Value,
        shape: &Shape,
        name: &str,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let dims = shape.dims();
        let of = format!("the tile of shape {shape}");
        match name {
            "squeeze" => {
                let to: Vec<usize> = match args {
                    [] => dims.iter().copied().filter(|&d| d != 1).collect(),
                    [a] => {
                        let axis = self.axis_arg(a, dims.len(), &of)?;
                        if dims[axis] != 1 {
                            return Err(self.err(*a, format!("`squeeze({axis})` removes an axis of extent 1, but axis {axis} of {shape} has extent {}", dims[axis])));
                        }
                        without(dims, axis)
                    }
                    _ => {
                        return Err(self.err(
                            m,
                            "`squeeze` takes no argument (every axis of extent 1) or one axis",
                        ))
                    }
                };
                if to.is_empty() {
                    return Err(self.err(m, format!("`squeeze` would leave {shape} with no axis; a tile keeps at least one (reduce it to a scalar with `.sum(0)`)")));
                }
                self.reshaped(x, &to, m)
            }
            "unsqueeze" => {
                let a = self.argn(args, 1, "unsqueeze(axis)", m)?;
                // An axis of the result: 0..=rank, negative from the end.
                let axis = self.axis_arg(
                    a[0],
                    dims.len() + 1,
                    &format!("the result of unsqueezing {shape}"),
                )?;
                let mut to = dims.to_vec();
                to.insert(axis, 1);
                self.reshaped(x, &to, m)
            }
            "flatten" => {
                let (start, end) = match args {
                    [] => (0, dims.len() - 1),
                    [s, e] => (self.axis_arg(s, dims.len(), &of)?, self.axis_arg(e, dims.len(), &of)?),
                    _ => return Err(self.err(m, "`flatten` takes no arguments (every axis) or the first and last axis to merge")),
                };
                if start > end {
                    return Err(self.err(
                        m,
                        format!("`flatten({start}, {end})`: the first axis comes after the last"),
                    ));
                }
                let merged: usize = dims[start..=end].iter().product();
                let to: Vec<usize> = dims[..start]
                    .iter()
                    .copied()
                    .chain([merged])
                    .chain(dims[end + 1..].iter().copied())
                    .collect();
                self.reshaped(x, &to, m)
            }
            "unflatten" => {
                let a = self.argn(args, 2, "unflatten(axis, [sizes])", m)?;
                let axis = self.axis_arg(a[0], dims.len(), &of)?;
                let sizes = self.usize_list(a[1], "a size")?;
                if sizes.iter().product::<usize>() != dims[axis] {
                    return Err(self.err(a[1], format!("`unflatten` splits axis {axis} of {shape} (extent {}) into {sizes:?}, whose product differs", dims[axis])));
                }
                let to: Vec<usize> = dims[..axis]
                    .iter()
                    .copied()
                    .chain(sizes)
                    .chain(dims[axis + 1..].iter().copied())
                    .collect();
                self.reshaped(x, &to, m)
            }
            "repeat" => {
                let a = self.argn(args, 1, "repeat([repeats])", m)?;
                let repeats = self.usize_list(a[0], "a repeat count")?;
                self.repeat(x, dims, &repeats, a[0])
            }
            "repeat_interleave" => {
                let a = self.argn(args, 2, "repeat_interleave(repeats, axis)", m)?;
                let r = self.const_usize(a[0], "a repeat count")?;
                let axis = self.axis_arg(a[1], dims.len(), &of)?;
                if r == 0 {
                    return Err(
                        self.err(a[0], "a tile's extents are positive: repeat at least once")
                    );
                }
                // [.., d, ..] → [.., d, 1, ..] → [.., d, r, ..] → [.., d·r, ..].
                let mut inner = dims.to_vec();
                inner.insert(axis + 1, 1);
                let mut spread = inner.clone();
                spread[axis + 1] = r;
                let mut to = dims.to_vec();
                to[axis] *= r;
                let y = self.ir(m, |b| {
                    let y = b.reshape(x, &inner)?;
                    let y = b.broadcast(y, &spread)?;
                    b.reshape(y, &to)
                })?;
                Ok(Val::Ir(y))
            }
            "roll" => {
                let a = self.argn(args, 2, "roll(shift, axis)", m)?;
                let shift = self.const_int(a[0], "a shift")?;
                let axis = self.axis_arg(a[1], dims.len(), &of)?;
                let n = dims[axis] as i128;
                // Element i moves to (i + shift) mod n: the last `s` come first.
                let s = shift.rem_euclid(n) as usize;
                if s == 0 {
                    return Ok(Val::Ir(x));
                }
                let tail = self.along(x, dims, axis, dims[axis] - s, dims[axis], m)?;
                let head = self.along(x, dims, axis, 0, dims[axis] - s, m)?;
                self.ir(m, |b| b.cat(&[tail, head], axis)).map(Val::Ir)
            }
            "split" => {
                let a = self.argn(args, 2, "split([sizes], axis)", m)?;
                let sizes = self.usize_list(a[0], "a size")?;
                let axis = self.axis_arg(a[1], dims.len(), &of)?;
                if sizes.contains(&0) || sizes.iter().sum::<usize>() != dims[axis] {
                    return Err(self.err(a[0], format!("`split` cuts axis {axis} of {shape} (extent {}) into positive sizes that add up to it, found {sizes:?}", dims[axis])));
                }
                self.pieces(x, dims, axis, &sizes, m)
            }
            _ => {
                let a = self.argn(args, 2, "chunk(chunks, axis)", m)?;
                let chunks = self.const_usize(a[0], "a number of chunks")?;
                let axis = self.axis_arg(a[1], dims.len(), &of)?;
                if chunks == 0 {
                    return Err(self.err(a[0], "`chunk` needs at least one chunk"));
                }
                // torch's and tinygrad's rule: pieces of ⌈n / chunks⌉, the
                // last one shorter, and fewer pieces when they run out.
                let size = dims[axis].div_ceil(chunks);
                let mut sizes = vec![size; dims[axis] / size];
                if !dims[axis].is_multiple_of(size) {
                    sizes.push(dims[axis] % size);
                }
                self.pieces(x, dims, axis, &sizes, m)
            }
        }
    }

    /// `stack([a, b, ..], axis)`: the tiles (of one shape) joined along a
    /// new axis `axis` of the result.
    pub(crate) fn stack_call(&mut self, c: &ExprCall, args: &[&Expr]) -> syn::Result<Val> {
        let a = self.argn(args, 2, "stack([a, b, ...], axis)", c)?;
        let parts = self.array_elems(a[0], "the tiles to stack")?;
        let mut tiles = Vec::new();
        for e in parts {
            let v = self.expr(e)?;
            tiles.push((self.data(&v, None, e)?, e));
        }
        let Some(&(first, first_expr)) = tiles.first() else {
            return Err(self.err(a[0], "`stack` needs at least one tile"));
        };
        let Some(shape) = self.ty(first).tile_shape().cloned() else {
            return Err(self.err(
                first_expr,
                format!("`stack` joins tiles, found {}", self.ty(first)),
            ));
        };
        let axis = self.axis_arg(
            a[1],
            shape.rank() + 1,
            &format!("the result of stacking tiles of shape {shape}"),
        )?;
        let mut to = shape.dims().to_vec();
        to.insert(axis, 1);
        let mut lifted = Vec::new();
        for (t, e) in tiles {
            if self.ty(t).tile_shape() != Some(&shape) {
                return Err(self.err(
                    e,
                    format!(
                        "`stack` joins tiles of one shape: {shape} and {}",
                        self.ty(t)
                    ),
                ));
            }
            lifted.push(self.ir(e, |b| b.reshape(t, &to))?);
        }
        if lifted.len() == 1 {
            return Ok(Val::Ir(lifted[0]));
        }
        self.ir(c, |b| b.cat(&lifted, axis)).map(Val::Ir)
    }

    /// `x` reshaped to `to`.
    fn reshaped(&mut self, x: Value, to: &[usize], m: &ExprMethodCall) -> syn::Result<Val> {
        self.ir(m, |b| b.reshape(x, to)).map(Val::Ir)
    }

    /// tinygrad's `repeat`: the shape is aligned to the right under the
    /// repeat counts (a longer list adds leading axes), and each axis `s`
    /// repeated `r` times becomes `r · s`, the whole tile over again.
    fn repeat(
        &mut self,
        x: Value,
        dims: &[usize],
        repeats: &[usize],
        node: &Expr,
    ) -> syn::Result<Val> {
        if repeats.len() < dims.len() {
            return Err(self.err(node, format!("`repeat` needs a count for each of the {} axes (more add leading axes), found {}", dims.len(), repeats.len())));
        }
        if repeats.contains(&0) {
            return Err(self.err(
                node,
                "a tile's extents are positive: repeat each axis at least once",
            ));
        }
        let base: Vec<usize> = std::iter::repeat_n(1, repeats.len() - dims.len())
            .chain(dims.iter().copied())
            .collect();
        // [s] → [1, s] → [r, s] → [r·s], per axis at once.
        let lifted: Vec<usize> = base.iter().flat_map(|&s| [1, s]).collect();
        let spread: Vec<usize> = base
            .iter()
            .zip(repeats)
            .flat_map(|(&s, &r)| [r, s])
            .collect();
        let to: Vec<usize> = base.iter().zip(repeats).map(|(&s, &r)| r * s).collect();
        let y = self.ir(node, |b| {
            let y = b.reshape(x, &lifted)?;
            let y = b.broadcast(y, &spread)?;
            b.reshape(y, &to)
        })?;
        Ok(Val::Ir(y))
    }

    /// Elements `lo..hi` of `x` along `axis`.
    fn along(
        &mut self,
        x: Value,
        dims: &[usize],
        axis: usize,
        lo: usize,
        hi: usize,
        m: &ExprMethodCall,
    ) -> syn::Result<Value> {
        let mut start = vec![0; dims.len()];
        let mut stop = dims.to_vec();
        start[axis] = lo;
        stop[axis] = hi;
        let step = vec![1; dims.len()];
        self.ir(m, |b| b.slice(x, &start, &stop, &step))
    }

    /// The consecutive pieces of `x` along `axis` of the given sizes, as a
    /// tuple (one piece: the tile itself).
    fn pieces(
        &mut self,
        x: Value,
        dims: &[usize],
        axis: usize,
        sizes: &[usize],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let mut at = 0;
        let mut out = Vec::new();
        for &size in sizes {
            out.push(Val::Ir(self.along(x, dims, axis, at, at + size, m)?));
            at += size;
        }
        Ok(if out.len() == 1 {
            out.remove(0)
        } else {
            Val::Tuple(out)
        })
    }
}

/// `dims` without axis `axis`.
fn without(dims: &[usize], axis: usize) -> Vec<usize> {
    dims.iter()
        .enumerate()
        .filter(|&(a, _)| a != axis)
        .map(|(_, &d)| d)
        .collect()
}
