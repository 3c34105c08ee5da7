//! `atomic`: each element's update issued once, by the thread that owns
//! it.
//!
//! The operands are brought to the result's layout. For each register `v`
//! with tensor index `(i_0, …)`:
//!
//! ```text
//! inside = ∧_d 0 ≤ i_d < dim[d]                     (i64)
//! on     = owner_v ∧ mask_v
//! check.index (¬on ∨ inside) [i_0, …]             (the index of a failure)
//! old_v  = atom.global.<op> [Σ_d i_d · stride[d]], value_v mask(on ∧ inside)
//! ```
//!
//! An `add` whose old values nobody reads, of a layout whose threads hold
//! `w > 1` consecutive elements along the innermost axis, is one
//! `red.global.add` of `w` elements a group instead, grouped as a gather's
//! reads (`gather.rs`): one check for the group's indices, and a vector
//! condition (consecutive indices from a multiple of `w`, a contiguous and
//! aligned tensor, every owner's mask) under which a GPU may add the group
//! in one vector reduction. Each element stays its own atomic update.
//!
//! A replicated layout (more threads than elements) keeps each element in
//! several threads, of which only the owner updates memory; when the old
//! values are used, the owners stage them in shared memory and every copy
//! reads its element back.
//!
//! An order is the program's, not one thread's: a release (`release`,
//! `acq_rel`) follows a barrier, so that what every thread of the block
//! did before it is released with it, and an acquire (`acquire`,
//! `acq_rel`) is followed by one, so that what it acquired happens before
//! every thread's later accesses (docs/semantics.md, "The memory model").
//! The updates themselves are relaxed, after each thread's release fence
//! and before its acquire fence (the release and acquire patterns of C++
//! and PTX): one fence a thread for the tile, not one an element (LLVM's
//! NVPTX back end would fence each ordered element anyway). A `relaxed`
//! atomic has neither barriers nor fences.

use super::contiguity::vector_width;
use super::shared::Source;
use super::{LowerError, Lowered, Lowerer};
use crate::program::{CheckKind, Reg, ThreadOpKind};
use tile_ir::{AtomicOp, BinaryOp, CmpPred, DType, MemOrder, MemScope, OpId, Scalar, Type};

impl<'a> Lowerer<'a> {
    /// A fence of the program: every thread's, after a barrier when it
    /// releases (so that it orders what every thread did before it) and
    /// before one when it acquires (so that it orders what every thread
    /// does after it), as an atomic's order is the program's.
    pub(super) fn fence(&mut self, order: MemOrder, scope: MemScope) {
        if order.releases() {
            self.barrier();
        }
        self.emit_op(ThreadOpKind::Fence { order, scope }, vec![], &[]);
        if order.acquires() {
            self.barrier();
        }
    }

    /// Lowers `atomic op` (op `id`).
    pub(super) fn atomic(
        &mut self,
        id: OpId,
        (op, order, scope): (AtomicOp, MemOrder, MemScope),
    ) -> Result<(), LowerError> {
        let func = self.func;
        let ir = func.op(id);
        let result = *ir
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let layout = self.layout_of(id, result)?;
        let dtype = func.ty(result).dtype();
        let (param, rank, rest) = self.indexed_tensor(id)?;
        let columns = self.tiles_in(id, rest, &layout)?;
        if columns.len() != rank + if op == AtomicOp::Cas { 3 } else { 2 } {
            return Err(self.invalid(id, "atomic operands"));
        }
        let (indices, rest) = columns.split_at(rank);
        let coords = self.coords(&layout);
        let described = self.check_site(id);
        if order.releases() {
            // Every thread's earlier accesses happen before each update: a
            // barrier, then each thread's release fence, which its relaxed
            // updates carry.
            self.fence(MemOrder::Release, scope);
        }
        let used = {
            let mut used = false;
            func.walk(&mut |user| used |= func.op(user).operands.contains(&result));
            used
        };
        let width = vector_width(&layout, dtype);
        if op == AtomicOp::Add && !used && width > 1 {
            let (values, masks) = (&rest[0], &rest[1]);
            let operands = &func.op(id).operands[1..];
            let whole = self.indexed_whole_vectors(
                param,
                (dtype, width),
                (&operands[..rank], operands[rank + 1]),
                layout.shape.len(),
            );
            let kind = |width| ThreadOpKind::AddGlobal {
                param,
                scope,
                width,
            };
            self.indexed_groups(
                kind,
                (param, indices),
                (values, masks),
                (&coords.owner, width, whole),
                &described,
            );
            if order.acquires() {
                self.fence(MemOrder::Acquire, scope);
            }
            // Nobody reads the old values.
            let zero = self.constant(Scalar::zero(dtype));
            let regs = vec![zero; layout.registers()];
            return self.bind(id, Lowered::Tile { layout, regs });
        }
        let mut old = Vec::with_capacity(layout.registers());
        for v in 0..layout.registers() {
            let mask = rest[rest.len() - 1][v];
            let (at, on, inside) =
                self.indexed_element(param, indices, v, (coords.owner[v], mask), &described);
            let mut operands = vec![at];
            operands.extend(rest[..rest.len() - 1].iter().map(|c| c[v]));
            operands.push(self.and(on, inside));
            let kind = ThreadOpKind::AtomicGlobal {
                param,
                op,
                order: MemOrder::Relaxed,
                scope,
            };
            old.push(self.emit(kind, operands, dtype));
        }
        if order.acquires() {
            // Each update happens before every thread's later accesses:
            // each thread's acquire fence after its updates, then a barrier.
            self.fence(MemOrder::Acquire, scope);
        }
        let replicated = coords.owner != coords.live;
        if replicated && used {
            // The owners' old values, read back by every copy.
            let alloc = self.stage_tile(dtype, &layout, &old);
            old = self.gather(alloc, dtype, &layout, None, |_, _, linear| Source {
                index: linear,
                inside: None,
            });
            self.release_shared(alloc);
        }
        self.bind(id, Lowered::Tile { layout, regs: old })
    }

    /// The writes of `values` where `masks` hold to the elements of tensor
    /// `param` at `indices`, by their `owner`s, `width` registers at a time
    /// (an `atomic add` whose old values nobody reads, a `scatter`):
    /// one `kind(width)` access per group (addressed as `st.global`'s),
    /// with the vector condition where `width > 1` (the group's indices
    /// consecutive from a multiple of `width`, the tensor contiguous and
    /// aligned for it, every owner's mask) and one index check per group;
    /// where the groups are `whole` vectors
    /// ([`Self::indexed_whole_vectors`]), each is its first lane's access
    /// and check.
    pub(super) fn indexed_groups(
        &mut self,
        kind: impl Fn(u8) -> ThreadOpKind,
        (param, indices): (usize, &[Vec<Reg>]),
        (values, masks): (&[Reg], &[Reg]),
        (owner, width, whole): (&[Reg], usize, bool),
        described: &str,
    ) {
        let dtype = self.program.dtype(values[0]);
        let contiguous = self.contiguous(param, indices.len(), width, dtype);
        for group in 0..values.len() / width {
            let lanes = group * width..(group + 1) * width;
            if whole {
                let updates =
                    self.whole_group(param, indices, lanes.clone(), (owner, masks), described);
                let all = updates
                    .iter()
                    .fold(updates[0].1, |all, &(_, u)| self.and(all, u));
                let mut operands = vec![updates[0].0, all];
                operands.extend(updates.iter().map(|&(at, _)| at));
                operands.extend_from_slice(&values[lanes]);
                operands.extend(updates.iter().map(|&(_, update)| update));
                self.emit_op(kind(width as u8), operands, &[]);
                continue;
            }
            let mut updates = Vec::with_capacity(width);
            let mut checks = Vec::with_capacity(width);
            for v in lanes.clone() {
                let ((at, on, inside), check) =
                    self.element_of(param, indices, v, (owner[v], masks[v]));
                updates.push((at, self.and(on, inside)));
                checks.push(check);
            }
            let check = self.first_failure(&checks);
            self.check_index(check, described);
            let mut operands = vec![updates[0].0];
            if width > 1 {
                let mut ok = self.consecutive(indices, lanes.clone(), contiguous);
                for &(_, update) in &updates {
                    ok = self.and(ok, update);
                }
                operands.push(ok);
                operands.extend(updates.iter().map(|&(at, _)| at));
            }
            operands.extend_from_slice(&values[lanes]);
            operands.extend(updates.iter().map(|&(_, update)| update));
            self.emit_op(kind(width as u8), operands, &[]);
        }
    }

    /// The tensor parameter and rank of an op at index tiles (`atomic`,
    /// `gather`: its first operand), and its other operands.
    pub(super) fn indexed_tensor(
        &mut self,
        id: OpId,
    ) -> Result<(usize, usize, &'a [tile_ir::Value]), LowerError> {
        let func = self.func;
        let (tensor, rest) = func
            .op(id)
            .operands
            .split_first()
            .ok_or_else(|| self.invalid(id, "no operands"))?;
        let Type::Tensor(t) = func.ty(*tensor) else {
            return Err(self.invalid(id, "the operand is not a tensor"));
        };
        match self.get(id, *tensor)? {
            Lowered::Tensor { param } => Ok((param, t.rank, rest)),
            _ => Err(self.invalid(id, "the operand is not a tensor parameter")),
        }
    }

    /// The tile operands `values` of op `id`, each brought to `layout`.
    pub(super) fn tiles_in(
        &mut self,
        id: OpId,
        values: &[tile_ir::Value],
        layout: &super::DistLayout,
    ) -> Result<Vec<Vec<Reg>>, LowerError> {
        let mut columns = Vec::with_capacity(values.len());
        for &v in values {
            let (from, regs) = self.tile(id, v)?;
            if from.shape != layout.shape {
                return Err(self.invalid(id, "operands of different shapes"));
            }
            columns.push(self.tile_in((id, v), (&from, &regs), layout)?);
        }
        Ok(columns)
    }

    /// The element offset `at` of register `v`'s tensor index
    /// (`indices[d][v]` along axis `d` of tensor parameter `param`), whether
    /// the thread accesses it (`on`: it holds the element and its mask) and
    /// whether it lies in the tensor, after a `check.index` that fails where
    /// `on` holds and the index is outside (`atomic`, `gather`):
    ///
    /// ```text
    /// inside = ∧_d 0 ≤ i_d < dim[d]                     (i64)
    /// at     = Σ_d i_d · stride[d]
    /// on     = holds_v ∧ mask_v
    /// check.index (¬on ∨ inside) [i_0, …]
    /// ```
    pub(super) fn indexed_element(
        &mut self,
        param: usize,
        indices: &[Vec<Reg>],
        v: usize,
        (holds, mask): (Reg, Reg),
        described: &str,
    ) -> (Reg, Reg, Reg) {
        let (element, check) = self.element_of(param, indices, v, (holds, mask));
        self.check_index(check, described);
        element
    }

    /// The offset, `on` and `inside` of [`Self::indexed_element`], and the
    /// operands of its check (`ok`, then the indices), not yet emitted.
    pub(super) fn element_of(
        &mut self,
        param: usize,
        indices: &[Vec<Reg>],
        v: usize,
        (holds, mask): (Reg, Reg),
    ) -> ((Reg, Reg, Reg), Vec<Reg>) {
        let zero = self.constant(Scalar::I64(0));
        let mut inside = self.constant(Scalar::Bool(true));
        let mut at: Option<Reg> = None;
        let mut index = Vec::with_capacity(indices.len());
        for (d, column) in indices.iter().enumerate() {
            let i = self.cast(column[v], DType::I64);
            let extent = self.tensor_meta(param, d, false);
            let low = self.emit(ThreadOpKind::Cmp(CmpPred::Ge), vec![i, zero], DType::Bool);
            let high = self.emit(ThreadOpKind::Cmp(CmpPred::Lt), vec![i, extent], DType::Bool);
            inside = self.and(inside, low);
            inside = self.and(inside, high);
            let stride = self.tensor_meta(param, d, true);
            let term = self.binary(BinaryOp::Mul, i, stride);
            at = Some(match at {
                Some(a) => self.binary(BinaryOp::Add, a, term),
                None => term,
            });
            index.push(i);
        }
        let on = self.and(holds, mask);
        let off = self.emit(
            ThreadOpKind::Unary(tile_ir::UnaryOp::Not),
            vec![on],
            DType::Bool,
        );
        let ok = self.binary(BinaryOp::Or, off, inside);
        let mut check = vec![ok];
        check.extend(index);
        ((at.unwrap_or(zero), on, inside), check)
    }

    /// `check.index` with `operands` (`ok`, then the indices) for the op
    /// `described`.
    pub(super) fn check_index(&mut self, operands: Vec<Reg>, described: &str) {
        self.emit_op(
            ThreadOpKind::Check {
                kind: CheckKind::Index,
                op: described.to_string(),
            },
            operands,
            &[],
        );
    }
}
