//! The GPU targets' conversion intrinsics, defined in LLVM IR for the host:
//! pure functions of their operands, so no runtime call is needed.

/// PTX's `cvt.rn.f16x2.e4m3x2` (sm_89 on), `llvm.nvvm.e4m3x2.to.f16x2.rn`:
/// the two E4M3 bytes of an `i16`, low byte first, as the f16 values they
/// are (exact). A normal E4M3 `(e, m)` is the f16 with exponent `e + 8` and
/// mantissa `m << 7`, so its magnitude bits shifted left by 7, plus `8 <<
/// 10`; a subnormal `m · 2⁻⁹` is computed in f32, exactly, and its f32 bits
/// rebiased to f16's; the NaN (magnitude `0x7f`) is f16's `0x7fff`, as the
/// instruction gives.
pub(super) const E4M3X2_TO_F16X2: &str = "llvm.nvvm.e4m3x2.to.f16x2.rn";

/// The definition of `name`, replacing [`E4M3X2_TO_F16X2`].
pub(super) fn e4m3x2_to_f16x2(name: &str) -> String {
    format!(
        "define internal <2 x half> @{name}(i16 %p0) {{
  %lo = trunc i16 %p0 to i8
  %up = lshr i16 %p0, 8
  %hi = trunc i16 %up to i8
  %a = call half @{name}.one(i8 %lo)
  %b = call half @{name}.one(i8 %hi)
  %v0 = insertelement <2 x half> poison, half %a, i64 0
  %v1 = insertelement <2 x half> %v0, half %b, i64 1
  ret <2 x half> %v1
}}
define internal half @{name}.one(i8 %x) {{
  %w = zext i8 %x to i16
  %mag = and i16 %w, 127
  %e = lshr i16 %mag, 3
  %m = and i16 %mag, 7
  %shifted = shl i16 %mag, 7
  %normal = add i16 %shifted, 8192
  %m32 = zext i16 %m to i32
  %mf = uitofp i32 %m32 to float
  %sf = fmul float %mf, 0x3F60000000000000
  %sb = bitcast float %sf to i32
  %sb13 = lshr i32 %sb, 13
  %rebiased = sub i32 %sb13, 114688
  %sub16 = trunc i32 %rebiased to i16
  %zero = icmp eq i16 %m, 0
  %sub = select i1 %zero, i16 0, i16 %sub16
  %is_sub = icmp eq i16 %e, 0
  %finite = select i1 %is_sub, i16 %sub, i16 %normal
  %nan = icmp eq i16 %mag, 127
  %abs = select i1 %nan, i16 32767, i16 %finite
  %sign = and i16 %w, 128
  %sign16 = shl i16 %sign, 8
  %bits = or i16 %sign16, %abs
  %h = bitcast i16 %bits to half
  ret half %h
}}
"
    )
}
