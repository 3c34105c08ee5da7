//! f16 and bf16 sums and products in their own types on the targets that
//! have the instructions (sm_80 on: `Target::adds_16_bit_floats`): a
//! product and a sum whose NaNs no use observes are `half`/`bfloat`
//! arithmetic in the module (packed `fma.rn.bf16x2`, `add.rn.f16x2` in
//! the PTX), one rounding each, so every result equals the interpreter's
//! bit for bit, over every 16-bit pattern (subnormals, infinities, NaNs)
//! on the emulation targets, whose host code rounds `bfloat` with the
//! rounding the emulation defines (`__truncsfbf2`).

mod emulated;

use emulated::{image, launch, TARGETS};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, DType, Function, Scalar};

/// Elements each program maps.
const BLOCK: usize = 1024;

/// `out = (x · y + z) − x` in `dtype`, the product and the sum unobserved.
fn kernel(dtype: &str) -> Function {
    let t = format!("tile<1x{BLOCK}x{dtype}>");
    let view = format!("view<{dtype}, [1, {BLOCK}]>");
    let text = format!(
        r#"kernel @fused(%x: tensor<{dtype}, 2>, %y: tensor<{dtype}, 2>, %z: tensor<{dtype}, 2>, %out: tensor<{dtype}, 2>) {{
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %vx = partition_view %x [1, {BLOCK}] : {view}
  %vy = partition_view %y [1, {BLOCK}] : {view}
  %vz = partition_view %z [1, {BLOCK}] : {view}
  %a = load %vx[%pid, %zero] : {t}
  %b = load %vy[%pid, %zero] : {t}
  %c = load %vz[%pid, %zero] : {t}
  %p = mul %a, %b : {t}
  %s = add %p, %c : {t}
  %r = sub %s, %a : {t}
  %vo = partition_view %out [1, {BLOCK}] : {view}
  store %r, %vo[%pid, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Every 16-bit pattern as `x`, with `y` and `z` other patterns paired to
/// it by odd multipliers (so every value meets many partners).
fn args(dtype: DType) -> Vec<Arg> {
    let n = 1usize << 16;
    let tensor = |mul: u32, add: u32| {
        let bits: Vec<Scalar> = (0..n as u32)
            .map(|i| {
                Scalar::from_bits(
                    dtype,
                    u64::from(i.wrapping_mul(mul).wrapping_add(add) & 0xffff),
                )
            })
            .collect();
        Arg::Tensor(HostTensor::from_scalars(dtype, &[n / BLOCK, BLOCK], &bits).unwrap())
    };
    vec![
        tensor(1, 0),
        tensor(40_503, 7),
        tensor(2_654_435_761, 12_345),
        Arg::Tensor(HostTensor::zeros(dtype, &[n / BLOCK, BLOCK])),
    ]
}

fn out_bits(args: &[Arg]) -> Vec<u64> {
    match &args[3] {
        Arg::Tensor(t) => t.to_scalars().iter().map(|s| s.to_bits()).collect(),
        _ => unreachable!("`out` is a tensor"),
    }
}

#[test]
fn sums_and_products_in_their_own_type_round_as_the_interpreter() {
    for (dtype, name, ty) in [(DType::BF16, "bf16", "bfloat"), (DType::F16, "f16", "half")] {
        let func = kernel(name);
        let mut want = args(dtype);
        let grid = [(1 << 16) / BLOCK as u32, 1, 1];
        interp::run(&func, grid, &mut want).unwrap();
        let sm80 = Target::Nvptx(Sm::Sm80);
        assert!(sm80.adds_16_bit_floats(dtype));
        let module = emulated::module(&func, sm80, 4, &CodegenOptions::default()).unwrap();
        let on_type = |op: &str| {
            module
                .llvm_ir_opt
                .lines()
                .any(|l| l.contains(&format!("= {op} ")) && l.contains(ty))
        };
        assert!(
            on_type("fmul") && on_type("fadd"),
            "{name}\n{}",
            module.llvm_ir_opt
        );
        // The observed difference is computed in f32 and rounded once.
        assert!(!on_type("fsub"), "{name}");
        for target in TARGETS {
            let module = emulated::module(&func, target, 4, &CodegenOptions::default()).unwrap();
            let kernel = image(&module).unwrap_or_else(|e| panic!("{target}: {e}"));
            let mut got = args(dtype);
            launch(&kernel, grid, 4, &mut got).unwrap_or_else(|e| panic!("{target}: {e}"));
            let (got, want) = (out_bits(&got), out_bits(&want));
            let wrong = got.iter().zip(&want).filter(|(g, w)| g != w).count();
            assert_eq!(wrong, 0, "{name} on {target}: {wrong} results differ");
        }
    }
}
