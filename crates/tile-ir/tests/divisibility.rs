//! The divisibility analysis: the power of two each integer scalar of a
//! kernel is known to be a multiple of, by each of its rules, and nothing
//! where nothing follows.

use tile_ir::divisibility::Divisibility;
use tile_ir::text::parse_function;
use tile_ir::verify::verify;
use tile_ir::{Function, Value};

/// A kernel whose every rule has a named value.
const KERNEL: &str = r#"
kernel @k(%x: tensor<f16, 2, aligned>, %y: tensor<f16, 2>, %n: i32) {
  %pid = program_id 0 : i32
  %zero = constant 0 : i32
  %one = constant 1 : i32
  %three = constant 3 : i32
  %c24 = constant 24 : i32
  %c64 = constant 64 : i32
  %neg = constant -96 : i32
  %block = mul %pid, %c64 : i32
  %sum = add %block, %c24 : i32
  %odd = add %block, %one : i32
  %diff = sub %block, %neg : i32
  %least = min %block, %c24 : i32
  %shifted = shl %n, %three : i32
  %rest = rem %n, %c24 : i32
  %hinted = multiple_of 0 24 %n : i32
  %both = mul %hinted, %shifted : i32
  %wide = cast %hinted to i64 : i64
  %narrow = cast %block to i8 : i8
  %zero8 = cast %zero to i8 : i8
  %rows = dim %x axis 1 : i32
  %cols = dim %x axis 0 : i32
  %other = dim %y axis 1 : i32
  %quotient = div %block, %three : i32
  for %i = %block to %n step %c24 {
    %j = add %i, %zero : i32
    yield
  }
}"#;

/// The value named `name` in `func` (parsed from [`KERNEL`]): results are
/// numbered in the order the text defines them, `%i` is the loop's index,
/// parameters are named.
fn named(func: &Function, name: &str) -> Value {
    let mut results = Vec::new();
    let mut index = None;
    func.walk(&mut |id| {
        let op = func.op(id);
        results.extend(op.results.iter().copied());
        if let [body] = op.regions.as_slice() {
            index = body.args.first().copied();
        }
    });
    if name == "i" {
        return index.expect("the loop");
    }
    if let Some(p) = func.params.iter().find(|p| p.name == name) {
        return p.value;
    }
    let defined: Vec<&str> = KERNEL
        .lines()
        .filter_map(|l| l.trim().strip_prefix('%')?.split_once(" = "))
        .map(|(n, _)| n)
        .collect();
    let at = defined.iter().position(|&n| n == name);
    results[at.unwrap_or_else(|| panic!("no value %{name}"))]
}

#[test]
fn each_rule_gives_its_power_of_two() {
    let func = parse_function(KERNEL).unwrap();
    verify(&func).unwrap();
    let analysis = Divisibility::new(&func);
    let divisor = |name: &str| analysis.divisor(named(&func, name));
    for (name, want) in [
        ("pid", 1),
        ("n", 1),
        ("c24", 8),
        ("neg", 32),
        ("zero", 1 << 32),
        ("block", 64),
        ("sum", 8),
        ("odd", 1),
        ("diff", 32),
        ("least", 8),
        ("shifted", 8),
        ("rest", 1),
        ("hinted", 8),
        ("both", 64),
        ("wide", 8),
        ("narrow", 64),
        ("zero8", 256),
        // Rows of an aligned f16 tensor: 16 bytes are 8 elements.
        ("rows", 8),
        ("cols", 1),
        ("other", 1),
        ("quotient", 1),
        ("i", 8),
        ("j", 8),
    ] {
        assert_eq!(divisor(name), want, "%{name}");
    }
}
