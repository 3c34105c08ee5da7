//! The source locations of checks, given after the kernel cache.
//!
//! A specialization is compiled from its tile IR without source locations
//! ([`tile_ir::Function::without_locations`]), and the cache is keyed by
//! that text: moving a kernel in its file (a comment added above it)
//! changes no key and recompiles nothing. The checks of the images so name
//! their ops without locations (`` `%3 = load %2, %0` (a view of `x`) ``);
//! [`Sites`] swaps each for the op's description with its location (what
//! `ValueNames::describe_site` writes for the located kernel), which the
//! runtime's errors show.

use std::collections::HashMap;
use tile_ir::{Function, ValueNames};

/// For each op's description without location, the one with it (`None`
/// when two ops share the first but not the second, so the location is
/// ambiguous and left out).
pub(super) struct Sites {
    located: HashMap<String, Option<String>>,
}

impl Sites {
    /// The descriptions of `func`'s ops, from `plain` (`func` without
    /// locations) to `func`.
    pub(super) fn new(func: &Function, plain: &Function) -> Sites {
        let names = ValueNames::new(func);
        let mut located: HashMap<String, Option<String>> = HashMap::new();
        func.walk(&mut |op| {
            let with = names.describe_site(func, op);
            let entry = located
                .entry(names.describe_site(plain, op))
                .or_insert_with(|| Some(with.clone()));
            if entry.as_ref() != Some(&with) {
                *entry = None;
            }
        });
        Sites { located }
    }

    /// `check` with its op's location, or as it is when none is known.
    pub(super) fn locate(&self, check: &str) -> String {
        match self.located.get(check) {
            Some(Some(with)) => with.clone(),
            _ => check.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::text::parse_function;

    #[test]
    fn a_check_takes_its_location_unless_two_ops_share_its_description() {
        let func = parse_function(
            r#"kernel @k(%x: tensor<f32, 1>, %n: i32, %s: i32) {
  %0 = program_id 0 : i32
  %1 = partition_view %x [4] : view<f32, [4]>
  %2 = load %1[%0] : tile<4xf32> loc("k.rs":3:9, "x.load(..)")
  for %3 = %0 to %n step %s loc("k.rs":4:5, "for i in 0..n {..}") {
    yield
  }
  for %4 = %0 to %n step %s loc("k.rs":5:5, "for j in 0..n {..}") {
    yield
  }
}"#,
        )
        .unwrap();
        let plain = func.without_locations();
        let sites = Sites::new(&func, &plain);
        assert_eq!(
            sites.locate("`%2 = load %1, %0` (a view of `x`)"),
            "`x.load(..)` at k.rs:3:9 (`%2 = load %1, %0`, a view of `x`)"
        );
        assert_eq!(sites.locate("`for %0, %n, %s`"), "`for %0, %n, %s`");
        assert_eq!(sites.locate("`unknown`"), "`unknown`");
    }
}
