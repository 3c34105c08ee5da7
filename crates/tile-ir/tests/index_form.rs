//! The axis forms of index tiles: which tiles run with their coordinate
//! along an axis (from which multiple of a power of two), which are equal
//! along it, and which are neither.

use std::collections::HashMap;
use tile_ir::index_form::{AxisForm, IndexForms};
use tile_ir::text::parse_function;
use tile_ir::Value;

const KERNEL: &str = "kernel @k(%n: i32, %t: tensor<i32, 1>) {
  %rows = iota : tile<4x8xi32>
  %col = iota : tile<1x8xi32>
  %row = iota : tile<4x1xi32>
  %c16 = constant 16 : i32
  %b16 = broadcast %c16 to [4, 8] : tile<4x8xi32>
  %wide = broadcast %col to [4, 8] : tile<4x8xi32>
  %shifted = add %wide, %b16 : tile<4x8xi32>
  %back = sub %shifted, %b16 : tile<4x8xi32>
  %bn = broadcast %n to [4, 8] : tile<4x8xi32>
  %unknown = add %wide, %bn : tile<4x8xi32>
  %twice = add %wide, %wide : tile<4x8xi32>
  %per_row = broadcast %row to [4, 8] : tile<4x8xi32>
  %live = cmp lt %per_row, %bn : tile<4x8xbool>
  %long = cast %shifted to i64 : tile<4x8xi64>
  %floats = cast %shifted to f32 : tile<4x8xf32>
  %flipped = sub %b16, %wide : tile<4x8xi32>
  %every = full true : tile<4x8xbool>
  %loaded = gather %t[%wide], %every, %b16 : tile<4x8xi32>
}";

#[test]
fn index_tiles_run_with_their_coordinate_or_stay_equal() {
    let func = parse_function(KERNEL).unwrap_or_else(|e| panic!("{e}"));
    let forms = IndexForms::new(&func);
    // Each line of the body defines one value, in order.
    let names = KERNEL
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().strip_prefix('%')?.split(' ').next());
    let values: HashMap<&str, Value> = names
        .zip(func.body.ops.iter().map(|&op| func.op(op).results[0]))
        .collect();
    let along = |name: &str, axis: usize| forms.along(values[name], axis);
    let coordinate = |zeros| AxisForm::Coordinate { zeros };
    // A row-major iota: the column plus 8 times the row; along the rows it
    // steps by 8.
    assert_eq!(along("rows", 1), coordinate(3));
    assert_eq!(along("rows", 0), AxisForm::Unknown);
    assert_eq!(along("col", 1), coordinate(32));
    assert_eq!(along("wide", 0), AxisForm::Uniform);
    assert_eq!(along("wide", 1), coordinate(32));
    assert_eq!(along("shifted", 1), coordinate(4));
    assert_eq!(along("back", 1), coordinate(4));
    assert_eq!(along("unknown", 1), coordinate(0));
    assert_eq!(along("twice", 1), AxisForm::Unknown);
    assert_eq!(along("per_row", 1), AxisForm::Uniform);
    assert_eq!(along("per_row", 0), coordinate(32));
    assert_eq!(along("live", 1), AxisForm::Uniform);
    assert_eq!(along("live", 0), AxisForm::Unknown);
    assert_eq!(along("long", 1), coordinate(4));
    assert_eq!(along("floats", 1), AxisForm::Unknown);
    assert_eq!(along("flipped", 1), AxisForm::Unknown);
    assert_eq!(along("loaded", 1), AxisForm::Unknown);
}
