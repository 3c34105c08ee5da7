//! The vector width of each tile's default layout: how many consecutive
//! elements of its innermost axis a thread holds, so that the loads and
//! stores of global memory it takes part in move 16 bytes at once.
//!
//! Values joined by elementwise ops (operands and results of one shape)
//! share one width, so that choosing it never puts two layouts into one op;
//! so do a gather's result and its index tiles, mask and `other` (a
//! scatter's value and its index tiles and mask), and the gather counts as
//! a global access of its result's elements (the scatter of its value's).
//! A group whose global accesses all move elements of at most 2 bytes (a
//! bf16 row cast to f32, scaled and stored as bf16 again) gets
//! `16 / size` elements per thread: 8 for 16-bit types, 16 for 8-bit ones,
//! Triton's choice, where 4 would halve every access. The other groups keep
//! 4 (16 bytes of f32). Either way the width divides the innermost extent
//! (a power of two dividing it, down to 1), so that every partition's first
//! element, hence every vector, is aligned when the tensor's rows are.

use super::groups::{same_shape, Groups};
use super::propagate::elementwise;
use std::collections::BTreeMap;
use tile_ir::{Function, OpKind, Type, Value};

/// The width of groups without narrow global accesses: 16 bytes of f32.
const DEFAULT_WIDTH: usize = 4;

/// The bytes one vector access moves at most.
const VECTOR_BYTES: usize = 16;

/// The vector width of every tile value of `func`.
pub(super) fn vector_widths(func: &Function) -> BTreeMap<Value, usize> {
    let mut groups = Groups::default();
    // The widest element each group moves to or from global memory.
    let mut accessed: Vec<(Value, usize)> = Vec::new();
    func.walk(&mut |id| {
        let op = func.op(id);
        // A gather reads its elements at its index tiles, converted to its
        // layout: they share its width, as an elementwise op's operands.
        if elementwise(&op.kind) || matches!(op.kind, OpKind::Gather) {
            for &r in &op.results {
                for &x in &op.operands {
                    if same_shape(func, x, r) {
                        groups.join(x, r);
                    }
                }
            }
        }
        // A scatter writes its value's elements at its index tiles, alike.
        let written = match op.kind {
            OpKind::Scatter => op.operands.iter().rev().nth(1),
            _ => None,
        };
        if let Some(&value) = written {
            for &x in &op.operands[1..] {
                if same_shape(func, x, value) {
                    groups.join(x, value);
                }
            }
        }
        let moved = match op.kind {
            OpKind::Load | OpKind::LoadMasked { .. } | OpKind::Gather => op.results.first(),
            OpKind::Store | OpKind::StoreMasked => op.operands.first(),
            OpKind::Scatter => written,
            _ => None,
        };
        if let Some(&v) = moved {
            if let Type::Tile(t) = func.ty(v) {
                accessed.push((v, t.dtype.size_bytes()));
            }
        }
    });
    let mut widest: BTreeMap<Value, usize> = BTreeMap::new();
    for (v, size) in accessed {
        let root = groups.root(v);
        let entry = widest.entry(root).or_insert(0);
        *entry = (*entry).max(size);
    }
    let mut widths = BTreeMap::new();
    for (value, info) in func.values.iter() {
        let Type::Tile(t) = &info.ty else { continue };
        let width = match widest.get(&groups.root(value)) {
            Some(&size) if size <= 2 => VECTOR_BYTES / size.max(1),
            _ => DEFAULT_WIDTH,
        };
        widths.insert(value, fitted(width, t.shape.dims()));
    }
    widths
}

/// The largest power of two up to `width` that divides the innermost
/// extent of `shape`.
fn fitted(width: usize, shape: &[usize]) -> usize {
    let extent = shape.last().copied().unwrap_or(1);
    let mut w = width.max(1);
    while w > 1 && !extent.is_multiple_of(w) {
        w /= 2;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::vector_widths;
    use tile_ir::text::parse_function;

    /// The widths of the kernel's values `%n` (numbered in order, as the
    /// texts below number them).
    fn widths(text: &str, values: &[usize]) -> Vec<usize> {
        let func = parse_function(text).expect("the kernel parses");
        let widths = vector_widths(&func);
        let mut results = Vec::new();
        func.walk(&mut |id| results.extend(func.op(id).results.iter().copied()));
        values.iter().map(|&n| widths[&results[n]]).collect()
    }

    #[test]
    fn bf16_rows_computed_in_f32_move_sixteen_bytes() {
        // Liger's SwiGLU: bf16 loads, f32 arithmetic, a bf16 store.
        let swiglu =
            "kernel @swiglu(%a: tensor<bf16, 2>, %b: tensor<bf16, 2>, %c: tensor<bf16, 2>) {
  %0 = program_id 0 : i32
  %1 = partition_view %a [1, 1024] : view<bf16, [1, 1024]>
  %2 = constant 0 : i32
  %3 = load_masked %1[%0, %2] pad(zero) : tile<1x1024xbf16>
  %4 = cast %3 to f32 : tile<1x1024xf32>
  %5 = partition_view %b [1, 1024] : view<bf16, [1, 1024]>
  %6 = load_masked %5[%0, %2] pad(zero) : tile<1x1024xbf16>
  %7 = exp %4 : tile<1x1024xf32>
  %8 = mul %4, %7 : tile<1x1024xf32>
  %9 = partition_view %c [1, 1024] : view<bf16, [1, 1024]>
  %10 = cast %8 to bf16 : tile<1x1024xbf16>
  %11 = mul %10, %6 : tile<1x1024xbf16>
  store_masked %11, %9[%0, %2]
}";
        assert_eq!(widths(swiglu, &[3, 4, 6, 7, 8, 10, 11]), [8; 7]);
    }

    #[test]
    fn a_group_with_an_f32_access_keeps_four() {
        // A bf16 row scaled by an f32 row: one group, whose f32 load moves
        // 16 bytes in 4 elements, so the bf16 load moves 8.
        let scaled = "kernel @scaled(%a: tensor<bf16, 2>, %s: tensor<f32, 2>, %c: tensor<f32, 2>) {
  %0 = program_id 0 : i32
  %1 = partition_view %a [1, 1024] : view<bf16, [1, 1024]>
  %2 = constant 0 : i32
  %3 = load_masked %1[%0, %2] pad(zero) : tile<1x1024xbf16>
  %4 = cast %3 to f32 : tile<1x1024xf32>
  %5 = partition_view %s [1, 1024] : view<f32, [1, 1024]>
  %6 = load_masked %5[%0, %2] pad(zero) : tile<1x1024xf32>
  %7 = mul %4, %6 : tile<1x1024xf32>
  %8 = partition_view %c [1, 1024] : view<f32, [1, 1024]>
  store_masked %7, %8[%0, %2]
}";
        assert_eq!(widths(scaled, &[3, 4, 6, 7]), [4; 4]);
    }

    #[test]
    fn widths_divide_the_innermost_extent() {
        // 12 bf16 columns: 8 does not divide 12, 4 does.
        let narrow = "kernel @narrow(%a: tensor<bf16, 2>, %c: tensor<bf16, 2>) {
  %0 = program_id 0 : i32
  %1 = partition_view %a [2, 12] : view<bf16, [2, 12]>
  %2 = constant 0 : i32
  %3 = load_masked %1[%0, %2] pad(zero) : tile<2x12xbf16>
  %4 = partition_view %c [2, 12] : view<bf16, [2, 12]>
  store_masked %3, %4[%0, %2]
}";
        assert_eq!(widths(narrow, &[3]), [4]);
    }
}
