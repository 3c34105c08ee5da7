//! Properties of descriptors: packed strides pass validation, cover exactly
//! `0..element_size` with distinct offsets, and the element space of a packed
//! descriptor equals its element size; completed strides equal packed ones;
//! and any explicit strides that pass validation never map two indices to the
//! same offset (which CK's rule alone does not guarantee, see docs/strided-views.md).

use proptest::prelude::*;
use tile_tensor::descriptor::{StrideOrder, TensorDescriptor};

fn all_indices(lengths: &[usize]) -> Vec<Vec<usize>> {
    lengths.iter().fold(vec![vec![]], |acc, &n| {
        acc.into_iter()
            .flat_map(|p| (0..n).map(move |i| [p.clone(), vec![i]].concat()))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn packed_descriptors_are_bijections(
        lengths in prop::collection::vec(1usize..5, 1..5),
        column in any::<bool>(),
    ) {
        let layout = if column { StrideOrder::ColumnMajor } else { StrideOrder::RowMajor };
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
        let layout = if column { StrideOrder::ColumnMajor } else { StrideOrder::RowMajor };
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

    #[test]
    fn validated_strides_never_alias(
        lengths in prop::collection::vec(1usize..4, 1..5),
        slack in prop::collection::vec(-3i64..=2, 4),
        column in any::<bool>(),
    ) {
        // Strides near the packed ones, inner dims first, each off by a little
        // slack, so that both valid and barely-overlapping strides come up.
        let layout = if column { StrideOrder::ColumnMajor } else { StrideOrder::RowMajor };
        let rank = lengths.len();
        let mut order: Vec<usize> = (0..rank).rev().collect();
        if column && rank >= 2 {
            order.swap(0, 1);
        }
        let mut strides = vec![0i64; rank];
        let mut extent = 1i64;
        for (k, &dim) in order.iter().enumerate() {
            strides[dim] = (extent + slack[k]).max(1);
            extent = strides[dim] * lengths[dim] as i64;
        }
        if let Ok(d) = TensorDescriptor::with_strides(&lengths, &strides, layout) {
            let mut offsets: Vec<usize> = all_indices(&lengths).iter().map(|i| d.offset(i).unwrap()).collect();
            prop_assert!(offsets.iter().all(|&o| o < d.element_space_size()));
            offsets.sort_unstable();
            offsets.dedup();
            prop_assert_eq!(offsets.len(), d.element_size(), "aliasing offsets in {}", d);
        }
    }
}
