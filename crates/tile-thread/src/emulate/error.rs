//! The emulator's errors: what went wrong, in which op, block and thread.

use tile_ir::eval::EvalError;

/// A failed emulation: the block, the thread (when one thread is at fault),
/// the op's text and the fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("block ({}, {}, {}){}: `{op}`: {fault}", block[0], block[1], block[2], thread.map(|t| format!(" thread {t}")).unwrap_or_default())]
pub struct LockstepError {
    /// The block's index in the grid.
    pub block: [u32; 3],
    /// The thread at fault, if one is.
    pub thread: Option<u32>,
    /// The text of the failing op.
    pub op: String,
    /// What went wrong.
    pub fault: Box<LockstepFault>,
}

/// What went wrong in an emulated op.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LockstepFault {
    /// A global access outside every element of the tensor.
    #[error("out-of-bounds global {access} of `{param}` at element offset {address} (the tensor spans {low}..={high})")]
    GlobalOutOfBounds {
        /// `load` or `store`.
        access: &'static str,
        /// The tensor parameter's name.
        param: String,
        /// The offset from the tensor's element zero.
        address: i64,
        /// The lowest reachable offset.
        low: i64,
        /// The highest reachable offset.
        high: i64,
    },
    /// A global element that two threads of one launch access, not both
    /// atomically and at least one of them writing, with nothing ordering
    /// them (no barrier of their block between, no release the later one
    /// acquired): its value is undefined.
    #[error("global race on `{param}` at element offset {address}: {access} after {earlier} by thread {} of block {} (linear index), and nothing orders them (a barrier of one block, or a release the later thread acquired)", other.thread, other.block)]
    GlobalRace {
        /// The tensor parameter's name.
        param: String,
        /// The offset from the tensor's element zero.
        address: i64,
        /// This access: `a load`, `a store` or `an atomic update`.
        access: &'static str,
        /// The earlier access it races with.
        earlier: &'static str,
        /// The earlier access's thread.
        other: tile_hw::happens::ThreadId,
    },
    /// A partition view's window at a negative offset or of a negative
    /// extent.
    #[error("window check failed in kernel `{kernel}`: {op}: a partition view's window at offsets and extents {values:?}: each must be at least 0")]
    WindowCheck {
        /// The kernel's name.
        kernel: String,
        /// The checked tile-IR op, as `ValueNames::describe_site` writes it.
        op: String,
        /// The window's offsets, then its extents.
        values: Vec<i64>,
    },
    /// A failed check of a `get_tensor`'s index.
    #[error("tensor index check failed in kernel `{kernel}`: {op}: tensor index {index} is outside the tensor array of {count} tensors")]
    TensorIndexCheck {
        /// The kernel's name.
        kernel: String,
        /// The checked tile-IR op, as `ValueNames::describe_site` writes it.
        op: String,
        /// The index.
        index: i64,
        /// The number of tensors of the array.
        count: i64,
    },
    /// A failed bounds check of an unmasked access (no memory was touched).
    #[error("bounds check failed in kernel `{kernel}`: {op}: partition index {index:?} reaches outside the tensor")]
    BoundsCheck {
        /// The kernel's name.
        kernel: String,
        /// The checked tile-IR op, as `ValueNames::describe_site` writes it.
        op: String,
        /// The partition index.
        index: Vec<i64>,
    },
    /// A failed check of an atomic's or a gather's index (no memory was
    /// touched).
    #[error(
        "index check failed in kernel `{kernel}`: {op}: index {index:?} is outside the tensor"
    )]
    IndexCheck {
        /// The kernel's name.
        kernel: String,
        /// The checked tile-IR op, as `ValueNames::describe_site` writes it.
        op: String,
        /// The element's tensor index.
        index: Vec<i64>,
    },
    /// A `device_assert!` whose condition is false.
    #[error("assertion {id} failed in kernel `{kernel}`: {op}: values {values:?}")]
    Assert {
        /// The kernel's name.
        kernel: String,
        /// The checked tile-IR op, as `ValueNames::describe_site` writes it.
        op: String,
        /// The assertion's number (`tile_ir::assertion::Assertion::find`
        /// gives its message).
        id: i64,
        /// The values its message formats.
        values: Vec<tile_ir::Scalar>,
    },
    /// A `for` whose step is not positive (the loop did not run).
    #[error("loop step check failed in kernel `{kernel}`: {op}: the step {step} of a loop is not positive")]
    NonPositiveStep {
        /// The kernel's name.
        kernel: String,
        /// The tile-IR `for`, as `ValueNames::describe_site` writes it.
        op: String,
        /// The step.
        step: i64,
    },
    /// A shared-memory index outside the allocation.
    #[error("shared-memory index {index} outside @s{alloc} of {len} elements")]
    SharedOutOfBounds {
        /// The allocation.
        alloc: usize,
        /// The offending index.
        index: i64,
        /// The allocation's length.
        len: usize,
    },
    /// A vector access of global memory (`ld.global.v<w>`, `st.global.v<w>`)
    /// whose first element is not aligned to the vector's size.
    #[error("a {width}-element {access} of `{param}` at element offset {address} is not aligned to {bytes} bytes")]
    MisalignedVector {
        /// `load` or `store`.
        access: &'static str,
        /// The tensor parameter's name.
        param: String,
        /// The vector's elements.
        width: usize,
        /// The first element's offset from the tensor's element zero.
        address: i64,
        /// The vector's size in bytes.
        bytes: usize,
    },
    /// A `cp.async` destination that does not start on 16 bytes.
    #[error("cp.async into @s{alloc}[{index}], which is not 16-byte aligned")]
    MisalignedCopy {
        /// The allocation.
        alloc: usize,
        /// The first index written.
        index: i64,
    },
    /// An `ldmatrix` row that does not start on 16 bytes.
    #[error("ldmatrix row @s{alloc}[{index}] is not 16-byte aligned")]
    MisalignedMatrixRow {
        /// The allocation.
        alloc: usize,
        /// The row's first index.
        index: i64,
    },
    /// A shared-memory read of an element never written.
    #[error("read of uninitialized shared memory @s{alloc}[{index}]")]
    UninitializedShared {
        /// The allocation.
        alloc: usize,
        /// The index.
        index: usize,
    },
    /// A `wgmma` read a shared element whose write no `fence.proxy.async`
    /// made visible to the asynchronous proxy.
    #[error("`wgmma` reads @s{alloc}[{index}], written by thread {writer} with no `fence.proxy.async` after the write: the asynchronous proxy may not see it")]
    UnfencedAsyncRead {
        /// The allocation.
        alloc: usize,
        /// The index.
        index: usize,
        /// The thread that wrote it.
        writer: u32,
    },
    /// A `wgmma` whose operand indices differ between the threads of a
    /// warpgroup, or whose operands leave the modelled layouts.
    #[error("`wgmma`: {0}")]
    Wgmma(String),
    /// Tensor memory used against its rules: outside its allocation,
    /// allocated twice or never freed, reached by two threads with no
    /// barrier between, or while a `tcgen05.mma` still writes it.
    #[error("tensor memory: {0}")]
    TensorMemory(String),
    /// An mbarrier used against its rules: before its init, arrived at too
    /// often, or waited on for a phase that can never finish.
    #[error("mbarrier: {0}")]
    Mbarrier(String),
    /// A `tma.load` of a tensor the runtime could build no tensor map for
    /// (it would not run this image with it).
    #[error("no tensor map for `{param}`: {reason}")]
    TensorMap {
        /// The tensor parameter.
        param: String,
        /// The requirement it breaks.
        reason: String,
    },
    /// A shared element a `cp.async` or `tma.load` is still writing was
    /// accessed: the copy may land at any moment until its thread's
    /// `cp.async.wait` (a `tma.load`: its mbarrier's wait).
    #[error("shared-memory {access} of @s{alloc}[{index}] while a copy into it by thread {thread} in `{op}` is in flight (it lands at that thread's cp.async.wait, or a tma.load at its mbarrier's wait)")]
    CopyInFlight {
        /// The allocation.
        alloc: usize,
        /// The index.
        index: usize,
        /// This access: `read` or `write`.
        access: &'static str,
        /// The thread whose copy is in flight.
        thread: u32,
        /// The copy's op.
        op: String,
    },
    /// Two threads touched one shared address between the same two barriers,
    /// at least one of them writing.
    #[error("shared-memory race on @s{alloc}[{index}]: {access} after a {earlier_access} by thread {earlier_thread} in `{earlier_op}` with no barrier between")]
    SharedRace {
        /// The allocation.
        alloc: usize,
        /// The index.
        index: usize,
        /// This thread's access: `read` or `write`.
        access: &'static str,
        /// The earlier access: `read` or `write`.
        earlier_access: &'static str,
        /// The thread of the earlier access.
        earlier_thread: u32,
        /// The op of the earlier access.
        earlier_op: String,
    },
    /// A `for` bound or `if` condition that differs between threads.
    #[error(
        "non-uniform control flow: {what} is {first} in thread 0 but {other} in thread {thread}"
    )]
    NonUniform {
        /// Which operand.
        what: &'static str,
        /// Its value in thread 0.
        first: String,
        /// The thread that disagrees.
        thread: u32,
        /// Its value there.
        other: String,
    },
    /// An ill-typed elementwise op.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A loop ran more iterations than the emulator's limit.
    #[error("more than {limit} loop iterations")]
    IterationLimit {
        /// The limit.
        limit: u64,
    },
    /// A program or arguments that break the thread-level program's rules.
    #[error("malformed program: {0}")]
    Malformed(String),
}
