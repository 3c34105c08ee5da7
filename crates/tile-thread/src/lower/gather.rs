//! `gather`: each element read by every thread that holds it.
//!
//! The index tiles, the mask and the other values are brought to the
//! result's layout. For each register `v` (replicas read too: reads do not
//! race):
//!
//! ```text
//! on    = live_v ∧ mask_v
//! check.index (¬on ∨ inside) [i_0, …]            (`indexed_element`)
//! r_v   = ld.global.v1 [Σ_d i_d · stride[d]] mask(on ∧ inside) other(other_v)
//! ```
//!
//! Where a thread holds `w > 1` consecutive elements along the innermost
//! axis (`contiguity::vector_width`), its `w` reads are one access: a vector
//! read where every read's mask holds, the group's indices are those of
//! consecutive elements (equal along every axis but the innermost, `c_0 +
//! i` along it, `c_0` a multiple of `w`) and the tensor is contiguous and
//! aligned for `w`-wide accesses; else each element at its own offset. One
//! condition, computed here: for an embedding's row indices and columns
//! from an `iota`, all but the masks fold away. The indices are compared
//! in their own dtype: `c_0 + i` could wrap only past the extent, where
//! the read's mask is false. The group's checks are one check, which
//! fails where one of them does and reports the first failing element's
//! indices, as the checks one after another would (what runs between them
//! is the group's masked reads, which cannot do harm): one branch per
//! group on a GPU, not one per element. On a tensor promised aligned, a
//! group whose indices are known to be a whole aligned vector
//! ([`Lowerer::indexed_whole_vectors`]) is read under its first element's
//! mask and check alone.
//!
//! A gather of scalars is the same single read in every thread: a uniform
//! register, with no exchange between threads.

use super::contiguity::vector_width;
use super::{LowerError, Lowered, Lowerer};
use crate::program::{Reg, ThreadOpKind};
use tile_ir::index_form::AxisForm;
use tile_ir::{BinaryOp, CmpPred, DType, OpId, Scalar, Type};

impl Lowerer<'_> {
    /// Lowers `gather` (op `id`).
    pub(super) fn gather_elements(&mut self, id: OpId) -> Result<(), LowerError> {
        let func = self.func;
        let ir = func.op(id);
        let result = *ir
            .results
            .first()
            .ok_or_else(|| self.invalid(id, "no result"))?;
        let dtype = func.ty(result).dtype();
        let (param, rank, rest) = self.indexed_tensor(id)?;
        if !matches!(func.ty(result), Type::Tile(_)) {
            let mut scalars = Vec::with_capacity(rest.len());
            for &v in rest {
                scalars.push(vec![self.scalar(id, v)?]);
            }
            let [indices @ .., mask, other] = scalars.as_slice() else {
                return Err(self.invalid(id, "gather operands"));
            };
            if indices.len() != rank {
                return Err(self.invalid(id, "gather operands"));
            }
            let everyone = self.constant(tile_ir::Scalar::Bool(true));
            let described = self.check_site(id);
            let (at, on, inside) =
                self.indexed_element(param, indices, 0, (everyone, mask[0]), &described);
            let read = self.and(on, inside);
            let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
            let r = self.emit(kind, vec![at, read, other[0]], dtype);
            return self.bind(id, Lowered::Scalar(r));
        }
        let layout = self.layout_of(id, result)?;
        let columns = self.tiles_in(id, rest, &layout)?;
        let [indices @ .., mask, other] = columns.as_slice() else {
            return Err(self.invalid(id, "gather operands"));
        };
        if indices.len() != rank {
            return Err(self.invalid(id, "gather operands"));
        }
        let coords = self.coords(&layout);
        let described = self.check_site(id);
        let width = vector_width(&layout, dtype);
        let contiguous = self.contiguous(param, rank, width, dtype);
        let whole = self.indexed_whole_vectors(
            param,
            (dtype, width),
            (&rest[..rank], rest[rank]),
            layout.shape.len(),
        );
        let mut regs = Vec::with_capacity(layout.registers());
        for group in 0..layout.registers() / width {
            let lanes = group * width..(group + 1) * width;
            if whole {
                let reads = self.whole_group(
                    param,
                    indices,
                    lanes.clone(),
                    (&coords.live, mask),
                    &described,
                );
                let truth = self.constant(Scalar::Bool(true));
                regs.extend(self.gather_group(param, dtype, truth, &reads, &other[lanes]));
                continue;
            }
            let mut reads = Vec::with_capacity(width);
            let mut checks = Vec::with_capacity(width);
            for v in lanes.clone() {
                let ((at, on, inside), check) =
                    self.element_of(param, indices, v, (coords.live[v], mask[v]));
                reads.push((at, self.and(on, inside)));
                checks.push(check);
            }
            let check = self.first_failure(&checks);
            self.check_index(check, &described);
            let consecutive = self.consecutive(indices, lanes.clone(), contiguous);
            regs.extend(self.gather_group(param, dtype, consecutive, &reads, &other[lanes]));
        }
        self.bind(id, Lowered::Tile { layout, regs })
    }

    /// Whether every `width`-wide group of a `gather` or `scatter` of
    /// tensor `param` at the index tiles `indices` under `mask` (tiles of
    /// `rank` axes) is a whole aligned vector, statically: the tensor is
    /// promised aligned for it (so its rows are a whole number of vectors),
    /// the innermost index runs with the coordinate along the tile's
    /// innermost axis from a multiple of `width` (`tile_ir::index_form`),
    /// and the other indices and the mask are equal along that axis. Every
    /// lane of a group is then in bounds and masked exactly when its first
    /// lane is, so the group is one access under the first lane's mask and
    /// check.
    pub(super) fn indexed_whole_vectors(
        &self,
        param: usize,
        (dtype, width): (DType, usize),
        (indices, mask): (&[tile_ir::Value], tile_ir::Value),
        rank: usize,
    ) -> bool {
        let (Some(inner), Some((innermost, outer))) = (rank.checked_sub(1), indices.split_last())
        else {
            return false;
        };
        if width < 2 || !self.promised_aligned(param, width, dtype) {
            return false;
        }
        let forms = &self.index_forms;
        let runs = match forms.along(*innermost, inner) {
            AxisForm::Coordinate { zeros } => 1usize.checked_shl(zeros).is_none_or(|n| n >= width),
            _ => false,
        };
        let uniform = |v: tile_ir::Value| forms.along(v, inner) == AxisForm::Uniform;
        runs && outer.iter().all(|&v| uniform(v)) && uniform(mask)
    }

    /// One group `lanes` of an access that [`Self::indexed_whole_vectors`]
    /// proved a whole aligned vector, after one check of the first lane's
    /// indices where a lane holds an element (`holds`): per lane its offset
    /// (the first lane's plus its place: an aligned tensor's rows are
    /// contiguous) and whether it is accessed (it holds its element, and
    /// the first lane's mask and bounds hold).
    pub(super) fn whole_group(
        &mut self,
        param: usize,
        indices: &[Vec<Reg>],
        lanes: std::ops::Range<usize>,
        (holds, masks): (&[Reg], &[Reg]),
        described: &str,
    ) -> Vec<(Reg, Reg)> {
        let first = lanes.start;
        let mut any = holds[first];
        for &h in &holds[lanes.clone()] {
            any = self.binary(BinaryOp::Or, any, h);
        }
        let ((at, _, inside), check) = self.element_of(param, indices, first, (any, masks[first]));
        self.check_index(check, described);
        let ok = self.and(masks[first], inside);
        lanes
            .map(|v| {
                let place = self.constant(Scalar::I64((v - first) as i64));
                (
                    self.binary(BinaryOp::Add, at, place),
                    self.and(holds[v], ok),
                )
            })
            .collect()
    }

    /// The operands of one check for a group's `checks` (each `ok`, then
    /// its indices), as the checks one after another would fail: `ok`
    /// where every one holds, else the indices of the first that fails.
    pub(super) fn first_failure(&mut self, checks: &[Vec<Reg>]) -> Vec<Reg> {
        let Some((last, earlier)) = checks.split_last() else {
            return Vec::new();
        };
        let mut merged = last.clone();
        for check in earlier.iter().rev() {
            let ok = check[0];
            merged[0] = self.and(ok, merged[0]);
            for (kept, &index) in merged[1..].iter_mut().zip(&check[1..]) {
                *kept = self.select(ok, *kept, index);
            }
        }
        merged
    }

    /// Whether the registers `lanes` of the index tiles `indices` address
    /// consecutive elements, the first at a multiple of their number, of a
    /// tensor whose `lanes.len()`-wide accesses are `contiguous`.
    pub(super) fn consecutive(
        &mut self,
        indices: &[Vec<Reg>],
        lanes: std::ops::Range<usize>,
        contiguous: Reg,
    ) -> Reg {
        let width = lanes.len() as i64;
        let first = lanes.start;
        let mut all = contiguous;
        for (axis, column) in indices.iter().enumerate() {
            let start = column[first];
            let dtype = self.program.dtype(start);
            let innermost = axis + 1 == indices.len();
            // Index tiles are integers (the verifier's rule); any other
            // dtype takes the element-by-element path.
            let int = |v: i64| Scalar::wrapping_from_i128(dtype, v.into());
            let (Some(w), Some(zero)) = (int(width), int(0)) else {
                return self.constant(Scalar::Bool(false));
            };
            for (i, v) in lanes.clone().enumerate().skip(1) {
                let expected = match (innermost, int(i as i64)) {
                    (true, Some(step)) => {
                        let step = self.constant(step);
                        self.binary(BinaryOp::Add, start, step)
                    }
                    _ => start,
                };
                let same = self.emit(
                    ThreadOpKind::Cmp(CmpPred::Eq),
                    vec![column[v], expected],
                    DType::Bool,
                );
                all = self.and(all, same);
            }
            if innermost {
                let (w, zero) = (self.constant(w), self.constant(zero));
                let rem = self.binary(BinaryOp::Rem, start, w);
                let aligned =
                    self.emit(ThreadOpKind::Cmp(CmpPred::Eq), vec![rem, zero], DType::Bool);
                all = self.and(all, aligned);
            }
        }
        all
    }

    /// The reads of one group of registers (`(offset, mask)` each, with
    /// their `other`s): one `ld.global.v1`, or one `w`-wide access, a
    /// vector where the group is `consecutive` and every mask holds.
    fn gather_group(
        &mut self,
        param: usize,
        dtype: DType,
        consecutive: Reg,
        reads: &[(Reg, Reg)],
        others: &[Reg],
    ) -> Vec<Reg> {
        let width = reads.len();
        if let ([(at, read)], [other]) = (reads, others) {
            let kind = ThreadOpKind::LoadGlobal { param, width: 1 };
            return vec![self.emit(kind, vec![*at, *read, *other], dtype)];
        }
        let first = reads[0].0;
        let mut vector = consecutive;
        for &(_, read) in reads {
            vector = self.and(vector, read);
        }
        let mut operands = vec![first, vector];
        operands.extend(reads.iter().map(|&(at, _)| at));
        operands.extend(reads.iter().map(|&(_, read)| read));
        operands.extend(others);
        let kind = ThreadOpKind::LoadGlobal {
            param,
            width: width as u8,
        };
        let op = self.emit_op(kind, operands, &vec![dtype; width]);
        self.program.ops[op].results.clone()
    }
}
