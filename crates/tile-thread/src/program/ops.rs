//! The op kinds of the thread-level program and their operand conventions.

use super::SharedId;
pub use tile_hw::ldmatrix::LdMatrix;
pub use tile_hw::mma::MmaKind;
pub use tile_hw::tcgen05::Tcgen05Kind;
pub use tile_hw::wgmma::{Swizzle as DescriptorSwizzle, WgmmaKind};
use tile_ir::{AtomicOp, BinaryOp, CmpPred, DType, MemOrder, MemScope, Scalar, UnaryOp};

/// The data movement of a warp shuffle, as PTX `shfl.sync.<mode>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    /// `idx`: read lane `b` of the segment.
    Idx,
    /// `up`: read lane `lane - b`, own value below the segment start.
    Up,
    /// `down`: read lane `lane + b`, own value past the segment end.
    Down,
    /// `bfly`: read lane `lane ^ b`, own value past the segment end.
    Bfly,
}

impl ShuffleMode {
    /// The PTX name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Bfly => "bfly",
        }
    }
}

/// What a [`ThreadOpKind::Check`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// `bounds`: every element an unmasked access reaches lies inside the
    /// tensor; the values are the partition index.
    Bounds,
    /// `step`: a loop's step is positive; the value is the step.
    Step,
    /// `index`: an element of an atomic or a gather whose mask holds lies
    /// inside the tensor; the values are its tensor index.
    Index,
    /// `assert`: a `device_assert!` holds; the values are the assertion's
    /// number and the values its message formats (any scalar dtypes).
    Assert,
    /// `window`: a partition view's window has no negative offset or
    /// extent; the values are its offsets, then its extents.
    Window,
}

impl CheckKind {
    /// The kind's name in the text form.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Bounds => "bounds",
            CheckKind::Step => "step",
            CheckKind::Index => "index",
            CheckKind::Assert => "assert",
            CheckKind::Window => "window",
        }
    }
}

/// What a thread-level op does. Operands and results are listed per variant;
/// all values are per-thread scalars.
#[derive(Clone, Debug, PartialEq)]
pub enum ThreadOpKind {
    /// `thread_id`: the thread's index in its block, `i32` in
    /// `0..32 * num_warps`.
    ThreadId,
    /// `lane_id`: `thread_id % 32`, `i32`.
    LaneId,
    /// `warp_id`: `thread_id / 32`, `i32`.
    WarpId,
    /// `block_id <axis>`: the block's index along grid axis 0, 1 or 2, `i32`
    /// (the tile IR's `program_id`).
    BlockId {
        /// The grid axis.
        axis: u8,
    },
    /// `grid_dim <axis>`: the grid's extent along an axis, `i32`.
    GridDim {
        /// The grid axis.
        axis: u8,
    },
    /// `const <value>`: a constant.
    Const(Scalar),
    /// `param <index>`: the value of a scalar kernel parameter.
    Param {
        /// The parameter's position.
        index: usize,
    },
    /// `dim <param>.<axis>`: a tensor parameter's runtime extent, `i32`.
    TensorDim {
        /// The tensor parameter's position.
        param: usize,
        /// The axis.
        axis: usize,
    },
    /// `stride <param>.<axis>`: a tensor parameter's runtime stride in
    /// elements, `i64`.
    TensorStride {
        /// The tensor parameter's position.
        param: usize,
        /// The axis.
        axis: usize,
    },
    /// `align <param>`: the alignment in bytes of the tensor's element zero
    /// (the largest power of two dividing its address, at most 256), `i64`.
    TensorAlign {
        /// The tensor parameter's position.
        param: usize,
    },
    /// `<unary op> %x`, with the tile IR's scalar semantics
    /// ([`tile_ir::eval::unary`]).
    Unary(UnaryOp),
    /// `<binary op> %a, %b` ([`tile_ir::eval::binary`]).
    Binary(BinaryOp),
    /// `cmp <pred> %a, %b`: a `bool`.
    Cmp(CmpPred),
    /// `select %c, %a, %b`.
    Select,
    /// `fma %a, %b, %c`: one rounding.
    Fma,
    /// `opaque %x`: `x` (`i32` or `i64`), unchanged, which the GPU emitter
    /// hides from LLVM's optimizer (an empty inline-assembly identity), so
    /// that what is computed from it is computed where it is used. The
    /// lowering computes the element-by-element offsets of a wide access
    /// from its partition index through it: otherwise LLVM's loop strength
    /// reduction keeps an address induction variable per element alive
    /// across a loop, in registers, for a path only edges take.
    Opaque,
    /// `cast %x to <dtype>` ([`tile_ir::eval::cast`]).
    Cast {
        /// The result's dtype.
        to: DType,
    },
    /// `bitcast %x to <dtype>` ([`tile_ir::eval::bitcast`]): the bits
    /// read as a dtype of the same width.
    Bitcast {
        /// The result's dtype.
        to: DType,
    },
    /// `ld.global.v1 <param>[%addr] mask(%m) other(%o)`: reads the element
    /// at element offset `addr` (`i64`) from the tensor parameter's element
    /// zero where the mask (`bool`) holds, else yields `other` (no memory is
    /// touched).
    ///
    /// `ld.global.v<w> <param>[%addr] if(%ok) else[%l...] mask(%m...) other(%o...)`:
    /// `w` elements, one vector access of `addr + i` where `ok` holds
    /// (every mask holds there), else element `i` at `l_i` where its mask
    /// holds ([`super::GlobalOperands`]). Results: the elements.
    LoadGlobal {
        /// The tensor parameter's position.
        param: usize,
        /// The number of elements.
        width: u8,
    },
    /// `st.global.v1 <param>[%addr], %v mask(%m)`, and
    /// `st.global.v<w> <param>[%addr] if(%ok) else[%l...], %v... mask(%m...)`:
    /// writes the values where their masks hold, addressed as
    /// `ld.global`'s.
    StoreGlobal {
        /// The tensor parameter's position.
        param: usize,
        /// The number of elements.
        width: u8,
    },
    /// `atom.global.<op>.<order>.<scope> <param>[%addr], [%cmp,] %value
    /// mask(%m)`: where the mask is true, the atomic update of the element
    /// at offset `addr` (`i64`) from the tensor's element zero
    /// ([`tile_ir::eval::atomic`]); the result is the element's old value,
    /// or the dtype's zero where the mask is false (no memory is touched
    /// there). Operands: the address, `cmp` for `cas` only, the value and
    /// the mask.
    AtomicGlobal {
        /// The tensor parameter's position.
        param: usize,
        /// The update.
        op: AtomicOp,
        /// Its memory order.
        order: MemOrder,
        /// Its scope.
        scope: MemScope,
    },
    /// `ld.shared <alloc>[%index]`: the element at `i32` index `index`.
    /// `ld.shared.v<w> <alloc>[%index]`: the `w` elements from `index` (a
    /// multiple of `w`; `w` elements of at most 16 bytes), in one access.
    LoadShared {
        /// The allocation.
        alloc: SharedId,
        /// The number of elements: 1, 2, 4, 8 or 16.
        width: u8,
    },
    /// `st.shared <alloc>[%index], %value mask(%m)`: writes where the mask is
    /// true. `st.shared.v<w> <alloc>[%index], %v0, …, %v<w-1> mask(%m)`: the
    /// `w` values from `index`, addressed as `ld.shared.v<w>`'s.
    StoreShared {
        /// The allocation.
        alloc: SharedId,
        /// The number of elements: 1, 2, 4, 8 or 16.
        width: u8,
    },
    /// `check.<kind> %ok [%v, ...] "<tile op>"`: a run-time check of what
    /// the compiler could not prove. Operands: `ok` (`bool`, false where the
    /// check fails in this thread) and the values the failure reports
    /// (`i64`; an assertion's values keep their dtypes). If `ok` is false in any thread the kernel fails with an
    /// error naming the kernel, the tile op and the values (on a GPU: the
    /// first failure in the status record). What follows cannot do harm:
    /// a checked access is masked by the same predicate, and a `for` with a
    /// non-positive step runs no iteration.
    Check {
        /// What is checked.
        kind: CheckKind,
        /// The tile-IR op checked, as text.
        op: String,
    },
    /// `print <id> %on, %element [%v, ...]`: where `on` holds in this
    /// thread, appends a record of print `id` (the tile-IR `print`'s
    /// number) to the print area: the block, the `i32` row-major `element`
    /// and the values (any scalar dtypes), whose message the runtime
    /// formats (`tile_abi::device_print`).
    Print {
        /// The print's number.
        id: u32,
    },
    /// `barrier`: every thread of the block waits for all others
    /// (`bar.sync 0`).
    Barrier,
    /// `fence.<order>.<scope>`: the thread's fence (PTX `fence.acq_rel` or
    /// `fence.sc` at `.cta` or `.gpu`, AMDGPU `fence syncscope`), for its
    /// own accesses; `tile_hw::happens` has what it orders.
    Fence {
        /// What the fence orders.
        order: MemOrder,
        /// Which threads the ordering is promised to.
        scope: MemScope,
    },
    /// `shfl.<mode> %value, %b width <w>`: PTX `shfl.sync` over all 32 lanes
    /// with segments of `width` lanes (`c = ((32 - width) << 8) | clamp`). Reads
    /// `value` from the source lane of the mode, or keeps the own value when
    /// the source lies outside the segment. Operand `b` is an `i32`.
    Shuffle {
        /// The mode.
        mode: ShuffleMode,
        /// The segment width: a power of two from 1 to 32.
        width: u8,
    },
    /// `mma.m16n8k16.<f16|bf16> %a0..%a7, %b0..%b3, %c0..%c3`: one warp's
    /// tensor-core step `D = A·B + C` (PTX `mma.sync.aligned.m16n8k16.row.col`
    /// with `f32` accumulators). Each lane passes the 8 elements of its A
    /// fragment, the 4 of its B fragment (16-bit floats of the kind's dtype)
    /// and the 4 `f32` of its C fragment, in the element order of
    /// [`tile_hw::mma`]; the results are its 4 elements of D. Every lane of
    /// the warp must execute it together. `mma.wmma16x16x16.<dtype>` (RDNA3,
    /// 16 + 16 + 8 registers) likewise; `mma.mfma32x32x8.<dtype>` and
    /// `mma.mfma16x16x16.<dtype>` (CDNA, 4 + 4 + 16 or 4 registers) are
    /// issued by a whole 64-lane wave, two warps.
    Mma {
        /// The instruction.
        kind: MmaKind,
    },
    /// `ldmatrix.x<count>[.trans] <alloc>[%index]`: one warp's PTX
    /// `ldmatrix` of `count` 8×8 matrices of 16-bit elements: lane `8j + r`
    /// passes the `i32` index of row `r` of matrix `j` (16 consecutive
    /// bytes, 16-byte aligned; other lanes' indices are not read). Results:
    /// the lane's `2·count` elements, in the order of [`LdMatrix`]'s
    /// registers and halves. An allocation of 32-bit elements (TF32
    /// operands) is read as pairs of halves: a row is 4 elements, and each
    /// register one element (`count` results; not `.trans`). Every lane of
    /// the warp must execute it together.
    LdMatrix {
        /// The allocation.
        alloc: SharedId,
        /// The instruction's matrices and transposition.
        shape: LdMatrix,
    },
    /// `cp.async @s<alloc>[%index], <param>[%addr] count(%n) mask(%m)`: PTX
    /// `cp.async.cg.shared.global` of 16 bytes: the `16 / size` elements of
    /// the tensor parameter from element offset `addr` (`i64`) to the
    /// allocation from `index` (`i32`, 16-byte aligned on both sides), of
    /// which only the first `n` (`i32`) are read and the rest written as
    /// zeros; nothing at all where `m` (`bool`) is false. Asynchronous: the
    /// copy joins the thread's open group and lands only when a
    /// `cp.async.wait` completes the group.
    CopyAsync {
        /// The tensor parameter read.
        param: usize,
        /// The allocation written.
        alloc: SharedId,
    },
    /// `wgmma.m64n<N>k16.<dtype>[.sw64|.sw32] @s<a>[%ia], @s<b>[%ib], %c…`:
    /// one warpgroup's (4 warps') `wgmma.mma_async`, `D = A·B + C`, with A
    /// (64×16) K-major in allocation `a` in the swizzled layout of
    /// [`tile_hw::wgmma`] of `a_swizzle` (rows of 128 bytes unless the
    /// mnemonic says 64 or 32) and B (16×N) N-major in `b` in the
    /// 128-byte-swizzled layout, each with 8 rows between groups of 8 rows,
    /// from element `ia` and `ib` (`i32`, the same in every thread of the
    /// warpgroup; the allocations start on 1024-byte boundaries). Operands:
    /// the two indices, then the thread's `N / 2`
    /// accumulators (`f32`, in [`tile_hw::wgmma::accumulator_element`]'s
    /// order); results: its elements of D. Asynchronous on a GPU: the
    /// results are read, and the operands overwritten, only after a
    /// `wgmma.wait` (which takes and gives the results).
    Wgmma {
        /// The instruction.
        kind: WgmmaKind,
        /// The allocation of A.
        a: SharedId,
        /// The swizzle, hence the row width, of A's layout.
        a_swizzle: DescriptorSwizzle,
        /// The allocation of B.
        b: SharedId,
    },
    /// `wgmma.m64n<N>k16.<dtype> {%a0, …, %a7}, @s<b>[%ib], %c…`: [`Self::Wgmma`]
    /// with A (64×16) from registers: operands the thread's 8 elements of A
    /// (of the kind's dtype, in [`tile_hw::wgmma::register_a_element`]'s
    /// order), B's index, then the accumulators; results: its elements of
    /// D. The A registers, like the accumulators, are read only after a
    /// `wgmma.fence`.
    WgmmaRegisterA {
        /// The instruction.
        kind: WgmmaKind,
        /// The allocation of B.
        b: SharedId,
    },
    /// `wgmma.fence`: the warpgroup's accesses to accumulator registers
    /// before it are ordered before the next `wgmma`.
    WgmmaFence,
    /// `wgmma.commit`: closes the thread's open group of `wgmma`s.
    WgmmaCommit,
    /// `%d… = wgmma.wait <pending> %r…`: waits until at most `pending` of
    /// the thread's groups of `wgmma`s are in flight; its results are its
    /// operands (the accumulators the completed groups wrote), so that no
    /// use of them moves before it.
    WgmmaWait {
        /// The groups that may stay in flight.
        pending: u8,
    },
    /// `tmem.alloc <columns> @s<slot>[%index]`: warp 0 allocates `columns`
    /// columns of the block's tensor memory (PTX `tcgen05.alloc` and
    /// `tcgen05.relinquish_alloc_permit`, [`tile_hw::tcgen05`]) and writes
    /// their base address to the `u32` at `index` (`i32`) of `slot`; other
    /// warps do nothing. Threads read the address after a barrier.
    TmemAlloc {
        /// The columns: a power of two from 32 to 512.
        columns: u16,
        /// The allocation of the address's word.
        slot: SharedId,
    },
    /// `tmem.dealloc <columns> %t`: warp 0 frees the `columns` columns of
    /// tensor memory at address `t` (`i32`, what `tmem.alloc` wrote); other
    /// warps do nothing. Every thread's accesses of them come before it, by
    /// a barrier.
    TmemDealloc {
        /// The columns allocated.
        columns: u16,
    },
    /// `tcgen05.mma.m128n<N>k16.<dtype>[.bk][.sw64|.sw32] @s<a>[%ia],
    /// @s<b>[%ib], %d, %accumulate mask(%m)`: where `m` (`bool`) holds (one
    /// thread), PTX `tcgen05.mma.cta_group::1.kind::f16` of A (128×16) and B
    /// (16×N) laid out in shared memory as [`Self::Wgmma`]'s are, from
    /// elements `ia` and `ib` (`i32`), into the 128×N `f32` block of tensor
    /// memory at address `d` (`i32`, lane 0), adding to it where
    /// `accumulate` (`bool`) holds. Asynchronous: D is written, and the
    /// operands read, by the time a `tcgen05.commit_wait` of the same
    /// thread returns.
    Tcgen05Mma {
        /// The instruction.
        kind: Tcgen05Kind,
        /// The allocation of A.
        a: SharedId,
        /// The swizzle, hence the row width, of A's layout.
        a_swizzle: DescriptorSwizzle,
        /// The allocation of B.
        b: SharedId,
    },
    /// `tcgen05.commit_wait @s<bar>[%index] mask(%m)`: where `m` holds, PTX
    /// `tcgen05.commit` arrives once at the mbarrier at `index` (of one
    /// expected arrival) when the thread's earlier `tcgen05.mma`s are done;
    /// every thread then waits for that phase of the barrier (each phase
    /// in turn: every thread of the block executes each of these in the
    /// same order, with a barrier between one and the next `tcgen05.mma`).
    /// After it, the products' D are in tensor memory for every thread.
    Tcgen05CommitWait {
        /// The barriers' allocation.
        bar: SharedId,
    },
    /// `%r… = tmem.load.x<columns> %t`: one warp's PTX
    /// `tcgen05.ld.sync.aligned.32x32b.x<columns>` and its wait: lane `l`
    /// of warp `w` reads lane `32·(w % 4) + l` of tensor memory, `columns`
    /// columns from the column of address `t` (`i32`, the same in every
    /// lane, its lane 0), as `f32`s.
    TmemLoad {
        /// The columns each thread reads.
        columns: u16,
    },
    /// `tmem.store %t, %v…`: [`Self::TmemLoad`]'s store, `tcgen05.st` and
    /// its wait: lane `l` of warp `w` writes its values (`f32`) to lane
    /// `32·(w % 4) + l`, consecutive columns from that of `t`.
    TmemStore,
    /// `fence.proxy.async`: the thread's earlier writes to shared memory
    /// become visible to the asynchronous proxy (`wgmma`) of every thread
    /// after the next barrier.
    FenceProxyAsync,
    /// `griddepcontrol.wait`: the thread waits until the grids its launch
    /// depends on have finished and their writes are visible (PTX
    /// `griddepcontrol.wait` on sm_90+; nothing to wait for elsewhere).
    GridWait,
    /// `griddepcontrol.launch_dependents`: the thread's program lets the
    /// dependent launch start (PTX `griddepcontrol.launch_dependents` on
    /// sm_90+; nothing elsewhere).
    GridLaunchDependents,
    /// `mbarrier.init @s<alloc>[%index], %count mask(%m)`: PTX
    /// `mbarrier.init.shared::cta.b64`: the barrier at `index` (an
    /// allocation of `u64`s) starts its phase 0 expecting `count` (`i32`)
    /// arrivals; only where `m` (`bool`) holds (one thread). Other threads
    /// use it after a barrier.
    MbarrierInit {
        /// The barriers' allocation.
        alloc: SharedId,
    },
    /// `mbarrier.expect_tx @s<alloc>[%index], %bytes mask(%m)`: PTX
    /// `mbarrier.arrive.expect_tx.shared::cta.b64`: where `m` holds, one
    /// arrival at the barrier, whose current phase also waits for `bytes`
    /// (`i32`) of asynchronous copies to complete on it.
    MbarrierExpectTx {
        /// The barriers' allocation.
        alloc: SharedId,
    },
    /// `mbarrier.wait @s<alloc>[%index], %parity`: PTX
    /// `mbarrier.try_wait.parity.shared::cta.b64` until it succeeds: every
    /// thread waits until the barrier's phase of parity `parity` (`i32`, 0
    /// or 1) has completed; the copies that completed on it are then
    /// visible to the thread.
    MbarrierWait {
        /// The barriers' allocation.
        alloc: SharedId,
    },
    /// `tma.load @s<alloc>[%index], <param> box <rows> [%c0, %c1],
    /// @s<bar>[%b] mask(%m)`: PTX `cp.async.bulk.tensor.2d.shared::cluster
    /// .global.tile.mbarrier::complete_tx::bytes` through the tensor map of
    /// the 2-D tensor parameter for boxes of `rows` rows of 128 bytes
    /// (`tile_abi::tma`): where `m` holds, copies the box at column `c0`,
    /// row `c1` (`i32`) into the allocation from element `index` (`i32`, on
    /// a 1024-byte boundary) under the 128-byte swizzle, zeros outside the
    /// tensor, and completes its bytes on the barrier at `b`. Asynchronous:
    /// the box is there only for threads that waited on the barrier's phase.
    TmaLoad {
        /// The tensor parameter read.
        param: usize,
        /// The box's rows.
        rows: u16,
        /// The allocation written.
        alloc: SharedId,
        /// The barriers' allocation.
        bar: SharedId,
    },
    /// `cp.async.commit`: closes the thread's open group of copies.
    CommitAsync,
    /// `cp.async.wait <pending>`: waits until at most `pending` of the
    /// thread's closed groups are still in flight (the older ones land).
    WaitAsync {
        /// The groups that may stay in flight.
        pending: u8,
    },
    /// `for %iv = %lo to %hi step %step iter(...)`: a uniform counted loop;
    /// operands as the tile IR's `for`, one region, results the final carried
    /// values.
    For,
    /// `while iter(%a = %init, ...) { cond } do(%b, ...) { body }`: a
    /// uniform loop; operands and regions as the tile IR's `while` (the
    /// condition region yields a uniform `bool`), results the final carried
    /// values.
    While,
    /// `if %cond`: a uniform branch; two regions ending in `yield`.
    If,
    /// `yield %a, ...`: ends a nested region.
    Yield,
}

impl ThreadOpKind {
    /// The op's name in the text form and in errors.
    pub fn name(&self) -> &'static str {
        match self {
            ThreadOpKind::ThreadId => "thread_id",
            ThreadOpKind::LaneId => "lane_id",
            ThreadOpKind::WarpId => "warp_id",
            ThreadOpKind::BlockId { .. } => "block_id",
            ThreadOpKind::GridDim { .. } => "grid_dim",
            ThreadOpKind::Const(_) => "const",
            ThreadOpKind::Param { .. } => "param",
            ThreadOpKind::TensorDim { .. } => "dim",
            ThreadOpKind::TensorStride { .. } => "stride",
            ThreadOpKind::TensorAlign { .. } => "align",
            ThreadOpKind::Unary(op) => op.name(),
            ThreadOpKind::Binary(op) => op.name(),
            ThreadOpKind::Cmp(_) => "cmp",
            ThreadOpKind::Select => "select",
            ThreadOpKind::Fma => "fma",
            ThreadOpKind::Opaque => "opaque",
            ThreadOpKind::Cast { .. } => "cast",
            ThreadOpKind::Bitcast { .. } => "bitcast",
            ThreadOpKind::LoadGlobal { .. } => "ld.global",
            ThreadOpKind::StoreGlobal { .. } => "st.global",
            ThreadOpKind::AtomicGlobal { .. } => "atom.global",
            ThreadOpKind::LoadShared { .. } => "ld.shared",
            ThreadOpKind::StoreShared { .. } => "st.shared",
            ThreadOpKind::Check { .. } => "check",
            ThreadOpKind::Print { .. } => "print",
            ThreadOpKind::Barrier => "barrier",
            ThreadOpKind::Fence { .. } => "fence",
            ThreadOpKind::Shuffle { .. } => "shfl",
            ThreadOpKind::Mma { .. } => "mma",
            ThreadOpKind::LdMatrix { .. } => "ldmatrix",
            ThreadOpKind::CopyAsync { .. } => "cp.async",
            ThreadOpKind::Wgmma { .. } | ThreadOpKind::WgmmaRegisterA { .. } => "wgmma",
            ThreadOpKind::WgmmaFence => "wgmma.fence",
            ThreadOpKind::WgmmaCommit => "wgmma.commit",
            ThreadOpKind::WgmmaWait { .. } => "wgmma.wait",
            ThreadOpKind::TmemAlloc { .. } => "tmem.alloc",
            ThreadOpKind::TmemDealloc { .. } => "tmem.dealloc",
            ThreadOpKind::Tcgen05Mma { .. } => "tcgen05.mma",
            ThreadOpKind::Tcgen05CommitWait { .. } => "tcgen05.commit_wait",
            ThreadOpKind::TmemLoad { .. } => "tmem.load",
            ThreadOpKind::TmemStore => "tmem.store",
            ThreadOpKind::FenceProxyAsync => "fence.proxy.async",
            ThreadOpKind::GridWait => "griddepcontrol.wait",
            ThreadOpKind::GridLaunchDependents => "griddepcontrol.launch_dependents",
            ThreadOpKind::MbarrierInit { .. } => "mbarrier.init",
            ThreadOpKind::MbarrierExpectTx { .. } => "mbarrier.expect_tx",
            ThreadOpKind::MbarrierWait { .. } => "mbarrier.wait",
            ThreadOpKind::TmaLoad { .. } => "tma.load",
            ThreadOpKind::CommitAsync => "cp.async.commit",
            ThreadOpKind::WaitAsync { .. } => "cp.async.wait",
            ThreadOpKind::For => "for",
            ThreadOpKind::While => "while",
            ThreadOpKind::If => "if",
            ThreadOpKind::Yield => "yield",
        }
    }
}
