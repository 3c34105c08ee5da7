//! The block-scaled instructions among [`MmaKind`]s, and how each takes
//! its operand elements in their bytes (module docs, "Block scales").

use super::{MmaFamily, MmaKind};

impl MmaKind {
    /// How the instruction wants its operand elements in their bytes, as
    /// a mask of each byte's bits that hold the value and a left shift:
    /// `f8f6f4`'s FP4 in bits 5..2, its FP6 in bits 5..0, every other
    /// operand as `tile` holds it (`None`). A register of four elements
    /// becomes `(word & mask) << shift`, no bit crossing into the next
    /// byte.
    pub fn container(self) -> Option<(u32, u32)> {
        match self.operand_dtype() {
            tile_ir::DType::F4E2M1 => Some((0x0F0F_0F0F, 2)),
            tile_ir::DType::F6E2M3 | tile_ir::DType::F6E3M2 => Some((0x3F3F_3F3F, 0)),
            _ => None,
        }
    }

    /// The bits the instruction reads for an operand element that `tile`
    /// holds as `bits` (its [`container`](Self::container)).
    pub fn contained(self, bits: u32) -> u32 {
        match self.container() {
            Some((mask, shift)) => (bits & mask & 0xFF) << shift,
            None => bits,
        }
    }

    /// Whether the instruction takes a scale per row of A and per column
    /// of B (module docs, "Block scales").
    pub fn is_block_scaled(self) -> bool {
        matches!(
            self,
            MmaKind::E4m3Ue8m0M16N8K32
                | MmaKind::E5m2Ue8m0M16N8K32
                | MmaKind::E2m3Ue8m0M16N8K32
                | MmaKind::E3m2Ue8m0M16N8K32
                | MmaKind::E2m1Ue8m0M16N8K32
                | MmaKind::MfmaE4m3Ue8m0M32N32K64
                | MmaKind::MfmaE5m2Ue8m0M32N32K64
                | MmaKind::MfmaE4m3Ue8m0M16N16K128
                | MmaKind::MfmaE5m2Ue8m0M16N16K128
        )
    }

    /// The block-scaled instructions of `family` on operands of `dtype`
    /// (E8M0 scales), in the order the lowering prefers them.
    pub fn for_scaled_dot(
        family: MmaFamily,
        dtype: tile_ir::DType,
    ) -> impl Iterator<Item = MmaKind> {
        MmaKind::ALL.into_iter().filter(move |k| {
            k.family() == family && k.operand_dtype() == dtype && k.is_block_scaled()
        })
    }
}
