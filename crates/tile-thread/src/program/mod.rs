//! The thread-level program: what one GPU thread executes.
//!
//! A [`Program`] is the output of the lowering and the input of the lockstep
//! emulator and of the LLVM emitter (`tile-codegen`). Like the tile IR it keeps ops
//! and values in arenas named by typed handles, with structured regions; unlike
//! the tile IR every value is a **per-thread register** holding one scalar of a
//! [`DType`]. Tiles have disappeared: a tile of the tile IR is a set of such
//! registers, one per element that the thread holds in the tile's distributed
//! layout.
//!
//! Invariants the lowering guarantees, [`verify`] checks statically (but for
//! uniformity) and the emulator checks as it runs:
//!
//! * every operand is defined before its use, in the same or an enclosing
//!   region;
//! * control flow is block-uniform: the bounds of a `for` and the condition of
//!   an `if` have the same value in every thread of a block;
//! * global memory is reached only through the tensor parameters, by element
//!   offsets from the tensor's element zero; shared memory only through the
//!   program's [`SharedAlloc`]s;
//! * two shared-memory accesses of one allocation that different threads
//!   may make, one of them a write, are ordered by a barrier on every path
//!   between them (`hazards.rs`; asynchronous copies and `wgmma`s count
//!   from their issue to their wait).
//!
//! The text form is the `Display` of [`Program`] (`print.rs`), and
//! [`parse_program`] reads it back: print → parse → print is the identity.

#[macro_use]
mod table;
mod attributes;
mod format;
mod global;
mod hazards;
mod ops;
mod parse;
mod print;
mod verify;

pub use format::Roles;
pub use global::GlobalOperands;
pub use ops::{
    CheckKind, DescriptorSwizzle, LdMatrix, MmaKind, ShuffleMode, Tcgen05Kind, ThreadOpKind,
    WgmmaKind,
};
pub use parse::parse_program;
pub use verify::{verify, VerifyError};

use std::collections::HashMap;
use tile_ir::arena::{Arena, Handle};
use tile_ir::{DType, TensorType};

/// The handle of an op of a [`Program`].
pub type OpId = Handle<Op>;
/// The handle of a register value of a [`Program`].
pub type Reg = Handle<RegInfo>;
/// The handle of a shared-memory allocation of a [`Program`].
pub type SharedId = Handle<SharedAlloc>;

/// A register value: its dtype and what defines it.
#[derive(Clone, Debug, PartialEq)]
pub struct RegInfo {
    /// The dtype of the scalar the register holds in every thread.
    pub dtype: DType,
}

/// One op of the thread-level program.
#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    /// What the op does.
    pub kind: ThreadOpKind,
    /// The registers it reads.
    pub operands: Vec<Reg>,
    /// The registers it defines.
    pub results: Vec<Reg>,
    /// Nested regions (`for`: the body; `if`: then and else).
    pub regions: Vec<Region>,
}

/// A straight-line list of ops with arguments (a `for` body: the induction
/// variable, then the carried values).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    /// Registers defined on entry.
    pub args: Vec<Reg>,
    /// The ops in order; a nested region ends with a `yield`.
    pub ops: Vec<OpId>,
}

/// A kernel parameter of the thread-level program.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// A global tensor: a base pointer with runtime extents and strides.
    Tensor(TensorType),
    /// A scalar of a dtype, read with [`ThreadOpKind::Param`].
    Scalar(DType),
    /// A tensor array: where its tensors' records are
    /// (`tile_abi::params::TensorRecord`) and how many there are.
    Tensors(TensorType),
    /// One tensor of the tensor array `array`, chosen at run time: passed
    /// no argument of its own, it is bound by the one
    /// [`ThreadOpKind::GetTensor`] naming it, before any op reads it.
    Element {
        /// The tensor's type (its array's).
        ty: TensorType,
        /// The tensor array's position among the parameters.
        array: usize,
    },
}

impl ParamKind {
    /// The type of a tensor the program accesses: a tensor parameter or a
    /// tensor of an array.
    pub fn tensor(&self) -> Option<TensorType> {
        match self {
            ParamKind::Tensor(t) | ParamKind::Element { ty: t, .. } => Some(*t),
            ParamKind::Scalar(_) | ParamKind::Tensors(_) => None,
        }
    }

    /// Whether the kernel receives an argument for it (all but the tensors
    /// of arrays).
    pub fn is_passed(&self) -> bool {
        !matches!(self, ParamKind::Element { .. })
    }
}

/// A named kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name (from the tile IR).
    pub name: String,
    /// What is passed.
    pub kind: ParamKind,
}

/// A block-wide array in shared memory.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedAlloc {
    /// The element dtype.
    pub dtype: DType,
    /// The number of elements.
    pub len: usize,
    /// The alignment of its first element, in bytes: 16, or what an
    /// instruction reading it needs (1024 for `wgmma`'s operands).
    pub align: usize,
    /// The earlier allocation whose bytes this one reuses, if any
    /// (`aliases @s0`): both start at one address and the bytes are the
    /// larger's. The two are never live at once; the lowering puts a
    /// barrier between the last access of one and the first of the other.
    pub aliases: Option<SharedId>,
}

/// The alignment of every shared allocation unless an instruction needs
/// more.
pub const SHARED_ALIGN: usize = 16;

/// A thread-level program: the code of one thread of a block of
/// `32 * num_warps` threads.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The kernel's name.
    pub name: String,
    /// The number of warps of a block (32 threads each).
    pub num_warps: u32,
    /// The parameters, in call order (those of the tile IR).
    pub params: Vec<Param>,
    /// The shared-memory allocations.
    pub shared: Arena<SharedAlloc>,
    /// The top-level region.
    pub body: Region,
    /// Every op.
    pub ops: Arena<Op>,
    /// Every register.
    pub regs: Arena<RegInfo>,
    /// Remarks for readers of the text form, by op (printed as a `// <note>`
    /// line before it): how each global access is kept in bounds.
    pub notes: HashMap<OpId, String>,
}

/// The number of threads of a warp.
pub const WARP_SIZE: u32 = 32;

/// The lanes of a CDNA wave (wave64): two warps, `2w` and `2w + 1`, which
/// a shuffle of width 64 spans.
pub const WAVE64: u32 = 64;

/// The lanes a shuffle of `width` reads among: its thread's warp, or for a
/// width of 64 the pair of warps of its wave64.
pub fn shuffle_span(width: u32) -> u32 {
    width.max(WARP_SIZE)
}

impl Program {
    /// An empty program for blocks of `num_warps` warps.
    pub fn new(name: impl Into<String>, num_warps: u32) -> Self {
        Program {
            name: name.into(),
            num_warps,
            params: Vec::new(),
            shared: Arena::new(),
            body: Region::default(),
            ops: Arena::new(),
            regs: Arena::new(),
            notes: HashMap::new(),
        }
    }

    /// The number of threads of a block.
    pub fn block_threads(&self) -> u32 {
        self.num_warps * WARP_SIZE
    }

    /// The dtype of a register.
    pub fn dtype(&self, reg: Reg) -> DType {
        self.regs[reg].dtype
    }

    /// A new register of `dtype`, defined by nothing yet (a region argument).
    pub fn new_reg(&mut self, dtype: DType) -> Reg {
        self.regs.append(RegInfo { dtype })
    }

    /// Creates an op with results of the given dtypes (not placed in a region).
    pub fn create_op(
        &mut self,
        kind: ThreadOpKind,
        operands: Vec<Reg>,
        result_types: &[DType],
        regions: Vec<Region>,
    ) -> OpId {
        let results = result_types.iter().map(|&d| self.new_reg(d)).collect();
        self.ops.append(Op {
            kind,
            operands,
            results,
            regions,
        })
    }

    /// The tensor maps the program's `tma.load`s read, in the order of
    /// their first op: `(tensor parameter, box rows)`. A kernel takes one
    /// map per entry, after its other parameters.
    pub fn tma_maps(&self) -> Vec<(usize, u16)> {
        let mut maps = Vec::new();
        for (_, op) in self.ops.iter() {
            if let ThreadOpKind::TmaLoad { param, rows, .. } = op.kind {
                if !maps.contains(&(param, rows)) {
                    maps.push((param, rows));
                }
            }
        }
        maps
    }

    /// Adds a shared-memory allocation.
    pub fn alloc_shared(&mut self, dtype: DType, len: usize) -> SharedId {
        self.shared.append(SharedAlloc {
            dtype,
            len,
            align: SHARED_ALIGN,
            aliases: None,
        })
    }

    /// The allocation whose bytes `alloc` occupies: itself, or the one it
    /// aliases.
    pub fn shared_root(&self, alloc: SharedId) -> SharedId {
        self.shared[alloc].aliases.unwrap_or(alloc)
    }
}
