//! The operand rules of the tensor-memory ops (`tmem.*`, `tcgen05.*`).

use super::Checker;
use crate::program::{OpId, Roles, ThreadOpKind};
use tile_hw::tcgen05::{allocation_columns, COLUMNS, GROUPS_PER_COLUMN, WARP_LANES};
use tile_ir::DType;

impl Checker<'_> {
    /// Whether a tensor-memory op `kind` with operands `x` (dtypes, by
    /// role) gives `results`; an error for a rule with its own message.
    pub(super) fn tcgen05_op(
        &self,
        id: OpId,
        kind: &ThreadOpKind,
        x: &Roles<'_, DType>,
        results: &[DType],
    ) -> Result<bool, super::VerifyError> {
        let bad = |rule: &str| Err(self.fail(Some(id), rule.to_string()));
        let alloc_dtype = |alloc| self.program.shared.get(alloc).map(|s| s.dtype);
        let columns_ok = |c: u16| allocation_columns(usize::from(c)) == Some(u32::from(c));
        Ok(match kind {
            ThreadOpKind::TmemAlloc { columns, slot } => {
                if !columns_ok(*columns) {
                    return bad(
                        "tensor memory allocated in other than a power of two of 32 to 512 columns",
                    );
                }
                if !matches!(alloc_dtype(*slot), Some(DType::I32)) {
                    return bad("a tensor-memory address outside an allocation of `i32`s");
                }
                true
            }
            ThreadOpKind::TmemDealloc { columns } => {
                if !columns_ok(*columns) {
                    return bad(
                        "tensor memory freed in other than a power of two of 32 to 512 columns",
                    );
                }
                true
            }
            ThreadOpKind::Tcgen05Mma {
                kind,
                a,
                a_swizzle,
                b,
            } => {
                if [*a, *b].iter().any(|&s| alloc_dtype(s) != Some(kind.dtype)) {
                    return bad("`tcgen05.mma` operands in allocations of another dtype");
                }
                if a_swizzle.row_bytes().is_none() {
                    return bad("a `tcgen05.mma` whose A is not in a swizzled layout");
                }
                true
            }
            ThreadOpKind::Tcgen05MmaScaled {
                kind,
                a,
                a_swizzle,
                b,
                byte,
            } => {
                if !kind.takes_block_scales() {
                    return bad("a block-scaled `tcgen05.mma` on other than E4M3 or E5M2");
                }
                if [*a, *b].iter().any(|&s| alloc_dtype(s) != Some(kind.dtype)) {
                    return bad("`tcgen05.mma` operands in allocations of another dtype");
                }
                if a_swizzle.row_bytes().is_none() {
                    return bad("a `tcgen05.mma` whose A is not in a swizzled layout");
                }
                if usize::from(*byte) >= GROUPS_PER_COLUMN {
                    return bad(
                        "a block-scaled `tcgen05.mma` reading a scale byte past a cell's 4",
                    );
                }
                true
            }
            ThreadOpKind::Tcgen05MmaTensorA { kind, b } => {
                if kind.dtype.size_bytes() != 2 {
                    return bad(
                        "a `tcgen05.mma` with A in tensor memory on other than 16-bit operands",
                    );
                }
                if alloc_dtype(*b) != Some(kind.dtype) {
                    return bad("`tcgen05.mma` operands in allocations of another dtype");
                }
                true
            }
            ThreadOpKind::Tcgen05CommitWait { bar } => {
                if alloc_dtype(*bar) != Some(DType::U64) {
                    return bad("an mbarrier outside an allocation of `u64`s");
                }
                true
            }
            ThreadOpKind::TmemLoad { columns } => {
                self.whole_warpgroups(id)?;
                let n = usize::from(*columns);
                if !n.is_power_of_two() || n > COLUMNS / 4 {
                    return bad(
                        "a tensor-memory load of other than a power of two up to 128 columns",
                    );
                }
                results == vec![DType::F32; n]
            }
            ThreadOpKind::TmemStore => {
                self.whole_warpgroups(id)?;
                let n = x.list("values").len();
                if !n.is_power_of_two() || n > COLUMNS / 4 {
                    return bad(
                        "a tensor-memory store of other than a power of two up to 128 columns",
                    );
                }
                true
            }
            ThreadOpKind::TmemStoreHalves => {
                self.whole_warpgroups(id)?;
                let values = x.list("values");
                let n = values.len() / 2;
                if !values.len().is_multiple_of(2) || !n.is_power_of_two() || n > COLUMNS / 4 {
                    return bad(
                        "a tensor-memory store of other than pairs of 16-bit values filling a power of two up to 128 columns",
                    );
                }
                if !values
                    .iter()
                    .all(|&d| matches!(d, DType::F16 | DType::BF16))
                {
                    return bad("a tensor-memory store of halves of other than f16 or bf16 values");
                }
                true
            }
            ThreadOpKind::TmemStoreBytes => {
                self.whole_warpgroups(id)?;
                let values = x.list("values");
                let n = values.len() / GROUPS_PER_COLUMN;
                if !values.len().is_multiple_of(GROUPS_PER_COLUMN)
                    || !n.is_power_of_two()
                    || n > COLUMNS / 4
                {
                    return bad(
                        "a tensor-memory store of other than fours of 8-bit values filling a power of two up to 128 columns",
                    );
                }
                if !values
                    .iter()
                    .all(|&d| d.size_bytes() == 1 && d != DType::Bool)
                {
                    return bad("a tensor-memory store of bytes of other than 8-bit values");
                }
                true
            }
            _ => return bad("not a tensor-memory op"),
        })
    }

    /// An error unless the block is whole warpgroups, whose warps reach
    /// each lane of tensor memory once.
    fn whole_warpgroups(&self, id: OpId) -> Result<(), super::VerifyError> {
        let threads = self.program.block_threads() as usize;
        match threads.is_multiple_of(4 * WARP_LANES) {
            true => Ok(()),
            false => Err(self.fail(
                Some(id),
                "tensor memory accessed by a block that is not whole warpgroups",
            )),
        }
    }
}
