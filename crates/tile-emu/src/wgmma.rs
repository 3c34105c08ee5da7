//! Hopper's `wgmma` on a warpgroup of 128 threads: each thread's call
//! waits until the whole warpgroup has issued the same instruction with
//! the same descriptors; then A (K-major; or from each thread's registers)
//! and B (N-major or K-major) are read from shared memory through the swizzled
//! layouts the descriptors name, as
//! the first thread's reads (race-checked, and each written byte must be
//! fenced by its writer's `fence.proxy.async`), multiplied by
//! [`tile_hw::wgmma::warpgroup_mma`], and D written over every thread's
//! accumulators.
//!
//! The multiply happens at issue, so a kernel that read its accumulators
//! before `wgmma.wait_group` would still see D here; the images carry the
//! accumulators through the wait (they are tied operands of its inline
//! assembly), which is what keeps a GPU from reading them early. What the
//! emulator checks of the instruction sequence is each thread's: a
//! `wgmma.fence` since its last `wgmma.wait_group` before a `wgmma`, and
//! every committed group waited for by the time the thread ends.
//!
//! A descriptor holds 18 bits of the shared address (`tile_hw::wgmma`),
//! which name one byte of the block's shared memory as long as a single
//! allocation holds an address with those low bits.

use crate::block::{Block, Wait};
use crate::error::{EmuError, Place};
use tile_hw::wgmma::{
    register_a_element, warpgroup_mma, Descriptor, Major, WgmmaKind, K, M, REGISTER_A_ELEMENTS,
    WARPGROUP,
};

/// One thread's `wgmma`: the instruction, its descriptors, whether it
/// accumulates into C, whether A comes from registers (held after the
/// accumulators), and the address of the thread's accumulators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WgmmaCall {
    pub(crate) kind: WgmmaKind,
    pub(crate) a: u64,
    pub(crate) b: u64,
    pub(crate) scale: bool,
    pub(crate) registers: bool,
    pub(crate) buffer: u64,
}

impl WgmmaCall {
    /// The same instruction on the same operands, wherever the
    /// accumulators (and A's registers) are.
    fn agrees(&self, other: &WgmmaCall) -> bool {
        let key = |c: &WgmmaCall| (c.kind, c.a, c.b, c.scale, c.registers);
        key(self) == key(other)
    }

    /// The 64×16 A, row-major, from the registers each thread of `calls`
    /// (a warpgroup) holds after its accumulators.
    fn register_a(calls: &[WgmmaCall]) -> Vec<f32> {
        let mut a = vec![0.0f32; M * K];
        for (thread, call) in calls.iter().enumerate() {
            let mut words = [0u32; REGISTER_A_ELEMENTS / 2];
            let at = call.buffer + 4 * call.kind.accumulators() as u64;
            // SAFETY: the image's replacement of a wgmma with A from
            // registers passes a stack buffer of the accumulators and then
            // A's four words, alive and unaliased while its thread waits in
            // this call (tile_abi::emulation::RuntimeCall::Wgmma).
            unsafe {
                std::ptr::copy_nonoverlapping(at as *const u32, words.as_mut_ptr(), words.len())
            };
            for i in 0..REGISTER_A_ELEMENTS {
                let bits = (words[i / 2] >> (16 * (i % 2))) & 0xffff;
                let (row, col) = register_a_element(thread, i);
                a[row * K + col] = call.kind.widen(bits);
            }
        }
        a
    }
}

/// A thread's place in the `wgmma` instruction sequence.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sequence {
    /// A `wgmma.fence` came after the last `wgmma.wait_group`.
    fenced: bool,
    /// `wgmma`s since the last commit.
    uncommitted: u32,
    /// Committed groups not yet waited for.
    groups: u32,
}

impl Sequence {
    /// `wgmma.fence.sync.aligned`.
    pub(crate) fn fence(&mut self) {
        self.fenced = true;
    }

    /// A `wgmma` issued: an error unless a fence came first.
    pub(crate) fn issue(&mut self) -> Result<(), String> {
        if !self.fenced {
            return Err(
                "wgmma.mma_async with no wgmma.fence since the thread's last wgmma.wait_group"
                    .into(),
            );
        }
        self.uncommitted += 1;
        Ok(())
    }

    /// `wgmma.commit_group.sync.aligned`.
    pub(crate) fn commit(&mut self) {
        self.groups += 1;
        self.uncommitted = 0;
    }

    /// `wgmma.wait_group.sync.aligned pending`.
    pub(crate) fn wait(&mut self, pending: u64) {
        self.groups = self.groups.min(u32::try_from(pending).unwrap_or(u32::MAX));
        self.fenced = false;
    }

    /// Why the thread may not end here, if it may not: a `wgmma` it never
    /// committed or waited for.
    pub(crate) fn unfinished(&self) -> Option<String> {
        (self.uncommitted > 0 || self.groups > 0).then(|| {
            format!(
                "the thread ends with {} wgmma not committed and {} group(s) not waited for: its accumulators are undefined",
                self.uncommitted, self.groups
            )
        })
    }
}

impl Block {
    /// The warpgroup from thread `first` at one `wgmma`, if all its threads
    /// are; an error if they disagree on it or the block holds no whole
    /// warpgroup.
    pub(crate) fn complete_wgmma(&mut self, first: u32) -> Result<bool, EmuError> {
        let Wait::Wgmma(call) = self.waits[first as usize] else {
            return Ok(false);
        };
        let place = self.place(Some(first));
        let group = WARPGROUP as u32;
        if first + group > self.threads {
            return Err(EmuError::Wgmma {
                place,
                what: format!(
                    "wgmma takes a warpgroup of {group} threads; the block has {}",
                    self.threads
                ),
            });
        }
        let range = first as usize..(first + group) as usize;
        let mut calls = Vec::with_capacity(WARPGROUP);
        for w in &self.waits[range.clone()] {
            match w {
                Wait::Wgmma(c) => calls.push(*c),
                _ => return Ok(false),
            }
        }
        if let Some(t) = calls.iter().position(|c| !c.agrees(&call)) {
            return Err(EmuError::Wgmma {
                place,
                what: format!(
                    "the warpgroup's threads issue different wgmma: thread {first} {} with descriptors {:#x}, {:#x}; thread {} {} with {:#x}, {:#x}",
                    call.kind.name(),
                    call.a,
                    call.b,
                    first as usize + t,
                    calls[t].kind.name(),
                    calls[t].a,
                    calls[t].b
                ),
            });
        }
        let (kind, k) = (call.kind, call.kind.k());
        let widen = |bits| kind.widen(bits);
        let bytes = kind.dtype.size_bytes();
        let a = match call.registers {
            true => WgmmaCall::register_a(&calls),
            false => {
                let d = Descriptor::decode(call.a);
                let shape = (Major::K, [M, k], bytes);
                self.descriptor_operand((place, wgmma_fault), d, shape, widen)?
            }
        };
        let d = Descriptor::decode(call.b);
        let shape = (kind.b_major, [kind.n, k], bytes);
        let b = self.descriptor_operand((place, wgmma_fault), d, shape, widen)?;
        // B is read as (n, k): row-major K × N for the multiply.
        let b: Vec<f32> = (0..k * kind.n)
            .map(|e| b[(e % kind.n) * k + e / kind.n])
            .collect();
        let c: Vec<Vec<f32>> = calls
            .iter()
            .map(|c| {
                let mut acc = vec![0.0f32; kind.accumulators()];
                if call.scale {
                    // SAFETY: the image's replacement of wgmma passes the
                    // address of its own stack buffer of the kind's
                    // accumulators, alive and unaliased while its thread
                    // waits in this call (tile_abi::emulation::RuntimeCall::Wgmma).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            c.buffer as *const f32,
                            acc.as_mut_ptr(),
                            acc.len(),
                        )
                    };
                }
                acc
            })
            .collect();
        let d = warpgroup_mma(kind, &a, &b, &c).map_err(|what| EmuError::Wgmma { place, what })?;
        for (c, d) in calls.iter().zip(d) {
            // SAFETY: as above.
            unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), c.buffer as *mut f32, d.len()) };
        }
        self.waits[range].fill(Wait::Running);
        Ok(true)
    }

    /// The `rows × cols` elements `(mn, k)`, row-major by `mn`, of the
    /// operand of `bytes`-byte elements (2 or 1) that the descriptor `d`
    /// describes as `major`, each read as `widen` says (of its bits, in the
    /// low byte for 8-bit elements) by the thread of `place` (`fault`
    /// making the errors of the instruction's rules).
    pub(crate) fn descriptor_operand(
        &mut self,
        (place, fault): (Place, fn(Place, String) -> EmuError),
        d: Descriptor,
        (major, [rows, cols], bytes): (Major, [usize; 2], usize),
        widen: impl Fn(u32) -> f32,
    ) -> Result<Vec<f32>, EmuError> {
        let thread = place.thread.unwrap_or(0);
        let fault = |what: String| fault(place, what);
        if !matches!(bytes, 1 | 2 | 4) {
            return Err(fault(format!(
                "operands of {bytes}-byte elements are not modelled"
            )));
        }
        let start = self.shared.resolve(d.start).map_err(fault)?;
        let mut values = Vec::with_capacity(rows * cols);
        for mn in 0..rows {
            for k in 0..cols {
                let at = d.element_address(major, bytes, (mn, k)).map_err(fault)?;
                let address = start
                    .wrapping_add(u64::from(at))
                    .wrapping_sub(u64::from(d.start));
                let Some((region, offset)) = self.shared.locate(address, bytes as u64) else {
                    return Err(fault(format!(
                        "operand element ({mn}, {k}) of descriptor {d:?} lies at {address:#x} ({}), outside the block's shared memory",
                        self.shared.describe(address)
                    )));
                };
                for byte in offset..offset + bytes {
                    if let Some(writer) = self.shared.unfenced_writer(region, byte) {
                        return Err(EmuError::UnfencedAsyncRead {
                            place,
                            address,
                            writer,
                        });
                    }
                }
                self.shared
                    .access(region, offset, bytes, thread, false)
                    .map_err(|conflict| {
                        crate::block::race(place, "asynchronous operand load", address, conflict)
                    })?;
                // SAFETY: `locate` found the element's bytes inside a shared
                // allocation of the loaded image, alive while the block runs.
                let bits = unsafe {
                    match bytes {
                        1 => u32::from(std::ptr::read(address as *const u8)),
                        2 => u32::from(std::ptr::read_unaligned(address as *const u16)),
                        _ => std::ptr::read_unaligned(address as *const u32),
                    }
                };
                values.push(widen(bits));
            }
        }
        Ok(values)
    }
}

/// The error of a `wgmma` that breaks the instruction's rules.
fn wgmma_fault(place: Place, what: String) -> EmuError {
    EmuError::Wgmma { place, what }
}
