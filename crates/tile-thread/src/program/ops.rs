//! The op table of the thread-level program: every op declared once, with
//! its attributes, its format (its line in the text form, with its
//! operands by role: `format.rs`) and what its results are (`table.rs`).
//! The printer, the parser and the verifier's operand checks read the
//! rows; the verifier's typing rules, the lockstep emulator and the
//! emitters match on the kind.

pub use super::attributes::{CheckKind, ShuffleMode};
use super::parse::syntax::{
    DTypeName, Decimal, Literal, Matrices, MmaName, Name, ParamName, Quoted, Shared, SharedWidth,
    SwizzleSuffix, Tcgen05Name, Times, VectorWidth, WgmmaName,
};
use super::SharedId;
pub use tile_hw::ldmatrix::LdMatrix;
pub use tile_hw::mma::MmaKind;
pub use tile_hw::tcgen05::Tcgen05Kind;
pub use tile_hw::wgmma::{Swizzle as DescriptorSwizzle, WgmmaKind};
use tile_ir::{AtomicOp, BinaryOp, CmpPred, DType, MemOrder, MemScope, Scalar, UnaryOp};

thread_ops! {
    /// What a thread-level op does. All values are per-thread scalars;
    /// operands sit in the order the format writes them.
    #[derive(Clone, Debug, PartialEq)]
    pub enum ThreadOpKind {
        /// The thread's index in its block, in `0..32 * num_warps`.
        ThreadId = "thread_id" -> I32,
        /// `thread_id % 32`.
        LaneId = "lane_id" -> I32,
        /// `thread_id / 32`.
        WarpId = "warp_id" -> I32,
        /// The block's index along grid axis 0, 1 or 2 (the tile IR's
        /// `program_id`).
        BlockId {
            /// The grid axis.
            axis: u8 as Decimal,
        } = "block_id $axis" -> I32,
        /// The grid's extent along an axis.
        GridDim {
            /// The grid axis.
            axis: u8 as Decimal,
        } = "grid_dim $axis" -> I32,
        /// A constant.
        Const(value: Scalar as Literal) = "const $value" -> Rule,
        /// The value of a scalar kernel parameter.
        Param {
            /// The parameter's position.
            index: usize as ParamName,
        } = "param $index" -> Rule,
        /// Binds tensor `param` (a [`super::ParamKind::Element`] of
        /// `array`) to tensor `index` of the tensor array `array`; `index`
        /// must lie in `0..num_tensors` (a `tensor_index` check before it
        /// guards that). Uniform across the block.
        GetTensor {
            /// The tensor bound.
            param: usize as ParamName,
            /// The tensor array.
            array: usize as ParamName,
        } = "get_tensor $param = $array[%index:i32]" -> Nothing,
        /// The number of tensors of a tensor array.
        NumTensors {
            /// The tensor array's position.
            array: usize as ParamName,
        } = "num_tensors $array" -> I32,
        /// A tensor parameter's runtime extent.
        TensorDim {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// The axis.
            axis: usize as Decimal,
        } = "dim $param.$axis" -> I32,
        /// A tensor parameter's runtime stride in elements.
        TensorStride {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// The axis.
            axis: usize as Decimal,
        } = "stride $param.$axis" -> I64,
        /// The alignment in bytes of the tensor's element zero (the largest
        /// power of two dividing its address, at most 256).
        TensorAlign {
            /// The tensor parameter's position.
            param: usize as ParamName,
        } = "align $param" -> I64,
        /// A unary op with the tile IR's scalar semantics
        /// ([`tile_ir::eval::unary`]).
        Unary(op: UnaryOp as Name) = "$op %x" -> Rule,
        /// A binary op ([`tile_ir::eval::binary`]).
        Binary(op: BinaryOp as Name) = "$op %a, %b" -> Rule,
        /// A comparison.
        Cmp(pred: CmpPred as Name) = "cmp $pred %a, %b" -> Bool,
        /// `if c { a } else { b }`.
        Select = "select %c:bool, %a, %b" -> Rule,
        /// `a · b + c` with one rounding.
        Fma = "fma %a, %b, %c" -> Rule,
        /// `x` (`i32` or `i64`), unchanged, which the GPU emitter hides from
        /// LLVM's optimizer (an empty inline-assembly identity), so that what
        /// is computed from it is computed where it is used. The lowering
        /// computes the element-by-element offsets of a wide access from its
        /// partition index through it: otherwise LLVM's loop strength
        /// reduction keeps an address induction variable per element alive
        /// across a loop, in registers, for a path only edges take.
        Opaque = "opaque %x" -> Rule,
        /// A conversion ([`tile_ir::eval::cast`]).
        Cast {
            /// The result's dtype.
            to: DType as DTypeName,
        } = "cast %x to $to" -> Rule,
        /// The bits read as a dtype of the same width
        /// ([`tile_ir::eval::bitcast`]).
        Bitcast {
            /// The result's dtype.
            to: DType as DTypeName,
        } = "bitcast %x to $to" -> Rule,
        /// Reads `width` elements of a tensor parameter. At width 1, the
        /// element at element offset `addr` from the tensor's element zero
        /// where the mask holds, else `other` (no memory is touched). Wider:
        /// one vector access of `addr + i` where `ok` holds (every mask
        /// holds there), else element `i` at `lanes[i]` where its mask holds
        /// ([`super::GlobalOperands`]). Results: the elements.
        LoadGlobal {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// The number of elements.
            width: u8 as VectorWidth,
        } = "ld.global.$width $param[%addr:i64][? if(%ok:bool) else[%lanes:i64*$width]?] \
             mask(%masks:bool*$width) other(%others*$width)" -> Rule,
        /// Writes the values where their masks hold, addressed as
        /// `ld.global`'s.
        StoreGlobal {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// The number of elements.
            width: u8 as VectorWidth,
        } = "st.global.$width $param[%addr:i64][? if(%ok:bool) else[%lanes:i64*$width]?], \
             %values*$width mask(%masks:bool*$width)" -> Nothing,
        /// Where the mask holds, the atomic update of the element at offset
        /// `addr` from the tensor's element zero ([`tile_ir::eval::atomic`]);
        /// the result is the element's old value, or the dtype's zero where
        /// the mask is false (no memory is touched there). The values are
        /// `cmp` and the new value for `cas`, the operand otherwise.
        AtomicGlobal {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// The update.
            op: AtomicOp as Name,
            /// Its memory order.
            order: MemOrder as Name,
            /// Its scope.
            scope: MemScope as Name,
        } = "atom.global.$op.$order.$scope $param[%addr:i64], %values* mask(%mask:bool)" -> Rule,
        /// Relaxed atomic adds of `width` values whose old values nobody
        /// reads, addressed as `st.global`'s: one vector reduction where
        /// `ok` holds and the target has one (`red.global.add.v2.f32` on
        /// sm_90 and later), else each element's own atomic add where its
        /// mask holds. Each element is its own atomic update either way.
        AddGlobal {
            /// The tensor parameter's position.
            param: usize as ParamName,
            /// Its scope.
            scope: MemScope as Name,
            /// The number of elements.
            width: u8 as VectorWidth,
        } = "red.global.add.$scope.$width $param[%addr:i64][? if(%ok:bool) else[%lanes:i64*$width]?], \
             %values*$width mask(%masks:bool*$width)" -> Nothing,
        /// The `width` elements from `index` (a multiple of `width`; at most
        /// 16 bytes), in one access.
        LoadShared {
            /// The allocation.
            alloc: SharedId as Shared,
            /// The number of elements: 1, 2, 4, 8 or 16.
            width: u8 as SharedWidth,
        } = "ld.shared$width $alloc[%index:i32]" -> Rule,
        /// Writes the `width` values from `index` where the mask holds,
        /// addressed as `ld.shared`'s.
        StoreShared {
            /// The allocation.
            alloc: SharedId as Shared,
            /// The number of elements: 1, 2, 4, 8 or 16.
            width: u8 as SharedWidth,
        } = "st.shared$width $alloc[%index:i32], %values*$width mask(%mask:bool)" -> Nothing,
        /// Where the mask holds (and only there is anything read),
        /// rewrites the `width` `f32` elements from `index` (addressed as
        /// `ld.shared`'s) rounded to TF32
        /// ([`tile_ir::UnaryOp::RoundTf32`]): one thread's read and write
        /// of its own elements, which needs no barrier between them (the
        /// lowering rounds staged operands of an instruction that would
        /// truncate them, `lower/round_staged.rs`).
        RoundSharedTf32 {
            /// The allocation.
            alloc: SharedId as Shared,
            /// The number of elements: 1, 2 or 4.
            width: u8 as SharedWidth,
        } = "round.shared.tf32$width $alloc[%index:i32] mask(%mask:bool)" -> Nothing,
        /// A run-time check of what the compiler could not prove: `ok` is
        /// false where the check fails in this thread, and the values are
        /// what the failure reports (`i64`; an assertion's values keep their
        /// dtypes). If `ok` is false in any thread the kernel fails with an
        /// error naming the kernel, the tile op and the values (on a GPU:
        /// the first failure in the status record). What follows cannot do
        /// harm: a checked access is masked by the same predicate, and a
        /// `for` with a non-positive step runs no iteration.
        Check {
            /// What is checked.
            kind: CheckKind as Name,
            /// The tile-IR op checked, as text.
            op: String as Quoted,
        } = "check.$kind %ok:bool [%values*] $op" -> Nothing,
        /// Where `on` holds in this thread, appends a record of print `id`
        /// (the tile-IR `print`'s number) to the print area: the block, the
        /// row-major `element` and the values (any scalar dtypes), whose
        /// message the runtime formats (`tile_abi::device_print`).
        Print {
            /// The print's number.
            id: u32 as Decimal,
        } = "print $id %on:bool, %element:i32 [%values*]" -> Nothing,
        /// Every thread of the block waits for all others (`bar.sync 0`).
        Barrier = "barrier" -> Nothing,
        /// The thread's fence (PTX `fence.acq_rel` or `fence.sc` at `.cta`
        /// or `.gpu`, AMDGPU `fence syncscope`), for its own accesses;
        /// `tile_hw::happens` has what it orders.
        Fence {
            /// What the fence orders.
            order: MemOrder as Name,
            /// Which threads the ordering is promised to.
            scope: MemScope as Name,
        } = "fence.$order.$scope" -> Nothing,
        /// PTX `shfl.sync` over all 32 lanes with segments of `width` lanes
        /// (`c = ((32 - width) << 8) | clamp`): reads `value` from the source
        /// lane of the mode (from `lane`), or keeps the own value when the
        /// source lies outside the segment. A width of 64 reads among the
        /// 64 lanes of a CDNA wave, warps `2w` and `2w + 1`, by the same
        /// rules over 6-bit lanes (`ds_bpermute`; a block of an even number
        /// of warps, and no NVIDIA or wave32 target).
        Shuffle {
            /// The mode.
            mode: ShuffleMode as Name,
            /// The segment width: a power of two from 1 to 64.
            width: u8 as Decimal,
        } = "shfl.$mode %value, %lane:i32 width $width" -> Rule,
        /// One warp's tensor-core step `D = A·B + C` (PTX
        /// `mma.sync.aligned.m16n8k16.row.col` with `f32` accumulators): each
        /// lane passes the 8 elements of its A fragment, the 4 of its B
        /// fragment (of the kind's dtype) and the 4 `f32` of its C fragment,
        /// in the element order of [`tile_hw::mma`]; the results are its 4
        /// elements of D. Every lane of the warp executes it together. RDNA's
        /// `wmma16x16x16` (16 + 16 + 8 registers) likewise; CDNA's
        /// `mfma32x32x8` and `mfma16x16x16` (4 + 4 + 16 or 4 registers) are
        /// issued by a whole 64-lane wave, two warps. A block-scaled kind
        /// (`m16n8k32.e4m3.ue8m0`) takes the lane's `f8e8m0` scale of A and
        /// of B after C ([`tile_hw::mma::MmaKind::scale_holder`]).
        Mma {
            /// The instruction.
            kind: MmaKind as MmaName,
        } = "mma.$kind %fragments*" -> Rule,
        /// One warp's PTX `ldmatrix` of `count` 8×8 matrices of 16-bit
        /// elements: lane `8j + r` passes the index of row `r` of matrix `j`
        /// (16 consecutive bytes, 16-byte aligned; other lanes' indices are
        /// not read). Results: the lane's `2·count` elements, in the order
        /// of [`LdMatrix`]'s registers and halves. An allocation of 32-bit
        /// elements (TF32 operands) is read as pairs of halves: a row is 4
        /// elements, and each register one element (`count` results; not
        /// `.trans`). Every lane of the warp executes it together.
        LdMatrix {
            /// The allocation.
            alloc: SharedId as Shared,
            /// The instruction's matrices and transposition.
            shape: LdMatrix as Matrices,
        } = "ldmatrix.$shape $alloc[%index:i32]" -> Rule,
        /// PTX `cp.async.cg.shared.global` of 16 bytes: the `16 / size`
        /// elements of the tensor parameter from element offset `addr` to
        /// the allocation from `index` (16-byte aligned on both sides), of
        /// which only the first `count` are read and the rest written as
        /// zeros; nothing at all where the mask is false. Asynchronous: the
        /// copy joins the thread's open group and lands only when a
        /// `cp.async.wait` completes the group.
        CopyAsync {
            /// The tensor parameter read.
            param: usize as ParamName,
            /// The allocation written.
            alloc: SharedId as Shared,
        } = "cp.async $alloc[%index:i32], $param[%addr:i64] count(%count:i32) mask(%mask:bool)"
            -> Nothing,
        /// One warpgroup's (4 warps') `wgmma.mma_async`, `D = A·B + C`, with
        /// A (64×16) K-major in allocation `a` in the swizzled layout of
        /// [`tile_hw::wgmma`] of `a_swizzle` and B (16×N) N-major in `b` in
        /// the 128-byte-swizzled layout, each with 8 rows between groups of
        /// 8 rows, from elements `ia` and `ib` (the same in every thread of
        /// the warpgroup; the allocations start on 1024-byte boundaries).
        /// The accumulators are the thread's `N / 2` (in
        /// [`tile_hw::wgmma::accumulator_element`]'s order); the results its
        /// elements of D. Asynchronous on a GPU: the results are read, and
        /// the operands overwritten, only after a `wgmma.wait` (which takes
        /// and gives the results).
        Wgmma {
            /// The instruction.
            kind: WgmmaKind as WgmmaName,
            /// The allocation of A.
            a: SharedId as Shared,
            /// The swizzle, hence the row width, of A's layout.
            a_swizzle: DescriptorSwizzle as SwizzleSuffix,
            /// The allocation of B.
            b: SharedId as Shared,
        } = "wgmma.$kind$a_swizzle $a[%ia:i32], $b[%ib:i32], %accumulators:f32*" -> Rule,
        /// [`Self::Wgmma`] with A (64×16) from registers: the thread's 8
        /// elements of A (of the kind's dtype, in
        /// [`tile_hw::wgmma::register_a_element`]'s order). The A registers,
        /// like the accumulators, are read only after a `wgmma.fence`.
        WgmmaRegisterA {
            /// The instruction.
            kind: WgmmaKind as WgmmaName,
            /// The allocation of B.
            b: SharedId as Shared,
        } = "wgmma.$kind {%a*8}, $b[%ib:i32], %accumulators:f32*" -> Rule,
        /// The warpgroup's accesses to accumulator registers before it are
        /// ordered before the next `wgmma`.
        WgmmaFence = "wgmma.fence" -> Nothing,
        /// Closes the thread's open group of `wgmma`s.
        WgmmaCommit = "wgmma.commit" -> Nothing,
        /// Waits until at most `pending` of the thread's groups of `wgmma`s
        /// are in flight; its results are its operands (the accumulators the
        /// completed groups wrote), so that no use of them moves before it.
        WgmmaWait {
            /// The groups that may stay in flight.
            pending: u8 as Decimal,
        } = "wgmma.wait $pending %accumulators:f32*" -> Rule,
        /// Warp 0 allocates `columns` columns of the block's tensor memory
        /// (PTX `tcgen05.alloc` and `tcgen05.relinquish_alloc_permit`,
        /// [`tile_hw::tcgen05`]) and writes their base address to the `u32`
        /// at `index` of `slot`; other warps do nothing. Threads read the
        /// address after a barrier.
        TmemAlloc {
            /// The columns: a power of two from 32 to 512.
            columns: u16 as Decimal,
            /// The allocation of the address's word.
            slot: SharedId as Shared,
        } = "tmem.alloc $columns $slot[%index:i32]" -> Nothing,
        /// Warp 0 frees the `columns` columns of tensor memory at `address`
        /// (what `tmem.alloc` wrote); other warps do nothing. Every thread's
        /// accesses of them come before it, by a barrier.
        TmemDealloc {
            /// The columns allocated.
            columns: u16 as Decimal,
        } = "tmem.dealloc $columns %address:i32" -> Nothing,
        /// Where the mask holds (one thread), PTX
        /// `tcgen05.mma.cta_group::1.kind::f16` of A (128×16) and B (16×N)
        /// laid out in shared memory as [`Self::Wgmma`]'s are, from elements
        /// `ia` and `ib`, into the 128×N `f32` block of tensor memory at
        /// address `d` (lane 0), adding to it where `accumulate` holds.
        /// Asynchronous: D is written, and the operands read, by the time a
        /// `tcgen05.commit_wait` of the same thread returns.
        Tcgen05Mma {
            /// The instruction.
            kind: Tcgen05Kind as Tcgen05Name,
            /// The allocation of A.
            a: SharedId as Shared,
            /// The swizzle, hence the row width, of A's layout.
            a_swizzle: DescriptorSwizzle as SwizzleSuffix,
            /// The allocation of B.
            b: SharedId as Shared,
        } = "tcgen05.mma.$kind$a_swizzle $a[%ia:i32], $b[%ib:i32], %d:i32, %accumulate:bool \
             mask(%mask:bool)" -> Nothing,
        /// [`Self::Tcgen05Mma`] with A (128×16 of 16-bit elements) in tensor
        /// memory from the address `a` (lane 0), laid out as
        /// [`tile_hw::tcgen05::tensor_a_element`] says: PTX
        /// `tcgen05.mma.cta_group::1.kind::f16 [d], [a], b_desc, …`. A is
        /// read, like D written, by the time a `tcgen05.commit_wait` of the
        /// same thread returns.
        Tcgen05MmaTensorA {
            /// The instruction.
            kind: Tcgen05Kind as Tcgen05Name,
            /// The allocation of B.
            b: SharedId as Shared,
        } = "tcgen05.mma.$kind tmem[%a:i32], $b[%ib:i32], %d:i32, %accumulate:bool \
             mask(%mask:bool)" -> Nothing,
        /// [`Self::Tcgen05Mma`] of E4M3 or E5M2 with E8M0 scales: PTX
        /// `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [d], a_desc,
        /// b_desc, idesc, [sa], [sb]`, each row of A and column of B scaled
        /// by byte `byte` of its cell in the scale images at the
        /// tensor-memory addresses `sa` and `sb` (lane 0;
        /// `tile_hw::tcgen05::scale_cell`). The scales are read, like the
        /// operands, by the time a `tcgen05.commit_wait` of the same thread
        /// returns.
        Tcgen05MmaScaled {
            /// The instruction.
            kind: Tcgen05Kind as Tcgen05Name,
            /// The allocation of A.
            a: SharedId as Shared,
            /// The swizzle, hence the row width, of A's layout.
            a_swizzle: DescriptorSwizzle as SwizzleSuffix,
            /// The allocation of B.
            b: SharedId as Shared,
            /// The byte of each scale cell (0 to 3): the group of 32 `k`.
            byte: u8 as Decimal,
        } = "tcgen05.mma.scaled.$kind$a_swizzle byte $byte $a[%ia:i32], $b[%ib:i32], %d:i32, \
             scales(%sa:i32, %sb:i32), %accumulate:bool mask(%mask:bool)" -> Nothing,
        /// Where the mask holds, PTX `tcgen05.commit` arrives once at the
        /// mbarrier at `index` (of one expected arrival) when the thread's
        /// earlier `tcgen05.mma`s are done; every thread then waits for that
        /// phase of the barrier (each phase in turn: every thread of the
        /// block executes each of these in the same order, with a barrier
        /// between one and the next `tcgen05.mma`). After it, the products'
        /// D are in tensor memory for every thread.
        Tcgen05CommitWait {
            /// The barriers' allocation.
            bar: SharedId as Shared,
        } = "tcgen05.commit_wait $bar[%index:i32] mask(%mask:bool)" -> Nothing,
        /// One warp's PTX `tcgen05.ld.sync.aligned.32x32b.x<columns>` and its
        /// wait: lane `l` of warp `w` reads lane `32·(w % 4) + l` of tensor
        /// memory, `columns` columns from the column of `address` (the same
        /// in every lane, its lane 0), as `f32`s.
        TmemLoad {
            /// The columns each thread reads.
            columns: u16 as Times,
        } = "tmem.load.$columns %address:i32" -> Rule,
        /// [`Self::TmemLoad`]'s store, `tcgen05.st` and its wait: lane `l` of
        /// warp `w` writes its values to lane `32·(w % 4) + l`, consecutive
        /// columns from that of `address`.
        TmemStore = "tmem.store %address:i32, %values:f32*" -> Nothing,
        /// [`Self::TmemStore`] of 16-bit values (f16 or bf16), two a column,
        /// the first of each pair in the low half: the layout of an A in
        /// tensor memory ([`Self::Tcgen05MmaTensorA`]), which alone reads
        /// them.
        TmemStoreHalves = "tmem.store.halves %address:i32, %values*" -> Nothing,
        /// [`Self::TmemStore`] of 8-bit values, four a column, the first of
        /// each four in the low byte: the scale images of
        /// [`Self::Tcgen05MmaScaled`], which alone reads them.
        TmemStoreBytes = "tmem.store.bytes %address:i32, %values*" -> Nothing,
        /// The thread's earlier writes to shared memory become visible to
        /// the asynchronous proxy (`wgmma`) of every thread after the next
        /// barrier.
        FenceProxyAsync = "fence.proxy.async" -> Nothing,
        /// The thread waits until the grids its launch depends on have
        /// finished and their writes are visible (PTX `griddepcontrol.wait`
        /// on sm_90+; nothing to wait for elsewhere).
        GridWait = "griddepcontrol.wait" -> Nothing,
        /// The thread's program lets the dependent launch start (PTX
        /// `griddepcontrol.launch_dependents` on sm_90+; nothing elsewhere).
        GridLaunchDependents = "griddepcontrol.launch_dependents" -> Nothing,
        /// PTX `mbarrier.init.shared::cta.b64`: the barrier at `index` (an
        /// allocation of `u64`s) starts its phase 0 expecting `count`
        /// arrivals; only where the mask holds (one thread). Other threads
        /// use it after a barrier.
        MbarrierInit {
            /// The barriers' allocation.
            alloc: SharedId as Shared,
        } = "mbarrier.init $alloc[%index:i32], %count:i32 mask(%mask:bool)" -> Nothing,
        /// PTX `mbarrier.arrive.expect_tx.shared::cta.b64`: where the mask
        /// holds, one arrival at the barrier, whose current phase also waits
        /// for `bytes` of asynchronous copies to complete on it.
        MbarrierExpectTx {
            /// The barriers' allocation.
            alloc: SharedId as Shared,
        } = "mbarrier.expect_tx $alloc[%index:i32], %bytes:i32 mask(%mask:bool)" -> Nothing,
        /// PTX `mbarrier.try_wait.parity.shared::cta.b64` until it succeeds:
        /// every thread waits until the barrier's phase of parity `parity`
        /// (0 or 1) has completed; the copies that completed on it are then
        /// visible to the thread.
        MbarrierWait {
            /// The barriers' allocation.
            alloc: SharedId as Shared,
        } = "mbarrier.wait $alloc[%index:i32], %parity:i32" -> Nothing,
        /// PTX `cp.async.bulk.tensor.2d.shared::cluster.global.tile
        /// .mbarrier::complete_tx::bytes` through the tensor map of the 2-D
        /// tensor parameter for boxes of `rows` rows of 128 bytes
        /// (`tile_abi::tma`): where the mask holds, copies the box at column
        /// `c0`, row `c1` into the allocation from element `index` (on a
        /// 1024-byte boundary) under the 128-byte swizzle, zeros outside the
        /// tensor, and completes its bytes on the barrier at `bar_index`.
        /// Asynchronous: the box is there only for threads that waited on
        /// the barrier's phase.
        TmaLoad {
            /// The tensor parameter read.
            param: usize as ParamName,
            /// The box's rows.
            rows: u16 as Decimal,
            /// The allocation written.
            alloc: SharedId as Shared,
            /// The barriers' allocation.
            bar: SharedId as Shared,
        } = "tma.load $alloc[%index:i32], $param box $rows [%c0:i32, %c1:i32], \
             $bar[%bar_index:i32] mask(%mask:bool)" -> Nothing,
        /// Closes the thread's open group of copies.
        CommitAsync = "cp.async.commit" -> Nothing,
        /// Waits until at most `pending` of the thread's closed groups are
        /// still in flight (the older ones land).
        WaitAsync {
            /// The groups that may stay in flight.
            pending: u8 as Decimal,
        } = "cp.async.wait $pending" -> Nothing,
        /// `for %iv = %lo to %hi step %step iter(%a = %init, ...)`: a uniform
        /// counted loop; operands `lo`, `hi`, `step` and the initial carried
        /// values, one region, results the final carried values.
        For = "for" -> Region,
        /// `while iter(%a = %init, ...) { cond } do(%b, ...) { body }`: a
        /// uniform loop; operands and regions as the tile IR's `while` (the
        /// condition region yields a uniform `bool`), results the final
        /// carried values.
        While = "while" -> Region,
        /// A uniform branch; two regions ending in `yield`.
        If = "if %cond:bool" -> Region,
        /// Ends a nested region.
        Yield = "yield %values*" -> Nothing,
    }
}

impl ThreadOpKind {
    /// The op's name in the text form and in errors: its format's start
    /// (`ld.global`), or a unary or binary op's own name.
    pub fn name(&self) -> &'static str {
        match self {
            ThreadOpKind::Unary(op) => op.name(),
            ThreadOpKind::Binary(op) => op.name(),
            _ => tile_ir::format::mnemonic(self.format()),
        }
    }
}
