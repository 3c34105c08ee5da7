//! The differential harness available today: the verifier, the text round
//! trip, the reference interpreter, and the pass pipeline, which must not
//! change a single bit of any argument.

use crate::Case;
use std::fmt;
use tile_ir::interp::{self, Arg};
use tile_ir::passes::PassManager;
use tile_ir::text::parse_function;
use tile_ir::verify::verify;

/// The first check a case failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The kernel does not verify.
    Verify(String),
    /// The printed kernel does not parse.
    Parse(String),
    /// Printing the parsed kernel gives other text.
    RoundTrip {
        /// The kernel as printed.
        printed: String,
        /// The parsed kernel as printed.
        reprinted: String,
    },
    /// The interpreter failed on the kernel as generated.
    Interp(String),
    /// The default pipeline failed.
    Pipeline(String),
    /// The interpreter failed on the optimized kernel.
    OptimizedInterp(String),
    /// The optimized kernel left an argument with other bits.
    Mismatch {
        /// The position of the argument.
        arg: usize,
        /// The first differing element (buffer element offset) and both values.
        detail: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Verify(e) => write!(f, "the kernel does not verify: {e}"),
            Failure::Parse(e) => write!(f, "the printed kernel does not parse: {e}"),
            Failure::RoundTrip { printed, reprinted } => write!(
                f,
                "print -> parse -> print changed the text:\n{printed}\n---\n{reprinted}"
            ),
            Failure::Interp(e) => write!(f, "the interpreter failed: {e}"),
            Failure::Pipeline(e) => write!(f, "the default pipeline failed: {e}"),
            Failure::OptimizedInterp(e) => {
                write!(f, "the interpreter failed on the optimized kernel: {e}")
            }
            Failure::Mismatch { arg, detail } => write!(
                f,
                "the optimized kernel left argument {arg} different: {detail}"
            ),
        }
    }
}

/// Runs every check on `case`: it verifies; print → parse → print gives the
/// same text; the interpreter runs it without error; and after
/// `PassManager::default_pipeline()` it leaves every argument bit-identical.
pub fn check_case(case: &Case) -> Result<(), Failure> {
    verify(&case.func).map_err(|e| Failure::Verify(e.to_string()))?;
    let printed = case.func.to_string();
    let parsed = parse_function(&printed).map_err(|e| Failure::Parse(e.to_string()))?;
    let reprinted = parsed.to_string();
    if reprinted != printed {
        return Err(Failure::RoundTrip { printed, reprinted });
    }
    let expected = run(case, &case.func).map_err(Failure::Interp)?;
    let mut optimized = case.func.clone();
    PassManager::default_pipeline()
        .run(&mut optimized, |_, _| {})
        .map_err(|e| Failure::Pipeline(e.to_string()))?;
    let actual = run(case, &optimized).map_err(Failure::OptimizedInterp)?;
    compare(&expected, &actual)
}

/// The arguments after running `func` over the case's grid and a copy of
/// its arguments.
fn run(case: &Case, func: &tile_ir::Function) -> Result<Vec<Arg>, String> {
    let mut args = case.args.clone();
    interp::run(func, case.grid, &mut args).map_err(|e| e.to_string())?;
    Ok(args)
}

/// Compares the arguments bit for bit (tensors: every buffer element, the
/// gaps of padded layouts included).
fn compare(expected: &[Arg], actual: &[Arg]) -> Result<(), Failure> {
    for (arg, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e == a {
            continue;
        }
        let detail = match (e, a) {
            (Arg::Tensor(e), Arg::Tensor(a)) => {
                let size = e.dtype().size_bytes();
                let chunks = e.data().chunks(size).zip(a.data().chunks(size));
                match chunks.enumerate().find(|(_, (x, y))| x != y) {
                    Some((at, (x, y))) => format!(
                        "buffer element {at}: expected {}, found {}",
                        element(e.dtype(), x),
                        element(e.dtype(), y)
                    ),
                    None => "the tensors differ in shape or layout".to_string(),
                }
            }
            _ => format!("expected {e:?}, found {a:?}"),
        };
        return Err(Failure::Mismatch { arg, detail });
    }
    Ok(())
}

/// An element's value and bits, for messages.
fn element(dtype: tile_ir::DType, bytes: &[u8]) -> String {
    match tile_ir::Scalar::read_le(dtype, bytes) {
        Some(s) => format!("{s} ({dtype} bits {:#x})", s.to_bits()),
        None => format!("{bytes:?}"),
    }
}
