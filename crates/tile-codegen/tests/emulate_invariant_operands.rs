//! A `dot` in a loop whose `a` is computed before it (attention's `q` for
//! every block of keys): staged once, before the loop — on `mma.sync` its
//! fragments read into registers there, on `wgmma` the staging kept —
//! so the loop stores nothing computed outside it; likewise a `b` computed
//! before the loop, or its transpose (the keys a block of attention's
//! backward pass keeps), on NVIDIA's instructions, while AMD's stage it
//! per use. The results are the interpreter's on the lockstep emulator and
//! the emulation targets (small integers: every order of the sums is
//! exact).

mod emulated;

use std::collections::HashSet;
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::{Program, Reg, Region, ThreadOpKind};

/// `acc += (2·q) · k[:, 64j..64j+64]` for `j < 3`: `q: [64, 64]` computed
/// before the loop (`invariant`) or inside it.
fn kernel(invariant: bool) -> Function {
    let q = "  %qt = load %vq[%zero, %zero] : tile<64x64xf16>
  %two = full 2.0 : tile<64x64xf16>
  %q2 = mul %qt, %two : tile<64x64xf16>\n";
    let (before, inside) = if invariant { (q, "") } else { ("", q) };
    let text = format!(
        r#"kernel @invariant(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %o: tensor<f32, 2>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %vq = partition_view %q [64, 64] : view<f16, [64, 64]>
  %vk = partition_view %k [64, 64] : view<f16, [64, 64]>
  %n = dim %k axis 1 : i32
  %bn = constant 64 : i32
  %blocks = div %n, %bn : i32
  %init = full 0.0 : tile<64x64xf32>
{before}  %acc = for %j = %zero to %blocks step %one iter(%a = %init) : tile<64x64xf32> {{
{inside}    %kt = load %vk[%zero, %j] : tile<64x64xf16>
    %next = dot tensor %q2, %kt, %a : tile<64x64xf32>
    yield %next
  }}
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  store %acc, %vo[%zero, %zero]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// `acc = f16(k_j · (2·r)ᵀ) · (2·r) + acc` for `j < 3`, `k_j` the `j`-th
/// `[64, 64]` block of `k` and `r: [128, 64]` computed before the loop: a
/// `b` transposed and as it is (attention's backward pass reads its keys
/// so, in `q·kᵀ` and `ds·k`).
fn kernel_b() -> Function {
    let text = r#"kernel @invariant_b(%r: tensor<f16, 2>, %k: tensor<f16, 2>, %o: tensor<f32, 2>) {
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %vr = partition_view %r [128, 64] : view<f16, [128, 64]>
  %vk = partition_view %k [64, 64] : view<f16, [64, 64]>
  %n = dim %k axis 1 : i32
  %bn = constant 64 : i32
  %blocks = div %n, %bn : i32
  %init = full 0.0 : tile<64x64xf32>
  %s0 = full 0.0 : tile<64x128xf32>
  %rt = load %vr[%zero, %zero] : tile<128x64xf16>
  %two = full 2.0 : tile<128x64xf16>
  %r2 = mul %rt, %two : tile<128x64xf16>
  %acc = for %j = %zero to %blocks step %one iter(%a = %init) : tile<64x64xf32> {
    %kj = load %vk[%zero, %j] : tile<64x64xf16>
    %t = permute %r2 [1, 0] : tile<64x128xf16>
    %s = dot tensor %kj, %t, %s0 : tile<64x128xf32>
    %h = cast %s to f16 : tile<64x128xf16>
    %next = dot tensor %h, %r2, %a : tile<64x64xf32>
    yield %next
  }
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  store %acc, %vo[%zero, %zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// The arguments of [`kernel_b`].
fn args_b() -> Vec<Arg> {
    vec![
        emulated::small_f16s(&[128, 64], 1),
        emulated::small_f16s(&[64, 192], 2),
        Arg::Tensor(HostTensor::from_vec(&[64, 64], vec![0f32; 64 * 64]).unwrap()),
    ]
}

fn args() -> Vec<Arg> {
    vec![
        emulated::small_f16s(&[64, 64], 1),
        emulated::small_f16s(&[64, 192], 2),
        Arg::Tensor(HostTensor::from_vec(&[64, 64], vec![0f32; 64 * 64]).unwrap()),
    ]
}

/// The shared-memory stores in the body of the program's loop of values
/// computed before it.
fn stores_from_outside(program: &Program) -> usize {
    let Some(body) = program
        .body
        .ops
        .iter()
        .find(|&&id| matches!(program.ops[id].kind, ThreadOpKind::For))
        .map(|&id| &program.ops[id].regions[0])
    else {
        panic!("no loop:\n{program}");
    };
    let mut inside = HashSet::new();
    let mut stores = Vec::new();
    collect(program, body, &mut inside, &mut stores);
    stores.iter().filter(|r| !inside.contains(r)).count()
}

/// The registers `region` defines (nested ones too), and the values its
/// shared-memory stores write.
fn collect(program: &Program, region: &Region, inside: &mut HashSet<Reg>, stores: &mut Vec<Reg>) {
    inside.extend(&region.args);
    for &id in &region.ops {
        let op = &program.ops[id];
        inside.extend(&op.results);
        if let (ThreadOpKind::StoreShared { .. }, [_, value, _]) =
            (&op.kind, op.operands.as_slice())
        {
            stores.push(*value);
        }
        for nested in &op.regions {
            collect(program, nested, inside, stores);
        }
    }
}

/// `program`, lowered from `func` for `target` with `options`, on the
/// lockstep emulator and on the target's emulation: the results `want`.
fn runs_as_interpreted(
    func: &Function,
    (program, target, options): (&Program, Target, &LowerOptions),
    args: fn() -> Vec<Arg>,
    want: &[Arg],
) {
    let mut got = args();
    emulate::run(program, [1, 1, 1], &mut got).unwrap();
    assert_eq!(
        emulated::bytes(&got, 2),
        emulated::bytes(want, 2),
        "{target}"
    );
    let module = emulated::lowered_module(func, target, options, &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let image = emulated::image(&module).unwrap_or_else(|e| panic!("{target}: {e}"));
    let mut got = args();
    emulated::launch(&image, [1, 1, 1], 4, &mut got).unwrap_or_else(|e| panic!("{target}: {e}"));
    assert_eq!(
        emulated::bytes(&got, 2),
        emulated::bytes(want, 2),
        "{target}"
    );
}

#[test]
fn a_loop_invariant_operand_is_staged_once_before_the_loop() {
    let mut want = args();
    interp::run(&kernel(true), [1, 1, 1], &mut want).unwrap();
    for target in [Target::Nvptx(Sm::Sm80), Target::Nvptx(Sm::Sm90a)] {
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&kernel(true), &options).unwrap();
        assert_eq!(stores_from_outside(&program), 0, "{target}:\n{program}");
        runs_as_interpreted(&kernel(true), (&program, target, &options), args, &want);
    }
    emulated::agrees(&kernel(true), args, 2, [1, 1, 1]);
}

#[test]
fn a_loop_invariant_b_is_staged_once_before_the_loop_on_nvidia() {
    let mut want = args_b();
    interp::run(&kernel_b(), [1, 1, 1], &mut want).unwrap();
    let targets = [
        Target::Nvptx(Sm::Sm80),
        Target::Nvptx(Sm::Sm90a),
        Target::Nvptx(Sm::Sm100a),
        Target::Amdgpu(Gfx::Gfx942),
    ];
    for target in targets {
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&kernel_b(), &options).unwrap();
        let stored = stores_from_outside(&program);
        match target {
            Target::Amdgpu(_) => assert!(stored > 0, "{target}: staged per use\n{program}"),
            _ => {
                assert_eq!(stored, 0, "{target}:\n{program}");
                // `r` staged once for both products, beside `k_j`.
                let elements: usize = program.shared.iter().map(|(_, a)| a.len).sum();
                assert_eq!(elements, 128 * 64 + 64 * 64, "{target}:\n{program}");
            }
        }
        runs_as_interpreted(&kernel_b(), (&program, target, &options), args_b, &want);
    }
}

/// `(2q · kᵀ)ᵀ · 2q` with `q, k: [64, 64]`: `2q` is the first product's A
/// and the second's B, laid out alike on `wgmma` and `tcgen05.mma`.
fn kernel_twice() -> Function {
    let text = r#"kernel @twice(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %o: tensor<f32, 2>) {
  %zero = constant 0 : i32
  %vq = partition_view %q [64, 64] : view<f16, [64, 64]>
  %vk = partition_view %k [64, 64] : view<f16, [64, 64]>
  %qt = load %vq[%zero, %zero] : tile<64x64xf16>
  %two = full 2.0 : tile<64x64xf16>
  %q2 = mul %qt, %two : tile<64x64xf16>
  %kt = load %vk[%zero, %zero] : tile<64x64xf16>
  %c = full 0.0 : tile<64x64xf32>
  %t = permute %kt [1, 0] : tile<64x64xf16>
  %s = dot tensor %q2, %t, %c : tile<64x64xf32>
  %h = cast %s to f16 : tile<64x64xf16>
  %p = permute %h [1, 0] : tile<64x64xf16>
  %d = dot tensor %p, %q2, %c : tile<64x64xf32>
  %vo = partition_view %o [64, 64] : view<f32, [64, 64]>
  store %d, %vo[%zero, %zero]
}"#;
    let func = parse_function(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// The shared-memory stores of the registers `mul`s define (`2q`'s).
fn stores_of_products(program: &Program) -> usize {
    let loaded: HashSet<Reg> = program
        .ops
        .iter()
        .filter(|(_, op)| op.kind == ThreadOpKind::Binary(tile_ir::BinaryOp::Mul))
        .flat_map(|(_, op)| op.results.iter().copied())
        .collect();
    program
        .ops
        .iter()
        .filter(|(_, op)| {
            matches!(op.kind, ThreadOpKind::StoreShared { .. })
                && op.operands.iter().any(|r| loaded.contains(r))
        })
        .count()
}

#[test]
fn a_tile_two_products_stage_alike_is_staged_once() {
    let mut want = args();
    interp::run(&kernel_twice(), [1, 1, 1], &mut want).unwrap();
    for target in [Target::Nvptx(Sm::Sm90a), Target::Nvptx(Sm::Sm100a)] {
        let options = LowerOptions::warps(4).with_tensor_cores(target.tensor_cores());
        let program = lower(&kernel_twice(), &options).unwrap();
        // 64 × 64 f16 on 128 threads: four 16-byte vectors a thread, once.
        assert_eq!(stores_of_products(&program), 4, "{target}:\n{program}");
        runs_as_interpreted(&kernel_twice(), (&program, target, &options), args, &want);
    }
}
