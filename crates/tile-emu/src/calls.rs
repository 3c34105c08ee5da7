//! The runtime's entry point: one arm per [`RuntimeCall`] an emulation image calls,
//! on the calling GPU thread of the running block.

use crate::block::{race, stop, suspend, with_block, Wait, WARP};
use crate::copies::Copy;
use crate::error::EmuError;
use crate::tcgen05::SourceA;
use crate::wgmma::WgmmaCall;
use tile_abi::emulation::{
    Access, ApproxFn, Ordering, RuntimeCall, ShuffleMode, MMA_MAX_WORDS, TCGEN05_TENSOR_A,
    WGMMA_REGISTER_A,
};
use tile_hw::happens::AtomicSync;
use tile_hw::ldmatrix::LdMatrix;
use tile_hw::mma::{Fragment, MmaFamily, MmaKind};
use tile_hw::tcgen05::Qualifier;
use tile_hw::wgmma::WgmmaKind;

/// The runtime's entry point, which every replaced intrinsic and every
/// access check of an image calls ([`tile_abi::emulation::RuntimeCall`]).
pub(crate) extern "C" fn runtime(op: u32, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let Some(op) = RuntimeCall::from_u32(op) else {
        let place = with_block(|blk| blk.place(Some(blk.current)));
        return stop(EmuError::Malformed {
            place,
            what: format!("op {op}"),
        });
    };
    let axis = a as usize;
    match op {
        RuntimeCall::ThreadId => {
            with_block(|blk| if axis == 0 { u64::from(blk.current) } else { 0 })
        }
        RuntimeCall::BlockId => with_block(|blk| blk.block.get(axis).map_or(0, |&v| u64::from(v))),
        RuntimeCall::GridDim => with_block(|blk| blk.grid.get(axis).map_or(1, |&v| u64::from(v))),
        RuntimeCall::BlockDim => {
            with_block(|blk| if axis == 0 { u64::from(blk.threads) } else { 1 })
        }
        RuntimeCall::DispatchPtr => with_block(|blk| blk.packet.as_ptr() as u64),
        RuntimeCall::Barrier => suspend(Wait::Barrier),
        RuntimeCall::Shuffle => {
            let mask = (a >> 32) as u32;
            let mode = ShuffleMode::from_u64(a & 0xffff_ffff);
            match mode {
                Some(mode) if mask == u32::MAX => suspend(Wait::Shuffle {
                    mode,
                    value: b as u32,
                    b: c as u32,
                    c: d as u32,
                }),
                Some(_) => {
                    let place = with_block(|blk| blk.place(Some(blk.current)));
                    stop(EmuError::PartialMask { place, mask })
                }
                None => {
                    let place = with_block(|blk| blk.place(Some(blk.current)));
                    stop(EmuError::Malformed {
                        place,
                        what: format!("shuffle mode {a:#x}"),
                    })
                }
            }
        }
        RuntimeCall::ApproxMath => match ApproxFn::from_u64(a) {
            Some(f) => {
                let (x, y) = (f32::from_bits(b as u32), f32::from_bits(c as u32));
                u64::from(f.model(x, y).to_bits())
            }
            None => {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                stop(EmuError::Malformed {
                    place,
                    what: format!("approximated function {a}"),
                })
            }
        },
        RuntimeCall::Bpermute => suspend(Wait::Bpermute {
            address: a as u32,
            value: b as u32,
        }),
        RuntimeCall::LanePermute => {
            let (lane, wave) = with_block(|blk| (blk.current % blk.wave, blk.wave));
            match crate::lanes::permute_source(a as u32, c, lane, wave) {
                // The exchange is a permute whose address the pattern gives.
                Some(source) => suspend(Wait::Bpermute {
                    address: source * 4,
                    value: b as u32,
                }),
                None => {
                    let place = with_block(|blk| blk.place(Some(blk.current)));
                    stop(EmuError::Malformed {
                        place,
                        what: format!("lane permute pattern {a:#x} (mode {c})"),
                    })
                }
            }
        }
        RuntimeCall::CopyAsync => {
            if c > 16 {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                return stop(EmuError::Malformed {
                    place,
                    what: format!("cp.async of {c} bytes"),
                });
            }
            let checked = with_block(|blk| {
                let source = if c > 0 {
                    blk.check_access(b, c, 16, 0)
                } else {
                    None
                };
                source.or_else(|| blk.check_copy(a))
            });
            match checked {
                Some(error) => stop(error),
                None => {
                    let copy = Copy {
                        dst: a,
                        src: b,
                        bytes: c,
                    };
                    with_block(|blk| blk.copies[blk.current as usize].issue(copy));
                    0
                }
            }
        }
        RuntimeCall::MbarrierInit => match with_block(|blk| blk.mbarrier_init(a, b)) {
            Ok(()) => 0,
            Err(error) => stop(error),
        },
        RuntimeCall::MbarrierExpectTx => match with_block(|blk| blk.mbarrier_expect_tx(a, b)) {
            Ok(()) => 0,
            Err(error) => stop(error),
        },
        RuntimeCall::MbarrierTryWait => match with_block(|blk| blk.mbarrier_try_wait(a, b)) {
            Ok(ready) => ready,
            Err(error) => stop(error),
        },
        RuntimeCall::TmaLoad => {
            let (c0, c1) = (
                i64::from(c as u32 as i32),
                i64::from((c >> 32) as u32 as i32),
            );
            // SAFETY: the image's replacement of the bulk copy passes the
            // address of its by-value tensor-map parameter, the launch's
            // argument bytes, alive while the block runs
            // (tile_abi::emulation::RuntimeCall::TmaLoad).
            match with_block(|blk| unsafe { blk.tma_load(a, b, (c0, c1), d) }) {
                Ok(()) => 0,
                Err(error) => stop(error),
            }
        }
        RuntimeCall::Atomic => {
            let (order, scope) = Ordering::decode(b);
            with_block(|blk| {
                let who = blk.who();
                let sync = AtomicSync {
                    order,
                    scope,
                    wrote: c != 0,
                };
                blk.global.atomic(who, a, sync);
            });
            0
        }
        RuntimeCall::Fence => {
            let (order, scope) = Ordering::decode(a);
            with_block(|blk| {
                let who = blk.who();
                blk.global.fence(who, order, scope);
            });
            0
        }
        RuntimeCall::CommitAsync => {
            with_block(|blk| blk.copies[blk.current as usize].commit());
            0
        }
        RuntimeCall::WaitAsync => {
            let failed = with_block(|blk| {
                let thread = blk.current;
                // SAFETY: every copy was checked when issued, and the block's
                // memory stays registered while the block runs.
                let landed = unsafe { blk.copies[thread as usize].land(a as usize) };
                landed.iter().find_map(|copy| {
                    let conflict = blk.shared.land_copy(copy.dst, 16, thread).err()?;
                    let place = blk.place(Some(thread));
                    Some(race(place, "store", copy.dst, conflict))
                })
            });
            match failed {
                Some(error) => stop(error),
                None => 0,
            }
        }
        RuntimeCall::LdMatrix => match LdMatrix::from_code(b) {
            Some(shape) => {
                let lane = with_block(|blk| blk.current % WARP) as usize;
                if lane < shape.address_lanes() {
                    if let Some(error) =
                        with_block(|blk| blk.check_access(a, 16, 16, Access::SHARED))
                    {
                        return stop(error);
                    }
                }
                suspend(Wait::LdMatrix { shape, address: a });
                let regs = with_block(|blk| blk.fragments[blk.current as usize]);
                // SAFETY: the image's replacement of the ldmatrix intrinsic
                // passes the address of its own 4-word stack buffer, alive
                // and unaliased for this call (tile_abi::emulation::RuntimeCall::LdMatrix).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        regs.as_ptr(),
                        c as *mut u32,
                        usize::from(shape.count),
                    )
                };
                0
            }
            None => {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                stop(EmuError::Malformed {
                    place,
                    what: format!("ldmatrix {b:#x}"),
                })
            }
        },
        RuntimeCall::Mma => match MmaKind::from_u64(b) {
            Some(kind) if c != 0 => {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                stop(EmuError::Malformed {
                    place,
                    what: if kind.is_block_scaled() && kind.family() == MmaFamily::Mfma {
                        format!(
                            "{} with formats and selectors {c:#x} ((cbsz ^ blgp) | (cbsz >> 1) \
                             << 4 | op_sel_a << 8 | op_sel_b << 16): only 0 is modelled",
                            kind.name()
                        )
                    } else if kind.is_block_scaled() {
                        format!(
                            "{} with scale selectors {c:#x} (byte-id-a | thread-id-a << 8 | \
                             byte-id-b << 16 | thread-id-b << 24): only 0 is modelled",
                            kind.name()
                        )
                    } else {
                        format!(
                            "{} with broadcast controls {c:#x} (cbsz | abid << 8 | blgp << 16): only 0 is modelled",
                            kind.name()
                        )
                    },
                })
            }
            Some(kind) => {
                let buffer = a as *mut u32;
                let (len, at, nc) = (kind.words(), kind.c_word(), kind.elements(Fragment::C));
                let mut words = [0u32; MMA_MAX_WORDS];
                // SAFETY: the image's replacement of the mma intrinsic passes
                // the address of its own stack buffer of the kind's words,
                // alive and unaliased for this call
                // (tile_abi::emulation::RuntimeCall::Mma).
                unsafe { std::ptr::copy_nonoverlapping(buffer, words.as_mut_ptr(), len) };
                suspend(Wait::Mma { kind, words });
                let d = with_block(|blk| blk.fragments[blk.current as usize]);
                // SAFETY: as above; D replaces the C words, inside the buffer.
                unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), buffer.add(at), nc) };
                0
            }
            None => {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                stop(EmuError::Malformed {
                    place,
                    what: format!("mma kind {b}"),
                })
            }
        },
        RuntimeCall::Wgmma => {
            let registers = d & WGMMA_REGISTER_A != 0;
            let (kind, scale) = (
                WgmmaKind::from_code(d & 0xffff_ffff),
                (d & !WGMMA_REGISTER_A) >> 32,
            );
            let Some(kind) = kind.filter(|_| scale <= 1) else {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                return stop(EmuError::Malformed {
                    place,
                    what: format!("wgmma {d:#x}"),
                });
            };
            let issued = with_block(|blk| {
                let place = blk.place(Some(blk.current));
                let t = blk.current as usize;
                blk.sequences[t]
                    .issue()
                    .map_err(|what| EmuError::Wgmma { place, what })
            });
            if let Err(error) = issued {
                return stop(error);
            }
            suspend(Wait::Wgmma(WgmmaCall {
                kind,
                a: b,
                b: c,
                scale: scale == 1,
                registers,
                buffer: a,
            }));
            0
        }
        RuntimeCall::TmemAlloc => match with_block(|blk| blk.tmem_alloc(a, b)) {
            Ok(()) => 0,
            Err(error) => stop(error),
        },
        RuntimeCall::TmemDealloc => match with_block(|blk| blk.tmem_dealloc(a, b)) {
            Ok(()) => 0,
            Err(error) => stop(error),
        },
        RuntimeCall::Tcgen05Mma => {
            let (idesc, accumulate) = (d as u32, (d >> 32) & 1);
            let tensor_a = d & TCGEN05_TENSOR_A != 0;
            let Some(qualifier) = Qualifier::from_code((d & !TCGEN05_TENSOR_A) >> 33) else {
                let place = with_block(|blk| blk.place(Some(blk.current)));
                return stop(EmuError::Malformed {
                    place,
                    what: format!("tcgen05.mma flags {d:#x}"),
                });
            };
            let idesc = (idesc, qualifier);
            let a_at = match tensor_a {
                true => SourceA::Tensor(b),
                false => SourceA::Descriptor(b),
            };
            match with_block(|blk| blk.tcgen05_mma(a, (a_at, c), idesc, accumulate == 1)) {
                Ok(()) => 0,
                Err(error) => stop(error),
            }
        }
        RuntimeCall::Tcgen05Scales => {
            with_block(|blk| blk.tcgen05_scales(a, b));
            0
        }
        // The products landed at issue: the commit is the arrival.
        RuntimeCall::Tcgen05Commit => match with_block(|blk| blk.mbarrier_expect_tx(a, 0)) {
            Ok(()) => 0,
            Err(error) => stop(error),
        },
        RuntimeCall::TmemLoad | RuntimeCall::TmemStore => {
            let store = op == RuntimeCall::TmemStore;
            // SAFETY: the image's replacement of the load or store passes
            // its own stack buffer of `c` words, alive and unaliased while
            // its thread waits in this call
            // (tile_abi::emulation::RuntimeCall::TmemLoad).
            match with_block(|blk| unsafe { blk.tmem_access(a, b, (c, store)) }) {
                Ok(()) => 0,
                Err(error) => stop(error),
            }
        }
        RuntimeCall::WgmmaFence => with_block(|blk| {
            blk.sequences[blk.current as usize].fence();
            0
        }),
        RuntimeCall::WgmmaCommit => with_block(|blk| {
            blk.sequences[blk.current as usize].commit();
            0
        }),
        RuntimeCall::WgmmaWait => with_block(|blk| {
            blk.sequences[blk.current as usize].wait(a);
            0
        }),
        RuntimeCall::FenceProxyAsync => with_block(|blk| {
            blk.shared.fence_proxy(blk.current);
            0
        }),
        RuntimeCall::Access => match with_block(|blk| blk.check_access(a, b, c, d)) {
            None => 0,
            Some(error) => stop(error),
        },
    }
}
