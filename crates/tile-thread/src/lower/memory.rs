//! Global memory: `dim`, `partition_view`, loads and stores.
//!
//! A partition view is the pair (tensor parameter, tile shape); it emits no
//! code. A load or store of the partition at index `(i_0, …)` computes, for
//! each register `v` with tile coordinate `c_v`,
//!
//! ```text
//! g_d     = i_d * tile[d] + c_v[d]
//! address = Σ_d g_d * stride[d]                    (i64, elements from element zero)
//! mask    = live_v ∧ inside                        (masked or checked; `access.rs`)
//! ```
//!
//! and issues one `ld.global`/`st.global` per register, or, when the layout
//! gives a thread `w` consecutive elements of a row, one `w`-wide access per
//! `w` registers, vector when a runtime contiguity test holds and element
//! by element otherwise (see `Lowerer::vectorized`): strides and base
//! addresses are runtime values, so the specialization is checked, not
//! assumed. A tensor promised aligned (`tensor<f32, 2, aligned>`, which the
//! launch checks) needs no test: its vectors are whole, each masked as
//! one, with no element-by-element path. Masked-off elements of a load take
//! the padding value; dead registers are always masked off.
//!
//! Which elements are inside the tensor, and how unmasked accesses are
//! checked, is `access.rs`'s.

use super::access::Access;
use super::contiguity::vector_width;
use super::{LowerError, Lowered, Lowerer};
use crate::layout_assign::DistLayout;
use crate::program::{Reg, ThreadOpKind};
use tile_ir::{BinaryOp, DType, OpId, OpKind, Scalar, Value};

/// Emits one access of `masks.len()` elements: `(lowerer, addressing,
/// masks)` → the loaded registers (none for a store), where `addressing`
/// is the access's leading operands, `[%addr]` or `[%addr, %ok, %lane...]`
/// ([`crate::program::GlobalOperands`]).
trait EmitAccess: for<'l, 'a> FnMut(&'l mut Lowerer<'a>, &[Reg], &[Reg]) -> Vec<Reg> {}
impl<F: for<'l, 'a> FnMut(&'l mut Lowerer<'a>, &[Reg], &[Reg]) -> Vec<Reg>> EmitAccess for F {}

impl Lowerer<'_> {
    /// A tensor's extent (`i64`) or stride along an axis, hoisted.
    pub(super) fn tensor_meta(&mut self, param: usize, axis: usize, stride: bool) -> Reg {
        if let Some(&r) = self.meta.get(&(param, axis, stride)) {
            return r;
        }
        let r = if stride {
            self.hoist(
                ThreadOpKind::TensorStride { param, axis },
                vec![],
                DType::I64,
            )
        } else {
            let d = self.hoist(ThreadOpKind::TensorDim { param, axis }, vec![], DType::I32);
            self.hoisted_cast(d, DType::I64)
        };
        self.meta.insert((param, axis, stride), r);
        r
    }

    /// Lowers `dim`, `partition_view`, loads and stores.
    pub(super) fn memory(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let op = func.op(id);
        match &op.kind {
            OpKind::Dim { axis } => {
                let param = self.tensor_param(id, op.operands.first().copied())?;
                let r = self.hoist(
                    ThreadOpKind::TensorDim { param, axis: *axis },
                    vec![],
                    DType::I32,
                );
                self.bind(id, Lowered::Scalar(r))
            }
            OpKind::PartitionView { shape } => {
                let param = self.tensor_param(id, op.operands.first().copied())?;
                let window = self.view_window(id, param, shape.rank(), &op.operands[1..])?;
                self.bind(
                    id,
                    Lowered::PartitionView {
                        param,
                        tile: shape.clone(),
                        window,
                    },
                )
            }
            OpKind::Load | OpKind::LoadMasked { .. } if self.deferred.contains(&id) => {
                // A load its loop copies ahead is bound to its stage already.
                let staged = op
                    .results
                    .first()
                    .is_some_and(|r| matches!(self.env.get(r), Some(Lowered::Staged { .. })));
                if staged {
                    return Ok(());
                }
                self.bind(id, Lowered::Deferred { load: id })
            }
            OpKind::Load | OpKind::LoadMasked { .. } => {
                let result = *op
                    .results
                    .first()
                    .ok_or_else(|| self.invalid(id, "no result"))?;
                let layout = self.layout_of(id, result)?;
                let regs = self.load_tile(id, &layout)?;
                self.bind(id, Lowered::Tile { layout, regs })
            }
            OpKind::Store | OpKind::StoreMasked => {
                let (value, rest) = op
                    .operands
                    .split_first()
                    .ok_or_else(|| self.invalid(id, "no operands"))?;
                let dtype = func.ty(*value).dtype();
                let (layout, regs) = self.tile(id, *value)?;
                let (layout, regs) = self.store_layout(dtype, layout, regs);
                let access = self.access(
                    id,
                    rest,
                    &layout,
                    matches!(op.kind, OpKind::StoreMasked),
                    true,
                )?;
                let mut next = 0;
                self.vectorized(&access, &layout, dtype, |s, addressing, masks| {
                    let width = masks.len();
                    let mut operands = addressing.to_vec();
                    operands.extend(&regs[next..next + width]);
                    operands.extend(masks);
                    next = (next + width) % regs.len().max(1);
                    let kind = ThreadOpKind::StoreGlobal {
                        param: access.param,
                        width: width as u8,
                    };
                    let op = s.emit_op(kind, operands, &[]);
                    s.program.notes.insert(op, access.note.clone());
                    Vec::new()
                });
                Ok(())
            }
            OpKind::Atomic { op, order, scope } => self.atomic(id, (*op, *order, *scope)),
            OpKind::Gather => self.gather_elements(id),
            OpKind::Scatter => self.scatter_elements(id),
            _ => Err(self.invalid(id, "not a memory op")),
        }
    }

    /// The registers of the `load` or `load_masked` `id` read in `layout`.
    pub(super) fn load_tile(
        &mut self,
        id: OpId,
        layout: &DistLayout,
    ) -> Result<Vec<Reg>, LowerError> {
        // Registers of one thread that hold one element (a tile loaded for
        // a broadcast over an axis it lacks) share one load.
        if let Some((distinct, holder)) = layout.without_register_copies() {
            let regs = self.load_tile(id, &distinct)?;
            return Ok(holder.into_iter().map(|u| regs[u]).collect());
        }
        let func = self.func;
        let op = func.op(id);
        let result = *op
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let dtype = func.ty(result).dtype();
        let masked = matches!(op.kind, OpKind::LoadMasked { .. });
        let access = self.access(id, &op.operands, layout, masked, false)?;
        let other = match &op.kind {
            OpKind::LoadMasked { padding } => padding
                .value(dtype)
                .ok_or_else(|| self.invalid(id, format!("padding {padding:?} for {dtype}")))?,
            _ => Scalar::zero(dtype),
        };
        let other = self.constant(other);
        Ok(
            self.vectorized(&access, layout, dtype, |s, addressing, masks| {
                let width = masks.len();
                let mut operands = addressing.to_vec();
                operands.extend(masks);
                operands.extend(vec![other; masks.len()]);
                let kind = ThreadOpKind::LoadGlobal {
                    param: access.param,
                    width: width as u8,
                };
                let op = s.emit_op(kind, operands, &vec![dtype; width]);
                s.program.notes.insert(op, access.note.clone());
                s.program.ops[op].results.clone()
            }),
        )
    }

    /// Emits the accesses of `access` through `emit`: one per register,
    /// or — when the layout holds `w > 1` consecutive elements per thread
    /// along the innermost axis — one `w`-wide access per `w` registers,
    /// a vector access where `contiguous` (the uniform runtime test that
    /// the innermost stride is 1, every other stride a multiple of `w`,
    /// and element zero aligned to `w` elements) and every mask hold (one
    /// condition, computed here), and element by element at their strided
    /// offsets otherwise. Vector `g`
    /// covers registers `g·w .. g·w + w`, whose elements are then
    /// consecutive in memory and aligned.
    fn vectorized(
        &mut self,
        access: &Access,
        layout: &DistLayout,
        dtype: DType,
        mut emit: impl EmitAccess,
    ) -> Vec<Reg> {
        let inner = layout.shape.len() - 1;
        let width = vector_width(layout, dtype);
        let mut regs = Vec::new();
        if width <= 1 {
            for (v, &m) in access.masks.iter().enumerate() {
                let address = self.address(access, v, false);
                regs.extend(emit(self, &[address], &[m]));
            }
            return regs;
        }
        // A window's base and extent may break the promise's alignment.
        let whole = access.window.as_ref().is_none_or(|w| {
            w.whole_groups(width, |p| {
                let rows = self.tensor_type(p).map(|t| t.dtype);
                rows.is_some_and(|d| self.promised_aligned(p, width, d))
            })
        });
        if whole && self.promised_aligned(access.param, width, dtype) {
            if let Some(regs) = self.whole_vectors(access, width, &mut emit) {
                return regs;
            }
        }
        let view = (access.param, access.window.as_ref());
        let contiguous = self.view_contiguous(view, layout.shape.len(), width, dtype);
        // The element-by-element path's offsets start from the partition's
        // origin hidden from LLVM (`opaque`): computed from it where that
        // path runs, they are no induction variables of an enclosing loop.
        let hidden: Vec<Reg> = access
            .origins
            .iter()
            .map(|&o| self.emit(ThreadOpKind::Opaque, vec![o], DType::I64))
            .collect();
        for g in 0..access.masks.len() / width {
            // The group's elements are consecutive along the innermost axis
            // and share the other coordinates: all are inside the tensor
            // when the last is.
            let last = (g + 1) * width - 1;
            let mut vector = self.and(contiguous, access.inside[last]);
            for v in g * width..=last {
                vector = self.and(vector, access.holders[v]);
            }
            // The vector's address takes the innermost stride as 1 (its
            // test); each lane's, every stride: the previous lane's plus
            // one innermost stride. (Products `i · stride` would be
            // uniform, computed once before any loop, and each would stay
            // live through it for a path that rarely runs.)
            let mut addressing = vec![self.address(access, g * width, true), vector];
            let first = self.fallback_address(access, &hidden, g * width);
            addressing.push(first);
            let stride = self.tensor_meta(access.param, inner, true);
            let mut lane = first;
            for _ in 1..width {
                lane = self.binary(BinaryOp::Add, lane, stride);
                addressing.push(lane);
            }
            regs.extend(emit(
                self,
                &addressing,
                &access.masks[g * width..(g + 1) * width],
            ));
        }
        regs
    }

    /// The accesses of [`Self::vectorized`] for a tensor promised aligned
    /// ([`Self::promised_aligned`]), when each group's registers have one
    /// holder: a group then starts at a multiple of `width` elements along
    /// rows that are contiguous, aligned and a whole number of groups
    /// long, so its elements are all inside the tensor or all outside. Its
    /// vector access is masked by its last register's mask, which is every
    /// register's, and has no element-by-element path to fall back on.
    /// `None` when some group's registers have different holders.
    fn whole_vectors(
        &mut self,
        access: &Access,
        width: usize,
        emit: &mut impl EmitAccess,
    ) -> Option<Vec<Reg>> {
        let groups = access.masks.len() / width;
        let one_holder = (0..groups).all(|g| {
            let holders = &access.holders[g * width..(g + 1) * width];
            holders.iter().all(|&h| h == holders[0])
        });
        if !one_holder {
            return None;
        }
        let mut regs = Vec::new();
        for g in 0..groups {
            let mask = access.masks[(g + 1) * width - 1];
            let first = self.address(access, g * width, true);
            let mut addressing = vec![first, mask, first];
            for i in 1..width {
                let i = self.constant(Scalar::I64(i as i64));
                addressing.push(self.binary(BinaryOp::Add, first, i));
            }
            regs.extend(emit(self, &addressing, &vec![mask; width]));
        }
        Some(regs)
    }

    fn tensor_param(&mut self, id: OpId, v: Option<Value>) -> Result<usize, LowerError> {
        let v = v.ok_or_else(|| self.invalid(id, "no tensor operand"))?;
        match self.get(id, v)? {
            Lowered::Tensor { param } => Ok(param),
            _ => Err(self.invalid(id, "the operand is not a tensor parameter")),
        }
    }

    /// The element offset of register `v` of `access`: `Σ_d g_d ·
    /// stride[d]`, with the innermost stride taken as 1 when `unit_inner`
    /// (inside a contiguous access's branch), emitted where it is used.
    ///
    /// With the innermost stride taken as 1 and an additive layout (register
    /// `v`'s coordinate along axis `d` is the thread's `t_d` plus a constant
    /// `k_vd`), the innermost axis contributes `(i_n·tile[n] + t_n) + k_vn`:
    /// every register shares the sum, and the constant becomes the access's
    /// immediate offset. Registers then keep no innermost position of their
    /// own, computed before a loop and live through it. The form agrees with
    /// `g_n` wherever the register is inside the tensor, the only place its
    /// address is used.
    fn address(&mut self, access: &Access, v: usize, unit_inner: bool) -> Reg {
        let mut position = access.positions[v].clone();
        let inner = position.len().checked_sub(1);
        let split = access.inner_split.as_ref().filter(|_| unit_inner);
        let offset = match (split, inner) {
            (Some((thread, constants)), Some(inner)) => {
                position[inner] = self.binary(BinaryOp::Add, access.origins[inner], *thread);
                let offset = self.offset(access.param, &position, unit_inner);
                match constants[v] {
                    0 => offset,
                    k => {
                        let k = self.constant(Scalar::I64(k));
                        self.binary(BinaryOp::Add, offset, k)
                    }
                }
            }
            _ => self.offset(access.param, &position, unit_inner),
        };
        self.window_offset(access.window.as_ref(), offset)
    }

    /// `Σ_d position[d] · stride[d]` of tensor `param`, the innermost
    /// stride taken as 1 when `unit_inner`.
    fn offset(&mut self, param: usize, position: &[Reg], unit_inner: bool) -> Reg {
        let mut address: Option<Reg> = None;
        for (d, &g) in position.iter().enumerate() {
            let term = if unit_inner && d + 1 == position.len() {
                g
            } else {
                let stride = self.tensor_meta(param, d, true);
                self.binary(BinaryOp::Mul, g, stride)
            };
            address = Some(match address {
                Some(a) => self.binary(BinaryOp::Add, a, term),
                None => term,
            });
        }
        address.unwrap_or_else(|| self.constant(Scalar::I64(0)))
    }

    /// The element offset of register `v` of `access` from the hidden
    /// origins `hidden` (see [`Self::vectorized`]), with every stride.
    fn fallback_address(&mut self, access: &Access, hidden: &[Reg], v: usize) -> Reg {
        let position: Vec<Reg> = hidden
            .iter()
            .zip(&access.coordinates[v])
            .map(|(&origin, &c)| self.binary(BinaryOp::Add, origin, c))
            .collect();
        let offset = self.offset(access.param, &position, false);
        self.window_offset(access.window.as_ref(), offset)
    }

    /// `a ∧ b`, folding the constant `true`.
    pub(super) fn and(&mut self, a: Reg, b: Reg) -> Reg {
        if self.is_true(a) {
            b
        } else if self.is_true(b) {
            a
        } else {
            self.binary(BinaryOp::And, a, b)
        }
    }
}
