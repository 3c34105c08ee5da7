//! FP8 widened to f32: every E4M3 and E5M2 pattern (zeros, subnormals,
//! infinities, NaNs) cast to f32 equals the interpreter's bits on every
//! emulation target. sm_90 and later widen E4M3 with `cvt.rn.f16x2.e4m3x2`
//! (`Target::converts_e4m3`), whose emulation defines it in LLVM IR, and
//! every target that converts f16 widens E5M2 as the upper byte of an f16;
//! sm_80 and sm_89 decode E4M3's fields in integer arithmetic. The PTX of
//! every NVIDIA target `ptxas` assembles.

mod emulated;

use emulated::{image, launch, TARGETS};
use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};
use tile_thread::lower::{lower, LowerOptions};

/// `out = cast(x) · 2` in f32: the product keeps the widened NaN observed
/// (canonical), and the multiplication tests the value, not only its bits.
fn kernel(dtype: &str) -> Function {
    let text = format!(
        r#"kernel @widen(%x: tensor<{dtype}, 2>, %out: tensor<f32, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [1, 256] : view<{dtype}, [1, 256]>
  %a = load %vx[%pid, %zero] : tile<1x256x{dtype}>
  %w = cast %a to f32 : tile<1x256xf32>
  %two = full 2.0 : tile<1x256xf32>
  %r = mul %w, %two : tile<1x256xf32>
  %vo = partition_view %out [1, 256] : view<f32, [1, 256]>
  store %r, %vo[%pid, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Every 8-bit pattern of `dtype`, and the output.
fn args(dtype: DType) -> Vec<Arg> {
    let bits: Vec<Scalar> = (0..256u64).map(|b| Scalar::from_bits(dtype, b)).collect();
    vec![
        Arg::Tensor(HostTensor::from_scalars(dtype, &[1, 256], &bits).unwrap()),
        Arg::Tensor(HostTensor::zeros(DType::F32, &[1, 256])),
    ]
}

fn out_bits(args: &[Arg]) -> Vec<u64> {
    match &args[1] {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
        _ => unreachable!("`out` is a tensor"),
    }
}

#[test]
fn every_fp8_pattern_widens_as_the_interpreter() {
    let converting = [Target::Nvptx(Sm::Sm90), Target::Nvptx(Sm::Sm90a)];
    for (dtype, name) in [(DType::F8E4M3, "f8e4m3"), (DType::F8E5M2, "f8e5m2")] {
        let func = kernel(name);
        let mut want = args(dtype);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        for target in TARGETS.into_iter().chain(converting) {
            let module = emulated::module(&func, target, 4, &CodegenOptions::default()).unwrap();
            let cvt = module
                .llvm_ir_opt
                .contains("@llvm.nvvm.e4m3x2.to.f16x2.rn(");
            let hardware = dtype == DType::F8E4M3 && target.converts_e4m3();
            assert_eq!(cvt, hardware, "{name} on {target}");
            let kernel = image(&module).unwrap_or_else(|e| panic!("{target}: {e}"));
            let mut got = args(dtype);
            launch(&kernel, [1, 1, 1], 4, &mut got).unwrap_or_else(|e| panic!("{target}: {e}"));
            let (got, want) = (out_bits(&got), out_bits(&want));
            let wrong: Vec<usize> = (0..256).filter(|&i| got[i] != want[i]).collect();
            assert!(
                wrong.is_empty(),
                "{name} on {target}: patterns {wrong:?} differ"
            );
        }
    }
}

/// The instruction in the PTX where the target has it, and PTX that
/// `ptxas` assembles (LLVM selects it for sm_89 only from PTX 8.1, so sm_89
/// keeps the integer decode at its PTX 7.8).
#[test]
fn e4m3_widens_in_one_instruction_from_sm_90() {
    if let Err(e) = Tool::Ptxas.find() {
        panic!("{e}\n(this test needs ptxas: run scripts/setup.sh first)");
    }
    let func = kernel("f8e4m3");
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    for sm in [
        Sm::Sm80,
        Sm::Sm89,
        Sm::Sm90,
        Sm::Sm90a,
        Sm::Sm100a,
        Sm::Sm120a,
    ] {
        let target = Target::Nvptx(sm);
        let ptx = emit(&program, target, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{sm}: {e}"))
            .assembly;
        let cvt = ptx.matches("cvt.rn.f16x2.e4m3x2").count();
        assert_eq!(cvt > 0, target.converts_e4m3(), "{sm}: {cvt}");
        assert_eq!(target.converts_e4m3(), sm.number() >= 90, "{sm}");
        tools::ptxas_resource_usage(&ptx, sm).unwrap_or_else(|e| panic!("{sm}: {e}"));
    }
}
