//! Warp shuffles with PTX `shfl.sync` semantics (all lanes active): NVPTX
//! calls `shfl.sync` itself; on AMDGPU a butterfly of a constant distance
//! below 32 is a DPP `quad_perm` or a `ds_swizzle_b32` of an immediate
//! pattern, and every other shuffle computes the source lane with
//! `shfl.sync`'s rules inside the program's 32-lane warp and reads it with `ds_bpermute`,
//! which reads any lane of the wave: the warps are the halves of a wave64
//! (gfx90a, gfx942) or whole wave32s (gfx1100). A shuffle of width 64 reads
//! among the 64 lanes of a CDNA wave by the same rules over 6-bit lanes;
//! other targets have no such wave and reject it. Values of any dtype move
//! as 32-bit words.

use super::kernel::Kernel;
use super::{GpuEmitter, GpuTarget};
use crate::EmitError;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;
use tile_ir::DType;
use tile_thread::program::ShuffleMode;

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// A warp shuffle of the 32-bit `value` with operand `b` over segments
    /// of `width` lanes (PTX `shfl.sync` semantics, all lanes active);
    /// `thread` is the thread's id in its block.
    pub(crate) fn shuffle32(
        &self,
        mode: ShuffleMode,
        width: u8,
        value: IntValue<'ctx>,
        b: IntValue<'ctx>,
        thread: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let c = |v: u64| i32t.const_int(v, false);
        let span = u64::from(tile_thread::program::shuffle_span(u32::from(width)));
        let wave = match self.gpu {
            GpuTarget::Amdgpu(gfx) => gfx.wave_lanes(),
            GpuTarget::Nvptx(_) => 32,
        };
        if span > u64::from(wave) {
            return Err(EmitError::Unsupported {
                what: format!("a shuffle across {span} lanes on a target whose waves have {wave}"),
            });
        }
        let lanes = span - 1;
        let seg_mask = (span - u64::from(width)) & lanes;
        match self.gpu {
            GpuTarget::Nvptx(_) => {
                let clamp = if mode == ShuffleMode::Up { 0 } else { 0x1f };
                let name = format!("llvm.nvvm.shfl.sync.{}.i32", mode.name());
                let f = self.module.get_function(&name).unwrap_or_else(|| {
                    self.module.add_function(
                        &name,
                        i32t.fn_type(&[i32t.into(), i32t.into(), i32t.into(), i32t.into()], false),
                        None,
                    )
                });
                let args = [
                    c(0xffff_ffff).into(),
                    value.into(),
                    b.into(),
                    c((seg_mask << 8) | clamp).into(),
                ];
                self.b
                    .build_call(f, &args, "shfl")?
                    .try_as_basic_value()
                    .basic()
                    .map(|v| v.into_int_value())
                    .ok_or_else(|| EmitError::internal("shfl returned nothing"))
            }
            GpuTarget::Amdgpu(_) => {
                if let Some(xor) = fixed_butterfly(mode, width, b) {
                    return self.exchange_by_pattern(xor, value);
                }
                if let Some(source) = fixed_source(mode, width, span, b) {
                    return self.read_by_pattern(seg_mask, source, value);
                }
                let bb = &self.b;
                let lane = bb.build_and(thread, c(lanes), "lane")?;
                let min_lane = bb.build_and(lane, c(seg_mask), "minlane")?;
                let clamp = if mode == ShuffleMode::Up {
                    0
                } else {
                    u64::from(width) - 1
                };
                let max_lane = bb.build_or(min_lane, c(clamp), "maxlane")?;
                let bv = bb.build_and(b, c(lanes), "b")?;
                let (j, valid) = match mode {
                    ShuffleMode::Up => {
                        let j = bb.build_int_sub(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SGE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Down => {
                        let j = bb.build_int_add(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Bfly => {
                        let j = bb.build_xor(lane, bv, "j")?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                    ShuffleMode::Idx => {
                        let j = bb.build_or(
                            min_lane,
                            bb.build_and(bv, c(!seg_mask & lanes), "bi")?,
                            "j",
                        )?;
                        (
                            j,
                            bb.build_int_compare(IntPredicate::SLE, j, max_lane, "ok")?,
                        )
                    }
                };
                let src = bb.build_select(valid, j, lane, "src")?.into_int_value();
                // The source's lane in the wave: this thread's wave lane
                // minus its lane in the span plus the source's.
                let wave_lane = bb.build_and(thread, c(u64::from(wave) - 1), "wavelane")?;
                let hw = bb.build_int_add(bb.build_int_sub(wave_lane, lane, "base")?, src, "hw")?;
                let addr = bb.build_left_shift(hw, c(2), "addr")?;
                let f = self.intrinsic("llvm.amdgcn.ds.bpermute", &[])?;
                bb.build_call(f, &[addr.into(), value.into()], "bpermute")?
                    .try_as_basic_value()
                    .basic()
                    .map(|v| v.into_int_value())
                    .ok_or_else(|| EmitError::internal("ds.bpermute returned nothing"))
            }
        }
    }

    /// The butterfly exchange of `value` across lanes `xor` apart (below
    /// 32) without an address: DPP's `quad_perm`, a full-rate move, for 1
    /// and 2; `ds_swizzle_b32` in its bit mode, which permutes within each
    /// 32 lanes, for the rest. Both take the pattern as an immediate, where
    /// `ds_bpermute` needs each lane's source address in a register.
    fn exchange_by_pattern(
        &self,
        xor: u64,
        value: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let (i32t, bool_t) = (self.ctx.i32_type(), self.ctx.bool_type());
        let c = |v: u64| i32t.const_int(v, false);
        let call = match xor {
            1 | 2 => {
                // Lane i of each 4 reads lane i ^ xor: two bits per lane.
                let control = (0..4).fold(0, |acc, i| acc | ((i ^ xor) << (2 * i)));
                let f = self.intrinsic("llvm.amdgcn.update.dpp", &[i32t.into()])?;
                let args = [
                    value.into(),
                    value.into(),
                    c(control).into(),
                    c(0xf).into(),
                    c(0xf).into(),
                    bool_t.const_zero().into(),
                ];
                self.b.build_call(f, &args, "dpp")?
            }
            _ => {
                // and_mask 0x1f, or_mask 0, xor_mask in bits 10 to 14.
                let f = self.intrinsic("llvm.amdgcn.ds.swizzle", &[])?;
                self.b
                    .build_call(f, &[value.into(), c(0x1f | (xor << 10)).into()], "swizzle")?
            }
        };
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .ok_or_else(|| EmitError::internal("a lane exchange returned nothing"))
    }

    /// Each lane's read of lane `source` of its segment (the segment's
    /// lanes are those agreeing on the bits `seg_mask`, below 32):
    /// `ds_swizzle_b32` in its bit mode, lane `(lane & seg_mask) | source`
    /// of each 32, with no address register.
    fn read_by_pattern(
        &self,
        seg_mask: u64,
        source: u64,
        value: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        // and_mask in bits 0 to 4, or_mask in bits 5 to 9, xor_mask 0.
        let pattern = i32t.const_int((seg_mask & 0x1f) | (source << 5), false);
        let f = self.intrinsic("llvm.amdgcn.ds.swizzle", &[])?;
        self.b
            .build_call(f, &[value.into(), pattern.into()], "swizzle")?
            .try_as_basic_value()
            .basic()
            .map(|v| v.into_int_value())
            .ok_or_else(|| EmitError::internal("a lane read returned nothing"))
    }

    /// A shuffle of any dtype: as 32-bit words (64-bit values in two halves).
    pub(super) fn shuffle(
        &self,
        k: &Kernel<'_, 'ctx>,
        mode: tile_thread::program::ShuffleMode,
        width: u8,
        dtype: DType,
        v: BasicValueEnum<'ctx>,
        lane_b: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, EmitError> {
        let b = &self.b;
        let (i32t, i64t) = (self.ctx.i32_type(), self.ctx.i64_type());
        let bits = dtype.bits().max(1);
        let it = self.int_type(if dtype.is_bool() { 1 } else { bits });
        let raw = b.build_bit_cast(v, it, "raw")?.into_int_value();
        let out = if bits == 64 {
            let lo = b.build_int_truncate(raw, i32t, "lo")?;
            let hi = b.build_int_truncate(
                b.build_right_shift(raw, i64t.const_int(32, false), false, "h")?,
                i32t,
                "hi",
            )?;
            let lo = self.shuffle32(mode, width, lo, lane_b, k.thread)?;
            let hi = self.shuffle32(mode, width, hi, lane_b, k.thread)?;
            let hi = b.build_left_shift(
                b.build_int_z_extend(hi, i64t, "hz")?,
                i64t.const_int(32, false),
                "hs",
            )?;
            b.build_or(hi, b.build_int_z_extend(lo, i64t, "lz")?, "w")?
        } else {
            let w = if it.get_bit_width() == 32 {
                raw
            } else {
                b.build_int_z_extend(raw, i32t, "w")?
            };
            let s = self.shuffle32(mode, width, w, lane_b, k.thread)?;
            if it.get_bit_width() == 32 {
                s
            } else {
                b.build_int_truncate(s, it, "t")?
            }
        };
        Ok(b.build_bit_cast(out, self.reg_type(dtype), "shuffled")?)
    }
}

/// The lane distance of a butterfly shuffle that stays inside its segment
/// of `width` lanes for every lane (a constant operand below the width,
/// and below 32, which `ds_swizzle_b32` permutes within), if `b` is one.
fn fixed_butterfly(mode: ShuffleMode, width: u8, b: IntValue<'_>) -> Option<u64> {
    let xor = b.get_zero_extended_constant()?;
    (mode == ShuffleMode::Bfly && xor > 0 && xor < u64::from(width).min(32)).then_some(xor)
}

/// The lane of its segment every lane of an `idx` shuffle reads, when `b`
/// is a constant and the segments lie within 32 lanes (which
/// `ds_swizzle_b32` permutes within): `b` modulo the width.
fn fixed_source(mode: ShuffleMode, width: u8, span: u64, b: IntValue<'_>) -> Option<u64> {
    let b = b.get_zero_extended_constant()?;
    (mode == ShuffleMode::Idx && span <= 32).then_some(b & (u64::from(width) - 1))
}
