//! What an emulated launch reports.

use std::fmt;

/// Where a failure happened: the block and, when one thread caused it, the
/// thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The block's index in the grid.
    pub block: [u32; 3],
    /// The thread's index in the block.
    pub thread: Option<u32>,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.block;
        write!(f, "block ({x}, {y}, {z})")?;
        if let Some(t) = self.thread {
            write!(f, ", thread {t}")?;
        }
        Ok(())
    }
}

/// Why an emulated launch failed. Hardware would fault, hang or compute
/// garbage in each case; the emulator stops the launch instead, before the
/// offending access touches memory.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    /// The image could not be loaded.
    #[error("cannot load the emulation image of kernel `{kernel}`: {reason}")]
    Load {
        /// The kernel.
        kernel: String,
        /// What failed.
        reason: String,
    },
    /// The launch's shape does not fit the image.
    #[error("cannot launch kernel `{kernel}`: {reason}")]
    Launch {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// An access of global memory outside every allocation.
    #[error("{place}: {kind} of {bytes} bytes at {address:#x} outside every allocation")]
    OutOfBounds {
        /// Where.
        place: Place,
        /// `load` or `store`.
        kind: &'static str,
        /// The address.
        address: u64,
        /// The bytes accessed.
        bytes: u64,
    },
    /// An access of shared memory outside the block's allocations.
    #[error("{place}: shared-memory {kind} of {bytes} bytes at {address:#x} ({near}), outside the block's allocations")]
    SharedOutOfBounds {
        /// Where.
        place: Place,
        /// `load` or `store`.
        kind: &'static str,
        /// The address.
        address: u64,
        /// The address relative to the closest allocation.
        near: String,
        /// The bytes accessed.
        bytes: u64,
    },
    /// An access whose address is not a multiple of its alignment (a
    /// misaligned vector access faults on hardware).
    #[error(
        "{place}: {kind} of {bytes} bytes at {address:#x}, which is not aligned to {align} bytes"
    )]
    Misaligned {
        /// Where.
        place: Place,
        /// `load` or `store`.
        kind: &'static str,
        /// The address.
        address: u64,
        /// The bytes accessed.
        bytes: u64,
        /// The alignment the instruction claims.
        align: u64,
    },
    /// An access to shared memory that a `cp.async` is still writing: it
    /// may land at any moment until its thread's `cp.async.wait_group`.
    #[error("{place}: {kind} of shared memory at {address:#x} while a cp.async of thread {other} into it is in flight (it lands at that thread's cp.async.wait_group)")]
    CopyInFlight {
        /// Where.
        place: Place,
        /// `load`, `store` or `cp.async`.
        kind: &'static str,
        /// The address.
        address: u64,
        /// The thread whose copy is in flight.
        other: u32,
    },
    /// A global-memory race: two threads of the launch touch a byte, not
    /// both atomically, at least one of them writing, and nothing orders
    /// them.
    #[error("{place}: global-memory race at {address:#x}: {access} after {earlier} by thread {thread} of block ({}, {}, {}), and nothing orders them (a barrier of one block, or a release the later thread acquired)", block[0], block[1], block[2])]
    GlobalRace {
        /// Where.
        place: Place,
        /// This access: `a load`, `a store` or `an atomic update`.
        access: &'static str,
        /// The address.
        address: u64,
        /// The earlier access it races with.
        earlier: &'static str,
        /// The earlier access's block.
        block: [u32; 3],
        /// The earlier access's thread.
        thread: u32,
    },
    /// A shared-memory race: two threads touch a byte between two barriers,
    /// at least one of them writing.
    #[error("{place}: shared-memory race at {address:#x}: {kind} after {what} by thread {other} with no barrier between")]
    Race {
        /// Where.
        place: Place,
        /// `load` or `store`.
        kind: &'static str,
        /// The address.
        address: u64,
        /// `a store` or `a load`.
        what: &'static str,
        /// The other thread.
        other: u32,
    },
    /// A `wgmma` operand read of shared memory that the thread which wrote
    /// it has not fenced with `fence.proxy.async`: the asynchronous proxy
    /// may not see the write.
    #[error("{place}: wgmma reads shared memory at {address:#x}, written by thread {writer} with no fence.proxy.async of that thread since (the asynchronous proxy may not see the write)")]
    UnfencedAsyncRead {
        /// Where (the warpgroup's first thread).
        place: Place,
        /// The address read.
        address: u64,
        /// The thread that wrote it.
        writer: u32,
    },
    /// A `wgmma` that breaks the instruction's rules: a warpgroup whose
    /// threads disagree, a descriptor outside shared memory, no
    /// `wgmma.fence` before it, groups never waited for.
    #[error("{place}: {what}")]
    Wgmma {
        /// Where.
        place: Place,
        /// The rule broken.
        what: String,
    },
    /// Tensor memory or `tcgen05.mma` against the rules: outside the
    /// allocation or the warp's lanes, allocated twice or never freed, a
    /// descriptor the model does not read.
    #[error("{place}: {what}")]
    TensorMemory {
        /// Where.
        place: Place,
        /// The rule broken.
        what: String,
    },
    /// An mbarrier or a TMA copy against the rules: a barrier used before
    /// its init or arrived at too often, a wait that would never return, a
    /// tensor map that is not one, a box off its alignment.
    #[error("{place}: {what}")]
    Tma {
        /// Where.
        place: Place,
        /// The rule broken.
        what: String,
    },
    /// Threads of a block wait at different points: a barrier some never
    /// reach, or an exchange not every lane of the warp or wave joins.
    #[error("{place}: threads diverge: {states}")]
    Divergence {
        /// Where.
        place: Place,
        /// What each group of threads waits at.
        states: String,
    },
    /// A warp shuffle whose member mask is not the full warp.
    #[error("{place}: shfl.sync with member mask {mask:#x}; the emulator models full warps only")]
    PartialMask {
        /// Where.
        place: Place,
        /// The mask.
        mask: u32,
    },
    /// The image called the runtime with something it does not know.
    #[error("{place}: the image called the runtime with {what}")]
    Malformed {
        /// Where.
        place: Place,
        /// What.
        what: String,
    },
}
