//! The GPUs' own approximations (`#[tile_kernel(approx_math)]`): exp,
//! exp2, log, log2 and rsqrt of f32 (and of f16, bf16 and FP8 through f32)
//! and f32 division each in one hardware instruction, as Triton's `tl.exp`
//! and CUDA's `--use_fast_math` compile them, in place of the fast f32
//! library's polynomials (`fast_math.rs`), which the other functions keep.
//!
//! NVIDIA (PTX ISA, "Floating-point instructions"): `ex2.approx.f32`
//! (`exp(x)` as `ex2(x · log₂e)`), `lg2.approx.f32` (`log(x)` as `lg2(x) ·
//! ln 2`), `rsqrt.approx.f32`, `div.approx.f32`; AMD (the CDNA3 and RDNA3
//! ISA guides): `v_exp_f32`, `v_log_f32`, `v_rsq_f32`, and `x · v_rcp_f32(y)`
//! for division. The bounds are the vendors' (docs/backends.md,
//! "Approximate math"); the result can differ between devices, and from
//! the CPU device's, which computes the fast library.
//!
//! `tanh` is built from them as CUDA's own `tanhf` is shaped: an odd
//! polynomial near zero, `1 − 2/(e^{2|x|} + 1)` on the hardware's exp2 and
//! division beyond ([`ScalarEmitter::approx_tanh`]).

use super::ScalarEmitter;
use crate::{EmitError, Target};
use inkwell::values::{BasicMetadataValueEnum, FloatValue};
use inkwell::FloatPredicate;
use tile_ir::UnaryOp;

/// Whose instructions approximate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hardware {
    /// PTX's `.approx` instructions.
    Nvptx,
    /// AMDGPU's transcendental unit.
    Amdgpu,
}

impl Hardware {
    /// The approximations `target` has, if it is a GPU.
    pub(crate) fn of(target: Target) -> Option<Hardware> {
        match target {
            Target::Nvptx(_) => Some(Hardware::Nvptx),
            Target::Amdgpu(_) => Some(Hardware::Amdgpu),
            Target::Host(_) => None,
        }
    }
}

/// log₂e and ln 2 rounded to f32.
const LOG2_E: f32 = std::f32::consts::LOG2_E;
const LN_2: f32 = std::f32::consts::LN_2;

/// Below this magnitude [`ScalarEmitter::approx_tanh`] takes its polynomial.
const TANH_POLYNOMIAL_LIMIT: f32 = 0.625;

/// `tanh(a) ≈ a + a·z·P(z)` with `z = a²` on `[0, 0.625]`: `P`'s
/// coefficients from `z⁰` up, a least-squares fit of the relative error
/// reweighted toward its maximum (about 4·10⁻⁹ in exact arithmetic; under
/// one f32 ulp evaluated in f32 with fused multiply-adds).
const TANH_POLYNOMIAL: [f64; 5] = [
    -0.333_332_806_825_637_8,
    0.133_314_415_812_492_37,
    -0.053_739_707_916_975_02,
    0.020_639_063_790_440_56,
    -0.005_704_963_579_773_903,
];

impl<'ctx> ScalarEmitter<'_, 'ctx> {
    /// Whether `op` has a hardware approximation.
    pub(crate) fn has_hardware_variant(op: UnaryOp) -> bool {
        matches!(
            op,
            UnaryOp::Exp | UnaryOp::Exp2 | UnaryOp::Log | UnaryOp::Log2 | UnaryOp::Rsqrt
        )
    }

    /// `op` of the f32 `x` on `hw`'s instruction.
    pub(crate) fn hardware_transcendental(
        &self,
        hw: Hardware,
        op: UnaryOp,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let scaled =
            |v: FloatValue<'ctx>, by: f32| b.build_float_mul(v, self.f32_const(by), "scaled");
        Ok(match op {
            UnaryOp::Exp => self.approx(hw, "exp2", &[scaled(x, LOG2_E)?])?,
            UnaryOp::Exp2 => self.approx(hw, "exp2", &[x])?,
            UnaryOp::Log => scaled(self.approx(hw, "log2", &[x])?, LN_2)?,
            UnaryOp::Log2 => self.approx(hw, "log2", &[x])?,
            UnaryOp::Rsqrt => self.approx(hw, "rsqrt", &[x])?,
            _ => return Err(EmitError::internal("no hardware approximation of this op")),
        })
    }

    /// `x / y` of f32 on `hw`'s instruction.
    pub(crate) fn hardware_div(
        &self,
        hw: Hardware,
        x: FloatValue<'ctx>,
        y: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        match hw {
            Hardware::Nvptx => self.approx(hw, "div", &[x, y]),
            Hardware::Amdgpu => {
                let reciprocal = self.approx(hw, "rcp", &[y])?;
                Ok(self.b.build_float_mul(x, reciprocal, "quot")?)
            }
        }
    }

    /// `tanh` of the f32 `x` on `hw`'s instructions: `a + a·z·P(z)` (`a =
    /// |x|`, `z = a²`, [`TANH_POLYNOMIAL`]) below
    /// [`TANH_POLYNOMIAL_LIMIT`], where its IEEE operations give the same
    /// bits on every device; `1 − 2/(2^(a·2·log₂e) + 1)` on the hardware's
    /// exp2 and division above (1 once the exponential overflows, since the
    /// hardware's quotient of an infinite divisor is 0); the sign of `x`.
    /// Some fifteen instructions where the fast library's takes three times
    /// as many, and no branch.
    pub(crate) fn approx_tanh(
        &self,
        hw: Hardware,
        x: FloatValue<'ctx>,
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let b = &self.b;
        let a = self.float_intrinsic("llvm.fabs", &[x])?;
        let z = b.build_float_mul(a, a, "z")?;
        let az = b.build_float_mul(a, z, "az")?;
        let small = self.fma3(az, self.poly(z, &TANH_POLYNOMIAL)?, a)?;
        let u = b.build_float_mul(a, self.f32_const(2.0 * LOG2_E), "u")?;
        let e = self.approx(hw, "exp2", &[u])?;
        let e1 = b.build_float_add(e, self.f32_const(1.0), "e1")?;
        let q = self.hardware_div(hw, self.f32_const(2.0), e1)?;
        let large = b.build_float_sub(self.f32_const(1.0), q, "large")?;
        let below = self.fcmp(
            FloatPredicate::OLT,
            a,
            self.f32_const(TANH_POLYNOMIAL_LIMIT),
        )?;
        let t = self.select_f(below, small, large)?;
        let t = self.float_intrinsic("llvm.copysign", &[t, x])?;
        let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.select_f(nan, x, t)
    }

    /// A call of `hw`'s instruction for `function` on f32 operands.
    fn approx(
        &self,
        hw: Hardware,
        function: &str,
        args: &[FloatValue<'ctx>],
    ) -> Result<FloatValue<'ctx>, EmitError> {
        let name = match (hw, function) {
            (Hardware::Nvptx, "exp2") => "llvm.nvvm.ex2.approx",
            (Hardware::Nvptx, "log2") => "llvm.nvvm.lg2.approx.f",
            (Hardware::Nvptx, "rsqrt") => "llvm.nvvm.rsqrt.approx.f",
            (Hardware::Nvptx, "div") => "llvm.nvvm.div.approx.f",
            (Hardware::Amdgpu, "exp2") => "llvm.amdgcn.exp2",
            (Hardware::Amdgpu, "log2") => "llvm.amdgcn.log",
            (Hardware::Amdgpu, "rsqrt") => "llvm.amdgcn.rsq",
            (Hardware::Amdgpu, "rcp") => "llvm.amdgcn.rcp",
            _ => {
                return Err(EmitError::Internal(format!(
                    "no {function} instruction on {hw:?}"
                )))
            }
        };
        // NVVM's `ex2.approx` and AMDGPU's are overloaded on the float
        // type; NVVM's others are defined on f32 alone.
        let overloads = match (hw, function) {
            (Hardware::Nvptx, "exp2") | (Hardware::Amdgpu, _) => vec![self.ctx.f32_type().into()],
            (Hardware::Nvptx, _) => vec![],
        };
        let f = self.intrinsic(name, &overloads)?;
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        let call = self.b.build_call(f, &args, function)?;
        call.try_as_basic_value()
            .basic()
            .map(|v| v.into_float_value())
            .ok_or_else(|| EmitError::Internal(format!("{name} returned nothing")))
    }

    /// The f32 constant `v`.
    fn f32_const(&self, v: f32) -> FloatValue<'ctx> {
        self.ctx.f32_type().const_float(f64::from(v))
    }
}
