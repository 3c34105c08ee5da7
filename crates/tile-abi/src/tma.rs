//! Hopper's tensor memory accelerator (TMA, sm_90a) as the lowering, the
//! emulators and the runtime agree on it: the box a kernel's bulk copies
//! move out of a 2-D tensor, the tensor map a launch passes for it, the
//! requirements the CUDA driver puts on both (`cuTensorMapEncodeTiled`,
//! CUDA driver API §6.30, "Tensor Map Object Management"; the PTX ISA's
//! `cp.async.bulk.tensor`), and where each element of a box lands in shared
//! memory.
//!
//! **Boxes.** A copy moves a box of `rows × cols` elements whose rows are
//! exactly 128 bytes (`cols · size = 128`: one atom of the 128-byte swizzle,
//! the rows of Hopper's canonical layout, `tile_hw::wgmma`), starting at
//! element `(c1, c0)` of the tensor (`c0` along the contiguous axis, the
//! coordinates innermost first as in PTX). Elements of the box outside the
//! tensor are written as zeros (`CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE`).
//! Element `(r, c)` of the box lands at byte
//!
//! ```text
//! a = r·128 + c·size,   address = a ^ (((a >> 7) & 7) << 4)
//! ```
//!
//! of the destination (`CU_TENSOR_MAP_SWIZZLE_128B`), which starts on a
//! 1024-byte boundary: the 16-byte chunk `k` of row `r` sits at chunk `k ^
//! (r % 8)`.
//!
//! **Tensor maps.** The driver's `CUtensorMap` is 128 opaque bytes; the
//! emulators cannot read it. So every party that runs kernels without a GPU
//! (the emulation target's runtime, the driver stand-ins) passes the same
//! 128 bytes of *this* module's encoding ([`TensorMap::to_bytes`]), and a
//! real driver its own: the kernel only hands the map's address to the
//! instruction.

use tile_ir::DType;

/// The bytes of a tensor map (`CUtensorMap`), which a kernel takes by value
/// at a 64-byte alignment.
pub const MAP_BYTES: usize = 128;

/// The bytes of a box's row: one atom of the 128-byte swizzle.
pub const ROW_BYTES: usize = 128;

/// The most elements along a box dimension.
pub const MAX_BOX: usize = 256;

/// The box one kind of copy moves: `rows` rows of `cols` elements of
/// `dtype`, `cols · size` = [`ROW_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TmaBox {
    /// The element type.
    pub dtype: DType,
    /// The rows (box dimension 1).
    pub rows: usize,
    /// The elements of a row (box dimension 0, the contiguous one).
    pub cols: usize,
}

impl TmaBox {
    /// The box of `rows` rows of one 128-byte atom of `dtype`, if the TMA
    /// can move it (1 to [`MAX_BOX`] rows).
    pub fn new(dtype: DType, rows: usize) -> Option<TmaBox> {
        let size = dtype.size_bytes();
        let cols = ROW_BYTES / size;
        ((1..=MAX_BOX).contains(&rows) && cols * size == ROW_BYTES && cols <= MAX_BOX)
            .then_some(TmaBox { dtype, rows, cols })
    }

    /// The bytes one copy writes (whether or not its elements are inside
    /// the tensor): what the barrier it completes on expects.
    pub fn bytes(self) -> usize {
        self.rows * ROW_BYTES
    }

    /// The byte offset in the destination where element `(row, col)` of
    /// the box lands (see the module docs).
    pub fn placement(self, row: usize, col: usize) -> usize {
        let a = row * ROW_BYTES + col * self.dtype.size_bytes();
        a ^ (((a >> 7) & 7) << 4)
    }
}

/// Why a tensor cannot be described by a tensor map for a box: the
/// driver's requirements, checked before it is asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TmaRefusal {
    /// Not a 2-D tensor.
    #[error("the tensor has rank {0}; tensor maps are built for 2-D tensors")]
    Rank(usize),
    /// An empty tensor.
    #[error("the tensor is empty (shape {0:?})")]
    Empty(Vec<usize>),
    /// Elements of a row are not contiguous.
    #[error("the tensor's inner stride is {0}, not 1")]
    InnerStride(isize),
    /// The row stride is negative, or not a multiple of 16 bytes, or too
    /// large.
    #[error("the tensor's row stride is {0} bytes; a tensor map needs a positive multiple of 16 below 2^40")]
    RowStride(i128),
    /// The address of element zero is not 16-byte aligned.
    #[error("the tensor's first element is at {0:#x}, not 16-byte aligned")]
    Misaligned(u64),
    /// An extent beyond the driver's 2^32.
    #[error("the tensor's extent {0} is beyond 2^32")]
    Extent(usize),
    /// A dtype other than the box's.
    #[error("the tensor holds {found}, the box {expected}")]
    DType {
        /// The box's dtype.
        expected: DType,
        /// The tensor's.
        found: DType,
    },
}

/// A tiled tensor map of a 2-D tensor for one [`TmaBox`]: what
/// `cuTensorMapEncodeTiled` is asked to encode, and what the emulators
/// read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// The address of element `[0, 0]`.
    pub base: u64,
    /// The extents, innermost first: `[columns, rows]`.
    pub dims: [u64; 2],
    /// The bytes between rows.
    pub row_stride: u64,
    /// The box its copies move.
    pub tma_box: TmaBox,
}

/// How an NVPTX image says which tensor maps its kernel takes, after its
/// other parameters: a line `// tile.tma_maps 0:128 1:64` (tensor
/// parameter and box rows, in the order of the kernel's parameters).
pub const MAPS_NOTE: &str = "// tile.tma_maps";

/// The [`MAPS_NOTE`] line of `maps`, or nothing when there are none.
pub fn maps_note(maps: &[(usize, u16)]) -> String {
    if maps.is_empty() {
        return String::new();
    }
    let list: Vec<String> = maps.iter().map(|(p, r)| format!("{p}:{r}")).collect();
    format!("{MAPS_NOTE} {}\n", list.join(" "))
}

/// The tensor maps the PTX `ptx` says its kernel takes ([`MAPS_NOTE`]),
/// none without the line, or why the line cannot be read.
pub fn maps_of_ptx(ptx: &str) -> Result<Vec<(usize, u16)>, String> {
    let Some(line) = ptx.lines().find_map(|l| l.strip_prefix(MAPS_NOTE)) else {
        return Ok(Vec::new());
    };
    line.split_whitespace()
        .map(|entry| {
            let (param, rows) = entry
                .split_once(':')
                .ok_or_else(|| format!("the tensor map `{entry}` is not `param:rows`"))?;
            Ok((
                param
                    .parse()
                    .map_err(|_| format!("the tensor map `{entry}`"))?,
                rows.parse()
                    .map_err(|_| format!("the tensor map `{entry}`"))?,
            ))
        })
        .collect()
}

/// The first bytes of [`TensorMap::to_bytes`].
const MAGIC: &[u8; 8] = b"tile.tma";

impl TensorMap {
    /// The map of the tensor at `base` with `shape` and `strides` (in
    /// elements) of `dtype` for `tma_box`, or why the driver would refuse
    /// it.
    pub fn new(
        base: u64,
        (dtype, shape, strides): (DType, &[usize], &[isize]),
        tma_box: TmaBox,
    ) -> Result<TensorMap, TmaRefusal> {
        let (&[rows, cols], &[row_stride, inner]) = (shape, strides) else {
            return Err(TmaRefusal::Rank(shape.len()));
        };
        if dtype != tma_box.dtype {
            return Err(TmaRefusal::DType {
                expected: tma_box.dtype,
                found: dtype,
            });
        }
        if rows == 0 || cols == 0 {
            return Err(TmaRefusal::Empty(shape.to_vec()));
        }
        if inner != 1 && cols > 1 {
            return Err(TmaRefusal::InnerStride(inner));
        }
        let stride_bytes = row_stride as i128 * dtype.size_bytes() as i128;
        if stride_bytes <= 0 || stride_bytes % 16 != 0 || stride_bytes >= 1 << 40 {
            return Err(TmaRefusal::RowStride(stride_bytes));
        }
        if !base.is_multiple_of(16) {
            return Err(TmaRefusal::Misaligned(base));
        }
        for extent in [rows, cols] {
            if extent as u64 > u32::MAX as u64 + 1 {
                return Err(TmaRefusal::Extent(extent));
            }
        }
        Ok(TensorMap {
            base,
            dims: [cols as u64, rows as u64],
            row_stride: stride_bytes as u64,
            tma_box,
        })
    }

    /// The box at coordinates `(c0, c1)` (innermost first): for each element
    /// inside the tensor, its byte offset in the destination and the byte
    /// offset of its source from `base`; the elements outside are zeros.
    pub fn box_elements(&self, c0: i64, c1: i64) -> Vec<(usize, Option<u64>)> {
        let b = self.tma_box;
        let size = b.dtype.size_bytes() as u64;
        let mut out = Vec::with_capacity(b.rows * b.cols);
        for r in 0..b.rows {
            for c in 0..b.cols {
                let (x, y) = (c0 + c as i64, c1 + r as i64);
                let inside =
                    (0..self.dims[0] as i64).contains(&x) && (0..self.dims[1] as i64).contains(&y);
                let source = inside.then(|| y as u64 * self.row_stride + x as u64 * size);
                out.push((b.placement(r, c), source));
            }
        }
        out
    }

    /// This module's 128-byte encoding, which the emulators read back with
    /// [`TensorMap::from_bytes`] (a GPU gets the driver's instead).
    pub fn to_bytes(&self) -> [u8; MAP_BYTES] {
        let mut out = [0u8; MAP_BYTES];
        out[..8].copy_from_slice(MAGIC);
        let fields = [
            self.base,
            self.dims[0],
            self.dims[1],
            self.row_stride,
            self.tma_box.rows as u64,
            self.tma_box.cols as u64,
            self.tma_box.dtype.size_bytes() as u64,
            dtype_code(self.tma_box.dtype),
        ];
        for (i, f) in fields.iter().enumerate() {
            out[8 + 8 * i..16 + 8 * i].copy_from_slice(&f.to_le_bytes());
        }
        let sum = checksum(&out[..72]);
        out[72..80].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// The map [`TensorMap::to_bytes`] wrote, or `None` for any other bytes.
    pub fn from_bytes(bytes: &[u8]) -> Option<TensorMap> {
        if bytes.len() != MAP_BYTES || &bytes[..8] != MAGIC {
            return None;
        }
        let at = |start: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[start..start + 8]);
            u64::from_le_bytes(word)
        };
        let word = |i: usize| at(8 + 8 * i);
        if at(72) != checksum(&bytes[..72]) {
            return None;
        }
        let dtype = DType::ALL.into_iter().find(|&d| dtype_code(d) == word(7))?;
        let tma_box = TmaBox::new(dtype, usize::try_from(word(4)).ok()?)?;
        (tma_box.cols as u64 == word(5) && dtype.size_bytes() as u64 == word(6)).then_some(
            TensorMap {
                base: word(0),
                dims: [word(1), word(2)],
                row_stride: word(3),
                tma_box,
            },
        )
    }
}

/// A dtype's number in the encoding: its place in [`DType::ALL`].
fn dtype_code(dtype: DType) -> u64 {
    DType::ALL
        .iter()
        .position(|&d| d == dtype)
        .unwrap_or(usize::MAX) as u64
}

/// FNV-1a over `bytes`: detects a map that is not this module's.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row is one 128-byte atom; the 8 rows of an atom put a row's
    /// chunk `k` at `k ^ r`, and a box's bytes are a permutation.
    #[test]
    fn boxes_are_swizzled_atoms() {
        let b = TmaBox::new(DType::F16, 64).unwrap();
        assert_eq!((b.cols, b.bytes()), (64, 8192));
        assert_eq!(b.placement(0, 8), 16, "row 0 keeps its chunks");
        assert_eq!(b.placement(1, 0), 128 + 16, "row 1's chunk 0 is chunk 1");
        assert_eq!(b.placement(3, 9), 3 * 128 + ((1 ^ 3) * 16) + 2);
        assert_eq!(b.placement(9, 0), 9 * 128 + 16, "rows repeat every 8");
        let mut seen = vec![false; b.bytes()];
        for r in 0..b.rows {
            for c in 0..b.cols {
                let at = b.placement(r, c);
                assert!(!seen[at], "({r}, {c})");
                seen[at] = true;
            }
        }
        assert_eq!(TmaBox::new(DType::F32, 8).map(|b| b.cols), Some(32));
        assert_eq!(TmaBox::new(DType::F16, 0), None);
        assert_eq!(TmaBox::new(DType::F16, 257), None);
    }

    /// The driver's requirements, each refused with the reason; the
    /// encoding reads back, and nothing else does.
    #[test]
    fn maps_check_the_drivers_requirements_and_read_back() {
        let b = TmaBox::new(DType::F16, 64).unwrap();
        let t = |base, shape: &[usize], strides: &[isize]| {
            TensorMap::new(base, (DType::F16, shape, strides), b)
        };
        let map = t(0x1000, &[100, 72], &[72, 1]).unwrap();
        assert_eq!((map.dims, map.row_stride), ([72, 100], 144));
        assert_eq!(TensorMap::from_bytes(&map.to_bytes()), Some(map));
        let mut bad = map.to_bytes();
        bad[20] ^= 1;
        assert_eq!(TensorMap::from_bytes(&bad), None);
        assert_eq!(t(0x1000, &[100], &[1]), Err(TmaRefusal::Rank(1)));
        assert_eq!(
            t(0x1000, &[100, 72], &[1, 100]),
            Err(TmaRefusal::InnerStride(100))
        );
        assert_eq!(
            t(0x1000, &[100, 75], &[75, 1]),
            Err(TmaRefusal::RowStride(150))
        );
        assert_eq!(
            t(0x1008, &[100, 72], &[72, 1]),
            Err(TmaRefusal::Misaligned(0x1008))
        );
        assert_eq!(
            t(0x1000, &[0, 72], &[72, 1]),
            Err(TmaRefusal::Empty(vec![0, 72]))
        );
        let f32_map = TensorMap::new(0, (DType::F32, &[4, 4], &[4, 1]), b);
        assert!(matches!(f32_map, Err(TmaRefusal::DType { .. })));
    }

    /// The note reads back; no note is no maps.
    #[test]
    fn images_say_which_maps_they_take() {
        let note = maps_note(&[(0, 128), (1, 64)]);
        assert_eq!(note, "// tile.tma_maps 0:128 1:64\n");
        let ptx = format!(".version 8.0\n{note}.entry k(\n");
        assert_eq!(maps_of_ptx(&ptx), Ok(vec![(0, 128), (1, 64)]));
        assert_eq!(maps_of_ptx(".entry k("), Ok(vec![]));
        assert!(maps_of_ptx("// tile.tma_maps 0-128").is_err());
        assert_eq!(maps_note(&[]), "");
    }

    /// A box over the tensor's edge reads only what is inside.
    #[test]
    fn boxes_over_the_edge_are_zero_filled() {
        let b = TmaBox::new(DType::F16, 2).unwrap();
        let map = TensorMap::new(0, (DType::F16, &[3, 70], &[80, 1]), b).unwrap();
        let elements = map.box_elements(64, 2);
        let inside: Vec<_> = elements.iter().filter_map(|&(_, s)| s).collect();
        // Row 2, columns 64..70: 6 elements; row 3 is outside.
        assert_eq!(
            inside,
            (64..70).map(|x| 2 * 160 + 2 * x).collect::<Vec<u64>>()
        );
        assert_eq!(elements.len(), 128);
    }
}
