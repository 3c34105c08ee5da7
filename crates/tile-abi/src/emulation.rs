//! The contract of emulation images: GPU kernels moved to the host by
//! `tile_codegen::emulation` and run on the CPU by `tile-emu`.
//!
//! An emulation image is a shared object made from the exact LLVM module a
//! GPU target receives (after the pipeline its PTX or code object comes
//! from), moved to the host's triple and data layout. Only the target's
//! intrinsics are replaced, each by a call of the runtime's one entry point,
//!
//! ```text
//! ptr tile_emu_runtime;   // u64 (*)(u32 op, u64 a, u64 b, u64 c, u64 d), set when loaded
//! ```
//!
//! with a [`RuntimeCall`] and its operands; every load and store of global or
//! shared memory is preceded by a [`RuntimeCall::Access`] call that checks it. The
//! image exports:
//!
//! ```text
//! void tile_emu_launch(const void *args);   // one GPU thread of the kernel
//! u8   tile_emu_manifest[];                  // the Manifest, as text
//! u64  tile_emu_manifest_len;
//! ```
//!
//! `args` is what the driver hands a kernel: CUDA's `kernelParams` (one
//! pointer per parameter) for NVPTX images, the kernarg segment for AMDGPU
//! ones, read at the offsets the AMDGPU backend lays the parameters out at.

use std::fmt;
use tile_ir::{MemOrder, MemScope};

/// The entry point of one GPU thread.
pub const LAUNCH_SYMBOL: &str = "tile_emu_launch";
/// The runtime's entry point, a pointer the loader sets.
pub const RUNTIME_SYMBOL: &str = "tile_emu_runtime";
/// The manifest's bytes.
pub const MANIFEST_SYMBOL: &str = "tile_emu_manifest";
/// The manifest's length, a `u64`.
pub const MANIFEST_LEN_SYMBOL: &str = "tile_emu_manifest_len";

/// The runtime's entry point: `(op, a, b, c, d) -> result`.
pub type RuntimeFn = extern "C" fn(u32, u64, u64, u64, u64) -> u64;

/// The entry of one GPU thread: the kernel's arguments as the driver holds
/// them.
pub type LaunchFn = unsafe extern "C" fn(*const u8);

/// The bit of a [`RuntimeCall::Wgmma`]'s last operand that says A comes
/// from registers.
pub const WGMMA_REGISTER_A: u64 = 1 << 33;

/// Set in [`RuntimeCall::Tcgen05Mma`]'s `d`: A comes from tensor memory
/// (`tcgen05.mma … [d], [a], b_desc, …`), its address in `b`.
pub const TCGEN05_TENSOR_A: u64 = 1 << 36;

/// What a call of the runtime asks for. Operands are listed per op; unused
/// ones are 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum RuntimeCall {
    /// The thread's index in its block along `a` (0, 1, 2).
    ThreadId = 1,
    /// The block's index in the grid along `a`.
    BlockId = 2,
    /// The grid's extent in blocks along `a`.
    GridDim = 3,
    /// The block's extent in threads along `a`.
    BlockDim = 4,
    /// A barrier of the block (`bar.sync 0`, `s_barrier`).
    Barrier = 5,
    /// PTX `shfl.sync` of the 32-bit `b` with mode `a` ([`ShuffleMode`]),
    /// lane operand `c` and clamp/segment operand `d`; the member mask must
    /// be full.
    Shuffle = 6,
    /// AMDGPU `ds_bpermute`: the 32-bit value `b` of the wave's lane
    /// `(a / 4) mod wave size`.
    Bpermute = 7,
    /// The address of the AMDGPU dispatch packet (`hsa_kernel_dispatch_packet_t`).
    DispatchPtr = 8,
    /// A memory access about to happen: address `a`, `b` bytes, alignment
    /// `c` (the instruction's `align`), and `d` the [`Access`] flags.
    Access = 9,
    /// A warp's (MFMA: a wave's) tensor-core step ([`tile_hw::mma`]) of
    /// instruction `b` ([`MmaKind`](tile_hw::mma::MmaKind) code): `a` is the
    /// address of the lane's [`MmaKind::words`](tile_hw::mma::MmaKind::words)
    /// 32-bit words (its A, B and C fragments as the instruction's
    /// registers, then a block-scaled instruction's A and B scale
    /// registers), and the runtime writes the lane's D fragment over the C
    /// words before returning. `c` holds MFMA's broadcast controls `cbsz |
    /// abid << 8 | blgp << 16`, or a block-scaled `mma.sync`'s selectors
    /// `byte-id-a | thread-id-a << 8 | byte-id-b << 16 | thread-id-b << 24`,
    /// or a scaled MFMA's `(cbsz ^ blgp) | (cbsz >> 1) << 4 | op_sel_a << 8
    /// | op_sel_b << 16` (its instruction `b` being the E4M3 form's code
    /// plus `cbsz`), which the model knows only as 0.
    Mma = 10,
    /// A warp's `ldmatrix` ([`tile_hw::ldmatrix::LdMatrix`] code `b`): `a` is the
    /// shared-memory address the lane supplies (a row of 8 16-bit elements,
    /// read if the lane is one of the instruction's address lanes), `c` the
    /// address of the lane's 4 32-bit words, where the runtime writes its
    /// registers before returning.
    LdMatrix = 11,
    /// PTX `cp.async.cg.shared.global` of 16 bytes: shared address `a`,
    /// global address `b`, `c` bytes read from `b` (the rest of the 16
    /// zero-filled). The copy joins the thread's open group and lands when a
    /// [`RuntimeCall::WaitAsync`] completes that group.
    CopyAsync = 12,
    /// `cp.async.commit_group`: the thread's open group of copies is closed.
    CommitAsync = 13,
    /// `cp.async.wait_group a`: every closed group of the thread but the `a`
    /// most recent lands.
    WaitAsync = 14,
    /// A warpgroup's `wgmma.mma_async` ([`tile_hw::wgmma`]) of instruction `d
    /// & 0xffff_ffff` ([`WgmmaKind`](tile_hw::wgmma::WgmmaKind) code), scaling
    /// its accumulators by bit 32 of `d` (0: D = A·B, 1: D = A·B + C): `a` is
    /// the address of the thread's [`WgmmaKind::accumulators`](
    /// tile_hw::wgmma::WgmmaKind::accumulators) `f32`s, which the runtime
    /// overwrites with D before returning, `b` and `c` the matrix
    /// descriptors of A and B; with [`WGMMA_REGISTER_A`] set in `d`, A
    /// comes from the thread's four `.b32` registers after the accumulators
    /// (two 16-bit elements each, the first low;
    /// `tile_hw::wgmma::register_a_element`) and `b` is 0.
    Wgmma = 15,
    /// `wgmma.fence.sync.aligned`: registers written before it are
    /// visible to the warpgroup's next `wgmma`.
    WgmmaFence = 16,
    /// `wgmma.commit_group.sync.aligned`: the thread's `wgmma`s since the
    /// last commit form a group.
    WgmmaCommit = 17,
    /// `wgmma.wait_group.sync.aligned a`: every group but the `a` most
    /// recent has completed.
    WgmmaWait = 18,
    /// `fence.proxy.async.shared::cta`: the thread's earlier writes of
    /// shared memory are visible to the asynchronous proxy (`wgmma`'s
    /// operand reads).
    FenceProxyAsync = 19,
    /// `mbarrier.init.shared.b64`: the barrier at shared address `a`
    /// expects `b` arrivals a phase; its phase is 0.
    MbarrierInit = 20,
    /// `mbarrier.arrive.expect_tx.shared::cta.b64`: one arrival at the
    /// barrier at shared address `a`, whose current phase also waits for
    /// `b` bytes of bulk copies.
    MbarrierExpectTx = 21,
    /// `mbarrier.try_wait.parity.shared::cta.b64`: 1 once the phase of
    /// parity `b` of the barrier at shared address `a` is over.
    MbarrierTryWait = 22,
    /// `cp.async.bulk.tensor.2d…mbarrier::complete_tx::bytes`
    /// ([`crate::tma`]): the box at column `c & 0xffff_ffff`, row `c >>
    /// 32` (signed 32-bit each) through the tensor map at address `b` into
    /// shared address `a`, completing on the barrier at shared address `d`.
    TmaLoad = 23,
    /// An atomic access of global memory at address `a` has happened, with
    /// the order and scope [`Ordering::encode`] wrote into `b`; `c` is 1 if
    /// it wrote (an update, or a compare-and-swap that swapped), else 0.
    Atomic = 24,
    /// A fence with the order and scope [`Ordering::encode`] wrote into `a`.
    Fence = 25,
    /// A hardware approximation of an f32 function ([`ApproxFn`] code `a`)
    /// of the f32 bits `b` (and `c`, a quotient's divisor): the result's
    /// bits, as [`ApproxFn::model`] computes them.
    ApproxMath = 26,
    /// `tcgen05.alloc` and `tcgen05.relinquish_alloc_permit` of `b` columns
    /// of tensor memory ([`tile_hw::tcgen05`]), the address written to the
    /// 32-bit word at shared address `a`; from each lane of one warp, the
    /// first allocating.
    TmemAlloc = 27,
    /// `tcgen05.dealloc` of the `b` columns at tensor-memory address `a`;
    /// from each lane of one warp, the first freeing.
    TmemDealloc = 28,
    /// One thread's `tcgen05.mma.cta_group::1.kind::<qualifier>` into
    /// tensor-memory address `a`, A and B by the sm_100 matrix descriptors
    /// `b` and `c`, of the instruction descriptor `d & 0xffff_ffff`,
    /// accumulating when bit 32 of `d` is set, its `.kind` the code in the
    /// bits 33–34 (`tile_hw::tcgen05::Qualifier::code`: 0 `f16`, 2
    /// `f8f6f4`, 1 `tf32`, 3 `mxf8f6f4.block_scale`, whose scales the
    /// thread's last [`RuntimeCall::Tcgen05Scales`] named); with
    /// [`TCGEN05_TENSOR_A`] set in `d`, `b` is instead the tensor-memory
    /// address of A.
    Tcgen05Mma = 29,
    /// `tcgen05.commit…mbarrier::arrive::one`: one arrival at the barrier
    /// at shared address `a` once the thread's `tcgen05.mma`s are done.
    Tcgen05Commit = 30,
    /// A lane's part of a warp's `tcgen05.ld.32x32b.x<c>` at tensor-memory
    /// address `a` (its lane field the warp's first lane) and the wait for
    /// it: `c` `f32`s written to the thread's buffer at address `b`.
    TmemLoad = 31,
    /// [`RuntimeCall::TmemLoad`]'s store, `tcgen05.st.32x32b.x<c>` and its
    /// wait, from the thread's buffer at `b`.
    TmemStore = 32,
    /// An AMDGPU lane exchange whose pattern is an immediate: with `c` 0,
    /// `ds_swizzle_b32` of offset `a` in its bit mode (below `0x8000`: the
    /// lanes of each group of 32 read lane `((lane & and) | or) ^ xor`, the
    /// masks 5 bits each from bit 0, 5 and 10); with `c` 1, a DPP
    /// `quad_perm` of control `a` (below `0x100`: lane `i` of each group of
    /// 4 reads lane `(a >> 2i) & 3`); with `c` 2, `v_readlane` of lane `a`
    /// of the wave (LLVM's form of a `ds_bpermute` whose address is the
    /// same in every lane). The result is the 32-bit value `b` of the lane
    /// read.
    LanePermute = 33,
    /// The tensor-memory addresses `a` and `b` of the scale images of A
    /// and B (`tile_hw::tcgen05::scale_cell`) that the thread's next
    /// block-scaled [`RuntimeCall::Tcgen05Mma`] reads.
    Tcgen05Scales = 34,
}

/// The most 32-bit words a [`RuntimeCall::Mma`] buffer holds (CDNA 4's
/// scaled 32×32×64 MFMA: 8 of A, 8 of B, 16 of C and 2 scales).
pub const MMA_MAX_WORDS: usize = 34;

/// The most D registers a [`RuntimeCall::Mma`] hands a lane (MFMA 32×32×8's 16).
pub const MMA_MAX_RESULTS: usize = 16;

impl RuntimeCall {
    /// Every op.
    pub const ALL: [RuntimeCall; 34] = [
        RuntimeCall::ThreadId,
        RuntimeCall::BlockId,
        RuntimeCall::GridDim,
        RuntimeCall::BlockDim,
        RuntimeCall::Barrier,
        RuntimeCall::Shuffle,
        RuntimeCall::Bpermute,
        RuntimeCall::DispatchPtr,
        RuntimeCall::Access,
        RuntimeCall::Mma,
        RuntimeCall::LdMatrix,
        RuntimeCall::CopyAsync,
        RuntimeCall::CommitAsync,
        RuntimeCall::WaitAsync,
        RuntimeCall::Wgmma,
        RuntimeCall::WgmmaFence,
        RuntimeCall::WgmmaCommit,
        RuntimeCall::WgmmaWait,
        RuntimeCall::FenceProxyAsync,
        RuntimeCall::MbarrierInit,
        RuntimeCall::MbarrierExpectTx,
        RuntimeCall::MbarrierTryWait,
        RuntimeCall::TmaLoad,
        RuntimeCall::Atomic,
        RuntimeCall::Fence,
        RuntimeCall::ApproxMath,
        RuntimeCall::TmemAlloc,
        RuntimeCall::TmemDealloc,
        RuntimeCall::Tcgen05Mma,
        RuntimeCall::Tcgen05Commit,
        RuntimeCall::TmemLoad,
        RuntimeCall::TmemStore,
        RuntimeCall::LanePermute,
        RuntimeCall::Tcgen05Scales,
    ];

    /// The op with code `code`.
    pub fn from_u32(code: u32) -> Option<RuntimeCall> {
        RuntimeCall::ALL.into_iter().find(|op| *op as u32 == code)
    }
}

/// PTX `shfl.sync` modes, as [`RuntimeCall::Shuffle`] passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum ShuffleMode {
    /// `shfl.sync.up`.
    Up = 0,
    /// `shfl.sync.down`.
    Down = 1,
    /// `shfl.sync.bfly`.
    Bfly = 2,
    /// `shfl.sync.idx`.
    Idx = 3,
}

impl ShuffleMode {
    /// The mode encoded as `code`.
    pub fn from_u64(code: u64) -> Option<ShuffleMode> {
        [
            ShuffleMode::Up,
            ShuffleMode::Down,
            ShuffleMode::Bfly,
            ShuffleMode::Idx,
        ]
        .into_iter()
        .find(|m| *m as u64 == code)
    }
}

/// The f32 functions GPUs approximate in one instruction (`approx_math`),
/// as [`RuntimeCall::ApproxMath`] passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum ApproxFn {
    /// `2^x`: PTX `ex2.approx.f32`, AMDGPU `v_exp_f32`.
    Exp2 = 0,
    /// `log₂ x`: PTX `lg2.approx.f32`, AMDGPU `v_log_f32`.
    Log2 = 1,
    /// `1/√x`: PTX `rsqrt.approx.f32`, AMDGPU `v_rsq_f32`.
    Rsqrt = 2,
    /// `1/x`: AMDGPU `v_rcp_f32`.
    Rcp = 3,
    /// `x/y`: PTX `div.approx.f32`.
    Div = 4,
}

impl ApproxFn {
    /// Every function.
    pub const ALL: [ApproxFn; 5] = [
        ApproxFn::Exp2,
        ApproxFn::Log2,
        ApproxFn::Rsqrt,
        ApproxFn::Rcp,
        ApproxFn::Div,
    ];

    /// The function encoded as `code`.
    pub fn from_u64(code: u64) -> Option<ApproxFn> {
        ApproxFn::ALL.into_iter().find(|f| *f as u64 == code)
    }

    /// The emulators' model of the instruction: the function of `x` (and
    /// `y` for [`ApproxFn::Div`]) computed in f64 and rounded to f32 (the
    /// quotients in f32, correctly rounded): within every error bound the
    /// vendors document for the instruction.
    pub fn model(self, x: f32, y: f32) -> f32 {
        match self {
            ApproxFn::Exp2 => (f64::from(x)).exp2() as f32,
            ApproxFn::Log2 => (f64::from(x)).log2() as f32,
            ApproxFn::Rsqrt => (1.0 / f64::from(x).sqrt()) as f32,
            ApproxFn::Rcp => 1.0 / x,
            ApproxFn::Div => x / y,
        }
    }
}

/// The flags of a [`RuntimeCall::Access`].
pub struct Access;

impl Access {
    /// The access writes (else it reads).
    pub const STORE: u64 = 1;
    /// The access is to shared memory (else to global memory).
    pub const SHARED: u64 = 2;
    /// The access is atomic: a read-modify-write or compare-exchange (with
    /// `STORE`), or an atomic load or store. Atomics race with no other
    /// atomic.
    pub const ATOMIC: u64 = 4;
}

/// The order and scope of a [`RuntimeCall::Atomic`] or [`RuntimeCall::Fence`], as one
/// operand.
pub struct Ordering;

impl Ordering {
    /// Later accesses stay after it.
    pub const ACQUIRE: u64 = 1;
    /// Earlier accesses stay before it.
    pub const RELEASE: u64 = 2;
    /// Promised to the block's threads only (else to the device's).
    pub const CTA: u64 = 4;

    /// The operand of `order` at `scope`.
    pub fn encode(order: MemOrder, scope: MemScope) -> u64 {
        let order = match order {
            MemOrder::Relaxed => 0,
            MemOrder::Acquire => Ordering::ACQUIRE,
            MemOrder::Release => Ordering::RELEASE,
            // The emulators model `seq_cst` (fences only) as `acq_rel`.
            MemOrder::AcqRel | MemOrder::SeqCst => Ordering::ACQUIRE | Ordering::RELEASE,
        };
        let scope = match scope {
            MemScope::Cta => Ordering::CTA,
            MemScope::Gpu => 0,
        };
        order | scope
    }

    /// The order and scope `flags` encode.
    pub fn decode(flags: u64) -> (MemOrder, MemScope) {
        let order = match flags & (Ordering::ACQUIRE | Ordering::RELEASE) {
            0 => MemOrder::Relaxed,
            Ordering::ACQUIRE => MemOrder::Acquire,
            Ordering::RELEASE => MemOrder::Release,
            _ => MemOrder::AcqRel,
        };
        let scope = if flags & Ordering::CTA != 0 {
            MemScope::Cta
        } else {
            MemScope::Gpu
        };
        (order, scope)
    }
}

/// How a kernel's arguments are passed to [`LAUNCH_SYMBOL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgsAbi {
    /// CUDA's `kernelParams`: one pointer per parameter to its bytes.
    Pointers,
    /// The AMDGPU kernarg segment: each parameter at its offset.
    Kernarg,
}

/// One kernel parameter of an image: its offset in the kernarg segment
/// (0 for [`ArgsAbi::Pointers`]) and its size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// The byte offset in the kernarg segment.
    pub offset: usize,
    /// The size in bytes.
    pub size: usize,
}

/// A shared-memory allocation of an image: its exported symbol and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedSlot {
    /// The symbol of the allocation.
    pub symbol: String,
    /// Its size in bytes.
    pub bytes: usize,
}

/// What an emulation image says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The kernel's name.
    pub kernel: String,
    /// The GPU target it was compiled for (`sm_80`, `gfx942`).
    pub target: String,
    /// The lanes of a warp or wave that shuffles and permutes span.
    pub wave: u32,
    /// How arguments are passed.
    pub abi: ArgsAbi,
    /// The kernel's parameters.
    pub params: Vec<ParamSlot>,
    /// The shared-memory allocations.
    pub shared: Vec<SharedSlot>,
}

impl fmt::Display for Manifest {
    /// One `key value...` line each: `kernel`, `target`, `wave`, `abi`
    /// (`pointers` or `kernarg`), then a `param <offset> <size>` line per
    /// parameter and a `shared <symbol> <bytes>` line per allocation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "kernel {}", self.kernel)?;
        writeln!(f, "target {}", self.target)?;
        writeln!(f, "wave {}", self.wave)?;
        let abi = match self.abi {
            ArgsAbi::Pointers => "pointers",
            ArgsAbi::Kernarg => "kernarg",
        };
        writeln!(f, "abi {abi}")?;
        for p in &self.params {
            writeln!(f, "param {} {}", p.offset, p.size)?;
        }
        for s in &self.shared {
            writeln!(f, "shared {} {}", s.symbol, s.bytes)?;
        }
        Ok(())
    }
}

impl Manifest {
    /// Reads the text [`Display`](fmt::Display) writes.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let mut manifest = Manifest {
            kernel: String::new(),
            target: String::new(),
            wave: 0,
            abi: ArgsAbi::Pointers,
            params: Vec::new(),
            shared: Vec::new(),
        };
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let number = |i: usize| -> Result<usize, String> {
                words
                    .get(i)
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| format!("a number expected in `{line}`"))
            };
            match words.as_slice() {
                ["kernel", name] => manifest.kernel = name.to_string(),
                ["target", name] => manifest.target = name.to_string(),
                ["wave", _] => manifest.wave = number(1)? as u32,
                ["abi", "pointers"] => manifest.abi = ArgsAbi::Pointers,
                ["abi", "kernarg"] => manifest.abi = ArgsAbi::Kernarg,
                ["param", _, _] => manifest.params.push(ParamSlot {
                    offset: number(1)?,
                    size: number(2)?,
                }),
                ["shared", symbol, _] => manifest.shared.push(SharedSlot {
                    symbol: symbol.to_string(),
                    bytes: number(2)?,
                }),
                [] => {}
                _ => return Err(format!("unknown manifest line `{line}`")),
            }
        }
        if manifest.kernel.is_empty() || manifest.wave == 0 {
            return Err("a manifest without its kernel or wave size".into());
        }
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction's registers fit the buffers the runtime keeps.
    #[test]
    fn every_mma_fits_the_runtimes_buffers() {
        use tile_hw::mma::{Fragment, MmaKind};
        for kind in MmaKind::ALL {
            assert!(kind.words() <= MMA_MAX_WORDS, "{kind:?}");
            assert!(kind.elements(Fragment::C) <= MMA_MAX_RESULTS, "{kind:?}");
        }
        let most = |f: fn(MmaKind) -> usize| MmaKind::ALL.into_iter().map(f).max();
        assert_eq!(most(MmaKind::words), Some(MMA_MAX_WORDS));
        assert_eq!(most(|k| k.elements(Fragment::C)), Some(MMA_MAX_RESULTS));
    }

    #[test]
    fn the_manifest_reads_back_as_written() {
        let manifest = Manifest {
            kernel: "softmax".into(),
            target: "gfx942".into(),
            wave: 64,
            abi: ArgsAbi::Kernarg,
            params: vec![
                ParamSlot { offset: 0, size: 8 },
                ParamSlot { offset: 8, size: 4 },
            ],
            shared: vec![SharedSlot {
                symbol: "shared0".into(),
                bytes: 512,
            }],
        };
        let text = manifest.to_string();
        assert_eq!(Manifest::parse(&text).unwrap(), manifest);
        assert!(Manifest::parse("kernel k\nwave 32\nparam x 4\n").is_err());
        assert!(Manifest::parse("target sm_80\n").is_err());
    }

    #[test]
    fn ops_and_modes_decode_to_themselves() {
        for op in RuntimeCall::ALL {
            assert_eq!(RuntimeCall::from_u32(op as u32), Some(op));
        }
        assert_eq!(RuntimeCall::from_u32(0), None);
        assert_eq!(ShuffleMode::from_u64(2), Some(ShuffleMode::Bfly));
        assert_eq!(ShuffleMode::from_u64(4), None);
    }
}
