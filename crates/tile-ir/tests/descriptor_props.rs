//! Properties of derived descriptors: packed strides pass validation, cover
//! exactly `0..element_size` with distinct offsets, and the element space of a
//! packed descriptor equals its element size.

use proptest::prelude::*;
use tile_ir::descriptor::{Layout, TensorDescriptor};

fn all_indices(lengths: &[usize]) -> Vec<Vec<usize>> {
    lengths.iter().fold(vec![vec![]], |acc, &n| {
        acc.into_iter()
            .flat_map(|p| (0..n).map(move |i| [p.clone(), vec![i]].concat()))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn packed_descriptors_are_bijections(
        lengths in prop::collection::vec(1usize..5, 1..5),
        column in any::<bool>(),
    ) {
        let layout = if column { Layout::ColumnMajor } else { Layout::RowMajor };
        let d = TensorDescriptor::packed(&lengths, layout).unwrap();
        prop_assert_eq!(d.element_space_size(), d.element_size());
        let mut seen = vec![false; d.element_size()];
        for index in all_indices(&lengths) {
            let offset = d.offset(&index).unwrap();
            prop_assert!(!seen[offset], "offset {} twice in {}", offset, d);
            seen[offset] = true;
        }
        // Re-validating the derived strides as explicit strides succeeds.
        let explicit: Vec<i64> = d.strides().iter().map(|&s| s as i64).collect();
        prop_assert_eq!(TensorDescriptor::with_strides(&lengths, &explicit, layout).unwrap(), d);
    }

    #[test]
    fn completing_the_matrix_strides_matches_the_packed_ones(
        lengths in prop::collection::vec(1usize..5, 2..5),
        column in any::<bool>(),
        forget in 1usize..4,
    ) {
        let layout = if column { Layout::ColumnMajor } else { Layout::RowMajor };
        let packed = TensorDescriptor::packed(&lengths, layout).unwrap();
        let mut given: Vec<i64> = packed.strides().iter().map(|&s| s as i64).collect();
        let rank = given.len();
        // Forget one or both matrix strides (bit 0: last dim, bit 1: the one before).
        if forget & 1 != 0 { given[rank - 1] = 0; }
        if forget & 2 != 0 { given[rank - 2] = -1; }
        if given.iter().all(|&s| s <= 0) {
            return Ok(());
        }
        prop_assert_eq!(TensorDescriptor::with_strides(&lengths, &given, layout).unwrap(), packed);
    }
}
