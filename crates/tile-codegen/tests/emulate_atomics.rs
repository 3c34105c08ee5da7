//! `atomic` through every GPU stage, against the interpreter: the lockstep
//! emulator runs the thread-level program, the emulation target runs the
//! LLVM IR an sm_80, gfx942 and gfx1100 receive, and ptxas and ld.lld
//! accept the code of every target.
//!
//! Every update on every dtype it supports, with random masks, in two
//! shapes of traffic: *colliding* indices (a histogram: many elements of
//! many programs at one address), where only the tensor's final values are
//! compared, for the updates whose result no order changes (float sums are
//! of small integers, exact in any order); and *distinct* indices (a
//! permutation), where the old values are compared too, for every update.
//! Tiles of 8 elements over 4 warps make the layout replicate each element
//! (only its owner updates, and every copy gets the old value back); tiles
//! of 512 give each thread several.

mod emulated;

use emulated::{require, TARGETS};

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{verify, AtomicOp, DType, Function, Scalar};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// Elements of the updated tensor.
const SLOTS: usize = 24;

/// A deterministic xorshift stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A value of `dtype`: any bits for an integer (wrapping sums, bit
/// updates and signed or unsigned extremes are order-free); a small
/// integer for a float, so that sums are exact in any order.
fn value(rng: &mut Rng, dtype: DType) -> Scalar {
    if dtype.is_float() {
        let small = rng.below(16) as i64 - 8;
        tile_ir::eval::cast(Scalar::I64(small), dtype)
    } else {
        Scalar::from_bits(dtype, rng.next())
    }
}

/// The kernel: each program updates `%t` at `B` indices of `%idx` with
/// values of `%val` (and `%cmp` for `cas`) where `%m` holds, and stores
/// the old values to `%old`.
fn kernel(op: AtomicOp, dtype: DType, block: usize) -> Function {
    let cas = op == AtomicOp::Cas;
    let cmp_param = if cas {
        format!(", %cmp: tensor<{dtype}, 1>")
    } else {
        String::new()
    };
    let cmp_load = if cas {
        format!("  %vc = partition_view %cmp [{block}] : view<{dtype}, [{block}]>\n  %c = load %vc[%pid] : tile<{block}x{dtype}>\n")
    } else {
        String::new()
    };
    let cmp_operand = if cas { "%c, " } else { "" };
    let text = format!(
        "kernel @atomic_{op}(%t: tensor<{dtype}, 1>, %idx: tensor<i32, 1>, %val: tensor<{dtype}, 1>, %m: tensor<i32, 1>, %old: tensor<{dtype}, 1>{cmp_param}) {{
  %pid = program_id 0 : i32
  %vi = partition_view %idx [{block}] : view<i32, [{block}]>
  %i = load %vi[%pid] : tile<{block}xi32>
  %vv = partition_view %val [{block}] : view<{dtype}, [{block}]>
  %v = load %vv[%pid] : tile<{block}x{dtype}>
  %vm = partition_view %m [{block}] : view<i32, [{block}]>
  %mi = load %vm[%pid] : tile<{block}xi32>
  %zero = full 0 : tile<{block}xi32>
  %mk = cmp ne %mi, %zero : tile<{block}xbool>
{cmp_load}  %o = atomic {op} acq_rel gpu %t[%i], {cmp_operand}%v, %mk : tile<{block}x{dtype}>
  %vo = partition_view %old [{block}] : view<{dtype}, [{block}]>
  store %o, %vo[%pid]
}}"
    );
    let func = parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify::verify(&func).unwrap_or_else(|e| panic!("{e}\n{text}"));
    func
}

/// Arguments for `programs` programs of `block` elements: distinct
/// indices (a permutation of the tensor, `block · programs` of them) or
/// colliding ones.
fn args(
    op: AtomicOp,
    dtype: DType,
    block: usize,
    programs: usize,
    distinct: bool,
    seed: u64,
) -> Vec<Arg> {
    let mut rng = Rng(seed | 1);
    let n = block * programs;
    let slots = if distinct { n } else { SLOTS };
    let mut idx: Vec<i32> = (0..n)
        .map(|i| {
            if distinct {
                i as i32
            } else {
                rng.below(slots as u64) as i32
            }
        })
        .collect();
    if distinct {
        for i in (1..n).rev() {
            idx.swap(i, rng.below(i as u64 + 1) as usize);
        }
    }
    let tensor =
        |values: Vec<Scalar>| HostTensor::from_scalars(dtype, &[values.len()], &values).unwrap();
    let t: Vec<Scalar> = (0..slots).map(|_| value(&mut rng, dtype)).collect();
    let val: Vec<Scalar> = (0..n).map(|_| value(&mut rng, dtype)).collect();
    let mask: Vec<i32> = (0..n).map(|_| i32::from(rng.below(4) != 0)).collect();
    let mut args = vec![
        Arg::Tensor(tensor(t.clone())),
        Arg::Tensor(HostTensor::from_vec(&[n], idx.clone()).unwrap()),
        Arg::Tensor(tensor(val)),
        Arg::Tensor(HostTensor::from_vec(&[n], mask).unwrap()),
        Arg::Tensor(HostTensor::zeros(dtype, &[n])),
    ];
    if op == AtomicOp::Cas {
        // Half the compared values match the element.
        let cmp = idx
            .iter()
            .map(|&i| {
                if rng.below(2) == 0 {
                    t[i as usize]
                } else {
                    value(&mut rng, dtype)
                }
            })
            .collect();
        args.push(Arg::Tensor(tensor(cmp)));
    }
    args
}

/// The arguments a run may be compared on: all of them for distinct
/// indices, the updated tensor only for colliding ones.
fn compared(args: &[Arg], distinct: bool) -> Vec<Vec<u8>> {
    let keep = if distinct { args.len() } else { 1 };
    args[..keep]
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => t.data().to_vec(),
            Arg::Scalar(s) => s.to_bits().to_le_bytes().to_vec(),
            Arg::Tensors(_) => unreachable!("no tensor arrays here"),
        })
        .collect()
}

/// Asserts that `got` and `want` agree on what [`compared`] keeps, naming
/// the first argument and byte that differ.
fn assert_agree(got: &[Arg], want: &[Arg], distinct: bool, what: &str) {
    let (got, want) = (compared(got, distinct), compared(want, distinct));
    for (arg, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Some(byte) = g.iter().zip(w).position(|(a, b)| a != b) {
            panic!("{what}: argument {arg} differs from the interpreter's at byte {byte}");
        }
    }
}

/// Whether colliding updates of `op` on `dtype` end the same in any order.
fn order_free(op: AtomicOp) -> bool {
    !matches!(op, AtomicOp::Xchg | AtomicOp::Cas)
}

/// The supported (update, dtype) pairs.
fn cases() -> Vec<(AtomicOp, DType)> {
    let dtypes = [
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];
    AtomicOp::ALL
        .iter()
        .flat_map(|&op| {
            dtypes
                .iter()
                .filter(move |&&d| op.supports(d))
                .map(move |&d| (op, d))
        })
        .collect()
}

#[test]
fn every_update_on_the_lockstep_emulator_equals_the_interpreter() {
    for (op, dtype) in cases() {
        for (block, warps, programs) in [(8, 4, 5), (512, 4, 2), (64, 1, 3)] {
            for distinct in [true, false] {
                if !distinct && !order_free(op) {
                    continue;
                }
                let func = kernel(op, dtype, block);
                let seed = block as u64 * 31 + programs as u64;
                let mut want = args(op, dtype, block, programs, distinct, seed);
                interp::run(&func, [programs as u32, 1, 1], &mut want).unwrap();
                let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
                let mut got = args(op, dtype, block, programs, distinct, seed);
                emulate::run(&program, [programs as u32, 1, 1], &mut got)
                    .unwrap_or_else(|e| panic!("atomic {op} on {dtype}, block {block}: {e}"));
                let what = format!(
                    "atomic {op} on {dtype}, block {block}, {warps} warps, distinct {distinct}"
                );
                assert_agree(&got, &want, distinct, &what);
            }
        }
    }
}

#[test]
fn every_update_on_the_emulation_targets_equals_the_interpreter() {
    for target in TARGETS {
        for (op, dtype) in cases() {
            for (block, warps, programs) in [(8, 4, 3), (256, 2, 2)] {
                for distinct in [true, false] {
                    if !distinct && !order_free(op) {
                        continue;
                    }
                    let func = kernel(op, dtype, block);
                    let seed = 7 + block as u64;
                    let mut want = args(op, dtype, block, programs, distinct, seed);
                    interp::run(&func, [programs as u32, 1, 1], &mut want).unwrap();
                    let mut got = args(op, dtype, block, programs, distinct, seed);
                    emulated::run(&func, target, warps, [programs as u32, 1, 1], &mut got)
                        .unwrap_or_else(|e| panic!("atomic {op} on {dtype} for {target}: {e}"));
                    let what = format!(
                        "atomic {op} on {dtype} for {target}, block {block}, distinct {distinct}"
                    );
                    assert_agree(&got, &want, distinct, &what);
                }
            }
        }
    }
}

/// An index outside the tensor where the mask holds.
fn outside_args() -> Vec<Arg> {
    let mut args = args(AtomicOp::Add, DType::I32, 8, 1, false, 3);
    let bad: Vec<i32> = vec![0, 1, 2, SLOTS as i32, 3, 4, 5, 6];
    args[1] = Arg::Tensor(HostTensor::from_vec(&[8], bad).unwrap());
    args[3] = Arg::Tensor(HostTensor::from_vec(&[8], vec![1i32; 8]).unwrap());
    args
}

#[test]
fn an_index_outside_the_tensor_fails_the_check_everywhere() {
    let func = kernel(AtomicOp::Add, DType::I32, 8);
    let err = interp::run(&func, [1, 1, 1], &mut outside_args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("reaches index [24], outside the tensor of extents [24]"),
        "{err}"
    );
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    let err = emulate::run(&program, [1, 1, 1], &mut outside_args()).unwrap_err();
    assert!(
        err.to_string()
            .contains("index check failed in kernel `atomic_add`"),
        "{err}"
    );
    assert!(
        err.to_string().contains("index [24] is outside the tensor"),
        "{err}"
    );
    for target in TARGETS {
        let failure = emulated::run(&func, target, 1, [1, 1, 1], &mut outside_args()).unwrap_err();
        match failure {
            emulated::Failure::Status(status) => {
                assert_eq!(
                    status.code,
                    tile_abi::FaultCode::IndexOutside as u32,
                    "{target}"
                );
                assert_eq!(status.index[0], SLOTS as i64, "{target}");
            }
            other => panic!("{target}: {other}"),
        }
    }
    // A masked-off element may hold any index.
    let mut want = outside_args_masked();
    interp::run(&func, [1, 1, 1], &mut want).unwrap();
    for target in TARGETS {
        let mut got = outside_args_masked();
        emulated::run(&func, target, 1, [1, 1, 1], &mut got).unwrap();
        assert_agree(&got, &want, true, &target.to_string());
    }
}

fn outside_args_masked() -> Vec<Arg> {
    let mut args = outside_args();
    args[3] = Arg::Tensor(HostTensor::from_vec(&[8], vec![1, 1, 1, 0, 1, 1, 1, 1]).unwrap());
    args
}

#[test]
fn atomics_assemble_for_every_sm_and_link_for_every_gfx() {
    require(Tool::Ptxas);
    require(Tool::LlvmObjdump);
    for (op, dtype) in cases() {
        let func = kernel(op, dtype, 128);
        let program = lower(&func, &LowerOptions::warps(4)).unwrap();
        for sm in Sm::ALL.into_iter().filter(|sm| sm.number() >= 80) {
            let out = emit(&program, Target::Nvptx(sm), &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("atomic {op} on {dtype} for {sm}: {e}"));
            assert!(
                out.assembly.contains("atom."),
                "atomic {op} on {dtype} for {sm}: no atom in the PTX"
            );
            tools::assemble_ptx(&out.assembly, sm)
                .unwrap_or_else(|e| panic!("atomic {op} on {dtype} for {sm}: {e}"));
        }
        for gfx in Gfx::ALL {
            let out = emit(&program, Target::Amdgpu(gfx), &CodegenOptions::default())
                .unwrap_or_else(|e| panic!("atomic {op} on {dtype} for {gfx}: {e}"));
            let hsaco = out.code_object.as_ref().expect("a code object");
            let listing = tools::disassemble(hsaco).unwrap_or_else(|e| panic!("{gfx}: {e}"));
            assert!(
                listing.contains("global_atomic") || listing.contains("flat_atomic"),
                "atomic {op} on {dtype} for {gfx}: no atomic in\n{listing}"
            );
        }
    }
}

/// Every program stores its tile to partition 0 with a plain store.
const SAME_PARTITION: &str = "
kernel @same(%out: tensor<i32, 1>) {
  %zero = constant 0 : i32
  %pid = program_id 0 : i32
  %v = broadcast %pid to [4] : tile<4xi32>
  %vo = partition_view %out [4] : view<i32, [4]>
  store %v, %vo[%zero]
}";

#[test]
fn plain_stores_of_two_blocks_to_one_element_race_on_every_target() {
    let func = parse_function(SAME_PARTITION).unwrap();
    for target in TARGETS {
        let mut args = vec![Arg::Tensor(HostTensor::zeros(DType::I32, &[4]))];
        match emulated::run(&func, target, 1, [2, 1, 1], &mut args) {
            Err(emulated::Failure::Emulator(e)) => {
                let text = e.to_string();
                assert!(
                    text.contains("global-memory race")
                        && text.contains(
                            "a store after a store by thread 0 of block (0, 0, 0), and nothing orders them"
                        ),
                    "{target}: {text}"
                );
            }
            other => panic!("{target}: {other:?}"),
        }
        // One block alone does not race with itself.
        let mut args = vec![Arg::Tensor(HostTensor::zeros(DType::I32, &[4]))];
        emulated::run(&func, target, 1, [1, 1, 1], &mut args).unwrap();
    }
}
