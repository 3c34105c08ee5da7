//! On Blackwell (sm_100a) a product whose `a` the kernel computed from an
//! earlier product's accumulator (attention's `p·v`) takes `a` from tensor
//! memory (`tcgen05.mma … [d], [a], b_desc`): each thread stores its row's
//! pairs of f16 beside the accumulator, with no staging of `p` in shared
//! memory; a product from zeros stores no accumulator, its first step not
//! accumulating. The lockstep emulator (which also checks that no
//! store reaches A before the product reading it has committed) and the
//! sm_100a emulation target equal the interpreter, on one warpgroup and on
//! two sharing A's columns, in a loop that rewrites A each iteration; ptxas
//! assembles the PTX.

mod emulated;

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, Function};
use tile_thread::emulate::{self, LockstepFault};
use tile_thread::lower::{lower, LowerOptions};
use tile_thread::{parse_program, Program, ThreadOpKind};

const TARGET: Target = Target::Nvptx(Sm::Sm100a);

/// `o = Σ_j cast(2·q·k_j, f16) · v_j` over `blocks` blocks of `n` keys,
/// `q: [m, 16]`, each `k_j: [16, n]`, `v_j: [n, 64]`.
fn kernel(m: usize, n: usize, blocks: usize) -> Function {
    let text = format!(
        r#"kernel @tensor_a(%q: tensor<f16, 2>, %k: tensor<f16, 2>, %v: tensor<f16, 2>, %o: tensor<f32, 2>) {{
  %z = constant 0 : i32
  %one = constant 1 : i32
  %blocks = constant {blocks} : i32
  %vq = partition_view %q [{m}, 16] : view<f16, [{m}, 16]>
  %qt = load %vq[%z, %z] : tile<{m}x16xf16>
  %vk = partition_view %k [16, {n}] : view<f16, [16, {n}]>
  %vv = partition_view %v [{n}, 64] : view<f16, [{n}, 64]>
  %o0 = full 0.0 : tile<{m}x64xf32>
  %ot = for %j = %z to %blocks step %one iter(%acc = %o0) : tile<{m}x64xf32> {{
    %kt = load %vk[%z, %j] : tile<16x{n}xf16>
    %z1 = full 0.0 : tile<{m}x{n}xf32>
    %s = dot tensor %qt, %kt, %z1 : tile<{m}x{n}xf32>
    %two = full 2.0 : tile<{m}x{n}xf32>
    %s2 = mul %s, %two : tile<{m}x{n}xf32>
    %p = cast %s2 to f16 : tile<{m}x{n}xf16>
    %vt = load %vv[%j, %z] : tile<{n}x64xf16>
    %next = dot tensor %p, %vt, %acc : tile<{m}x64xf32>
    yield %next
  }}
  %vo = partition_view %o [{m}, 64] : view<f32, [{m}, 64]>
  store %ot, %vo[%z, %z]
}}"#
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap();
    func
}

/// Small integers: every product and sum is exact in f32, every `p` in
/// f16.
fn args(m: usize, n: usize, blocks: usize) -> Vec<Arg> {
    vec![
        emulated::small_f16s(&[m, 16], 1),
        emulated::small_f16s(&[16, n * blocks], 2),
        emulated::small_f16s(&[n * blocks, 64], 3),
        Arg::Tensor(HostTensor::from_vec(&[m, 64], vec![0f32; m * 64]).unwrap()),
    ]
}

fn count(program: &Program, want: fn(&ThreadOpKind) -> bool) -> usize {
    program.ops.iter().filter(|(_, op)| want(&op.kind)).count()
}

#[test]
fn a_computed_a_is_read_from_tensor_memory() {
    // One warpgroup, 64 keys a block (A: 32 columns after the first
    // product's 64); two warpgroups sharing 128 keys (each stores 32 of
    // A's 64 columns).
    for (m, n, warps) in [(128, 64, 4), (128, 128, 8)] {
        let blocks = 2;
        let func = kernel(m, n, blocks);
        let options = LowerOptions::warps(warps).with_tensor_cores(TARGET.tensor_cores());
        let program = lower(&func, &options).unwrap();
        let what = format!("{m}x{n} on {warps} warps");
        // `q·k` from shared memory, one step of 64-column instructions;
        // `p·v` from tensor memory, `n / 16` steps.
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::Tcgen05Mma { .. })),
            n / 64,
            "{what}"
        );
        assert_eq!(
            count(&program, |k| matches!(
                k,
                ThreadOpKind::Tcgen05MmaTensorA { .. }
            )),
            n / 16,
            "{what}"
        );
        // Each thread stores its part of A once, and of the accumulators
        // only `o`'s: `q·k` starts from zeros, its first step not
        // accumulating (the previous iteration's `p·v` left other values in
        // those columns).
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::TmemStoreHalves)),
            1,
            "{what}"
        );
        assert_eq!(
            count(&program, |k| matches!(k, ThreadOpKind::TmemStore)),
            1,
            "{what}"
        );
        // Shared memory holds `q`, `k` and `v` and nothing of `p`: two
        // 16-bit stagings of [16, n] and [n, 64] at most besides `q`.
        let staged: usize = program
            .shared
            .iter()
            .filter(|(_, a)| a.aliases.is_none() && a.dtype.size_bytes() == 2)
            .map(|(_, a)| a.len)
            .sum();
        assert!(
            staged <= m * 16 + 16 * n + n * 64,
            "{what}: {staged}\n{program}"
        );
        // The products share the allocation: the first's accumulator (n
        // columns), the second's (64) and its A after it (n / 2).
        let text = program.to_string();
        let columns = n.max(64 + n / 2).next_power_of_two();
        assert!(
            text.contains(&format!("tmem.alloc {columns} @s")),
            "{what}\n{text}"
        );
        assert_eq!(parse_program(&text).unwrap().to_string(), text);

        let mut want = args(m, n, blocks);
        interp::run(&func, [1, 1, 1], &mut want).unwrap();
        let mut got = args(m, n, blocks);
        emulate::run(&program, [1, 1, 1], &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 3),
            emulated::bytes(&want, 3),
            "{what}"
        );
        let mut got = args(m, n, blocks);
        emulated::run(&func, TARGET, warps, [1, 1, 1], &mut got).unwrap();
        assert_eq!(
            emulated::bytes(&got, 3),
            emulated::bytes(&want, 3),
            "{what}"
        );

        emulated::require(Tool::Ptxas);
        let ptx = emit(&program, TARGET, &CodegenOptions::default())
            .unwrap()
            .assembly;
        // Each instruction once in the loop's body: `n / 64` reading A
        // through a descriptor, `n / 16` from tensor memory (`[d], [a], …`).
        assert_eq!(
            ptx.matches("kind::f16 [%r").count(),
            n / 64 + n / 16,
            "{what}"
        );
        let tensor_a = ptx
            .lines()
            .filter(|l| l.contains("tcgen05.mma") && l.contains("], [%r"));
        assert_eq!(tensor_a.count(), n / 16, "{what}");
        tools::assemble_ptx(&ptx, Sm::Sm100a).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

/// The lockstep emulator holds A's cells until the product reading them
/// commits: a program whose store of A comes after the products that read
/// it (before their commit) is refused, naming the cell.
#[test]
fn a_store_to_a_before_its_product_commits_is_an_error() {
    let func = kernel(128, 64, 2);
    let options = LowerOptions::warps(4).with_tensor_cores(TARGET.tensor_cores());
    let text = lower(&func, &options).unwrap().to_string();
    let mut lines: Vec<&str> = text.lines().collect();
    let is_tensor_a = |l: &&str| l.contains("tcgen05.mma.") && l.contains("tmem[");
    let first = lines.iter().position(is_tensor_a).unwrap();
    let last = lines.iter().rposition(is_tensor_a).unwrap();
    // A's store, the last `tmem.store.halves` before its products, moved
    // after them.
    let store = lines[..first]
        .iter()
        .rposition(|l| l.contains("tmem.store.halves"))
        .unwrap();
    let line = lines.remove(store);
    lines.insert(last, line);
    let program = parse_program(&lines.join("\n")).unwrap();
    let mut got = args(128, 64, 2);
    let error = emulate::run(&program, [1, 1, 1], &mut got).unwrap_err();
    match *error.fault {
        LockstepFault::TensorMemory(what) => {
            assert!(what.contains("still reads it as A"), "{what}")
        }
        other => panic!("{other:?}"),
    }
}
