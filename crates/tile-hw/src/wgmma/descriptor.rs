//! Hopper's shared-memory matrix descriptors and their swizzled layouts
//! (the parent module's "Descriptors" and "Layouts"): where element `(mn,
//! k)` of an operand sits, and the descriptors tile's lowering writes.

/// How an operand's rows run (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Major {
    /// Rows along M (A) or N (B), `K` contiguous: `imm-trans = 0`.
    K,
    /// Rows along K, M or N contiguous: `imm-trans = 1`.
    Mn,
}

/// The swizzle of a descriptor (bits 62–63).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swizzle {
    /// No swizzle (interleaved core matrices).
    None,
    /// 128-byte swizzle.
    B128,
    /// 64-byte swizzle.
    B64,
    /// 32-byte swizzle.
    B32,
}

/// A shared-memory matrix descriptor, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// The start address in shared memory, in bytes (16-byte aligned, below
    /// 2¹⁸).
    pub start: u32,
    /// The leading-dimension byte offset (16-byte aligned).
    pub lbo: u32,
    /// The stride-dimension byte offset (16-byte aligned).
    pub sbo: u32,
    /// The base offset (bits 49–51).
    pub base_offset: u8,
    /// The swizzle.
    pub swizzle: Swizzle,
}

impl Descriptor {
    /// The 64-bit encoding.
    pub fn encode(self) -> u64 {
        let field = |bytes: u32| u64::from((bytes & 0x3ffff) >> 4);
        let swizzle: u64 = match self.swizzle {
            Swizzle::None => 0,
            Swizzle::B128 => 1,
            Swizzle::B64 => 2,
            Swizzle::B32 => 3,
        };
        field(self.start)
            | (field(self.lbo) << 16)
            | (field(self.sbo) << 32)
            | (u64::from(self.base_offset & 7) << 49)
            | (swizzle << 62)
    }

    /// The descriptor of `bits`.
    pub fn decode(bits: u64) -> Descriptor {
        let field = |at: u32| (((bits >> at) & 0x3fff) as u32) << 4;
        Descriptor {
            start: field(0),
            lbo: field(16),
            sbo: field(32),
            base_offset: ((bits >> 49) & 7) as u8,
            swizzle: match bits >> 62 {
                0 => Swizzle::None,
                1 => Swizzle::B128,
                2 => Swizzle::B64,
                _ => Swizzle::B32,
            },
        }
    }

    /// The shared-memory byte address of element `(mn, k)` of an operand of
    /// `elem_bytes`-byte elements laid out as `major` (see the module docs),
    /// or why the model does not know it.
    pub fn element_address(
        self,
        major: Major,
        elem_bytes: usize,
        (mn, k): (usize, usize),
    ) -> Result<u32, String> {
        let width = match self.swizzle.row_bytes() {
            Some(width) if self.base_offset == 0 => width,
            _ => {
                return Err(format!(
                    "a descriptor with {:?} swizzle and base offset {} is not modelled (only the 128-, 64- and 32-byte swizzles from their patterns' boundaries)",
                    self.swizzle, self.base_offset
                ))
            }
        };
        let (row, column) = match major {
            Major::K => (mn, k * elem_bytes),
            Major::Mn => (k, mn * elem_bytes),
        };
        if column >= width {
            return Err(format!(
                "element ({mn}, {k}) lies {column} bytes into a {major:?}-major row: past one {width}-byte atom"
            ));
        }
        let unswizzled =
            self.start as usize + (row / 8) * self.sbo as usize + (row % 8) * width + column;
        let chunks = width / 16 - 1;
        let swizzled = unswizzled ^ (((unswizzled >> 7) & chunks) << 4);
        u32::try_from(swizzled).map_err(|_| format!("address {swizzled:#x} past shared memory"))
    }
}

impl Swizzle {
    /// The swizzle of K-major rows of `bytes` bytes, one atom wide: 128, 64
    /// or 32.
    pub fn for_rows(bytes: usize) -> Option<Swizzle> {
        match bytes {
            128 => Some(Swizzle::B128),
            64 => Some(Swizzle::B64),
            32 => Some(Swizzle::B32),
            _ => None,
        }
    }

    /// The bytes of an atom's row: 128, 64 or 32; `None` unswizzled.
    pub fn row_bytes(self) -> Option<usize> {
        match self {
            Swizzle::None => None,
            Swizzle::B128 => Some(128),
            Swizzle::B64 => Some(64),
            Swizzle::B32 => Some(32),
        }
    }
}

/// The descriptor of an operand of tile's lowering starting at shared byte
/// address `start` with rows of `swizzle`'s width: atoms of 8 rows stacked
/// without gaps (8 rows apart by the SBO), and the same as LBO, which its
/// layouts never use.
pub fn operand_descriptor(start: u32, swizzle: Swizzle) -> Descriptor {
    let sbo = 8 * swizzle.row_bytes().unwrap_or(16) as u32;
    Descriptor {
        start,
        lbo: sbo,
        sbo,
        base_offset: 0,
        swizzle,
    }
}

/// The swizzle of B's staging in tile's lowering (for `wgmma` and
/// `tcgen05.mma` alike) with A staged under `a_swizzle` and B's rows
/// running as `b_major` says: a K-major B has A's rows (128 bytes of `k`,
/// or all of a `K` of 32 or 64 bytes), an MN-major one rows of 128 bytes
/// (one atom of `n`). The same for elements of every width.
pub fn b_swizzle(a_swizzle: Swizzle, b_major: Major) -> Swizzle {
    match b_major {
        Major::Mn => Swizzle::B128,
        Major::K => a_swizzle,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_round_trip_and_match_the_manuals_example() {
        // Triton's constant for a 128-byte swizzle with SBO = 1024 bytes.
        let d = Descriptor {
            start: 0,
            lbo: 0,
            sbo: 1024,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        assert_eq!(d.encode(), (1 << 62) | (64 << 32));
        let e = Descriptor {
            start: 0x1_2340,
            lbo: 0x400,
            sbo: 0x800,
            base_offset: 0,
            swizzle: Swizzle::B64,
        };
        assert_eq!(Descriptor::decode(e.encode()), e);
    }

    /// A K-major operand's 16-byte chunks trade places within their row by
    /// the row's index in its atom, and stay whole.
    #[test]
    fn the_128_byte_swizzle_moves_whole_chunks_within_a_row() {
        let d = Descriptor {
            start: 2048,
            lbo: 1024,
            sbo: 1024,
            base_offset: 0,
            swizzle: Swizzle::B128,
        };
        let at = |mn, k| d.element_address(Major::K, 2, (mn, k)).unwrap();
        assert_eq!(at(0, 0), 2048);
        assert_eq!(at(0, 9), 2048 + 18);
        // Row 3: chunk 1 goes to chunk 1 ^ 3 = 2.
        assert_eq!(at(3, 8), 2048 + 3 * 128 + 2 * 16);
        assert_eq!(at(3, 9), at(3, 8) + 2);
        // Row 9 is row 1 of the next atom, SBO further.
        assert_eq!(at(9, 0), 2048 + 1024 + 128 + 16);
        // MN-major: rows run along K.
        let mn = |mn, k| d.element_address(Major::Mn, 2, (mn, k)).unwrap();
        assert_eq!(mn(5, 2), 2048 + 2 * 128 + (2 * 16) + 10);
        assert!(d.element_address(Major::Mn, 2, (64, 0)).is_err());
        let unswizzled = Descriptor {
            swizzle: Swizzle::None,
            ..d
        };
        assert!(unswizzled.element_address(Major::K, 2, (0, 0)).is_err());
        assert_eq!(operand_descriptor(2048, Swizzle::B128), d);
    }

    /// The 64- and 32-byte swizzles: rows of 64 (32) bytes, two (four) to
    /// a 128-byte line, whose chunks trade places by the line's index in
    /// the 512-byte (256-byte) pattern; each atom's elements distinct.
    #[test]
    fn the_narrow_swizzles_move_whole_chunks_by_the_line() {
        let b64 = operand_descriptor(1024, Swizzle::B64);
        assert_eq!((b64.sbo, b64.lbo), (512, 512));
        let at = |d: Descriptor, mn, k| d.element_address(Major::K, 2, (mn, k)).unwrap();
        assert_eq!(at(b64, 0, 9), 1024 + 18);
        // Rows 2 and 3 are line 1: chunk c goes to c ^ 1.
        assert_eq!(at(b64, 2, 8), 1024 + 128);
        assert_eq!(at(b64, 3, 0), 1024 + 3 * 64 + 16);
        // Rows 4 and 5 are line 2: chunk c ^ 2.
        assert_eq!(at(b64, 4, 0), 1024 + 256 + 32);
        assert_eq!(at(b64, 9, 0), 1024 + 512 + 64);
        assert!(b64.element_address(Major::K, 2, (0, 32)).is_err());
        // The second k-step of 16 starts 32 bytes into the rows: chunk 2 of
        // row 2 goes to chunk 3.
        let step = operand_descriptor(1024 + 32, Swizzle::B64);
        assert_eq!(at(step, 2, 0), 1024 + 128 + 48);
        let b32 = operand_descriptor(0, Swizzle::B32);
        assert_eq!(b32.sbo, 256);
        // Rows 4..8 are line 1: chunk c ^ 1.
        assert_eq!(at(b32, 4, 0), 128 + 16);
        assert_eq!(at(b32, 5, 8), 160);
        assert!(b32.element_address(Major::K, 2, (0, 16)).is_err());
        for (d, k) in [(b64, 32), (b32, 16)] {
            let mut seen: Vec<u32> = (0..8)
                .flat_map(|mn| (0..k).map(move |kk| (mn, kk)))
                .map(|(mn, kk)| at(d, mn, kk))
                .collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 8 * k, "{:?}", d.swizzle);
        }
    }

    /// 8-bit elements in the 128-byte swizzle: 16 to a chunk, and a row's
    /// chunks trade places as 16-bit rows' do, by bytes.
    #[test]
    fn byte_elements_swizzle_by_the_chunk() {
        let d = operand_descriptor(4096, Swizzle::B128);
        let at = |mn, k| d.element_address(Major::K, 1, (mn, k)).unwrap();
        assert_eq!(at(0, 127), 4096 + 127);
        // Row 3: chunk 1 (bytes 16..32) goes to chunk 2.
        assert_eq!(at(3, 16), 4096 + 3 * 128 + 32);
        assert_eq!(at(3, 17), at(3, 16) + 1);
        assert!(d.element_address(Major::K, 1, (0, 128)).is_err());
        let b32 = operand_descriptor(0, Swizzle::B32);
        assert_eq!(b32.element_address(Major::K, 1, (4, 0)).unwrap(), 128 + 16);
    }
}
