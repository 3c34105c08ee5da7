//! One block of an emulated launch: a coroutine per GPU thread, run one at
//! a time on this OS thread until each waits (at a barrier, a shuffle, a
//! permute) or ends; a wait completes when every thread it needs has
//! arrived, and the block ends when every thread has.
//!
//! The image's runtime calls arrive at `calls::runtime`, which finds the
//! block in a thread-local and the calling GPU thread in it.

use crate::copies::Groups;
use crate::error::{EmuError, Place};
use crate::global::{GlobalShadow, Touch};
use crate::lanes::{bpermute_source, shuffle_source};
use crate::memory;
use crate::shadow::{Allocation, Conflict, SharedMemory};
use crate::tma::BoxCopy;
use crate::wgmma::{Sequence, WgmmaCall};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::RefCell;
use tile_abi::emulation::{Access, LaunchFn, ShuffleMode, MMA_MAX_RESULTS, MMA_MAX_WORDS};
use tile_hw::happens::ThreadId;
use tile_hw::ldmatrix::LdMatrix;
use tile_hw::mbarrier::Mbarrier;
use tile_hw::mma::MmaKind;

/// The stack of one GPU thread: its kernel's frames, which code compiled
/// without optimization keeps large. Mapped lazily, so mostly never touched.
const STACK_BYTES: usize = 4 << 20;

/// The warp size of PTX's `shfl.sync`.
pub(crate) const WARP: u32 = 32;

/// What a GPU thread is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wait {
    /// Runnable.
    Running,
    /// At a barrier.
    Barrier,
    /// At a warp shuffle.
    Shuffle {
        mode: ShuffleMode,
        value: u32,
        b: u32,
        c: u32,
    },
    /// At a wave permute.
    Bpermute { address: u32, value: u32 },
    /// At an `ldmatrix`, with the row address the lane supplies.
    LdMatrix { shape: LdMatrix, address: u64 },
    /// At a tensor-core step, with the lane's registers.
    Mma {
        kind: MmaKind,
        words: [u32; MMA_MAX_WORDS],
    },
    /// At a warpgroup's `wgmma`.
    Wgmma(WgmmaCall),
    /// Returned from the kernel.
    Done,
    /// Stopped at a failed check, never to resume.
    Stopped,
}

impl Wait {
    fn name(self) -> &'static str {
        match self {
            Wait::Running => "running",
            Wait::Barrier => "a barrier",
            Wait::Shuffle { .. } => "a shuffle",
            Wait::Bpermute { .. } => "a permute",
            Wait::Mma { .. } => "an mma",
            Wait::LdMatrix { .. } => "an ldmatrix",
            Wait::Wgmma(_) => "a wgmma",
            Wait::Done => "the end",
            Wait::Stopped => "a failed check",
        }
    }
}

/// The shape of a launch and what every block shares.
pub(crate) struct Launch {
    pub(crate) entry: LaunchFn,
    pub(crate) args: *const u8,
    pub(crate) grid: [u32; 3],
    pub(crate) threads: u32,
    pub(crate) wave: u32,
    /// The image's shared allocations.
    pub(crate) shared: Vec<Allocation>,
}

/// The state of the running block.
pub(crate) struct Block {
    pub(crate) block: [u32; 3],
    pub(crate) grid: [u32; 3],
    pub(crate) threads: u32,
    pub(crate) wave: u32,
    /// The thread the runtime's calls come from.
    pub(crate) current: u32,
    pub(crate) waits: Vec<Wait>,
    /// What a completed wait returns to each thread.
    pub(crate) results: Vec<u64>,
    /// What a completed tensor-core step or matrix load returns to each
    /// thread: its D, or its `ldmatrix` registers.
    pub(crate) fragments: Vec<[u32; MMA_MAX_RESULTS]>,
    /// Each thread's `cp.async` groups in flight.
    pub(crate) copies: Vec<Groups>,
    /// Each thread's place in the `wgmma` instruction sequence.
    pub(crate) sequences: Vec<Sequence>,
    /// The block's mbarriers by shared address, with the TMA copies
    /// completing on them (`tma.rs`).
    pub(crate) mbarriers: std::collections::HashMap<u64, Mbarrier<BoxCopy>>,
    /// The block's tensor memory (`tcgen05.rs`).
    pub(crate) tmem: crate::tcgen05::TensorMemory,
    /// Each running thread's yielder, set when its coroutine starts.
    pub(crate) yielders: Vec<*const Yielder<(), ()>>,
    pub(crate) shared: SharedMemory,
    /// Who touched which bytes of global memory in the launch so far.
    pub(crate) global: GlobalShadow,
    /// The AMDGPU dispatch packet (`hsa_kernel_dispatch_packet_t`).
    pub(crate) packet: Box<[u8; 64]>,
    pub(crate) error: Option<EmuError>,
}

thread_local! {
    static BLOCK: RefCell<Option<Block>> = const { RefCell::new(None) };
}

/// Runs block `block` of `launch` to its end.
///
/// # Safety
///
/// `launch.entry` and `launch.args` must be an image's entry and arguments
/// its manifest describes, and the image's shared allocations must be the
/// `launch.shared` regions, writable.
pub(crate) unsafe fn run_block(
    launch: &Launch,
    block: [u32; 3],
    global: &mut GlobalShadow,
) -> Result<(), EmuError> {
    for a in &launch.shared {
        // SAFETY: the region is a writable global of the loaded image (the
        // caller's contract), and no GPU thread runs.
        unsafe { std::ptr::write_bytes(a.start as *mut u8, crate::shadow::POISON, a.len) };
    }
    let threads = launch.threads;
    let mut packet = Box::new([0u8; 64]);
    dispatch_packet(&mut packet, launch.grid, threads);
    BLOCK.with(|b| {
        *b.borrow_mut() = Some(Block {
            block,
            grid: launch.grid,
            threads,
            wave: launch.wave.min(threads),
            current: 0,
            waits: vec![Wait::Running; threads as usize],
            results: vec![0; threads as usize],
            fragments: vec![[0; MMA_MAX_RESULTS]; threads as usize],
            copies: vec![Groups::default(); threads as usize],
            sequences: vec![Sequence::default(); threads as usize],
            mbarriers: std::collections::HashMap::new(),
            tmem: Default::default(),
            yielders: vec![std::ptr::null(); threads as usize],
            shared: SharedMemory::new(&launch.shared),
            global: std::mem::take(global),
            packet,
            error: None,
        })
    });
    let mut coroutines = Vec::with_capacity(threads as usize);
    for t in 0..threads {
        let stack = DefaultStack::new(STACK_BYTES).map_err(|e| EmuError::Launch {
            kernel: String::new(),
            reason: format!("a stack for thread {t}: {e}"),
        })?;
        let (entry, args) = (launch.entry, launch.args);
        coroutines.push(Coroutine::with_stack(
            stack,
            move |yielder: &Yielder<(), ()>, ()| {
                with_block(|b| b.yielders[t as usize] = yielder as *const _);
                // SAFETY: the caller's contract: the image's entry with its
                // arguments.
                unsafe { entry(args) }
            },
        ));
    }
    let result = schedule(&mut coroutines);
    for c in &mut coroutines {
        if !c.done() {
            // SAFETY: a suspended thread waits inside the runtime's calls or
            // the image's code: neither holds anything that needs dropping
            // (the runtime releases every borrow before suspending).
            unsafe { c.force_reset() };
        }
    }
    let Some(b) = BLOCK.with(|b| b.borrow_mut().take()) else {
        return result;
    };
    let unfreed = b.tmem.at_exit().map(|what| EmuError::TensorMemory {
        place: b.place(None),
        what,
    });
    *global = b.global;
    match unfreed {
        Some(error) if result.is_ok() => Err(error),
        _ => result,
    }
}

/// Resumes runnable threads and completes waits until every thread ends,
/// or one fails, or the threads diverge.
fn schedule(coroutines: &mut [Coroutine<(), (), (), DefaultStack>]) -> Result<(), EmuError> {
    loop {
        for (t, c) in coroutines.iter_mut().enumerate() {
            if with_block(|b| b.waits[t]) != Wait::Running {
                continue;
            }
            with_block(|b| b.current = t as u32);
            if let CoroutineResult::Return(()) = c.resume(()) {
                with_block(|b| {
                    b.waits[t] = Wait::Done;
                    if let Some(what) = b.sequences[t].unfinished() {
                        let place = b.place(Some(t as u32));
                        b.error.get_or_insert(EmuError::Wgmma { place, what });
                    }
                });
            }
            if let Some(error) = with_block(|b| b.error.take()) {
                return Err(error);
            }
        }
        match with_block(Block::complete) {
            Progress::Finished => return Ok(()),
            Progress::Resumed => continue,
            Progress::Stuck(error) => return Err(error),
        }
    }
}

enum Progress {
    Finished,
    Resumed,
    Stuck(EmuError),
}

/// Calls `f` on the running block.
pub(crate) fn with_block<R>(f: impl FnOnce(&mut Block) -> R) -> R {
    BLOCK.with(|b| {
        let mut guard = b.borrow_mut();
        // Only called while a block runs on this thread.
        let block = guard.as_mut().expect("a block runs on this thread");
        f(block)
    })
}

impl Block {
    /// The current thread, as happens-before names it.
    pub(crate) fn who(&self) -> ThreadId {
        let [x, y, z] = self.block.map(u64::from);
        let [gx, gy, _] = self.grid.map(u64::from);
        ThreadId {
            block: x + gx * (y + gy * z),
            thread: self.current,
        }
    }

    pub(crate) fn place(&self, thread: Option<u32>) -> Place {
        Place {
            block: self.block,
            thread,
        }
    }

    /// Completes every wait whose threads have all arrived: the shuffles of
    /// whole warps, the permutes of whole waves, then a barrier of all.
    fn complete(&mut self) -> Progress {
        if self.waits.iter().all(|w| *w == Wait::Done) {
            return Progress::Finished;
        }
        let mut resumed = false;
        for first in (0..self.threads).step_by(WARP as usize) {
            resumed |= self.complete_shuffle(first, WARP.min(self.threads - first));
        }
        for first in (0..self.threads).step_by(self.wave as usize) {
            resumed |= self.complete_bpermute(first, self.wave.min(self.threads - first));
        }
        for first in (0..self.threads).step_by(WARP as usize) {
            match self.complete_mma(first) {
                Ok(done) => resumed |= done,
                Err(error) => return Progress::Stuck(error),
            }
            resumed |= self.complete_ldmatrix(first, WARP.min(self.threads - first));
        }
        for first in (0..self.threads).step_by(tile_hw::wgmma::WARPGROUP) {
            match self.complete_wgmma(first) {
                Ok(done) => resumed |= done,
                Err(error) => return Progress::Stuck(error),
            }
        }
        if resumed {
            return Progress::Resumed;
        }
        if self.waits.iter().all(|w| *w == Wait::Barrier) {
            self.shared.barrier();
            let block = self.who().block;
            self.global.barrier(block);
            self.waits.fill(Wait::Running);
            return Progress::Resumed;
        }
        Progress::Stuck(EmuError::Divergence {
            place: self.place(None),
            states: self.describe_waits(),
        })
    }

    /// `first..first + lanes` as a warp at a shuffle, if all are.
    fn complete_shuffle(&mut self, first: u32, lanes: u32) -> bool {
        let range = first as usize..(first + lanes) as usize;
        let requests: Vec<(ShuffleMode, u32, u32, u32)> = self.waits[range.clone()]
            .iter()
            .filter_map(|w| match *w {
                Wait::Shuffle { mode, value, b, c } => Some((mode, value, b, c)),
                _ => None,
            })
            .collect();
        if requests.len() != lanes as usize {
            return false;
        }
        for (lane, &(mode, _, b, c)) in requests.iter().enumerate() {
            let source = shuffle_source(mode, lane as u32, b, c) as usize;
            // A source past a partial warp reads the own value.
            let value = requests.get(source).map_or(requests[lane].1, |r| r.1);
            self.results[first as usize + lane] = u64::from(value);
        }
        self.waits[range].fill(Wait::Running);
        true
    }

    /// `first..first + lanes` as a wave at a permute, if all are.
    fn complete_bpermute(&mut self, first: u32, lanes: u32) -> bool {
        let range = first as usize..(first + lanes) as usize;
        let requests: Vec<(u32, u32)> = self.waits[range.clone()]
            .iter()
            .filter_map(|w| match *w {
                Wait::Bpermute { address, value } => Some((address, value)),
                _ => None,
            })
            .collect();
        if requests.len() != lanes as usize {
            return false;
        }
        for (lane, &(address, _)) in requests.iter().enumerate() {
            let source = bpermute_source(address, self.wave) as usize;
            // A lane past a partial wave is inactive: it reads as 0.
            let value = requests.get(source).map_or(0, |r| r.1);
            self.results[first as usize + lane] = u64::from(value);
        }
        self.waits[range].fill(Wait::Running);
        true
    }

    /// The warp (MFMA: the 64-lane wave) from thread `first` at one
    /// tensor-core step, if all its lanes are; an error if the lanes'
    /// operands break the instruction's rules (WMMA's replicated halves
    /// differing) or the block holds no whole wave of them.
    fn complete_mma(&mut self, first: u32) -> Result<bool, EmuError> {
        let Wait::Mma { kind, .. } = self.waits[first as usize] else {
            return Ok(false);
        };
        let lanes = kind.lanes() as u32;
        if !first.is_multiple_of(lanes) {
            return Ok(false);
        }
        if first + lanes > self.threads {
            return Err(EmuError::Malformed {
                place: self.place(Some(first)),
                what: format!(
                    "{} takes {lanes} lanes; the block has {} threads",
                    kind.name(),
                    self.threads
                ),
            });
        }
        let range = first as usize..(first + lanes) as usize;
        let mut kinds = Vec::with_capacity(lanes as usize);
        let mut words = Vec::with_capacity(lanes as usize);
        for w in &self.waits[range.clone()] {
            if let Wait::Mma { kind, words: lane } = *w {
                kinds.push(kind);
                words.push(lane);
            }
        }
        if words.len() != lanes as usize || kinds.iter().any(|&k| k != kind) {
            return Ok(false);
        }
        let d = crate::mma::complete(kind, &words).map_err(|what| EmuError::Malformed {
            place: self.place(Some(first)),
            what: format!("{}: {what}", kind.name()),
        })?;
        self.fragments[range.clone()].copy_from_slice(&d);
        self.waits[range].fill(Wait::Running);
        Ok(true)
    }

    /// `first..first + lanes` as a whole warp at one `ldmatrix`, if all are:
    /// the address lanes' rows (checked when each lane arrived) are read and
    /// handed out by the instruction's layout.
    fn complete_ldmatrix(&mut self, first: u32, lanes: u32) -> bool {
        let range = first as usize..(first + lanes) as usize;
        let mut shapes = Vec::with_capacity(lanes as usize);
        let mut addresses = Vec::with_capacity(lanes as usize);
        for w in &self.waits[range.clone()] {
            if let Wait::LdMatrix { shape, address } = *w {
                shapes.push(shape);
                addresses.push(address);
            }
        }
        if lanes != WARP || shapes.len() != WARP as usize || shapes.iter().any(|&s| s != shapes[0])
        {
            return false;
        }
        let shape = shapes[0];
        let mut rows = vec![[0u16; 8]; WARP as usize];
        for (row, &address) in rows.iter_mut().zip(&addresses).take(shape.address_lanes()) {
            // SAFETY: the lane's access check accepted these 16 bytes of a
            // shared allocation, 16-byte aligned, when it arrived.
            *row = unsafe { std::ptr::read(address as *const [u16; 8]) };
        }
        for (lane, regs) in shape.distribute(&rows).into_iter().enumerate() {
            let mut words = [0u32; MMA_MAX_RESULTS];
            words[..regs.len()].copy_from_slice(&regs);
            self.fragments[first as usize + lane] = words;
        }
        self.waits[range].fill(Wait::Running);
        true
    }

    /// The threads grouped by what they wait at: `0..63 at a barrier, 64..127 at the end`.
    fn describe_waits(&self) -> String {
        let mut groups: Vec<(u32, u32, &'static str)> = Vec::new();
        for (t, w) in self.waits.iter().enumerate() {
            let t = t as u32;
            match groups.last_mut() {
                Some((_, end, name)) if *name == w.name() && *end + 1 == t => *end = t,
                _ => groups.push((t, t, w.name())),
            }
        }
        groups
            .iter()
            .map(|(a, b, name)| format!("threads {a}..={b} at {name}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Checks an access of the current thread; the error, if it fails.
    pub(crate) fn check_access(
        &mut self,
        address: u64,
        bytes: u64,
        align: u64,
        flags: u64,
    ) -> Option<EmuError> {
        let thread = self.current;
        let place = self.place(Some(thread));
        let store = flags & Access::STORE != 0;
        let kind = if store { "store" } else { "load" };
        if align > 1 && !address.is_multiple_of(align) {
            return Some(EmuError::Misaligned {
                place,
                kind,
                address,
                bytes,
                align,
            });
        }
        if flags & Access::SHARED == 0 {
            if !memory::reachable(address, bytes) {
                return Some(EmuError::OutOfBounds {
                    place,
                    kind,
                    address,
                    bytes,
                });
            }
            let touch = match (flags & Access::ATOMIC != 0, store) {
                (true, _) => Touch::Atomic,
                (false, true) => Touch::Write,
                (false, false) => Touch::Read,
            };
            let who = self.who();
            let [gx, gy, _] = self.grid.map(u64::from);
            return self
                .global
                .touch(address, bytes, who, touch)
                .err()
                .map(|earlier| EmuError::GlobalRace {
                    place,
                    access: touch.described(),
                    address,
                    earlier: earlier.touch.described(),
                    block: {
                        let b = earlier.who.block;
                        [(b % gx) as u32, (b / gx % gy) as u32, (b / gx / gy) as u32]
                    },
                    thread: earlier.who.thread,
                });
        }
        let Some((region, offset)) = self.shared.locate(address, bytes) else {
            return Some(EmuError::SharedOutOfBounds {
                place,
                kind,
                address,
                near: self.shared.describe(address),
                bytes,
            });
        };
        if flags & Access::ATOMIC != 0 {
            return None;
        }
        self.shared
            .access(region, offset, bytes as usize, thread, store)
            .err()
            .map(|conflict| race(place, kind, address, conflict))
    }

    /// Checks the 16 destination bytes of the current thread's `cp.async`
    /// at `address` (aligned, inside an allocation, no race) and marks
    /// them in flight until the copy lands.
    pub(crate) fn check_copy(&mut self, address: u64) -> Option<EmuError> {
        if let Some(error) = self.check_access(address, 16, 16, Access::SHARED | Access::STORE) {
            return Some(error);
        }
        let thread = self.current;
        let (region, offset) = self.shared.locate(address, 16)?;
        self.shared.start_copy(region, offset, 16, thread);
        None
    }
}

/// The error of an access of `kind` at `address` that met `conflict`.
pub(crate) fn race(place: Place, kind: &'static str, address: u64, conflict: Conflict) -> EmuError {
    let (what, other) = match conflict {
        Conflict::Written(other) => ("a store", other),
        Conflict::Read(other) => ("a load", other),
        Conflict::InFlight(other) => {
            return EmuError::CopyInFlight {
                place,
                kind,
                address,
                other,
            }
        }
    };
    EmuError::Race {
        place,
        kind,
        address,
        what,
        other,
    }
}

/// Fills `packet` as the HSA runtime does for a dispatch of `grid` blocks
/// of `threads` work-items: the workgroup size at bytes 4, 6, 8 and the
/// grid size in work-items at 12, 16, 20.
fn dispatch_packet(packet: &mut [u8; 64], grid: [u32; 3], threads: u32) {
    let workgroup = [threads, 1, 1];
    for axis in 0..3 {
        let size = (workgroup[axis] as u16).to_le_bytes();
        packet[4 + 2 * axis..6 + 2 * axis].copy_from_slice(&size);
        let items = grid[axis].wrapping_mul(workgroup[axis]).to_le_bytes();
        packet[12 + 4 * axis..16 + 4 * axis].copy_from_slice(&items);
    }
}

/// Suspends the current thread in `wait` until the scheduler resumes it;
/// returns what the completed wait left for it.
pub(crate) fn suspend(wait: Wait) -> u64 {
    let yielder = with_block(|b| {
        let t = b.current as usize;
        b.waits[t] = wait;
        b.yielders[t]
    });
    // SAFETY: the yielder belongs to the coroutine running this call (set
    // when it started, and alive while it runs); no borrow of the block is
    // held across the switch.
    unsafe { (*yielder).suspend(()) };
    with_block(|b| b.results[b.current as usize])
}

/// Stops the current thread for good after `error`.
pub(crate) fn stop(error: EmuError) -> u64 {
    with_block(|b| b.error = Some(error));
    suspend(Wait::Stopped)
}
