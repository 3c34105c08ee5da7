//! A corpus of failing cases saved as text files, so that a test suite can
//! save a shrunk failure the moment it finds it and replay every saved case
//! on every run.
//!
//! One case per `<name>.case` file:
//!
//! ```text
//! # why the case was saved (free text, one or more lines)
//! warps 4
//! grid 1 1 1
//! tensor i64 shape 2 12 10 strides 120 10 1 offset 0 data 0000…
//! scalar f32 0x3f800000
//! kernel
//! kernel @gen_32(...) { ... }
//! ```
//!
//! `tensor` and `scalar` lines are the arguments in parameter order; the
//! tile IR text follows the `kernel` line to the end of the file.

use crate::regression::{hex, hex_bytes};
use crate::Case;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::text::parse_function;
use tile_ir::{DType, Scalar};

/// A case of the corpus with the number of warps it was lowered with.
#[derive(Clone, Debug)]
pub struct SavedCase {
    /// The file's stem.
    pub name: String,
    /// The case.
    pub case: Case,
    /// Warps per block when it failed.
    pub warps: u32,
}

/// The text of a case file (see the module docs).
pub fn case_text(case: &Case, warps: u32, why: &str) -> String {
    let mut s = String::new();
    for line in why.lines() {
        let _ = writeln!(s, "# {line}");
    }
    let _ = writeln!(s, "warps {warps}");
    let [x, y, z] = case.grid;
    let _ = writeln!(s, "grid {x} {y} {z}");
    for arg in &case.args {
        match arg {
            Arg::Tensor(t) => s.push_str(&tensor_line(t)),
            Arg::Tensors(ts) => {
                let _ = writeln!(s, "tensors {}", ts.len());
                ts.iter().for_each(|t| s.push_str(&tensor_line(t)));
            }
            Arg::Scalar(v) => {
                let _ = writeln!(s, "scalar {} {:#x}", v.dtype(), v.to_bits());
            }
        }
    }
    let _ = writeln!(s, "kernel");
    let _ = write!(s, "{}", case.func);
    s
}

/// A tensor's line: `tensor <dtype> shape .. strides .. offset .. data ..`.
fn tensor_line(t: &HostTensor) -> String {
    let list = |v: Vec<String>| v.join(" ");
    format!(
        "tensor {} shape {} strides {} offset {} data {}\n",
        t.dtype(),
        list(t.shape().iter().map(ToString::to_string).collect()),
        list(t.strides().iter().map(ToString::to_string).collect()),
        t.offset(),
        hex(t.data())
    )
}

/// Writes `case` as `<dir>/<name>.case`; returns the path.
pub fn save_case(
    dir: &Path,
    name: &str,
    case: &Case,
    warps: u32,
    why: &str,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.case"));
    std::fs::write(&path, case_text(case, warps, why))?;
    Ok(path)
}

/// Parses the text of a case file.
pub fn parse_case(name: &str, text: &str) -> Result<SavedCase, String> {
    let err = |m: String| format!("{name}.case: {m}");
    let mut warps = None;
    let mut grid = None;
    let mut args = Vec::new();
    // The tensors still to read into the tensor array `args` ends with.
    let mut array_left = 0;
    let mut lines = text.lines();
    for line in lines.by_ref() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [w, ..] if w.starts_with('#') => {}
            ["warps", n] => warps = Some(n.parse::<u32>().map_err(|e| err(format!("warps: {e}")))?),
            ["grid", x, y, z] => {
                let p = |v: &str| v.parse::<u32>().map_err(|e| err(format!("grid: {e}")));
                grid = Some([p(x)?, p(y)?, p(z)?]);
            }
            ["scalar", dtype, bits] => {
                let dtype: DType = dtype
                    .parse()
                    .map_err(|_| err(format!("unknown dtype {dtype}")))?;
                let bits = u64::from_str_radix(bits.trim_start_matches("0x"), 16)
                    .map_err(|e| err(format!("scalar bits: {e}")))?;
                args.push(Arg::Scalar(Scalar::from_bits(dtype, bits)));
            }
            ["tensors", n] => {
                array_left = n
                    .parse::<usize>()
                    .map_err(|e| err(format!("tensors: {e}")))?;
                args.push(Arg::Tensors(Vec::new()));
            }
            ["tensor", dtype, rest @ ..] => {
                let t = parse_tensor(dtype, rest).map_err(err)?;
                match args.last_mut() {
                    Some(Arg::Tensors(ts)) if array_left > 0 => {
                        ts.push(t);
                        array_left -= 1;
                    }
                    _ => args.push(Arg::Tensor(t)),
                }
            }
            ["kernel"] => break,
            _ => return Err(err(format!("unexpected line `{line}`"))),
        }
    }
    let source: Vec<&str> = lines.collect();
    let func = parse_function(&source.join("\n")).map_err(|e| err(format!("the kernel: {e}")))?;
    Ok(SavedCase {
        name: name.to_string(),
        case: Case {
            func,
            grid: grid.ok_or_else(|| err("no grid line".into()))?,
            args,
        },
        warps: warps.ok_or_else(|| err("no warps line".into()))?,
    })
}

fn parse_tensor(dtype: &str, words: &[&str]) -> Result<HostTensor, String> {
    let dtype: DType = dtype
        .parse()
        .map_err(|_| format!("unknown dtype {dtype}"))?;
    let section = |key: &str, next: &str| -> Vec<&str> {
        let start = words
            .iter()
            .position(|w| *w == key)
            .map_or(words.len(), |i| i + 1);
        let end = words[start..]
            .iter()
            .position(|w| *w == next)
            .map_or(words.len(), |i| start + i);
        words[start..end].to_vec()
    };
    let shape = section("shape", "strides")
        .iter()
        .map(|v| v.parse::<usize>().map_err(|e| format!("shape: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let strides = section("strides", "offset")
        .iter()
        .map(|v| v.parse::<isize>().map_err(|e| format!("strides: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let offset = section("offset", "data")
        .first()
        .ok_or("no offset")?
        .parse::<usize>()
        .map_err(|e| format!("offset: {e}"))?;
    let data = hex_bytes(section("data", "").first().copied().unwrap_or(""));
    HostTensor::with_strides(dtype, &shape, &strides, offset, data).map_err(|e| e.to_string())
}

/// Every case of `dir` (none if it does not exist), sorted by name.
pub fn load_cases(dir: &Path) -> Result<Vec<SavedCase>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("case") {
            continue;
        }
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("case")
            .to_string();
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        out.push(parse_case(&name, &text)?);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
