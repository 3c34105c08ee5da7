//! Kernels in the canonical text form (exactly as the printer writes them),
//! shared by the text-form tests.

use tile_ir::{ArgKind, BinaryOp, CmpPred, DType, ReduceKind, ScanKind, UnaryOp};

/// Every op kind once, in the syntax of `docs/ir.md`.
pub const EVERY_OP: &str = "\
kernel @every_op(%x: tensor<f32, 2>, %n: i32, %flag: bool) {
  %0 = program_id 0 : i32
  %1 = num_programs 1 : i32
  %2 = constant 1.5 : f32
  %3 = full 0.0 : tile<4x8xf32>
  %4 = iota : tile<16xi32>
  %5 = exp %3 : tile<4x8xf32>
  %6 = add %3, %5 : tile<4x8xf32>
  %7 = cmp lt %3, %5 : tile<4x8xbool>
  %8 = select %7, %3, %5 : tile<4x8xf32>
  %9 = fma %3, %3, %3 : tile<4x8xf32>
  %10 = cast %3 to f16 : tile<4x8xf16>
  %11 = broadcast %2 to [4, 8] : tile<4x8xf32>
  %12 = reshape %3 to [32] : tile<32xf32>
  %13 = permute %3 [1, 0] : tile<8x4xf32>
  %14 = full 2.0 : tile<4x1xf32>
  %15 = expand %14 to [4, 8] : tile<4x8xf32>
  %16 = flip %3 [0, 1] : tile<4x8xf32>
  %17 = slice %3 [0:4:1, 2:8:2] : tile<4x3xf32>
  %18 = pad %3 low [1, 0] high [0, 2] value 0.0 : tile<5x10xf32>
  %19 = cat %3, %3 axis 0 : tile<8x8xf32>
  %20 = reduce sum %3 axis 1 : tile<4xf32>
  %21 = reduce max %3 axis 1 keepdim : tile<4x1xf32>
  %22 = arg argmax %13 axis 0 : tile<4xi32>
  %23 = scan cumsum %3 axis 1 : tile<4x8xf32>
  %24 = full 1.0 : tile<8x8xf32>
  %25 = dot ieee %3, %24, %6 : tile<4x8xf32>
  %26 = dim %x axis 0 : i32
  %27 = partition_view %x [4, 8] : view<f32, [4, 8]>
  %28 = load %27[%0, %1] : tile<4x8xf32>
  %29 = load_masked %27[%0, %1] pad(nan) : tile<4x8xf32>
  store %6, %27[%0, %1]
  store_masked %6, %27[%0, %1]
  %30 = constant 0 : i32
  %31 = constant 4 : i32
  %32 = constant 1 : i32
  %33, %34 = for %35 = %30 to %31 step %32 iter(%36 = %3, %37 = %2) : tile<4x8xf32>, f32 {
    %38 = add %36, %36 : tile<4x8xf32>
    yield %38, %37
  }
  for %39 = %30 to %n step %32 {
    yield
  }
  %40 = if %flag : f32 {
    yield %2
  } else {
    yield %34
  }
  if %flag {
    yield
  } else {
    yield
  }
}";

/// A constant of every dtype, with the extreme and special values.
pub const CONSTANTS: &str = "\
kernel @constants() {
  %0 = constant true : bool
  %1 = constant false : bool
  %2 = constant -128 : i8
  %3 = constant 32767 : i16
  %4 = constant -2147483648 : i32
  %5 = constant 9223372036854775807 : i64
  %6 = constant 255 : u8
  %7 = constant 65535 : u16
  %8 = constant 4294967295 : u32
  %9 = constant 18446744073709551615 : u64
  %10 = constant -65504.0 : f16
  %11 = constant 0.5 : bf16
  %12 = constant 1e-8 : f32
  %13 = constant 0.1 : f64
  %14 = constant 448.0 : f8e4m3
  %15 = constant -57344.0 : f8e5m2
  %16 = constant nan : f32
  %17 = constant inf : f16
  %18 = constant -inf : f8e5m2
  %19 = constant -0.0 : f64
  %20 = constant 3.4028235e38 : f32
  %21 = constant 1e300 : f64
  %22 = full 3 : tile<2x2xi64>
  %23 = full true : tile<2xbool>
  %24 = full -0.25 : tile<2xbf16>
  %25 = full inf : tile<f32>
}";

/// `out = x + y`, one 1024-element block per program, masked at the end.
pub const VECTOR_ADD: &str = "\
kernel @vector_add(%x: tensor<f32, 1>, %y: tensor<f32, 1>, %out: tensor<f32, 1>) {
  %0 = program_id 0 : i32
  %1 = partition_view %x [1024] : view<f32, [1024]>
  %2 = partition_view %y [1024] : view<f32, [1024]>
  %3 = partition_view %out [1024] : view<f32, [1024]>
  %4 = load_masked %1[%0] pad(zero) : tile<1024xf32>
  %5 = load_masked %2[%0] pad(zero) : tile<1024xf32>
  %6 = add %4, %5 : tile<1024xf32>
  store_masked %6, %3[%0]
}";

/// A numerically stable softmax of one row per program.
pub const SOFTMAX: &str = "\
kernel @softmax(%x: tensor<f32, 2>, %out: tensor<f32, 2, aligned>) {
  %0 = program_id 0 : i32
  %1 = constant 0 : i32
  %2 = partition_view %x [1, 1024] : view<f32, [1, 1024]>
  %3 = load_masked %2[%0, %1] pad(neginf) : tile<1x1024xf32>
  %4 = reduce max %3 axis 1 keepdim : tile<1x1xf32>
  %5 = broadcast %4 to [1, 1024] : tile<1x1024xf32>
  %6 = sub %3, %5 : tile<1x1024xf32>
  %7 = exp %6 : tile<1x1024xf32>
  %8 = reduce sum %7 axis 1 keepdim : tile<1x1xf32>
  %9 = broadcast %8 to [1, 1024] : tile<1x1024xf32>
  %10 = div %7, %9 : tile<1x1024xf32>
  %11 = partition_view %out [1, 1024] : view<f32, [1, 1024]>
  store_masked %10, %11[%0, %1]
}";

/// A 64x64 block of `c = a @ b`, accumulating over K in a `for` loop.
pub const MATMUL: &str = "\
kernel @matmul(%a: tensor<f16, 2>, %b: tensor<f16, 2>, %c: tensor<f32, 2>, %k: i32) {
  %0 = program_id 0 : i32
  %1 = program_id 1 : i32
  %2 = partition_view %a [64, 32] : view<f16, [64, 32]>
  %3 = partition_view %b [32, 64] : view<f16, [32, 64]>
  %4 = partition_view %c [64, 64] : view<f32, [64, 64]>
  %5 = full 0.0 : tile<64x64xf32>
  %6 = constant 0 : i32
  %7 = constant 1 : i32
  %8 = constant 32 : i32
  %9 = sub %8, %7 : i32
  %10 = add %k, %9 : i32
  %11 = div %10, %8 : i32
  %12 = for %13 = %6 to %11 step %7 iter(%14 = %5) : tile<64x64xf32> {
    %15 = load_masked %2[%0, %13] pad(zero) : tile<64x32xf16>
    %16 = load_masked %3[%13, %1] pad(zero) : tile<32x64xf16>
    %17 = dot ieee %15, %16, %14 : tile<64x64xf32>
    yield %17
  }
  store %12, %4[%0, %1]
}";

/// An `if` with results inside a `for`, and a `for` inside the `if`.
pub const NESTED: &str = "\
kernel @nested(%x: tensor<i32, 1>, %n: i32) {
  %0 = constant 0 : i32
  %1 = constant 1 : i32
  %2 = partition_view %x [16] : view<i32, [16]>
  %3 = full 0 : tile<16xi32>
  %4 = for %5 = %0 to %n step %1 iter(%6 = %3) : tile<16xi32> {
    %7 = constant 2 : i32
    %8 = rem %5, %7 : i32
    %9 = cmp eq %8, %0 : bool
    %10 = if %9 : tile<16xi32> {
      %11 = load %2[%5] : tile<16xi32>
      %12 = add %6, %11 : tile<16xi32>
      yield %12
    } else {
      for %13 = %0 to %5 step %1 {
        store %6, %2[%13]
        yield
      }
      yield %6
    }
    yield %10
  }
  store %4, %2[%0]
}";

/// A `while` carrying a tile and a counter, its condition a reduction of the
/// tile (block-uniform).
pub const WHILE: &str = "\
kernel @halve(%x: tensor<f32, 1>, %limit: f32) {
  %0 = constant 0 : i32
  %1 = partition_view %x [16] : view<f32, [16]>
  %2 = load %1[%0] : tile<16xf32>
  %3, %4 = while iter(%5 = %2, %6 = %0) : tile<16xf32>, i32 {
    %9 = reduce max %5 axis 0 : f32
    %10 = cmp gt %9, %limit : bool
    yield %10
  } do(%7, %8) {
    %11 = full 0.5 : tile<16xf32>
    %12 = mul %7, %11 : tile<16xf32>
    %13 = constant 1 : i32
    %14 = add %8, %13 : i32
    yield %12, %14
  }
  store %3, %1[%4]
}";

/// Reductions and scans with a combine function: a row's maximum and its
/// first index (two tiles), and a decayed running sum.
pub const COMBINE: &str = "\
kernel @combine(%x: tensor<f32, 2>, %decay: f32) {
  %0 = constant 0 : i32
  %1 = partition_view %x [4, 8] : view<f32, [4, 8]>
  %2 = load %1[%0, %0] : tile<4x8xf32>
  %3 = iota : tile<4x8xi32>
  %4, %5 = reduce_with %2, %3 axis 1 keepdim combine(%6, %7, %8, %9) : tile<4x1xf32>, tile<4x1xi32> {
    %10 = cmp gt %8, %6 : bool
    %11 = select %10, %8, %6 : f32
    %12 = select %10, %9, %7 : i32
    yield %11, %12
  }
  %13 = scan_with %2 axis 1 combine(%14, %15) : tile<4x8xf32> {
    %16 = mul %14, %decay : f32
    %17 = add %16, %15 : f32
    yield %17
  }
  store %13, %1[%0, %0]
}";

/// Every variant of every attribute enum (unary and binary ops, comparison
/// predicates, reductions with and without `keepdim`, scans, paddings) and a
/// cast to every dtype, generated from the enums' `ALL` lists so that a new
/// variant is covered without editing this file.
pub fn every_variant() -> String {
    let mut lines = vec![
        format!(
            "kernel @variants(%x: tensor<f32, 2>, %i: tensor<i32, 2>, {}) {{",
            DType::ALL
                .map(|d| format!("%t_{d}: tensor<{d}, 1>"))
                .join(", ")
        ),
        "  %0 = full 1.0 : tile<4x8xf32>".to_string(),
        "  %1 = full 3 : tile<4x8xi32>".to_string(),
        "  %2 = constant 0 : i32".to_string(),
        "  %3 = partition_view %x [4, 8] : view<f32, [4, 8]>".to_string(),
        "  %4 = partition_view %i [4, 8] : view<i32, [4, 8]>".to_string(),
    ];
    let mut next = 5;
    let mut op = |lines: &mut Vec<String>, body: String, ty: &str| {
        lines.push(format!("  %{next} = {body} : {ty}"));
        next += 1;
    };
    let f = "tile<4x8xf32>";
    for u in UnaryOp::ALL {
        op(&mut lines, format!("{u} %0"), f);
    }
    for b in BinaryOp::ALL {
        op(&mut lines, format!("{b} %1, %1"), "tile<4x8xi32>");
    }
    for p in CmpPred::ALL {
        op(&mut lines, format!("cmp {p} %0, %0"), "tile<4x8xbool>");
    }
    for r in ReduceKind::ALL {
        op(&mut lines, format!("reduce {r} %0 axis 0"), "tile<8xf32>");
        op(
            &mut lines,
            format!("reduce {r} %0 axis 1 keepdim"),
            "tile<4x1xf32>",
        );
    }
    for a in ArgKind::ALL {
        op(&mut lines, format!("arg {a} %0 axis 1"), "tile<4xi32>");
        op(
            &mut lines,
            format!("arg {a} %0 axis 0 keepdim"),
            "tile<1x8xi32>",
        );
    }
    for s in ScanKind::ALL {
        op(&mut lines, format!("scan {s} %0 axis 0"), f);
    }
    for padding in ["zero", "nan", "posinf", "neginf", "-2.5", "1e-30"] {
        op(
            &mut lines,
            format!("load_masked %3[%2, %2] pad({padding})"),
            f,
        );
    }
    op(
        &mut lines,
        "load_masked %4[%2, %2] pad(-7)".to_string(),
        "tile<4x8xi32>",
    );
    for d in DType::ALL {
        op(
            &mut lines,
            format!("cast %0 to {d}"),
            &format!("tile<4x8x{d}>"),
        );
    }
    for d in DType::ALL {
        op(&mut lines, "iota".to_string(), &format!("tile<2x{d}>"));
        let view = format!("view<{d}, [2]>");
        op(&mut lines, format!("partition_view %t_{d} [2]"), &view);
    }
    lines.push("}".to_string());
    lines.join("\n")
}

/// `dot_scaled` with both operands scaled (MXFP4 by MXFP8) and with one
/// `bf16` operand that has no scales.
pub const DOT_SCALED: &str = "\
kernel @dot_scaled(%a: tensor<f4e2m1, 2>, %sa: tensor<f8e8m0, 2>, %b: tensor<f8e4m3, 2>, %sb: tensor<f8e8m0, 2>, %w: tensor<bf16, 2>) {
  %0 = constant 0 : i32
  %1 = partition_view %a [16, 64] : view<f4e2m1, [16, 64]>
  %2 = load %1[%0, %0] : tile<16x64xf4e2m1>
  %3 = partition_view %sa [16, 2] : view<f8e8m0, [16, 2]>
  %4 = load %3[%0, %0] : tile<16x2xf8e8m0>
  %5 = partition_view %b [64, 8] : view<f8e4m3, [64, 8]>
  %6 = load %5[%0, %0] : tile<64x8xf8e4m3>
  %7 = partition_view %sb [8, 2] : view<f8e8m0, [8, 2]>
  %8 = load %7[%0, %0] : tile<8x2xf8e8m0>
  %9 = full 0.0 : tile<16x8xf32>
  %10 = dot_scaled %2, %4, %6, %8, %9 : tile<16x8xf32>
  %11 = partition_view %w [16, 64] : view<bf16, [16, 64]>
  %12 = load %11[%0, %0] : tile<16x64xbf16>
  %13 = dot_scaled %12, %6, %8, %10 : tile<16x8xf32>
}";

/// Every canonical program above.
pub fn all() -> Vec<(&'static str, String)> {
    vec![
        ("every_op", EVERY_OP.to_string()),
        ("constants", CONSTANTS.to_string()),
        ("vector_add", VECTOR_ADD.to_string()),
        ("softmax", SOFTMAX.to_string()),
        ("matmul", MATMUL.to_string()),
        ("nested", NESTED.to_string()),
        ("while", WHILE.to_string()),
        ("combine", COMBINE.to_string()),
        ("dot_scaled", DOT_SCALED.to_string()),
        ("every_variant", every_variant()),
    ]
}
