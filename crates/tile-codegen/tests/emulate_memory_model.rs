//! The memory model (docs/semantics.md, "The memory model") on both GPU
//! emulators: two protocols that order plain memory between programs, a
//! spin lock and message passing, run bit for bit as the interpreter runs
//! them on the lockstep emulator and on every emulation target; each with
//! one piece of its synchronization removed is a race both emulators
//! report; and `fence` assembles with ptxas and links with ld.lld.

mod emulated;

use emulated::require;

use tile_codegen::gpu::emit;
use tile_codegen::tools::{self, Tool};
use tile_codegen::{CodegenOptions, Gfx, Sm, Target};
use tile_ir::interp::{self, Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Function};
use tile_thread::emulate;
use tile_thread::lower::{lower, LowerOptions};

/// The targets the protocols run on: the emulation targets and Hopper.
const TARGETS: [Target; 7] = [
    emulated::TARGETS[0],
    Target::Nvptx(Sm::Sm90),
    Target::Nvptx(Sm::Sm90a),
    emulated::TARGETS[1],
    emulated::TARGETS[2],
    emulated::TARGETS[3],
    emulated::TARGETS[4],
];

/// Programs of a launch.
const PROGRAMS: u32 = 4;

/// One way to write a protocol: the correct one, or one with a piece of
/// its synchronization taken out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// As docs/semantics.md writes it.
    Correct,
    /// The acquiring atomic (or the acquire fence) is gone or relaxed.
    NoAcquire,
    /// The releasing atomic (or the release fence) is gone or relaxed.
    NoRelease,
    /// The releasing atomic is a plain store.
    PlainStore,
}

/// Program `p` adds `p + 1` to the 4 plain elements of `%sum` while it
/// holds the spin lock `%lock[0]`.
fn lock(variant: Variant) -> Function {
    lock_at(variant, "gpu")
}

/// [`lock`] with the lock's atomics at `scope`.
fn lock_at(variant: Variant, scope: &str) -> Function {
    let acquire = if variant == Variant::NoAcquire {
        "relaxed"
    } else {
        "acquire"
    };
    let unlock = match variant {
        Variant::PlainStore => {
            "  %vl = partition_view %lock [1] : view<i32, [1]>\n  store %free, %vl[%zero]\n"
                .to_string()
        }
        Variant::NoRelease => {
            format!("  %u = atomic xchg relaxed {scope} %lock[%at], %free, %all : tile<1xi32>\n")
        }
        _ => format!("  %u = atomic xchg release {scope} %lock[%at], %free, %all : tile<1xi32>\n"),
    };
    let text = format!(
        "kernel @locked(%sum: tensor<i32, 1>, %lock: tensor<i32, 1>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %pid = program_id 0 : i32
  %at = full 0 : tile<1xi32>
  %free = full 0 : tile<1xi32>
  %held = full 1 : tile<1xi32>
  %all = full true : tile<1xbool>
  while {{
    %was = atomic cas {acquire} {scope} %lock[%at], %free, %held, %all : tile<1xi32>
    %w = reduce max %was axis 0 : i32
    %busy = cmp eq %w, %one : bool
    yield %busy
  }} do {{
    yield
  }}
  %vs = partition_view %sum [4] : view<i32, [4]>
  %old = load %vs[%zero] : tile<4xi32>
  %mine = add %pid, %one : i32
  %add = broadcast %mine to [4] : tile<4xi32>
  %new = add %old, %add : tile<4xi32>
  store %new, %vs[%zero]
{unlock}}}"
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn lock_args() -> Vec<Arg> {
    vec![
        Arg::Tensor(HostTensor::zeros(DType::I32, &[4])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[1])),
    ]
}

/// Program `p` writes its 4 elements of `%data`, then raises `%flags[p]`;
/// program `p > 0` waits for `%flags[p - 1]`, then copies program
/// `p - 1`'s data to its own elements of `%seen`. The data is published by
/// a release fence before a relaxed flag update, and read after a relaxed
/// poll and an acquire fence.
fn message(variant: Variant) -> Function {
    let release = if variant == Variant::NoRelease {
        ""
    } else {
        "  fence release gpu\n"
    };
    let acquire = if variant == Variant::NoAcquire {
        ""
    } else {
        "    fence acquire gpu\n"
    };
    let raise = if variant == Variant::PlainStore {
        "  %vf = partition_view %flags [1] : view<i32, [1]>\n  store %set, %vf[%pid]\n"
    } else {
        "  %r = atomic xchg relaxed gpu %flags[%me], %set, %all : tile<1xi32>\n"
    };
    let text = format!(
        "kernel @message(%data: tensor<i32, 1>, %flags: tensor<i32, 1>, %seen: tensor<i32, 1>) {{
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %ten = constant 10 : i32
  %pid = program_id 0 : i32
  %vd = partition_view %data [4] : view<i32, [4]>
  %i = iota : tile<4xi32>
  %base = mul %pid, %ten : i32
  %b = broadcast %base to [4] : tile<4xi32>
  %mine = add %i, %b : tile<4xi32>
  store %mine, %vd[%pid]
{release}  %me = broadcast %pid to [1] : tile<1xi32>
  %set = full 1 : tile<1xi32>
  %nothing = full 0 : tile<1xi32>
  %all = full true : tile<1xbool>
{raise}  %later = cmp gt %pid, %zero : bool
  if %later {{
    %src = sub %pid, %one : i32
    %at = broadcast %src to [1] : tile<1xi32>
    while {{
      %f = atomic add relaxed gpu %flags[%at], %nothing, %all : tile<1xi32>
      %fv = reduce max %f axis 0 : i32
      %wait = cmp eq %fv, %zero : bool
      yield %wait
    }} do {{
      yield
    }}
{acquire}    %got = load %vd[%src] : tile<4xi32>
    %vs = partition_view %seen [4] : view<i32, [4]>
    store %got, %vs[%pid]
    yield
  }} else {{
    yield
  }}
}}"
    );
    parse_function(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn message_args() -> Vec<Arg> {
    let n = 4 * PROGRAMS as usize;
    vec![
        Arg::Tensor(HostTensor::zeros(DType::I32, &[n])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[PROGRAMS as usize])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[n])),
    ]
}

/// The protocols: a name, the kernel of a variant, fresh arguments, and
/// the variants that must race.
type Protocol = (&'static str, fn(Variant) -> Function, fn() -> Vec<Arg>);

const PROTOCOLS: [Protocol; 2] = [
    ("lock", lock, lock_args),
    ("message passing", message, message_args),
];

const BROKEN: [Variant; 3] = [Variant::NoAcquire, Variant::NoRelease, Variant::PlainStore];

use tile_testgen::inputs::bytes;

/// What the interpreter computes for `kernel` on `args`.
fn oracle(kernel: &Function, args: fn() -> Vec<Arg>) -> Vec<Vec<u8>> {
    let mut want = args();
    interp::run(kernel, [PROGRAMS, 1, 1], &mut want).unwrap();
    bytes(&want)
}

#[test]
fn the_interpreter_runs_the_protocols_to_their_results() {
    let mut args = lock_args();
    interp::run(&lock(Variant::Correct), [PROGRAMS, 1, 1], &mut args).unwrap();
    let Arg::Tensor(sum) = &args[0] else {
        unreachable!()
    };
    assert_eq!(sum.to_vec::<i32>().unwrap(), [10; 4]);
    let mut args = message_args();
    interp::run(&message(Variant::Correct), [PROGRAMS, 1, 1], &mut args).unwrap();
    let Arg::Tensor(seen) = &args[2] else {
        unreachable!()
    };
    let want: Vec<i32> = (0..PROGRAMS as i32)
        .flat_map(|p| (0..4).map(move |i| if p == 0 { 0 } else { 10 * (p - 1) + i }))
        .collect();
    assert_eq!(seen.to_vec::<i32>().unwrap(), want);
}

#[test]
fn the_protocols_run_as_the_interpreter_runs_them_on_the_lockstep_emulator() {
    for (name, kernel, args) in PROTOCOLS {
        let func = kernel(Variant::Correct);
        let want = oracle(&func, args);
        for warps in [1, 4] {
            let program = lower(&func, &LowerOptions::warps(warps)).unwrap();
            let mut got = args();
            emulate::run(&program, [PROGRAMS, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{name}, {warps} warps: {e}"));
            assert_eq!(bytes(&got), want, "{name}, {warps} warps");
        }
    }
}

#[test]
fn the_protocols_run_as_the_interpreter_runs_them_on_every_target() {
    for (name, kernel, args) in PROTOCOLS {
        let func = kernel(Variant::Correct);
        let want = oracle(&func, args);
        for target in TARGETS {
            let mut got = args();
            emulated::run(&func, target, 4, [PROGRAMS, 1, 1], &mut got)
                .unwrap_or_else(|e| panic!("{name} on {target}: {e}"));
            assert_eq!(bytes(&got), want, "{name} on {target}");
        }
    }
}

#[test]
fn a_protocol_without_its_acquire_or_release_races_on_the_lockstep_emulator() {
    for (name, kernel, args) in PROTOCOLS {
        for variant in BROKEN {
            let program = lower(&kernel(variant), &LowerOptions::warps(4)).unwrap();
            let err = emulate::run(&program, [PROGRAMS, 1, 1], &mut args())
                .expect_err(&format!("{name}, {variant:?}: no race reported"));
            let text = err.to_string();
            assert!(
                text.contains("global race on")
                    && text.contains("of block 0 (linear index), and nothing orders them"),
                "{name}, {variant:?}: {text}"
            );
        }
    }
}

#[test]
fn a_protocol_without_its_acquire_or_release_races_on_every_target() {
    for (name, kernel, args) in PROTOCOLS {
        for variant in BROKEN {
            for target in TARGETS {
                match emulated::run(&kernel(variant), target, 4, [PROGRAMS, 1, 1], &mut args()) {
                    Err(emulated::Failure::Emulator(e)) => {
                        let text = e.to_string();
                        assert!(
                            text.contains("global-memory race")
                                && text.contains("of block (0, 0, 0)"),
                            "{name}, {variant:?} on {target}: {text}"
                        );
                    }
                    other => panic!("{name}, {variant:?} on {target}: {other:?}"),
                }
            }
        }
    }
}

/// A lock at `cta` scope orders nothing between programs: the lockstep
/// emulator, which checks the program's own promises, reports the race,
/// and so do the emulation targets, which run the emitted code: its
/// updates are relaxed between fences of the scope asked (`fence.acq_rel.cta`
/// on NVIDIA, `workgroup` on AMD), which order one block only.
#[test]
fn a_cta_scoped_lock_does_not_order_programs() {
    let cta = lock_at(Variant::Correct, "cta");
    let program = lower(&cta, &LowerOptions::warps(1)).unwrap();
    let err = emulate::run(&program, [2, 1, 1], &mut lock_args()).unwrap_err();
    assert!(
        err.to_string().contains(
            "global race on `sum` at element offset 0: a load after a store by thread 0 of block 0"
        ),
        "{err}"
    );
    for target in TARGETS {
        match emulated::run(&cta, target, 1, [2, 1, 1], &mut lock_args()) {
            Err(emulated::Failure::Emulator(e)) => {
                let text = e.to_string();
                assert!(
                    text.contains("global-memory race") && text.contains("of block (0, 0, 0)"),
                    "{target}: {text}"
                );
            }
            other => panic!("{target}: {other:?}"),
        }
    }
}

/// Every thread reads `%flag[0]` (a scalar `gather`), and where it was 0
/// the element's owner sets it: the program's read comes before its
/// update, so the threads that read the flag must all have read it before
/// the owner writes it. Run twice, the first run takes the `then` branch
/// and the second the `else` one.
const FLAG: &str = "
kernel @flag(%flag: tensor<i32, 1>, %out: tensor<i32, 1>) {
  %zero = constant 0 : i32
  %true = constant true : bool
  %f = gather %flag[%zero], %true, %zero : i32
  %first = cmp eq %f, %zero : bool
  %at = full 0 : tile<1xi32>
  %set = full 1 : tile<1xi32>
  %all = full true : tile<1xbool>
  %v = if %first : i32 {
    %old = atomic xchg relaxed gpu %flag[%at], %set, %all : tile<1xi32>
    %one = constant 1 : i32
    yield %one
  } else {
    %two = constant 2 : i32
    yield %two
  }
  %tile = broadcast %v to [256] : tile<256xi32>
  %vo = partition_view %out [256] : view<i32, [256]>
  store %tile, %vo[%zero]
}";

fn flag_args() -> Vec<Arg> {
    vec![
        Arg::Tensor(HostTensor::zeros(DType::I32, &[1])),
        Arg::Tensor(HostTensor::zeros(DType::I32, &[256])),
    ]
}

#[test]
fn a_flag_every_thread_reads_is_updated_after_all_have_read_it() {
    let func = parse_function(FLAG).unwrap();
    let twice = |run: &mut dyn FnMut(&mut [Arg])| {
        let mut args = flag_args();
        run(&mut args);
        run(&mut args);
        bytes(&args)
    };
    let want = twice(&mut |a| interp::run(&func, [1, 1, 1], a).unwrap());
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    let got = twice(&mut |a| emulate::run(&program, [1, 1, 1], a).unwrap());
    assert_eq!(got, want, "the lockstep emulator");
    for target in TARGETS {
        let got = twice(&mut |a| {
            emulated::run(&func, target, 4, [1, 1, 1], a)
                .unwrap_or_else(|e| panic!("{target}: {e}"))
        });
        assert_eq!(got, want, "{target}");
    }
}

#[test]
fn fences_assemble_for_every_sm_and_link_for_every_gfx() {
    require(Tool::Ptxas);
    require(Tool::LlvmObjdump);
    let func = message(Variant::Correct);
    let program = lower(&func, &LowerOptions::warps(4)).unwrap();
    for sm in Sm::ALL.into_iter().filter(|sm| sm.number() >= 80) {
        let out = emit(&program, Target::Nvptx(sm), &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{sm}: {e}"));
        for fence in ["fence.acq_rel.gpu", "bar.sync"] {
            assert!(out.assembly.contains(fence), "{sm}: no {fence}");
        }
        tools::assemble_ptx(&out.assembly, sm).unwrap_or_else(|e| panic!("{sm}: {e}"));
    }
    for gfx in Gfx::ALL {
        let out = emit(&program, Target::Amdgpu(gfx), &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{gfx}: {e}"));
        let hsaco = out.code_object.as_ref().expect("a code object");
        let listing = tools::disassemble(hsaco).unwrap_or_else(|e| panic!("{gfx}: {e}"));
        // The agent-scope acquire invalidates the caches below L2 (and
        // gfx942's release writes L2 back), as the AMDGPU memory model
        // lowers an LLVM `fence syncscope("agent")`.
        let fences: &[&str] = match gfx {
            Gfx::Gfx90a => &["buffer_wbinvl1_vol"],
            Gfx::Gfx942 | Gfx::Gfx950 | Gfx::Gfx94Generic => &["buffer_wbl2 sc1", "buffer_inv sc1"],
            Gfx::Gfx1100 | Gfx::Gfx11Generic => &["buffer_gl1_inv"],
            Gfx::Gfx1200 | Gfx::Gfx1201 | Gfx::Gfx12Generic => &["global_inv scope:SCOPE_DEV"],
        };
        for fence in fences {
            assert!(listing.contains(fence), "{gfx}: no {fence}");
        }
    }
}
