//! The laws of the layout algebra, checked on random layouts.

use proptest::prelude::*;
use tile_ir::layout::*;

fn map(layout: &Layout) -> Vec<i64> {
    (0..layout.size()).map(|i| layout.call(i)).collect()
}

/// Nests flat modes: 0 flat, 1 group the first two, 2 group the last two,
/// 3 group the middle and wrap the whole in a one-tuple.
fn nest(modes: Vec<(i64, i64)>, how: u8) -> Layout {
    let leaf = |&(s, d): &(i64, i64)| Layout::strided(s, d).unwrap();
    let mut leaves: Vec<Layout> = modes.iter().map(leaf).collect();
    if leaves.len() == 1 && matches!(how, 0 | 2) {
        return leaves.remove(0);
    }
    let n = leaves.len();
    match how {
        1 if n >= 2 => {
            let rest = leaves.split_off(2);
            let mut out = vec![Layout::concat(&leaves)];
            out.extend(rest);
            Layout::concat(&out)
        }
        2 if n >= 2 => {
            let tail = leaves.split_off(n - 2);
            leaves.push(Layout::concat(&tail));
            Layout::concat(&leaves)
        }
        3 if n >= 3 => {
            let tail = leaves.split_off(n - 1);
            let middle = leaves.split_off(1);
            leaves.push(Layout::concat(&middle));
            leaves.extend(tail);
            Layout::concat(&[Layout::concat(&leaves)])
        }
        _ => Layout::concat(&leaves),
    }
}

/// Any layout: 1–4 modes, extents 1–6, strides −4..=24.
fn any_layout() -> impl Strategy<Value = Layout> {
    (prop::collection::vec((1i64..=6, -4i64..=24), 1..=4), 0u8..4).prop_map(|(m, how)| nest(m, how))
}

/// Layouts with non-negative strides.
fn forward_layout() -> impl Strategy<Value = Layout> {
    (prop::collection::vec((1i64..=6, 0i64..=24), 1..=4), 0u8..4).prop_map(|(m, how)| nest(m, how))
}

/// Injective layouts: the modes in a random order, each stride a multiple
/// (`gap`) of the span of the modes before it.
fn injective_layout() -> impl Strategy<Value = Layout> {
    (
        prop::collection::vec((1i64..=5, 1i64..=3), 1..=4),
        any::<prop::sample::Index>(),
        0u8..4,
    )
        .prop_map(|(modes, perm, how)| {
            let mut order: Vec<usize> = (0..modes.len()).collect();
            let k = perm.index(order.len());
            order.rotate_left(k);
            if k % 2 == 1 {
                order.reverse();
            }
            let mut strides = vec![0; modes.len()];
            let mut span = 1;
            for &i in &order {
                let (s, gap) = modes[i];
                strides[i] = span * gap;
                span = strides[i] * s;
            }
            nest(
                modes
                    .iter()
                    .zip(&strides)
                    .map(|(&(s, _), &d)| (s, d))
                    .collect(),
                how,
            )
        })
}

/// Bijections onto `0..size`: a permutation of the modes of a compact layout.
fn bijective_layout() -> impl Strategy<Value = Layout> {
    injective_layout().prop_map(|l| {
        let modes: Vec<(i64, i64)> = l
            .shape()
            .leaves()
            .into_iter()
            .zip(l.stride().leaves())
            .collect();
        let mut order: Vec<usize> = (0..modes.len()).collect();
        order.sort_by_key(|&i| modes[i].1);
        let mut strides = vec![0; modes.len()];
        let mut span = 1;
        for i in order {
            strides[i] = span;
            span *= modes[i].0;
        }
        Layout::new(l.shape().clone(), {
            let mut next = strides.iter().copied();
            l.stride().map_leaves(&mut |_| next.next().unwrap_or(0))
        })
        .unwrap()
    })
}

/// A few hundred cases per law; failures are reported, not persisted to
/// files beside the tests (the interesting ones are pinned as unit tests).
fn to_coord(c: &IntTuple, leaf: &mut impl FnMut(i64) -> Coord) -> Coord {
    match c {
        IntTuple::Int(n) => leaf(*n),
        IntTuple::Tuple(items) => Coord::Tuple(items.iter().map(|i| to_coord(i, leaf)).collect()),
    }
}

/// The parts of `natural` where `coord` is free, left to right.
fn free_parts(coord: &Coord, natural: &IntTuple, out: &mut Vec<IntTuple>) {
    match (coord, natural) {
        (Coord::Free, _) => out.push(natural.clone()),
        (Coord::Tuple(items), IntTuple::Tuple(parts)) => {
            items
                .iter()
                .zip(parts)
                .for_each(|(c, n)| free_parts(c, n, out));
        }
        _ => {}
    }
}

/// The coordinate with its free modes at 0.
fn to_int(c: &Coord) -> IntTuple {
    match c {
        Coord::Free => IntTuple::Int(0),
        Coord::Int(n) => IntTuple::Int(*n),
        Coord::Tuple(items) => IntTuple::Tuple(items.iter().map(to_int).collect()),
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn text_round_trips(a in any_layout()) {
        let text = a.to_string();
        prop_assert_eq!(text.parse::<Layout>().unwrap(), a.clone());
        prop_assert_eq!(a.shape().to_string().parse::<IntTuple>().unwrap(), a.shape().clone());
        prop_assert_eq!(text.parse::<Layout>().unwrap().to_string(), text);
    }

    #[test]
    fn tiler_and_coord_text_round_trips(a in any_layout(), b in any_layout(), idx in 0i64..64, free in any::<u8>()) {
        let tiler = Tiler::Modes(vec![Tiler::Layout(a.clone()), Tiler::Modes(vec![Tiler::Layout(b)])]);
        prop_assert_eq!(tiler.to_string().parse::<Tiler>().unwrap(), tiler);
        // A natural coordinate of `a` with some leaves left free.
        let mut bit = 0;
        let coord = to_coord(&a.idx2crd(idx % a.size()), &mut |n| {
            bit += 1;
            if free >> (bit % 8) & 1 == 1 { Coord::Free } else { Coord::Int(n) }
        });
        prop_assert_eq!(coord.to_string().parse::<Coord>().unwrap(), coord.clone());
        // Slicing then indexing the free part gives the same offset.
        let (sliced, offset) = a.slice_and_offset(&coord).unwrap();
        prop_assert!(sliced.size() <= a.size());
        prop_assert_eq!(a.crd2idx(&to_int(&coord)).unwrap(), offset);
        // L(c) = offset + slice(free part of c).
        let natural = a.idx2crd(idx % a.size());
        let mut kept = Vec::new();
        free_parts(&coord, &natural, &mut kept);
        let free_coord = if kept.len() == 1 { kept.remove(0) } else { IntTuple::Tuple(kept) };
        prop_assert_eq!(a.crd2idx(&natural).unwrap(), offset + sliced.crd2idx(&free_coord).unwrap());
    }

    #[test]
    fn call_is_idx2crd_then_crd2idx(a in any_layout()) {
        for i in 0..a.size() {
            let c = a.idx2crd(i);
            prop_assert!(c.congruent(a.shape()));
            prop_assert_eq!(a.crd2idx(&c).unwrap(), a.call(i));
        }
    }

    #[test]
    fn coalesce_preserves_the_function(a in any_layout()) {
        let c = coalesce(&a);
        prop_assert!(c.depth() <= 1);
        prop_assert_eq!(c.size(), a.size());
        prop_assert_eq!(map(&c), map(&a));
        let by_mode = coalesce_by(&a, &IntTuple::Tuple(vec![IntTuple::Int(1); a.rank()])).unwrap();
        prop_assert_eq!(by_mode.rank(), a.rank());
        prop_assert_eq!(map(&by_mode), map(&a));
    }

    #[test]
    fn composition_with_a_permutation_always_succeeds(a in any_layout(), perm in any::<prop::sample::Index>()) {
        // B permutes the modes of the compact column-major layout of A's
        // flat extents, so it is a bijection that respects A's radix.
        let extents = a.shape().leaves();
        let places = IntTuple::flat(&extents).prefix_product(1).leaves();
        let mut order: Vec<usize> = (0..extents.len()).collect();
        order.rotate_left(perm.index(extents.len()));
        let shape: Vec<i64> = order.iter().map(|&i| extents[i]).collect();
        let stride: Vec<i64> = order.iter().map(|&i| places[i]).collect();
        let b = Layout::new(IntTuple::flat(&shape), IntTuple::flat(&stride)).unwrap();
        let r = composition(&a, &b).unwrap();
        prop_assert!(b.shape().compatible(r.shape()));
        for i in 0..b.size() {
            prop_assert_eq!(r.call(i), a.call(b.call(i)));
        }
    }

    #[test]
    fn composition_agrees_pointwise(a in any_layout(), b in forward_layout()) {
        if let Ok(r) = composition(&a, &b) {
            prop_assert!(b.shape().compatible(r.shape()), "{} vs {}", b, r);
            for i in 0..b.size() {
                prop_assert_eq!(r.call(i), a.call(b.call(i)), "index {}", i);
            }
        }
    }

    #[test]
    fn composition_of_compact_layouts_is_a_layout(a in bijective_layout(), b in injective_layout()) {
        // Injective B of size at most size(A) composes with compact A
        // whenever the strides of B stay within A's prefix structure.
        if let Ok(r) = composition(&a, &b) {
            for i in 0..b.size() {
                prop_assert_eq!(r.call(i), a.call(b.call(i)));
            }
        }
        let r = composition(&a, &Layout::strided(a.size(), 1).unwrap()).unwrap();
        prop_assert_eq!(map(&r), map(&a));
    }

    #[test]
    fn complement_fills_the_cotarget(a in injective_layout(), m in 1i64..=200) {
        let r = complement(&a, m).unwrap();
        let image_r = map(&r);
        prop_assert!(image_r.windows(2).all(|w| w[0] < w[1]), "{} is not ordered", r);
        let image_a: std::collections::HashSet<i64> = map(&a).into_iter().collect();
        prop_assert!(image_r.iter().skip(1).all(|x| !image_a.contains(x)), "{} meets {}", r, a);
        let pair = Layout::concat(&[a.clone(), r.clone()]);
        let mut all = map(&pair);
        all.sort();
        prop_assert!(pair.size() >= m);
        prop_assert_eq!(all, (0..pair.size()).collect::<Vec<_>>());
    }

    #[test]
    fn right_inverse_is_a_right_inverse(a in any_layout()) {
        let r = right_inverse(&a).unwrap();
        for i in 0..r.size() {
            prop_assert_eq!(a.call(r.call(i)), i);
        }
    }

    #[test]
    fn right_inverse_of_a_bijection_is_total(a in bijective_layout()) {
        let r = right_inverse(&a).unwrap();
        prop_assert_eq!(r.size(), a.size());
        for i in 0..a.size() {
            prop_assert_eq!(r.call(a.call(i)), i);
        }
    }

    #[test]
    fn left_inverse_is_a_left_inverse(a in injective_layout()) {
        let r = left_inverse(&a).unwrap();
        for i in 0..a.size() {
            prop_assert_eq!(r.call(a.call(i)), i);
        }
    }

    #[test]
    fn inverses_of_a_bijection_agree(a in bijective_layout()) {
        let left = left_inverse(&a).unwrap();
        let right = right_inverse(&a).unwrap();
        for i in 0..a.size() {
            prop_assert_eq!(left.call(i), right.call(i));
        }
    }

    #[test]
    fn divide_tiles_then_products_repeat(a in bijective_layout(), b in injective_layout()) {
        // zipped_divide's mode 0 is the composition.
        if let Ok(z) = zipped_divide(&a, &Tiler::Layout(b.clone())) {
            prop_assert_eq!(z.mode(0).unwrap(), composition(&a, &b).unwrap());
            let mut image = map(&z);
            image.sort();
            prop_assert_eq!(image.len() as i64, z.size());
        }
        // A product of a compact block by a compact tiler is a bijection.
        let p = blocked_product(&a, &Layout::column_major(b.shape().clone()).unwrap()).unwrap();
        let mut image = map(&p);
        image.sort();
        prop_assert_eq!(image, (0..a.size() * b.size()).collect::<Vec<_>>());
        let q = raked_product(&a, &Layout::column_major(b.shape().clone()).unwrap()).unwrap();
        prop_assert_eq!(q.size(), p.size());
    }

    #[test]
    fn upcast_then_downcast_round_trips(
        modes in prop::collection::vec((1i64..=4, 0u8..3, 2i64..=5), 1..=4),
        how in 0u8..4,
        factor in prop::sample::select(vec![2i64, 4]),
    ) {
        // Strides 0, 1 (extent a multiple of the factor) or m·factor, m ≥ 2.
        let mut flat: Vec<(i64, i64)> = modes.iter().map(|&(s, kind, m)| match kind {
            0 => (s, 0),
            1 => (s * factor, 1),
            _ => (s, m * factor),
        }).collect();
        flat[0] = (flat[0].0.max(1) * factor, 1);
        let a = nest(flat, how);
        let up = upcast(&a, factor).unwrap();
        prop_assert_eq!(downcast(&up, factor).unwrap(), a.clone());
        prop_assert_eq!(upcast(&downcast(&a, factor).unwrap(), factor).unwrap(), a.clone());
        prop_assert_eq!(recast(&recast(&a, 8, 8 * factor as u32).unwrap(), 8 * factor as u32, 8).unwrap(), a);
    }

    #[test]
    fn downcast_then_upcast_is_the_identity(a in any_layout(), factor in 2i64..=4) {
        if let Ok(down) = downcast(&a, factor) {
            prop_assert_eq!(upcast(&down, factor).unwrap(), a);
        }
    }

    #[test]
    fn swizzle_is_an_involution(bits in 0u32..=4, base in 0u32..=4, extra in 0i32..=3, negative in any::<bool>(), x in 0i64..(1 << 16)) {
        let shift = (bits as i32 + extra) * if negative { -1 } else { 1 };
        let sw = Swizzle::new(bits, base, shift).unwrap();
        prop_assert_eq!(sw.apply(sw.apply(x)), x);
        prop_assert_eq!(sw.apply(x) & ((1 << base) - 1), x & ((1 << base) - 1));
        prop_assert_eq!(sw.to_string().parse::<Swizzle>().unwrap(), sw);
    }

    #[test]
    fn swizzled_layouts_round_trip_as_text(a in any_layout(), offset in 0i64..64) {
        let c = ComposedLayout::new(Swizzle::new(2, 1, 3).unwrap(), offset, a);
        prop_assert_eq!(c.to_string().parse::<ComposedLayout>().unwrap(), c);
    }
}
