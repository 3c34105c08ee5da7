//! Blackwell's tensor memory and `tcgen05.mma` (sm_100a, sm_103a) as inline
//! PTX ([`Tcgen05Asm`], one variant of [`Asm`]), as Triton and CUTLASS
//! write them: LLVM 22 has intrinsics for each, but the emulation target
//! models the instructions snippet by snippet, as it does `wgmma`.
//!
//! Every snippet that reaches tensor memory opens with
//! `tcgen05.fence::after_thread_sync` and, when it ends a wait, closes with
//! `tcgen05.fence::before_thread_sync`, so that the block barriers and the
//! mbarrier waits of the thread program order the asynchronous tensor
//! operations as they order everything else. Loads and stores wait for
//! themselves (`tcgen05.wait::ld`/`::st`) in the same snippet, so that no
//! use of a loaded register moves above the wait. The thread-level
//! `tcgen05.commit_wait` waits on the mbarrier by the parity of its phase,
//! which the kernel keeps in a local variable: every thread waits for
//! every phase, in order.

use super::kernel::{int, Kernel, Operands};
use super::{Asm, GpuEmitter};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::IntPredicate;
use tile_hw::tcgen05::{smem_descriptor, Qualifier, WARP_LANES};
use tile_hw::wgmma::b_swizzle;
use tile_thread::program::{DescriptorSwizzle, SharedId, ThreadOpKind};

/// One inline-PTX snippet of tensor memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tcgen05Asm {
    /// `tcgen05.alloc` of `columns` and `relinquish_alloc_permit`:
    /// `(slot: i64)`, the shared address of the word it writes.
    Alloc {
        /// The columns.
        columns: u16,
    },
    /// `tcgen05.dealloc` of `columns`: `(address: i32)`.
    Dealloc {
        /// The columns.
        columns: u16,
    },
    /// `tcgen05.mma.cta_group::1.kind::<qualifier>`: `(d: i32, desc_a:
    /// i64, desc_b: i64, idesc: i32, accumulate: i32)`.
    Mma {
        /// `f16` or `f8f6f4`.
        qualifier: Qualifier,
    },
    /// `tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale`: `(d: i32,
    /// desc_a: i64, desc_b: i64, idesc: i32, scale_a: i32, scale_b: i32,
    /// accumulate: i32)`, the scales' tensor-memory addresses.
    MmaScaled,
    /// `tcgen05.mma.cta_group::1.kind::f16` with A in tensor memory:
    /// `(d: i32, a: i32, desc_b: i64, idesc: i32, accumulate: i32)`.
    MmaTensorA,
    /// `tcgen05.commit…mbarrier::arrive::one`: `(bar: i64)`.
    Commit,
    /// `tcgen05.ld.32x32b.x<columns>` and its wait: `(address: i32) ->
    /// f32…`.
    Load {
        /// The columns.
        columns: u16,
    },
    /// `tcgen05.st.32x32b.x<columns>` and its wait: `(address: i32, f32…)`.
    Store {
        /// The columns.
        columns: u16,
    },
}

const AFTER: &str = "tcgen05.fence::after_thread_sync;";
const BEFORE: &str = "tcgen05.fence::before_thread_sync;";

/// `{$first, …}` of `n` registers.
fn registers(first: usize, n: u16) -> String {
    let regs: Vec<String> = (first..first + usize::from(n))
        .map(|i| format!("${i}"))
        .collect();
    format!("{{{}}}", regs.join(", "))
}

impl Tcgen05Asm {
    /// The PTX template, on one line.
    pub(crate) fn template(self) -> String {
        match self {
            Tcgen05Asm::Alloc { columns } => format!(
                "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [$0], {columns}; tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned; {BEFORE}"
            ),
            Tcgen05Asm::Dealloc { columns } => format!(
                "{AFTER} tcgen05.dealloc.cta_group::1.sync.aligned.b32 $0, {columns};"
            ),
            Tcgen05Asm::Mma { qualifier } => format!(
                "{{ .reg .pred p; setp.ne.b32 p, $4, 0; {AFTER} tcgen05.mma.cta_group::1.kind::{} [$0], $1, $2, $3, p; }}",
                qualifier.ptx()
            ),
            Tcgen05Asm::MmaScaled => format!(
                "{{ .reg .pred p; setp.ne.b32 p, $6, 0; {AFTER} tcgen05.mma.cta_group::1.kind::{} [$0], $1, $2, $3, [$4], [$5], p; }}",
                Qualifier::Mxf8f6f4.ptx()
            ),
            Tcgen05Asm::MmaTensorA => format!(
                "{{ .reg .pred p; setp.ne.b32 p, $4, 0; {AFTER} tcgen05.mma.cta_group::1.kind::f16 [$0], [$1], $2, $3, p; }}"
            ),
            Tcgen05Asm::Commit => {
                "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [$0];".into()
            }
            Tcgen05Asm::Load { columns } => format!(
                "{AFTER} tcgen05.ld.sync.aligned.32x32b.x{columns}.b32 {}, [${columns}]; tcgen05.wait::ld.sync.aligned; {BEFORE}",
                registers(0, columns)
            ),
            Tcgen05Asm::Store { columns } => format!(
                "{AFTER} tcgen05.st.sync.aligned.32x32b.x{columns}.b32 [$0], {}; tcgen05.wait::st.sync.aligned; {BEFORE}",
                registers(1, columns)
            ),
        }
    }

    /// The constraint string.
    pub(crate) fn constraints(self) -> String {
        let memory = super::asm::MEMORY;
        match self {
            Tcgen05Asm::Alloc { .. } | Tcgen05Asm::Commit => format!("l,{memory}"),
            Tcgen05Asm::Dealloc { .. } => format!("r,{memory}"),
            Tcgen05Asm::Mma { .. } => format!("r,l,l,r,r,{memory}"),
            Tcgen05Asm::MmaScaled => format!("r,l,l,r,r,r,r,{memory}"),
            Tcgen05Asm::MmaTensorA => format!("r,r,l,r,r,{memory}"),
            Tcgen05Asm::Load { columns } => {
                format!("{},r,{memory}", vec!["=f"; usize::from(columns)].join(","))
            }
            Tcgen05Asm::Store { columns } => {
                format!("r,{},{memory}", vec!["f"; usize::from(columns)].join(","))
            }
        }
    }

    /// The snippet `template` was written for, if one was (its constraints
    /// left to the caller's check).
    pub(crate) fn parse(template: &str) -> Option<Tcgen05Asm> {
        let columns = |after: &str, end: char| -> Option<u16> {
            let at = template.find(after)? + after.len();
            template[at..].split(end).next()?.parse().ok()
        };
        let candidate = if template.starts_with("tcgen05.alloc") {
            Tcgen05Asm::Alloc {
                columns: columns("[$0], ", ';')?,
            }
        } else if template.contains("tcgen05.dealloc") {
            Tcgen05Asm::Dealloc {
                columns: columns("$0, ", ';')?,
            }
        } else if template.contains("tcgen05.mma") && template.contains("], [$1]") {
            Tcgen05Asm::MmaTensorA
        } else if template.contains("tcgen05.mma") && template.contains(".block_scale ") {
            Tcgen05Asm::MmaScaled
        } else if template.contains("tcgen05.mma") {
            let named = |q: &Qualifier| template.contains(&format!("kind::{} ", q.ptx()));
            let qualifier = Qualifier::DENSE.into_iter().find(named)?;
            Tcgen05Asm::Mma { qualifier }
        } else if template.starts_with("tcgen05.commit") {
            Tcgen05Asm::Commit
        } else if template.contains("tcgen05.ld") {
            Tcgen05Asm::Load {
                columns: columns(".32x32b.x", '.')?,
            }
        } else if template.contains("tcgen05.st") {
            Tcgen05Asm::Store {
                columns: columns(".32x32b.x", '.')?,
            }
        } else {
            return None;
        };
        (candidate.template() == template).then_some(candidate)
    }

    /// Its name in the emulation target's replacements.
    pub(crate) fn name(self) -> String {
        match self {
            Tcgen05Asm::Alloc { columns } => format!("tcgen05.alloc.{columns}"),
            Tcgen05Asm::Dealloc { columns } => format!("tcgen05.dealloc.{columns}"),
            Tcgen05Asm::Mma { qualifier } => format!("tcgen05.mma.{}", qualifier.ptx()),
            Tcgen05Asm::MmaScaled => "tcgen05.mma.mxf8f6f4.block_scale".into(),
            Tcgen05Asm::MmaTensorA => "tcgen05.mma.tensor_a.f16".into(),
            Tcgen05Asm::Commit => "tcgen05.commit".into(),
            Tcgen05Asm::Load { columns } => format!("tcgen05.ld.x{columns}"),
            Tcgen05Asm::Store { columns } => format!("tcgen05.st.x{columns}"),
        }
    }

    /// The `f32` values it returns.
    pub(crate) fn values(self) -> usize {
        match self {
            Tcgen05Asm::Load { columns } => usize::from(columns),
            _ => 0,
        }
    }
}

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// The tensor-memory op `kind` on its operands `x`.
    pub(super) fn tcgen05_op(
        &self,
        k: &Kernel<'_, 'ctx>,
        kind: &ThreadOpKind,
        x: &Operands<'_, 'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let int = |name: &str| int(x, name);
        let asm =
            |a: Tcgen05Asm, args: &[BasicValueEnum<'ctx>]| self.inline_asm(Asm::Tcgen05(a), args);
        match kind {
            ThreadOpKind::TmemAlloc { columns, slot } => {
                let at = self.shared_address(k, *slot, int("index")?)?;
                let alloc = Tcgen05Asm::Alloc { columns: *columns };
                self.when(k, self.first_warp(k)?, |s| {
                    s.inline_asm(Asm::Tcgen05(alloc), &[at.into()]).map(drop)
                })?;
                Ok(Vec::new())
            }
            ThreadOpKind::TmemDealloc { columns } => {
                let address = int("address")?;
                let dealloc = Tcgen05Asm::Dealloc { columns: *columns };
                self.when(k, self.first_warp(k)?, |s| {
                    s.inline_asm(Asm::Tcgen05(dealloc), &[address.into()])
                        .map(drop)
                })?;
                Ok(Vec::new())
            }
            ThreadOpKind::Tcgen05Mma {
                kind,
                a,
                a_swizzle,
                b,
            } => {
                let desc_a = self.descriptor(k, (*a, *a_swizzle), int("ia")?, smem_descriptor)?;
                let b_layout = (*b, b_swizzle(*a_swizzle, kind.b_major));
                let mma = Tcgen05Asm::Mma {
                    qualifier: kind.qualifier(),
                };
                let issue = (mma, kind.descriptor(), Vec::new());
                self.tcgen05_mma(k, issue, (desc_a.into(), b_layout), x)
            }
            ThreadOpKind::Tcgen05MmaScaled {
                kind,
                a,
                a_swizzle,
                b,
                byte,
            } => {
                let desc_a = self.descriptor(k, (*a, *a_swizzle), int("ia")?, smem_descriptor)?;
                let b_layout = (*b, b_swizzle(*a_swizzle, kind.b_major));
                let scales = vec![int("sa")?.into(), int("sb")?.into()];
                let idesc = kind.scaled_descriptor(u32::from(*byte));
                let issue = (Tcgen05Asm::MmaScaled, idesc, scales);
                self.tcgen05_mma(k, issue, (desc_a.into(), b_layout), x)
            }
            ThreadOpKind::Tcgen05MmaTensorA { kind, b } => {
                // B is staged under the 128-byte swizzle: a product reads
                // its A from tensor memory only then (`tensor_a_columns`).
                let b_layout = (*b, b_swizzle(DescriptorSwizzle::B128, kind.b_major));
                let a = int("a")?.into();
                let issue = (Tcgen05Asm::MmaTensorA, kind.descriptor(), Vec::new());
                self.tcgen05_mma(k, issue, (a, b_layout), x)
            }
            ThreadOpKind::Tcgen05CommitWait { bar } => {
                let at = self.shared_address(k, *bar, int("index")?)?;
                self.when(k, int("mask")?, |s| {
                    s.inline_asm(Asm::Tcgen05(Tcgen05Asm::Commit), &[at.into()])
                        .map(drop)
                })?;
                let phase = k
                    .tmem_phase
                    .ok_or_else(|| EmitError::internal("tcgen05.commit_wait without a phase"))?;
                self.wait_phase(k, (*bar, int("index")?), phase)?;
                Ok(Vec::new())
            }
            ThreadOpKind::TmemLoad { columns } => {
                let at = self.warp_lanes(k, int("address")?)?;
                asm(Tcgen05Asm::Load { columns: *columns }, &[at.into()])
            }
            ThreadOpKind::TmemStore => {
                let at = self.warp_lanes(k, int("address")?)?;
                let values = x.list("values");
                let columns = u16::try_from(values.len())
                    .map_err(|_| EmitError::internal("a tensor-memory store's values"))?;
                let mut args = vec![at.into()];
                args.extend_from_slice(values);
                asm(Tcgen05Asm::Store { columns }, &args)
            }
            ThreadOpKind::TmemStoreHalves => {
                let at = self.warp_lanes(k, int("address")?)?;
                let halves = x.list("values");
                let columns = u16::try_from(halves.len() / 2)
                    .map_err(|_| EmitError::internal("a tensor-memory store's values"))?;
                let mut args = vec![at.into()];
                for pair in halves.chunks(2) {
                    args.push(self.packed_pair(pair)?);
                }
                asm(Tcgen05Asm::Store { columns }, &args)
            }
            ThreadOpKind::TmemStoreBytes => {
                let at = self.warp_lanes(k, int("address")?)?;
                let bytes = x.list("values");
                let columns = u16::try_from(bytes.len() / 4)
                    .map_err(|_| EmitError::internal("a tensor-memory store's values"))?;
                let mut args = vec![at.into()];
                for four in bytes.chunks(4) {
                    args.push(self.packed_bytes(four)?);
                }
                asm(Tcgen05Asm::Store { columns }, &args)
            }
            _ => Err(EmitError::internal("not a tensor-memory op")),
        }
    }

    /// Where the mask holds, the `tcgen05.mma` snippet `asm` of the
    /// instruction descriptor `idesc` from A at `a` (a descriptor or a
    /// tensor-memory address) and B staged as `b_layout` says, into `d`,
    /// with the scales' addresses `scales` of a block-scaled one,
    /// accumulating where `accumulate` holds.
    fn tcgen05_mma(
        &self,
        k: &Kernel<'_, 'ctx>,
        (asm, idesc, scales): (Tcgen05Asm, u32, Vec<BasicValueEnum<'ctx>>),
        (a, b_layout): (BasicValueEnum<'ctx>, (SharedId, DescriptorSwizzle)),
        x: &Operands<'_, 'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let desc_b = self.descriptor(k, b_layout, int(x, "ib")?, smem_descriptor)?;
        let i32t = self.ctx.i32_type();
        let idesc = i32t.const_int(u64::from(idesc), false);
        let accumulate = self
            .b
            .build_int_z_extend(int(x, "accumulate")?, i32t, "acc")?;
        let mut args = vec![int(x, "d")?.into(), a, desc_b.into(), idesc.into()];
        args.extend(scales);
        args.push(accumulate.into());
        self.when(k, int(x, "mask")?, |s| {
            s.inline_asm(Asm::Tcgen05(asm), &args).map(drop)
        })?;
        Ok(Vec::new())
    }

    /// Two 16-bit values in one `f32` register, the first in the low half
    /// (a vector of the two read as a float).
    fn packed_pair(
        &self,
        pair: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let [low, high] = pair else {
            return Err(EmitError::internal(
                "a tensor-memory store of an odd count of halves",
            ));
        };
        // A 16-bit float is `half` or `bfloat`, or its bits as `i16`.
        let vector = match low.get_type() {
            inkwell::types::BasicTypeEnum::FloatType(f) => f.vec_type(2),
            inkwell::types::BasicTypeEnum::IntType(i) if i.get_bit_width() == 16 => i.vec_type(2),
            _ => {
                return Err(EmitError::internal(
                    "a tensor-memory store of values other than halves",
                ))
            }
        };
        let i32t = self.ctx.i32_type();
        let mut v = vector.get_undef();
        for (i, x) in [low, high].into_iter().enumerate() {
            let at = i32t.const_int(i as u64, false);
            v = self.b.build_insert_element(v, *x, at, "pair")?;
        }
        Ok(self.b.build_bit_cast(v, self.ctx.f32_type(), "packed")?)
    }

    /// Four 8-bit values in one `f32` register, the first in the low byte.
    fn packed_bytes(
        &self,
        four: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let mut word = i32t.const_zero();
        for (i, byte) in four.iter().enumerate() {
            let byte = match byte {
                BasicValueEnum::IntValue(v) if v.get_type().get_bit_width() == 8 => *v,
                _ => {
                    return Err(EmitError::internal(
                        "a tensor-memory store of bytes of values other than 8-bit ones",
                    ))
                }
            };
            let wide = self.b.build_int_z_extend(byte, i32t, "byte")?;
            let at = i32t.const_int(8 * i as u64, false);
            let shifted = self.b.build_left_shift(wide, at, "placed")?;
            word = self.b.build_or(word, shifted, "word")?;
        }
        Ok(self.b.build_bit_cast(word, self.ctx.f32_type(), "packed")?)
    }

    /// Whether the thread is in warp 0.
    fn first_warp(&self, k: &Kernel<'_, 'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let lanes = k.thread.get_type().const_int(WARP_LANES as u64, false);
        Ok(self
            .b
            .build_int_compare(IntPredicate::ULT, k.thread, lanes, "warp0")?)
    }

    /// `address` with its lane the first of the thread's warp's quarter of
    /// tensor memory: `32·(warp % 4)`.
    fn warp_lanes(
        &self,
        k: &Kernel<'_, 'ctx>,
        address: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let t = k.thread.get_type();
        let quarter = self
            .b
            .build_right_shift(k.thread, t.const_int(5, false), false, "warp")?;
        let quarter = self
            .b
            .build_and(quarter, t.const_int(3, false), "quarter")?;
        let lane = self
            .b
            .build_left_shift(quarter, t.const_int(21, false), "lane")?;
        let lane = self.b.build_int_cast(lane, address.get_type(), "lane")?;
        Ok(self.b.build_int_add(address, lane, "taddr")?)
    }

    /// Waits for the phase of the mbarrier at `index` of `bar` whose parity
    /// `phase` holds, then flips it.
    fn wait_phase(
        &self,
        k: &Kernel<'_, 'ctx>,
        (bar, index): (SharedId, IntValue<'ctx>),
        phase: PointerValue<'ctx>,
    ) -> Result<(), EmitError> {
        let i32t = self.ctx.i32_type();
        let parity = self.b.build_load(i32t, phase, "parity")?.into_int_value();
        self.mbarrier_wait(k, bar, [index, parity])?;
        let next = self.b.build_xor(parity, i32t.const_int(1, false), "next")?;
        self.b.build_store(phase, next)?;
        Ok(())
    }
}
