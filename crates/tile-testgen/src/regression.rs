//! Saving a case as a Rust regression test.

use crate::Case;
use std::fmt::Write;
use tile_ir::interp::{Arg, HostTensor};

/// The case as the source of a Rust integration test: the kernel in its text
/// form (parsed back with `tile_ir::text::parse_function`), the grid, and
/// every argument exactly (tensors with their layout and buffer bytes, in
/// hex). The test fails while [`crate::check_case`] fails on the case.
///
/// Save it as `crates/tile-testgen/tests/regressions/<name>.rs` and add
/// `mod <name>;` to `tests/regressions/main.rs`.
pub fn to_regression_test(case: &Case) -> String {
    let name = &case.func.name;
    let mut src = String::new();
    let _ = writeln!(src, "//! Regression case `{name}`, shrunk by tile-testgen.");
    let _ = writeln!(src);
    let tensors = case.args.iter().any(|a| matches!(a, Arg::Tensor(_)));
    let scalars = case.args.iter().any(|a| matches!(a, Arg::Scalar(_)));
    let _ = writeln!(src, "use tile_ir::interp::Arg;");
    if tensors {
        let _ = writeln!(src, "use tile_ir::interp::HostTensor;");
    }
    if tensors || scalars {
        let _ = writeln!(src, "use tile_ir::DType;");
    }
    if scalars {
        let _ = writeln!(src, "use tile_ir::Scalar;");
    }
    let _ = writeln!(src);
    let _ = writeln!(src, "const KERNEL: &str = r#\"{}\"#;", case.func);
    let _ = writeln!(src);
    let _ = writeln!(src, "/// The case, exactly as it failed.");
    let _ = writeln!(src, "pub fn case() -> tile_testgen::Case {{");
    let _ = writeln!(
        src,
        "    let func = tile_ir::text::parse_function(KERNEL).expect(\"the kernel parses\");"
    );
    let _ = writeln!(src, "    let args: Vec<Arg> = vec![");
    for arg in &case.args {
        match arg {
            Arg::Scalar(s) => {
                let _ = writeln!(
                    src,
                    "        Arg::Scalar(Scalar::from_bits(DType::{:?}, {:#x})),",
                    s.dtype(),
                    s.to_bits()
                );
            }
            Arg::Tensor(t) => {
                let _ = writeln!(src, "        Arg::Tensor({}),", tensor_source(t));
            }
            Arg::Tensors(ts) => {
                let tensors: Vec<String> = ts.iter().map(tensor_source).collect();
                let _ = writeln!(src, "        Arg::Tensors(vec![{}]),", tensors.join(", "));
            }
        }
    }
    let _ = writeln!(src, "    ];");
    let _ = writeln!(
        src,
        "    tile_testgen::Case {{ func, grid: {:?}, args }}",
        case.grid
    );
    let _ = writeln!(src, "}}");
    let _ = writeln!(src);
    let _ = writeln!(src, "#[test]");
    let _ = writeln!(src, "fn {name}() {{");
    let _ = writeln!(
        src,
        "    if let Err(failure) = tile_testgen::check_case(&case()) {{"
    );
    let _ = writeln!(src, "        panic!(\"{{failure}}\");");
    let _ = writeln!(src, "    }}");
    let _ = writeln!(src, "}}");
    src
}

/// The bytes written in hex by [`to_regression_test`] (two digits per byte;
/// anything that is not a hex digit pair is skipped).
pub fn hex_bytes(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex
        .chars()
        .filter_map(|c| c.to_digit(16))
        .map(|d| d as u8)
        .collect();
    digits.chunks_exact(2).map(|p| (p[0] << 4) | p[1]).collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The Rust expression that builds `t` in a regression test.
fn tensor_source(t: &HostTensor) -> String {
    format!(
        "HostTensor::with_strides(DType::{:?}, &{:?}, &{:?}, {}, tile_testgen::hex_bytes(\"{}\")).expect(\"a valid layout\")",
        t.dtype(),
        t.shape(),
        t.strides(),
        t.offset(),
        hex(t.data())
    )
}
