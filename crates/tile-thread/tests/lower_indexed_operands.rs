//! The index, mask and value tiles of an indexed access (`gather`,
//! `atomic`) are computed in the access's layout: an embedding's `rows <
//! n` mask and an atomic's index tiles built from `iota`s cost no shared
//! memory, and a column of ids loaded and broadcast is loaded where the
//! gather reads it, where masked loads are predicated (on AMD each would
//! be a branch, and the column is staged instead, once, from the loaded
//! ids to the gather's layout). An atomic add whose old
//! values nobody reads adds a thread's consecutive elements in one
//! `red.global.add` each group.

use tile_ir::interp;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_testgen::inputs::tensor;
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions, TensorCores};
use tile_thread::program::Program;

/// Rows `ids[r]` of `table` for a block of 32 ids, 64 columns at a time:
/// `out[r, c] = table[ids[r], c]` (zero past the ids or the columns).
const EMBEDDING: &str =
    "kernel @embedding(%ids: tensor<i64, 1>, %table: tensor<f32, 2>, %out: tensor<f32, 2>) {
  %p = program_id 0 : i32
  %q = program_id 1 : i32
  %bm = constant 32 : i32
  %bn = constant 64 : i32
  %i = iota : tile<32x1xi32>
  %m0 = mul %p, %bm : i32
  %m = broadcast %m0 to [32, 1] : tile<32x1xi32>
  %rows = add %i, %m : tile<32x1xi32>
  %j = iota : tile<1x64xi32>
  %n0 = mul %q, %bn : i32
  %n = broadcast %n0 to [1, 64] : tile<1x64xi32>
  %cols = add %j, %n : tile<1x64xi32>
  %count = dim %ids axis 0 : i32
  %cb = broadcast %count to [32, 1] : tile<32x1xi32>
  %in_rows = cmp lt %rows, %cb : tile<32x1xbool>
  %width = dim %table axis 1 : i32
  %wb = broadcast %width to [1, 64] : tile<1x64xi32>
  %in_cols = cmp lt %cols, %wb : tile<1x64xbool>
  %mr = broadcast %in_rows to [32, 64] : tile<32x64xbool>
  %mc = broadcast %in_cols to [32, 64] : tile<32x64xbool>
  %inside = and %mr, %mc : tile<32x64xbool>
  %vi = partition_view %ids [32] : view<i64, [32]>
  %at64 = load_masked %vi[%p] pad(zero) : tile<32xi64>
  %at32 = cast %at64 to i32 : tile<32xi32>
  %at = reshape %at32 to [32, 1] : tile<32x1xi32>
  %ab = broadcast %at to [32, 64] : tile<32x64xi32>
  %cc = broadcast %cols to [32, 64] : tile<32x64xi32>
  %zero = full 0.0 : tile<32x64xf32>
  %found = gather %table[%ab, %cc], %inside, %zero : tile<32x64xf32>
  %vo = partition_view %out [32, 64] : view<f32, [32, 64]>
  store_masked %found, %vo[%p, %q]
}";

/// `acc[r, c] += x[r, c]` over a block of 16 × 32, the indices built as a
/// view's `atomic_add` builds them.
const ADD_BLOCK: &str = "kernel @add_block(%x: tensor<f32, 2>, %acc: tensor<f32, 2>) {
  %p = program_id 0 : i32
  %z = constant 0 : i32
  %vx = partition_view %x [16, 32] : view<f32, [16, 32]>
  %t = load %vx[%p, %z] : tile<16x32xf32>
  %bm = constant 16 : i32
  %r0 = mul %p, %bm : i32
  %rb = broadcast %r0 to [16, 32] : tile<16x32xi32>
  %ri = iota : tile<16xi32>
  %rr = reshape %ri to [16, 1] : tile<16x1xi32>
  %rx = broadcast %rr to [16, 32] : tile<16x32xi32>
  %rows = add %rb, %rx : tile<16x32xi32>
  %ci = iota : tile<32xi32>
  %cr = reshape %ci to [1, 32] : tile<1x32xi32>
  %cols = broadcast %cr to [16, 32] : tile<16x32xi32>
  %all = full true : tile<16x32xbool>
  %old = atomic add relaxed gpu %acc[%rows, %cols], %t, %all : tile<16x32xf32>
}";

/// The elements of the shared buffers of `program`.
fn staged(program: &Program) -> usize {
    program.shared.iter().map(|(_, a)| a.len).sum()
}

/// Runs `program` on the lockstep emulator and `func` on the interpreter
/// over `grid` and asserts that they leave the same tensors.
fn runs_as_interpreted(source: &str, program: &Program, grid: [u32; 3], args: Vec<Arg>) {
    let func = parse_function(source).expect("the kernel parses");
    let (mut emulated, mut reference) = (args.clone(), args);
    emulate::run(program, grid, &mut emulated).expect("it runs");
    interp::run(&func, grid, &mut reference).expect("it interprets");
    assert_eq!(emulated, reference);
}

/// 40 ids (a partial second block) into a table of 50 rows of 100 columns.
fn embedding_args() -> Vec<Arg> {
    let picks = (0..40).map(|i| (i * 17 + 3) % 50).collect::<Vec<i64>>();
    let ids = Arg::Tensor(HostTensor::from_vec(&[40], picks).expect("a tensor of ids"));
    vec![ids, tensor(2, &[50, 100]), tensor(3, &[40, 100])]
}

#[test]
fn a_gathers_mask_and_ids_are_computed_where_it_reads_them() {
    let func = parse_function(EMBEDDING).expect("the kernel parses");
    let program = lower(&func, &LowerOptions::warps(4)).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    assert_eq!(staged(&program), 0, "{program}");
    runs_as_interpreted(EMBEDDING, &program, [2, 2, 1], embedding_args());
}

#[test]
fn on_amd_a_gathers_masked_ids_are_staged_and_its_mask_is_not() {
    let func = parse_function(EMBEDDING).expect("the kernel parses");
    let options = LowerOptions::warps(4).with_tensor_cores(TensorCores::Mfma);
    let program = lower(&func, &options).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    // The 32 ids, as i32; no mask.
    let buffers: Vec<String> = program
        .shared
        .iter()
        .map(|(_, a)| format!("{}[{}]", a.dtype, a.len))
        .collect();
    assert_eq!(buffers, ["i32[32]"], "{program}");
    // Staged once, from the loaded ids straight into the gather's layout:
    // a store of each of a thread's 4 loaded ids, one barrier, the reads.
    let text = program.to_string();
    assert_eq!(text.matches("barrier").count(), 1, "{program}");
    assert_eq!(text.matches("st.shared").count(), 4, "{program}");
    runs_as_interpreted(EMBEDDING, &program, [2, 2, 1], embedding_args());
}

#[test]
fn an_atomics_index_tiles_are_computed_where_it_updates() {
    let func = parse_function(ADD_BLOCK).expect("the kernel parses");
    let program = lower(&func, &LowerOptions::warps(2)).expect("it lowers");
    tile_thread::program::verify(&program).expect("it verifies");
    assert_eq!(staged(&program), 0, "{program}");
    runs_as_interpreted(
        ADD_BLOCK,
        &program,
        [3, 1, 1],
        vec![tensor(1, &[48, 32]), tensor(2, &[48, 32])],
    );
}

#[test]
fn an_add_nobody_reads_adds_each_threads_vectors_at_once() {
    let func = parse_function(ADD_BLOCK).expect("the kernel parses");
    let program = lower(&func, &LowerOptions::warps(2)).expect("it lowers");
    let text = program.to_string();
    // 16 × 32 over 64 threads: two groups of four a thread.
    assert_eq!(
        text.matches("red.global.add.gpu.v4 ").count(),
        2,
        "{program}"
    );
    assert!(!text.contains("atom.global"), "{program}");
    // Its old values read: one update an element, each returning its old value.
    let read = ADD_BLOCK.replace(
        "  %old = atomic add relaxed gpu %acc[%rows, %cols], %t, %all : tile<16x32xf32>\n}",
        "  %old = atomic add relaxed gpu %acc[%rows, %cols], %t, %all : tile<16x32xf32>\n  \
         store %old, %vx[%p, %z]\n}",
    );
    assert_ne!(read, ADD_BLOCK);
    let func = parse_function(&read).expect("the kernel parses");
    let program = lower(&func, &LowerOptions::warps(2)).expect("it lowers");
    let text = program.to_string();
    assert_eq!(text.matches("atom.global.add").count(), 8, "{program}");
    assert!(!text.contains("red.global"), "{program}");
    let args = vec![tensor(1, &[48, 32]), tensor(2, &[48, 32])];
    runs_as_interpreted(&read, &program, [3, 1, 1], args);
}
