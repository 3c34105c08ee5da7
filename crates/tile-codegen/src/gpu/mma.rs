//! Tensor-core steps: `mma` of the thread-level program as LLVM 22's NVPTX
//! intrinsics (their names: `MMA_SIGNATURE` in LLVM 22's `IntrinsicsNVVM.td`;
//! the operand fragments: the PTX ISA's "Warp Level Matrix Multiply-Accumulate
//! Instructions", `mma.m16n8k16` and `ldmatrix`; AMD's WMMA and MFMA, in
//! `amd_matrix`: `IntrinsicsAMDGPU.td`, the CDNA3 and RDNA3 ISA reference
//! guides and AMD's Matrix Instruction Calculator):
//!
//! * f16: `llvm.nvvm.mma.m16n8k16.row.col.f32.f32` on `<2 x half>` pairs
//!   (the `.f32.f16` intrinsic is another instruction: C in f16);
//! * bf16: `llvm.nvvm.mma.m16n8k16.row.col.bf16` on `i32` pairs;
//! * tf32: `llvm.nvvm.mma.m16n8k8.row.col.tf32` on the `i32` bits of each
//!   `f32` operand (rounded to TF32 by the program before);
//! * e4m3 and e5m2: `llvm.nvvm.mma.m16n8k32.row.col.f32.<t>.<t>.f32` on
//!   `i32` quadruples, which needs PTX 8.4 (`build` asks for it when a
//!   program has one);
//! * their block-scaled forms (sm_120a), and those of FP6 (`e2m3`,
//!   `e3m2`) and FP4 (`e2m1`) one value a byte:
//!   `llvm.nvvm.mma.block.scale.m16n8k32.row.col.mxf8f6f4.scale.1x.f32.<t>.<t>.f32.ue8m0`,
//!   whose fragments are followed by the A scale register, its byte and
//!   thread selectors (`i16` 0 and 0), and the B scale's three likewise;
//!   each FP4 byte moves to bits 5..2 and each FP6 byte keeps bits 5..0
//!   (`tile_hw::mma::MmaKind::container`).
//!
//! Two 16-bit elements (four 8-bit ones) pack into one 32-bit register, the
//! lower-numbered in the low half (byte). `ldmatrix` is `llvm.nvvm.ldmatrix.sync.aligned.m8n8.x<n>
//! {.trans}.b16`, overloaded on the shared pointer (`.p3`), returning `n`
//! such registers (of `f32` elements: one each). The intrinsics are not `convergent`: the program keeps
//! every `mma` and `ldmatrix` in block-uniform control flow, so all 32 lanes
//! issue it.

use super::{GpuEmitter, GpuTarget};
use crate::{EmitError, Gfx, Sm};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};
use tile_hw::mma::{Fragment, MmaFamily};
use tile_thread::program::{LdMatrix, MmaKind};

impl<'ctx> GpuEmitter<'_, 'ctx> {
    /// `D = A·B + C` for one warp: `x` holds this lane's A, B and C fragment
    /// elements in order (16-bit bits, then `f32`), the result its D.
    pub(super) fn mma(
        &self,
        kind: MmaKind,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        if kind.family() != MmaFamily::MmaSync {
            return self.amd_matrix(kind, x);
        }
        self.require_nvptx(&format!("mma.{}", kind.name()))?;
        if kind.is_block_scaled() && self.gpu != GpuTarget::Nvptx(Sm::Sm120a) {
            return Err(EmitError::Unsupported {
                what: format!("`mma.{}` off sm_120a", kind.name()),
            });
        }
        let (na, nb) = (kind.elements(Fragment::A), kind.elements(Fragment::B));
        let ns = 2 * usize::from(kind.is_block_scaled());
        let (a, rest) = x.split_at(na.min(x.len()));
        let (b, rest) = rest.split_at(nb.min(rest.len()));
        let (c, scales) = rest.split_at(4.min(rest.len()));
        if a.len() != na || b.len() != nb || c.len() != 4 || scales.len() != ns {
            return Err(EmitError::Internal(format!(
                "`mma.{}` takes {na} + {nb} + 4 + {ns} operands",
                kind.name()
            )));
        }
        let f32t = self.ctx.f32_type();
        let i32t = self.ctx.i32_type();
        let (name, pair_type): (String, BasicTypeEnum) = match kind {
            MmaKind::F16M16N8K16 => (
                "llvm.nvvm.mma.m16n8k16.row.col.f32.f32".into(),
                self.ctx.f16_type().vec_type(2).into(),
            ),
            MmaKind::Bf16M16N8K16 => ("llvm.nvvm.mma.m16n8k16.row.col.bf16".into(), i32t.into()),
            MmaKind::Tf32M16N8K8 => ("llvm.nvvm.mma.m16n8k8.row.col.tf32".into(), i32t.into()),
            MmaKind::E4m3M16N8K32 | MmaKind::E5m2M16N8K32 => {
                let t = kind.operand_name();
                (
                    format!("llvm.nvvm.mma.m16n8k32.row.col.f32.{t}.{t}.f32"),
                    i32t.into(),
                )
            }
            MmaKind::E4m3Ue8m0M16N8K32
            | MmaKind::E5m2Ue8m0M16N8K32
            | MmaKind::E2m3Ue8m0M16N8K32
            | MmaKind::E3m2Ue8m0M16N8K32
            | MmaKind::E2m1Ue8m0M16N8K32 => {
                let t = kind.operand_name();
                let form = "m16n8k32.row.col.mxf8f6f4.scale.1x";
                (
                    format!("llvm.nvvm.mma.block.scale.{form}.f32.{t}.{t}.f32.ue8m0"),
                    i32t.into(),
                )
            }
            _ => {
                return Err(EmitError::internal(
                    "an AMD matrix instruction is not mma.sync",
                ))
            }
        };
        let mut values: Vec<BasicValueEnum> = Vec::with_capacity(10);
        for register in a
            .chunks(kind.per_register())
            .chain(b.chunks(kind.per_register()))
        {
            let word = match register {
                [_, _, _, _] => self.contained(kind, self.pack_bytes(register)?)?.into(),
                [lo, hi] => self.pack(lo.into_int_value(), hi.into_int_value())?.into(),
                [element] => *element,
                _ => return Err(EmitError::internal("an mma register of 1, 2 or 4 elements")),
            };
            values.push(self.b.build_bit_cast(word, pair_type, "reg")?);
        }
        values.extend(c);
        // Each scale register (its low byte the scale), then its byte and
        // thread selectors, 0 (`tile_hw::mma`, "Block scales").
        for &scale in scales {
            let word = self
                .b
                .build_int_z_extend(scale.into_int_value(), i32t, "scale")?;
            let zero = self.ctx.i16_type().const_zero();
            values.extend::<[BasicValueEnum; 3]>([word.into(), zero.into(), zero.into()]);
        }
        let f = self.module.get_function(&name).unwrap_or_else(|| {
            let params: Vec<_> = values.iter().map(|v| v.get_type().into()).collect();
            let ret = self.ctx.struct_type(&[f32t.into(); 4], false);
            self.module
                .add_function(&name, ret.fn_type(&params, false), None)
        });
        let args: Vec<BasicMetadataValueEnum> = values.iter().map(|&v| v.into()).collect();
        let d = self
            .b
            .build_call(f, &args, "mma")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("mma returned nothing"))?
            .into_struct_value();
        (0..4)
            .map(|i| Ok(self.b.build_extract_value(d, i, "d")?))
            .collect()
    }

    /// A register of four operand bytes as `kind` takes them: each value
    /// moved into its container ([`MmaKind::container`]: FP4 in bits 5..2,
    /// FP6 in bits 5..0 of its byte), any other register as it is.
    fn contained(&self, kind: MmaKind, word: IntValue<'ctx>) -> Result<IntValue<'ctx>, EmitError> {
        let Some((mask, shift)) = kind.container() else {
            return Ok(word);
        };
        let i32t = self.ctx.i32_type();
        let value = self
            .b
            .build_and(word, i32t.const_int(u64::from(mask), false), "value")?;
        Ok(self
            .b
            .build_left_shift(value, i32t.const_int(u64::from(shift), false), "contained")?)
    }

    /// AMD's `D = A·B + C`: RDNA's WMMA in wave32
    /// (`llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}`, the lane's 16 A and 16
    /// B elements as `<16 x half>` or `<16 x i16>` on RDNA 3, 8 and 8 as
    /// `<8 x half>` or `<8 x i16>` on RDNA 4, its 8 accumulators as
    /// `<8 x float>`) or CDNA's MFMA in wave64
    /// (`llvm.amdgcn.mfma.f32.{32x32x8,16x16x16}{f16,bf16.1k}`, 4 A and 4 B
    /// elements as `<4 x half>` or `<4 x i16>`; CDNA 4's
    /// `llvm.amdgcn.mfma.f32.{32x32x16,16x16x32}.{f16,bf16}`, 8 and 8 as
    /// `<8 x half>` or `<8 x bfloat>`, and `.{fp8.fp8,bf8.bf8}` on OCP FP8
    /// as `i64`; 16 or 4 accumulators, the broadcast controls `cbsz`,
    /// `abid`, `blgp` 0; RDNA 4's FP8 WMMA,
    /// `llvm.amdgcn.wmma.f32.16x16x16.{fp8.fp8,bf8.bf8}`, 8 bytes as
    /// `<2 x i32>`; gfx950's scaled MFMA,
    /// `llvm.amdgcn.mfma.scale.f32.{32x32x64,16x16x128}.f8f6f4`, 32 bytes
    /// each as `<8 x i32>`, the format codes, and each scale zero-extended
    /// to `i32` after its `op_sel` 0).
    fn amd_matrix(
        &self,
        kind: MmaKind,
        x: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        let (family, name) = (kind.family(), kind.name());
        match (family, self.gpu) {
            (MmaFamily::Wmma, GpuTarget::Amdgpu(gfx)) if gfx.is_rdna3() => {}
            (MmaFamily::Wmma12, GpuTarget::Amdgpu(gfx)) if gfx.is_rdna4() => {}
            (MmaFamily::Mfma, GpuTarget::Amdgpu(Gfx::Gfx950)) => {}
            (MmaFamily::Mfma, GpuTarget::Amdgpu(gfx)) if gfx.is_cdna() && !kind.is_cdna4() => {}
            (MmaFamily::Wmma, _) => {
                return Err(EmitError::Unsupported {
                    what: format!("`mma.{name}` outside RDNA3"),
                })
            }
            (MmaFamily::Wmma12, _) => {
                return Err(EmitError::Unsupported {
                    what: format!("`mma.{name}` outside RDNA4 (gfx1200, gfx1201)"),
                })
            }
            (MmaFamily::Mfma, _) if kind.is_cdna4() => {
                return Err(EmitError::Unsupported {
                    what: format!("`mma.{name}` outside CDNA 4 (gfx950)"),
                })
            }
            _ => {
                return Err(EmitError::Unsupported {
                    what: format!("`mma.{name}` outside CDNA (gfx90a, gfx942, gfx950)"),
                })
            }
        }
        let na = kind.elements(Fragment::A);
        let nc = kind.elements(Fragment::C);
        let ns = 2 * usize::from(kind.is_block_scaled());
        if x.len() != 2 * na + nc + ns {
            return Err(EmitError::Internal(format!(
                "`mma.{name}` takes {na} + {na} + {nc} + {ns} operands"
            )));
        }
        let bf16 = kind.operand_dtype() == tile_ir::DType::BF16;
        let fp8 = kind.is_fp8();
        let element: BasicTypeEnum = match (bf16, fp8) {
            (true, _) => self.ctx.i16_type().into(),
            (_, true) => self.ctx.i8_type().into(),
            _ => self.ctx.f16_type().into(),
        };
        let vector = |values: &[BasicValueEnum<'ctx>], ty: BasicTypeEnum<'ctx>| {
            let vty = match ty {
                BasicTypeEnum::FloatType(f) => f.vec_type(values.len() as u32),
                BasicTypeEnum::IntType(i) => i.vec_type(values.len() as u32),
                _ => return Err(EmitError::internal("a vector of another type")),
            };
            let mut v = vty.get_undef();
            for (i, &value) in values.iter().enumerate() {
                let value = self.b.build_bit_cast(value, ty, "e")?;
                let at = self.ctx.i32_type().const_int(i as u64, false);
                v = self.b.build_insert_element(v, value, at, "v")?;
            }
            Ok(v)
        };
        // CDNA 4's bf16 forms take `bfloat` vectors, the older ones `i16`:
        // the `i16` vector's bits as a whole (inserting `bfloat` elements
        // one by one would convert them through `f32` where `bfloat` is
        // not a native type, as on the emulation target's host). FP8 bytes
        // go as `<2 x i32>` (WMMA) or one `i64` (MFMA).
        let operand = |values: &[BasicValueEnum<'ctx>]| -> Result<BasicValueEnum<'ctx>, EmitError> {
            let v = vector(values, element)?;
            let as_type: Option<BasicTypeEnum> = match (family, bf16, fp8) {
                (MmaFamily::Mfma, true, _) if kind.is_cdna4() => {
                    Some(self.ctx.bf16_type().vec_type(values.len() as u32).into())
                }
                (MmaFamily::Mfma, _, true) if kind.is_block_scaled() => {
                    Some(self.ctx.i32_type().vec_type(8).into())
                }
                (MmaFamily::Mfma, _, true) => Some(self.ctx.i64_type().into()),
                (_, _, true) => Some(self.ctx.i32_type().vec_type(2).into()),
                _ => None,
            };
            match as_type {
                Some(ty) => Ok(self.b.build_bit_cast(v, ty, "operand")?),
                None => Ok(v.into()),
            }
        };
        let a = operand(&x[..na])?;
        let b = operand(&x[na..2 * na])?;
        let c = vector(&x[2 * na..2 * na + nc], self.ctx.f32_type().into())?;
        let mut args: Vec<BasicMetadataValueEnum> = vec![a.into(), b.into(), c.into()];
        // AMD's names of the OCP FP8 formats.
        let fp8_name = match kind.operand_dtype() {
            tile_ir::DType::F8E5M2 => "bf8.bf8",
            _ => "fp8.fp8",
        };
        let f = if matches!(family, MmaFamily::Wmma | MmaFamily::Wmma12) {
            let operands = match (bf16, fp8) {
                (true, _) => "bf16",
                (_, true) => fp8_name,
                _ => "f16",
            };
            let name = format!("llvm.amdgcn.wmma.f32.16x16x16.{operands}");
            self.intrinsic(&name, &[c.get_type().into(), a.get_type()])?
        } else if kind.is_block_scaled() {
            // The format codes (0 E4M3, 1 E5M2) as `cbsz` and `blgp`, each
            // scale's `op_sel` 0 (its register's low byte).
            let (m, n, k) = kind.shape();
            let i32t = self.ctx.i32_type();
            let format = u64::from(kind.operand_dtype() == tile_ir::DType::F8E5M2);
            let (zero, format) = (i32t.const_zero(), i32t.const_int(format, false));
            let scale = |at: usize| {
                self.b
                    .build_int_z_extend(x[at].into_int_value(), i32t, "scale")
            };
            let (sa, sb) = (scale(2 * na + nc)?, scale(2 * na + nc + 1)?);
            args.extend::<[BasicMetadataValueEnum; 6]>([
                format.into(),
                format.into(),
                zero.into(),
                sa.into(),
                zero.into(),
                sb.into(),
            ]);
            let name = format!("llvm.amdgcn.mfma.scale.f32.{m}x{n}x{k}.f8f6f4");
            self.intrinsic(&name, &[a.get_type(), b.get_type()])?
        } else {
            let (m, n, k) = kind.shape();
            let operands = match (bf16, fp8, kind.is_cdna4()) {
                (_, true, _) => format!(".{fp8_name}"),
                (true, _, true) => ".bf16".into(),
                (false, _, true) => ".f16".into(),
                (true, _, false) => "bf16.1k".into(),
                (false, _, false) => "f16".into(),
            };
            let name = format!("llvm.amdgcn.mfma.f32.{m}x{n}x{k}{operands}");
            let zero: BasicMetadataValueEnum = self.ctx.i32_type().const_zero().into();
            args.extend([zero; 3]);
            self.intrinsic(&name, &[])?
        };
        let d = self
            .b
            .build_call(f, &args, "amd_mma")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("a matrix instruction returned nothing"))?
            .into_vector_value();
        (0..nc as u64)
            .map(|i| {
                let at = self.ctx.i32_type().const_int(i, false);
                Ok(self.b.build_extract_element(d, at, "d")?)
            })
            .collect()
    }

    /// The lane's `2·count` elements of `ldmatrix` of `shape` (of `f32`
    /// elements: `count`; of 8-bit ones: `4·count`), its row at `at` in
    /// shared memory.
    pub(super) fn ldmatrix(
        &self,
        shape: LdMatrix,
        at: PointerValue<'ctx>,
        dtype: tile_ir::DType,
    ) -> Result<Vec<BasicValueEnum<'ctx>>, EmitError> {
        self.require_nvptx("ldmatrix")?;
        let name = format!(
            "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{}{}.b16",
            shape.count,
            if shape.trans { ".trans" } else { "" }
        );
        let f = self.intrinsic(&name, &[at.get_type().into()])?;
        let call = self
            .b
            .build_call(f, &[at.into()], "ldmatrix")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError::internal("ldmatrix returned nothing"))?;
        let words: Vec<IntValue> = if shape.count == 1 {
            vec![call.into_int_value()]
        } else {
            (0..u32::from(shape.count))
                .map(|j| {
                    Ok(self
                        .b
                        .build_extract_value(call.into_struct_value(), j, "reg")?
                        .into_int_value())
                })
                .collect::<Result<_, EmitError>>()?
        };
        if dtype.size_bytes() == 4 {
            let f32t = self.ctx.f32_type();
            return words
                .into_iter()
                .map(|word| Ok(self.b.build_bit_cast(word, f32t, "element")?))
                .collect();
        }
        // Two 16-bit elements or four 8-bit ones per word, low first.
        let bits = 8 * dtype.size_bytes() as u32;
        let element = self.int_type(bits);
        let mut out = Vec::with_capacity(words.len() * (32 / bits) as usize);
        for word in words {
            for j in 0..32 / bits {
                let shifted = self.b.build_right_shift(
                    word,
                    word.get_type().const_int(u64::from(j * bits), false),
                    false,
                    "part",
                )?;
                out.push(
                    self.b
                        .build_int_truncate(shifted, element, "element")?
                        .into(),
                );
            }
        }
        Ok(out)
    }

    /// The four 8-bit registers `bytes` as one `i32`, the first in the low
    /// byte.
    fn pack_bytes(&self, bytes: &[BasicValueEnum<'ctx>]) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        if bytes.len() != 4 {
            return Err(EmitError::internal(
                "an FP8 mma register of other than 4 bytes",
            ));
        }
        let mut word = i32t.const_zero();
        for (j, byte) in bytes.iter().enumerate() {
            let byte = self
                .b
                .build_int_z_extend(byte.into_int_value(), i32t, "byte")?;
            let shifted =
                self.b
                    .build_left_shift(byte, i32t.const_int(8 * j as u64, false), "byte")?;
            word = self.b.build_or(word, shifted, "word")?;
        }
        Ok(word)
    }

    /// `lo | hi << 16` of two 16-bit registers, as an `i32`.
    pub(super) fn pack(
        &self,
        lo: IntValue<'ctx>,
        hi: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, EmitError> {
        let i32t = self.ctx.i32_type();
        let lo = self.b.build_int_z_extend(lo, i32t, "lo")?;
        let hi = self.b.build_int_z_extend(hi, i32t, "hi")?;
        let hi = self
            .b
            .build_left_shift(hi, i32t.const_int(16, false), "hi")?;
        Ok(self.b.build_or(lo, hi, "pair")?)
    }
}
