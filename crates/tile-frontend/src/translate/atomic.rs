//! Atomics: `atomic_add(t, [i, j], value, mask, Ordering::Relaxed,
//! Scope::Cta)` and the other free functions at index tiles, and
//! `view.atomic_add(tile, i, j)` / `atomic_add_masked` on partition views,
//! which become the same `atomic` op at the partition's element indices.

use super::{Translator, Val};
use quote::ToTokens;
use syn::{Expr, ExprCall, ExprMethodCall};
use tile_ir::builder::AtomicAccess;
use tile_ir::{
    AtomicOp, BinaryOp, CmpPred, DType, MemOrder, MemScope, OpKind, ReduceKind, Scalar, Shape,
    Type, Value,
};

/// The update a builtin's name asks for: `atomic_add` → `add`, with the
/// rest of the name (`_masked` on views).
pub(crate) fn atomic_name(name: &str) -> Option<(AtomicOp, &str)> {
    let rest = name.strip_prefix("atomic_")?;
    AtomicOp::ALL.iter().find_map(|&op| {
        let tail = rest.strip_prefix(op.name())?;
        matches!(tail, "" | "_masked").then_some((op, tail))
    })
}

/// The memory order and scope of a call: its trailing `Ordering::X` and
/// `Scope::Y` arguments, removed from `args`.
struct Ordering {
    order: MemOrder,
    scope: MemScope,
    /// Whether the call named the order (else `order` is the default).
    order_given: bool,
}

impl Translator<'_> {
    /// Strips the trailing order and scope arguments of an atomic call.
    fn ordering(&self, args: &mut Vec<&Expr>) -> syn::Result<Ordering> {
        let mut ordering = Ordering {
            order: MemOrder::AcqRel,
            scope: MemScope::Gpu,
            order_given: false,
        };
        let mut seen_scope = false;
        while let Some(Expr::Path(p)) = args.last() {
            let segments: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let [.., kind, name] = segments.as_slice() else {
                break;
            };
            match kind.as_str() {
                "Ordering" if !ordering.order_given => {
                    ordering.order = match name.as_str() {
                        "Relaxed" => MemOrder::Relaxed,
                        "Acquire" => MemOrder::Acquire,
                        "Release" => MemOrder::Release,
                        "AcqRel" => MemOrder::AcqRel,
                        "SeqCst" => return Err(self.err(p, "atomics in kernels have no `SeqCst`: use `Ordering::AcqRel` (the default), and a barrier or a fence where a total order is needed")),
                        other => return Err(self.err(p, format!("unknown ordering `{other}`: use Relaxed, Acquire, Release or AcqRel"))),
                    };
                    ordering.order_given = true;
                }
                "Scope" if !seen_scope => {
                    ordering.scope = match name.as_str() {
                        "Cta" => MemScope::Cta,
                        "Gpu" => MemScope::Gpu,
                        other => return Err(self.err(p, format!("unknown scope `{other}`: use Scope::Cta or Scope::Gpu (tensors live in device memory, so no atomic needs a wider scope)"))),
                    };
                    seen_scope = true;
                }
                _ => break,
            }
            args.pop();
        }
        Ok(ordering)
    }

    /// `atomic_<op>(tensor, [i, ...], [cmp,] value[, mask][, order][, scope])`.
    pub(crate) fn atomic_call(
        &mut self,
        op: AtomicOp,
        c: &ExprCall,
        args: &[&Expr],
    ) -> syn::Result<Val> {
        let mut args = args.to_vec();
        let ordering = self.ordering(&mut args)?;
        let cas = op == AtomicOp::Cas;
        let usage = if cas {
            "atomic_cas(tensor, [index, ..], cmp, value[, mask][, order][, scope])"
        } else {
            &format!("atomic_{op}(tensor, [index, ..], value[, mask][, order][, scope])")
        };
        let fixed = if cas { 4 } else { 3 };
        if args.len() != fixed && args.len() != fixed + 1 {
            return Err(self.err(
                c,
                format!(
                    "`{usage}` takes {fixed} or {} arguments before the order and scope, found {}",
                    fixed + 1,
                    args.len()
                ),
            ));
        }
        let tensor = self.atomic_tensor(args[0])?;
        let Type::Tensor(tt) = self.ty(tensor) else {
            return Err(self.err(args[0], "expected a tensor"));
        };
        let indices = self.element_index(tt.rank, args[1])?;
        let operand = |s: &mut Self, e: &Expr, what: &str| -> syn::Result<Value> {
            let v = s.expr(e)?;
            let x = s.data(&v, Some(tt.dtype), e)?;
            let d = s.ty(x).dtype();
            if d != tt.dtype {
                return Err(s.err(
                    e,
                    format!(
                        "{what} is {d} but the tensor holds {}: convert it with `.cast::<{}>()`",
                        tt.dtype, tt.dtype
                    ),
                ));
            }
            Ok(x)
        };
        let cmp = if cas {
            Some((operand(self, args[2], "the compared value")?, args[2]))
        } else {
            None
        };
        let at = fixed - 1;
        let value = (operand(self, args[at], "the value")?, args[at]);
        let mask = args.get(fixed).map(|e| self.mask_arg(e)).transpose()?;
        // Every operand broadcast to one shape; all scalars make a 1-tile.
        let mut all: Vec<(Value, &Expr)> = indices.clone();
        all.extend(cmp);
        all.push(value);
        all.extend(mask);
        let shape = self.common_shape(&all, &format!("atomic_{op}"))?;
        let scalar = shape.is_none();
        let shape = shape.unwrap_or_else(|| Shape::new([1]));
        let spread = |s: &mut Self, (x, e): (Value, &Expr)| s.broadcast_to_shape(x, &shape, e);
        let indices = indices
            .into_iter()
            .map(|i| spread(self, i))
            .collect::<syn::Result<Vec<_>>>()?;
        let cmp = cmp.map(|x| spread(self, x)).transpose()?;
        let value = spread(self, value)?;
        let mask = match mask {
            Some(m) => spread(self, m)?,
            None => self.ir(c, |b| b.full(Scalar::Bool(true), shape.dims()))?,
        };
        let kind = OpKind::Atomic {
            op,
            order: ordering.order,
            scope: ordering.scope,
        };
        let access = AtomicAccess {
            tensor,
            indices: &indices,
            cmp,
            value,
            mask,
        };
        let old = self.ir(c, |b| b.atomic(kind, access))?;
        if scalar {
            // The one element of the tile: a max over one element is the
            // element itself, bit for bit (NaNs and -0 included).
            return self
                .ir(c, |b| b.reduce(ReduceKind::Max, old, 0, false))
                .map(Val::Ir);
        }
        Ok(Val::Ir(old))
    }

    /// `view.atomic_load[_masked](i, ..[, order][, scope])` and
    /// `view.atomic_store[_masked](tile, i, ..[, order][, scope])` (CUDA
    /// tiles' atomic accesses of a partition): a load is a `cas` of zero
    /// for zero, which returns each element and writes only the bits it
    /// read; a store is an `xchg` whose old values are dropped.
    pub(crate) fn view_atomic_access(
        &mut self,
        view: Value,
        (store, masked): (bool, bool),
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let Type::PartitionView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a partition view"));
        };
        let name = m.method.to_string();
        let mut args = args.to_vec();
        let mut ordering = self.ordering(&mut args)?;
        if !ordering.order_given {
            // A store releases and a load acquires by default.
            ordering.order = if store {
                MemOrder::Release
            } else {
                MemOrder::Acquire
            };
        }
        let (allowed, what) = if store {
            (
                [MemOrder::Relaxed, MemOrder::Release],
                "a store's order is `Ordering::Relaxed` or `Ordering::Release`",
            )
        } else {
            (
                [MemOrder::Relaxed, MemOrder::Acquire],
                "a load's order is `Ordering::Relaxed` or `Ordering::Acquire`",
            )
        };
        if !allowed.contains(&ordering.order) {
            return Err(self.err(m, format!("`{name}`: {what}")));
        }
        let op = if store { AtomicOp::Xchg } else { AtomicOp::Cas };
        if !op.supports(vt.dtype) {
            return Err(self.err(
                m,
                format!(
                    "`{name}` needs a view of {}, found {}",
                    op.supported_text(),
                    vt.dtype
                ),
            ));
        }
        let tensor = self.viewed_tensor(view, m)?;
        let (value, rest) = if store {
            self.check_writable(view, m)?;
            let Some((first, rest)) = args.split_first() else {
                return Err(self.err(
                    m,
                    format!("`{name}(tile, index..)` needs the tile to store"),
                ));
            };
            (
                self.view_tile_operand(first, &vt.tile, vt.dtype)?,
                rest.to_vec(),
            )
        } else {
            (
                self.ir(m, |b| b.full(Scalar::zero(vt.dtype), vt.tile.dims()))?,
                args,
            )
        };
        let (indices, mask) = self.view_elements(view, &rest, masked, m)?;
        let kind = OpKind::Atomic {
            op,
            order: ordering.order,
            scope: ordering.scope,
        };
        let cmp = (!store).then_some(value);
        let access = AtomicAccess {
            tensor,
            indices: &indices,
            cmp,
            value,
            mask,
        };
        let old = self.ir(m, |b| b.atomic(kind, access))?;
        Ok(if store { Val::Unit } else { Val::Ir(old) })
    }

    /// The tile operand of a view method: of the view's dtype, a scalar
    /// broadcast to the view's tile shape.
    fn view_tile_operand(&mut self, e: &Expr, tile: &Shape, dtype: DType) -> syn::Result<Value> {
        let v = self.expr(e)?;
        let x = self.data(&v, Some(dtype), e)?;
        let d = self.ty(x).dtype();
        if d != dtype {
            return Err(self.err(e, format!("the value is {d} but the view holds {dtype}: convert it with `.cast::<{dtype}>()`")));
        }
        match self.ty(x).tile_shape() {
            None => self.broadcast_to_shape(x, tile, e),
            Some(s) if s == tile => Ok(x),
            Some(s) => Err(self.err(
                e,
                format!("the tile has shape {s}, but the view's tiles have shape {tile}"),
            )),
        }
    }

    /// `view.num_tiles(axis)`: the extent of the view's index space along
    /// `axis`, `⌈extent(axis) / tile[axis]⌉` (`i32`), the extent the
    /// tensor's or its window's.
    pub(crate) fn view_num_tiles(
        &mut self,
        view: Value,
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let Type::PartitionView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a partition view"));
        };
        let a = self.argn(args, 1, "num_tiles(axis)", m)?;
        let axis = self.axis_arg(a[0], vt.tile.rank(), "the view")?;
        let tensor = self.viewed_tensor(view, m)?;
        let extent = vt.tile.dims()[axis] as i32;
        let dim = self.view_extent(view, tensor, axis, m)?;
        let count = self.ir(m, |b| {
            let up = b.constant(Scalar::I32(extent - 1))?;
            let step = b.constant(Scalar::I32(extent))?;
            let sum = b.binary(BinaryOp::Add, dim, up)?;
            b.binary(BinaryOp::Div, sum, step)
        })?;
        Ok(Val::Ir(count))
    }

    /// `view.atomic_<op>[_masked](tile, i, ..[, order][, scope])`: the
    /// update of every element of the partition at `(i, ..)`; the masked
    /// form skips elements outside the tensor, the other requires all
    /// inside. `cas` on views is not offered (the free function is).
    pub(crate) fn view_atomic(
        &mut self,
        view: Value,
        (op, masked): (AtomicOp, bool),
        args: &[&Expr],
        m: &ExprMethodCall,
    ) -> syn::Result<Val> {
        let name = m.method.to_string();
        if op == AtomicOp::Cas {
            return Err(self.err(&m.method, "partition views have no `atomic_cas`: call `atomic_cas(tensor, [index, ..], cmp, value, mask)` with index tiles"));
        }
        let Type::PartitionView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a partition view"));
        };
        self.check_writable(view, m)?;
        let mut args = args.to_vec();
        let ordering = self.ordering(&mut args)?;
        let Some((first, rest)) = args.split_first() else {
            return Err(self.err(
                m,
                format!("`{name}(tile, index..)` needs the tile to combine"),
            ));
        };
        let value = self.view_tile_operand(first, &vt.tile, vt.dtype)?;
        let tensor = self.viewed_tensor(view, m)?;
        let (indices, mask) = self.view_elements(view, rest, masked, m)?;
        let kind = OpKind::Atomic {
            op,
            order: ordering.order,
            scope: ordering.scope,
        };
        let access = AtomicAccess {
            tensor,
            indices: &indices,
            cmp: None,
            value,
            mask,
        };
        self.ir(m, |b| b.atomic(kind, access)).map(Val::Ir)
    }

    /// The tensor parameter `view` is a partition view of.
    fn viewed_tensor(&self, view: Value, m: &ExprMethodCall) -> syn::Result<Value> {
        self.views
            .get(&view)
            .copied()
            .ok_or_else(|| self.err(&m.receiver, "expected a view of a tensor parameter"))
    }

    /// The index tiles and mask of the partition of `view` at the partition
    /// index `args` (one integer scalar per axis; see
    /// [`Self::partition_elements`]).
    fn view_elements(
        &mut self,
        view: Value,
        args: &[&Expr],
        masked: bool,
        m: &ExprMethodCall,
    ) -> syn::Result<(Vec<Value>, Value)> {
        let Type::PartitionView(vt) = self.ty(view) else {
            return Err(self.err(&m.receiver, "expected a partition view"));
        };
        let rank = vt.tile.rank();
        let idx = self.indices(args, "a partition index")?;
        if idx.len() != rank {
            return Err(self.err(
                m,
                format!(
                    "a view of rank {rank} needs {rank} partition indices, found {}",
                    idx.len()
                ),
            ));
        }
        if !masked && self.view_is_bounded(view) {
            return Err(self.err(
                &m.method,
                "an unmasked atomic access through a `window` could reach elements outside the window but inside the tensor, which nothing would report: use the `_masked` form",
            ));
        }
        self.partition_elements(view, &vt.tile, &idx, masked, m)
    }

    /// The `i32` tensor index tiles of the partition of `view` at `idx`
    /// (`o[d] + idx[d]·tile[d] + j_d` along axis `d`, `o` the window's
    /// offsets, 0 for a whole tensor), and the mask: inside the view when
    /// `masked`, else all true (an element outside the tensor is then the
    /// atomic's run-time error).
    fn partition_elements(
        &mut self,
        view: Value,
        tile: &Shape,
        idx: &[Value],
        masked: bool,
        node: &dyn ToTokens,
    ) -> syn::Result<(Vec<Value>, Value)> {
        let rank = tile.rank();
        let mut indices = Vec::new();
        let mut mask = self.ir(node, |b| b.full(Scalar::Bool(true), tile.dims()))?;
        for (axis, &i) in idx.iter().enumerate() {
            let extent = tile.dims()[axis];
            let i = match self.ty(i).dtype() {
                DType::I32 => i,
                _ => self.ir(node, |b| b.cast(i, DType::I32))?,
            };
            let step = self.ir(node, |b| b.constant(Scalar::I32(extent as i32)))?;
            let start = self.ir(node, |b| b.binary(BinaryOp::Mul, i, step))?;
            let start = self.broadcast_to_shape(start, tile, node)?;
            let mut along = vec![1; rank];
            along[axis] = extent;
            let offsets = self.ir(node, |b| {
                let line = b.iota(&[extent], DType::I32)?;
                let line = b.reshape(line, &along)?;
                b.broadcast(line, tile.dims())
            })?;
            let at = self.ir(node, |b| b.binary(BinaryOp::Add, start, offsets))?;
            if masked {
                let tensor = self
                    .views
                    .get(&view)
                    .copied()
                    .ok_or_else(|| self.err(node, "expected a view of a tensor parameter"))?;
                let dim = self.view_extent(view, tensor, axis, node)?;
                let dim = self.broadcast_to_shape(dim, tile, node)?;
                let inside = self.ir(node, |b| b.cmp(CmpPred::Lt, at, dim))?;
                mask = self.ir(node, |b| b.binary(BinaryOp::And, mask, inside))?;
            }
            let at = match self.view_offset(view, axis) {
                Some(o) => {
                    let o = self.broadcast_to_shape(o, tile, node)?;
                    self.ir(node, |b| b.binary(BinaryOp::Add, at, o))?
                }
                None => at,
            };
            indices.push(at);
        }
        Ok((indices, mask))
    }

    /// The entries of an element index `[i, j, ..]` of a tensor of `rank`:
    /// integer scalars or tiles (`atomic_*`, `gather`).
    pub(crate) fn element_index<'e>(
        &mut self,
        rank: usize,
        e: &'e Expr,
    ) -> syn::Result<Vec<(Value, &'e Expr)>> {
        let index_exprs = self.array_elems(e, "the element index")?;
        if index_exprs.len() != rank {
            return Err(self.err(
                e,
                format!(
                    "the tensor has rank {rank}, so an element index has {rank} entries, found {}",
                    index_exprs.len()
                ),
            ));
        }
        let mut indices = Vec::new();
        for e in index_exprs {
            let v = self.expr(e)?;
            let x = self.data(&v, Some(DType::I32), e)?;
            if !self.ty(x).dtype().is_int() {
                return Err(self.err(
                    e,
                    format!(
                        "an element index must be an integer scalar or tile, found {}",
                        self.ty(x)
                    ),
                ));
            }
            indices.push((x, e));
        }
        Ok(indices)
    }

    /// A `bool` scalar or tile given as a mask.
    pub(crate) fn mask_arg<'e>(&mut self, e: &'e Expr) -> syn::Result<(Value, &'e Expr)> {
        let v = self.expr(e)?;
        let x = self.data(&v, Some(DType::Bool), e)?;
        if self.ty(x).dtype() != DType::Bool {
            return Err(self.err(e, format!("the mask must be bool, found {}", self.ty(x))));
        }
        Ok((x, e))
    }

    /// The shape the tiles among `operands` broadcast to (`None`: all are
    /// scalars), or an error at the first that does not, naming `call`.
    pub(crate) fn common_shape(
        &self,
        operands: &[(Value, &Expr)],
        call: &str,
    ) -> syn::Result<Option<Shape>> {
        let mut shape: Option<Shape> = None;
        for &(x, e) in operands {
            if let Some(s) = self.ty(x).tile_shape().cloned() {
                shape = Some(match shape {
                    None => s,
                    Some(prev) => super::ops::broadcast_shapes(prev.dims(), s.dims())
                        .map(Shape)
                        .map_err(|(p, q)| self.err(e, format!("the operands of `{call}` do not broadcast: shapes {prev} and {s} (extents {p} and {q} differ and neither is 1)")))?,
                });
            }
        }
        Ok(shape)
    }

    /// The tensor operand of an atomic: a `&mut Tensor` parameter.
    fn atomic_tensor(&mut self, e: &Expr) -> syn::Result<Value> {
        self.updated_tensor(e, "an atomic updates")
    }

    /// The tensor `e` that an op `does` (`an atomic updates`, `` `scatter`
    /// writes``): a `&mut Tensor` parameter.
    pub(crate) fn updated_tensor(&mut self, e: &Expr, does: &str) -> syn::Result<Value> {
        let v = self.expr(e)?;
        let tensor = match v {
            Val::Ir(t) if matches!(self.ty(t), Type::Tensor(_)) => t,
            other => {
                return Err(self.err(
                    e,
                    format!("{does} a tensor parameter, found {}", self.describe(&other)),
                ))
            }
        };
        if let Some((name, false)) = self.tensors.get(&tensor) {
            return Err(self.err(
                e,
                format!("cannot update {}", super::arrays::read_only(name)),
            ));
        }
        Ok(tensor)
    }
}
