//! Blackwell's tensor memory and `tcgen05.mma` ([`tile_hw::tcgen05`]) on
//! the emulation target: the block's 128 lanes × 512 columns, one
//! allocation from column 0 (by lane 0 of the allocating warp; the other
//! lanes' calls of the same warp-wide instruction change nothing), freed
//! before the block ends; a product computed at issue from its operands in
//! shared memory (read through sm_100's descriptors, as the issuing
//! thread's reads: race-checked, each written byte fenced by its writer's
//! `fence.proxy.async`) or, for A, in tensor memory, its commit an arrival
//! at the mbarrier; and each lane's loads and stores of its row in its
//! warp's quarter of the lanes.
//!
//! A block-scaled product (`kind::mxf8f6f4.block_scale`) reads its scales
//! from the images at the addresses the thread's `Tcgen05Scales` call just
//! named, every quarter's copy (copies that differ are an error).
//!
//! The product lands at issue, so a kernel that loaded D before waiting for
//! the commit would still see it here: the lockstep emulator, which delays
//! it to the commit, checks that order (`tile_thread::emulate`).

use crate::block::Block;
use crate::error::{EmuError, Place};
use std::collections::HashMap;
use tile_abi::emulation::Access;
use tile_hw::tcgen05::{
    allocation_columns, block_mma, block_mma_scaled, decode_smem_descriptor, read_scales,
    read_tensor_a, scale_columns, split_address, tensor_a_columns, Qualifier, Tcgen05Kind, COLUMNS,
    LANES, M, WARP_LANES,
};
use tile_hw::wgmma::Major;

/// Where a `tcgen05.mma` reads its A.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SourceA {
    /// Shared memory, through this sm_100 matrix descriptor.
    Descriptor(u64),
    /// Tensor memory, from this address.
    Tensor(u64),
}

/// The block's tensor memory.
#[derive(Clone, Debug)]
pub(crate) struct TensorMemory {
    /// Each cell's bits, lane-major.
    cells: Vec<u32>,
    /// The columns allocated (from 0), if any.
    allocated: Option<u32>,
    /// The scale images each thread's next block-scaled product reads.
    scales: HashMap<u32, [u64; 2]>,
}

impl Default for TensorMemory {
    fn default() -> Self {
        TensorMemory {
            cells: vec![0; LANES * COLUMNS],
            allocated: None,
            scales: HashMap::new(),
        }
    }
}

impl TensorMemory {
    /// Why the block may not end now, if it may not.
    pub(crate) fn at_exit(&self) -> Option<String> {
        self.allocated.map(|columns| {
            format!("{columns} columns of tensor memory are still allocated when the block ends")
        })
    }
}

/// The error of a broken rule at `place`.
fn fault(place: Place, what: String) -> EmuError {
    EmuError::TensorMemory { place, what }
}

impl Block {
    fn tmem_error(&self, what: String) -> EmuError {
        fault(self.place(Some(self.current)), what)
    }

    /// Whether the current thread is lane 0 of its warp.
    fn first_lane(&self) -> bool {
        (self.current as usize).is_multiple_of(WARP_LANES)
    }

    /// `tcgen05.alloc` of `columns`, the address written to the word at
    /// shared address `slot`.
    pub(crate) fn tmem_alloc(&mut self, slot: u64, columns: u64) -> Result<(), EmuError> {
        if !self.first_lane() {
            return Ok(());
        }
        let valid = u32::try_from(columns)
            .ok()
            .filter(|&c| allocation_columns(c as usize) == Some(c));
        let Some(columns) = valid else {
            return Err(self.tmem_error(format!("an allocation of {columns} columns")));
        };
        if self.tmem.allocated.is_some() {
            return Err(self.tmem_error("tensor memory allocated again while allocated".into()));
        }
        if let Some(error) = self.check_access(slot, 4, 4, Access::SHARED | Access::STORE) {
            return Err(error);
        }
        self.tmem.allocated = Some(columns);
        // SAFETY: `check_access` found the four bytes inside a shared
        // allocation of the loaded image, alive while the block runs.
        unsafe { std::ptr::write_unaligned(slot as *mut u32, tile_hw::tcgen05::address(0, 0)) };
        Ok(())
    }

    /// `tcgen05.dealloc` of the `columns` at `address`.
    pub(crate) fn tmem_dealloc(&mut self, address: u64, columns: u64) -> Result<(), EmuError> {
        if !self.first_lane() {
            return Ok(());
        }
        if self.tmem.allocated.map(u64::from) != Some(columns) || address != 0 {
            return Err(self.tmem_error(format!(
                "{columns} columns freed at {address:#x}, where {} are allocated at 0",
                self.tmem.allocated.unwrap_or(0)
            )));
        }
        self.tmem.allocated = None;
        Ok(())
    }

    /// The scale images at `a` (A's) and `b` (B's) of the current thread's
    /// next block-scaled `tcgen05.mma`.
    pub(crate) fn tcgen05_scales(&mut self, a: u64, b: u64) {
        self.tmem.scales.insert(self.current, [a, b]);
    }

    /// The current thread's `tcgen05.mma` into `d` from A at `a` and the
    /// descriptor `b`, of the instruction descriptor `idesc`.
    pub(crate) fn tcgen05_mma(
        &mut self,
        d: u64,
        (a, b): (SourceA, u64),
        (idesc, qualifier): (u32, Qualifier),
        accumulate: bool,
    ) -> Result<(), EmuError> {
        let place = self.place(Some(self.current));
        let (kind, scale_bytes) = match qualifier {
            Qualifier::Mxf8f6f4 => {
                Tcgen05Kind::from_scaled_descriptor(idesc).map(|(kind, bytes)| (kind, Some(bytes)))
            }
            _ => Tcgen05Kind::from_descriptor(idesc, qualifier).map(|kind| (kind, None)),
        }
        .map_err(|what| fault(place, what))?;
        let (lane, column) = split_address(d as u32);
        let (column, end) = (column as usize, column as usize + kind.n);
        let allocated = self.tmem.allocated.unwrap_or(0) as usize;
        if d >> 32 != 0 || lane != 0 || end > allocated {
            return Err(fault(
                place,
                format!("D at {d:#x}: columns {column}..{end} at lane {lane}, outside the {allocated} allocated"),
            ));
        }
        let widen = |bits| kind.widen(bits);
        let db = decode_smem_descriptor(b).map_err(|what| fault(place, what))?;
        let (bytes, k) = (kind.dtype.size_bytes(), kind.k());
        let a = match a {
            SourceA::Descriptor(a) => {
                let da = decode_smem_descriptor(a).map_err(|what| fault(place, what))?;
                self.descriptor_operand((place, fault), da, (Major::K, [M, k], bytes), widen)?
            }
            SourceA::Tensor(at) => self.tensor_a(kind, at)?,
        };
        let b_shape = (kind.b_major, [kind.n, k], bytes);
        let b = self.descriptor_operand((place, fault), db, b_shape, widen)?;
        // B is read as (n, k): row-major K × N for the multiply.
        let b: Vec<f32> = (0..k * kind.n)
            .map(|e| b[(e % kind.n) * k + e / kind.n])
            .collect();
        let cell = |e: usize| (e / kind.n) * COLUMNS + column + e % kind.n;
        let mut out: Vec<f32> = (0..M * kind.n)
            .map(|e| f32::from_bits(self.tmem.cells[cell(e)]))
            .collect();
        let computed = match scale_bytes {
            Some(bytes) => {
                let Some(images) = self.tmem.scales.remove(&self.current) else {
                    let what = "a block-scaled tcgen05.mma with no scales named".to_string();
                    return Err(fault(place, what));
                };
                let sa = self.scales((images[0], M), bytes[0])?;
                let sb = self.scales((images[1], kind.n), bytes[1])?;
                block_mma_scaled(kind, (&a, &b), [&sa, &sb], &mut out, accumulate)
            }
            None => block_mma(kind, &a, &b, &mut out, accumulate),
        };
        computed.map_err(|what| fault(place, what))?;
        for (e, v) in out.into_iter().enumerate() {
            self.tmem.cells[cell(e)] = v.to_bits();
        }
        Ok(())
    }

    /// The `rows` scales of the image at `at`, from byte `byte` of its cells.
    fn scales(&self, (at, rows): (u64, usize), byte: u32) -> Result<Vec<u32>, EmuError> {
        let (lane, column) = split_address(at as u32);
        let end = column as usize + scale_columns(rows);
        let allocated = self.tmem.allocated.unwrap_or(0) as usize;
        if at >> 32 != 0 || lane != 0 || end > allocated {
            return Err(self.tmem_error(format!(
                "scales at {at:#x}: columns {column}..{end} at lane {lane}, outside the {allocated} allocated"
            )));
        }
        let read = (rows, column as usize, byte);
        let cell = |lane: usize, column: usize| Ok(self.tmem.cells[lane * COLUMNS + column]);
        read_scales(read, cell)?.map_err(|what| self.tmem_error(what))
    }

    /// The 128×`K` A of `kind` in tensor memory at `at`.
    fn tensor_a(&self, kind: Tcgen05Kind, at: u64) -> Result<Vec<f32>, EmuError> {
        let (lane, column) = split_address(at as u32);
        let end = column as usize + tensor_a_columns(kind);
        let allocated = self.tmem.allocated.unwrap_or(0) as usize;
        if at >> 32 != 0 || lane != 0 || end > allocated {
            return Err(self.tmem_error(format!(
                "A at {at:#x}: columns {column}..{end} at lane {lane}, outside the {allocated} allocated"
            )));
        }
        read_tensor_a(kind, column as usize, |lane, column| {
            Ok::<u32, EmuError>(self.tmem.cells[lane * COLUMNS + column])
        })
    }

    /// The current lane's part of its warp's `columns`-column load (or,
    /// with `store`, store) at `address`, through the buffer at `buffer`.
    ///
    /// # Safety
    ///
    /// `buffer` must be the address of `columns` `f32`s the thread owns,
    /// alive while it waits in this call.
    pub(crate) unsafe fn tmem_access(
        &mut self,
        address: u64,
        buffer: u64,
        (columns, store): (u64, bool),
    ) -> Result<(), EmuError> {
        let (lane0, column) = split_address(address as u32);
        let (warp, lane) = (
            self.current as usize / WARP_LANES,
            self.current as usize % WARP_LANES,
        );
        let quarter = WARP_LANES * (warp % 4);
        let allocated = u64::from(self.tmem.allocated.unwrap_or(0));
        if address >> 32 != 0
            || lane0 as usize != quarter
            || columns > 128
            || u64::from(column) + columns > allocated
        {
            return Err(self.tmem_error(format!(
                "warp {warp} reaches lanes from {lane0}, columns {column}..{}: its lanes are {quarter}..{}, {allocated} columns allocated",
                u64::from(column) + columns,
                quarter + WARP_LANES
            )));
        }
        let first = (quarter + lane) * COLUMNS + column as usize;
        let row = &mut self.tmem.cells[first..first + columns as usize];
        // SAFETY: the caller's contract: the thread's own buffer of
        // `columns` words.
        unsafe {
            match store {
                true => {
                    std::ptr::copy_nonoverlapping(buffer as *const u32, row.as_mut_ptr(), row.len())
                }
                false => std::ptr::copy_nonoverlapping(row.as_ptr(), buffer as *mut u32, row.len()),
            }
        }
        Ok(())
    }
}
