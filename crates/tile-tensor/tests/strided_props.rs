//! Properties over random shapes and random sequences of ops: after every op
//! the view agrees with the dense reference at every coordinate, the view is a
//! fixed point of canonicalization, and a reshape that succeeded can be undone.

mod strided_dense;

use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use strided_dense::Dense;
use tile_tensor::strided::{Index, StridedView, StridedViewError};

/// Views larger than this are not grown further, to keep the suite fast.
const MAX_SIZE: usize = 256;

/// One random step: which op, and a seed for its arguments.
#[derive(Debug, Clone)]
struct Step {
    kind: u8,
    seed: u64,
}

fn step() -> impl Strategy<Value = Step> {
    (0u8..13, any::<u64>()).prop_map(|(kind, seed)| Step { kind, seed })
}

/// A random shape with `n` elements, of rank up to 4.
fn shape_with(rng: &mut SmallRng, n: usize) -> Vec<usize> {
    if n == 0 {
        let mut s: Vec<usize> = (0..rng.gen_range(1..=3))
            .map(|_| rng.gen_range(0..4))
            .collect();
        let at = rng.gen_range(0..s.len());
        s[at] = 0;
        return s;
    }
    let mut factors = Vec::new();
    let mut m = n;
    let mut p = 2;
    while m > 1 {
        while m.checked_rem(p) == Some(0) {
            factors.push(p);
            m /= p;
        }
        p += 1;
    }
    let rank = rng.gen_range(1..=4);
    let mut s = vec![1; rank];
    for f in factors {
        let at = rng.gen_range(0..rank);
        s[at] *= f;
    }
    s
}

/// Applies one random op to both the view and the dense image. Returns the
/// new pair, or `None` when the op legitimately needs a copy.
fn apply(v: &StridedView, d: &Dense, st: &Step) -> Option<(StridedView, Dense)> {
    let mut rng = SmallRng::seed_from_u64(st.seed);
    let rank = v.rank();
    let shape = v.shape().to_vec();
    let size = v.size();
    let small = size.max(1) * 4 <= MAX_SIZE;
    let out: Result<(StridedView, Dense), StridedViewError> = match st.kind {
        0 => {
            let mut order: Vec<usize> = (0..rank).collect();
            order.shuffle(&mut rng);
            let signed: Vec<isize> = order.iter().map(|&a| a as isize).collect();
            v.permute(&signed).map(|r| (r, d.permute(&order)))
        }
        1 => {
            let axes: Vec<usize> = (0..rank).filter(|_| rng.gen_bool(0.5)).collect();
            let signed: Vec<isize> = axes.iter().map(|&a| a as isize - rank as isize).collect();
            v.flip(&signed).map(|r| (r, d.flip(&axes)))
        }
        2 => {
            let ranges: Vec<(usize, usize)> = shape
                .iter()
                .map(|&n| {
                    let b = rng.gen_range(0..=n);
                    (b, rng.gen_range(b..=n))
                })
                .collect();
            v.shrink(&ranges).map(|r| (r, d.shrink(&ranges)))
        }
        3 if small => {
            let padding: Vec<(isize, isize)> = shape
                .iter()
                .map(|&n| {
                    let b = rng.gen_range(-(n as isize).min(1)..=2);
                    let e = rng.gen_range(-((n as isize + b.min(0)).min(1))..=2);
                    (b, e)
                })
                .collect();
            v.pad(&padding).map(|r| (r, d.pad(&padding)))
        }
        4 if small => {
            let lead = rng.gen_range(0..=1);
            let target: Vec<usize> = std::iter::repeat_n(1, lead)
                .chain(shape.iter().copied())
                .map(|n| if n == 1 { rng.gen_range(0..=3) } else { n })
                .collect();
            let signed: Vec<isize> = target.iter().map(|&s| s as isize).collect();
            v.expand(&signed).map(|r| (r, d.expand(&target)))
        }
        5 => {
            let steps: Vec<isize> = (0..rank)
                .map(|_| *[-3, -2, -1, 1, 2, 3].choose(&mut rng).unwrap_or(&1))
                .collect();
            v.stride(&steps).map(|r| (r, d.stride(&steps)))
        }
        6 => {
            let target = shape_with(&mut rng, size);
            let signed: Vec<isize> = target.iter().map(|&s| s as isize).collect();
            let result = v.reshape(&signed);
            // reshape is complete: it fails exactly when no single view can
            // read these positions in the new shape.
            assert_eq!(
                result.is_ok(),
                d.reshape(&target).expressible(),
                "{v} -> {target:?}: {result:?}"
            );
            match result {
                Ok(r) => {
                    // A reshape that worked can be undone.
                    let back: Vec<isize> = shape.iter().map(|&s| s as isize).collect();
                    let undone = r
                        .reshape(&back)
                        .unwrap_or_else(|e| panic!("{v} -> {target:?} -> back: {e}"));
                    assert_eq!(
                        Dense::of(&undone),
                        *d,
                        "{v} -> {target:?} -> back gave {undone}"
                    );
                    Ok((r, d.reshape(&target)))
                }
                Err(e) => Err(e),
            }
        }
        7 => {
            let mut idx = Vec::new();
            for &n in &shape {
                let n = n as isize;
                idx.push(match rng.gen_range(0..3) {
                    0 if n > 0 => Index::At(rng.gen_range(-n..n)),
                    _ => Index::Slice {
                        start: rng.gen_bool(0.7).then(|| rng.gen_range(-n - 2..=n + 2)),
                        stop: rng.gen_bool(0.7).then(|| rng.gen_range(-n - 2..=n + 2)),
                        step: rng
                            .gen_bool(0.7)
                            .then(|| *[-3, -2, -1, 1, 2, 3].choose(&mut rng).unwrap_or(&1)),
                    },
                });
            }
            for _ in 0..rng.gen_range(0..=2) {
                let at = rng.gen_range(0..=idx.len());
                idx.insert(at, Index::NewAxis);
            }
            if rng.gen_bool(0.3) && !idx.is_empty() {
                let at = rng.gen_range(0..idx.len());
                idx[at] = Index::Ellipsis;
            }
            v.get(&idx).map(|r| (r, d.get(&idx)))
        }
        8 => {
            let dim = (rank > 0 && rng.gen_bool(0.5)).then(|| rng.gen_range(0..rank) as isize);
            let kept: Vec<usize> = match dim {
                None => shape.iter().copied().filter(|&n| n != 1).collect(),
                Some(a) => shape
                    .iter()
                    .enumerate()
                    .filter(|&(i, &n)| !(i == a as usize && n == 1))
                    .map(|(_, &n)| n)
                    .collect(),
            };
            v.squeeze(dim).map(|r| (r, d.reshape(&kept)))
        }
        9 if rank < 5 => {
            let at = rng.gen_range(0..=rank);
            let mut s = shape.clone();
            s.insert(at, 1);
            v.unsqueeze(at as isize).map(|r| (r, d.reshape(&s)))
        }
        10 if rank > 0 => {
            let a = rng.gen_range(0..rank);
            let b = rng.gen_range(a..rank);
            let mut s = shape[..a].to_vec();
            s.push(shape[a..=b].iter().product());
            s.extend_from_slice(&shape[b + 1..]);
            v.flatten(a as isize, b as isize)
                .map(|r| (r, d.reshape(&s)))
        }
        11 if small => {
            let lead = rng.gen_range(0..=1);
            let reps: Vec<usize> = (0..rank + lead).map(|_| rng.gen_range(0..=2)).collect();
            let result = v.repeat(&reps);
            assert_eq!(
                result.is_ok(),
                d.repeat(&reps).expressible(),
                "{v} repeat {reps:?}: {result:?}"
            );
            result.map(|r| (r, d.repeat(&reps)))
        }
        12 if rank > 0 => {
            let a = rng.gen_range(0..rank);
            let n = shape[a];
            let parts = v
                .chunk(rng.gen_range(1..=3), a as isize)
                .expect("chunk of a valid axis");
            let pick = rng.gen_range(0..parts.len());
            let begin: usize = parts[..pick].iter().map(|p| p.shape()[a]).sum();
            let mut ranges: Vec<(usize, usize)> = shape.iter().map(|&s| (0, s)).collect();
            ranges[a] = (begin, begin + parts[pick].shape()[a]);
            assert!(ranges[a].1 <= n);
            Ok((parts[pick].clone(), d.shrink(&ranges)))
        }
        _ => Ok((v.clone(), d.clone())),
    };
    match out {
        Ok(pair) => Some(pair),
        Err(StridedViewError::NeedsCopy { .. }) => None,
        Err(e) => panic!("op {st:?} on {v}: unexpected error {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn random_op_sequences_match_the_dense_reference(
        shape in prop::collection::vec(prop_oneof![12 => 1usize..6, 1 => Just(0usize)], 0..5),
        offset in -5isize..5,
        steps in prop::collection::vec(step(), 1..10),
    ) {
        let base = StridedView::contiguous(&shape).unwrap();
        let mut v = StridedView::new(base.shape(), base.strides(), offset, None).unwrap();
        let mut d = Dense::of(&v);
        for st in &steps {
            if let Some((nv, nd)) = apply(&v, &d, st) {
                prop_assert_eq!(&Dense::of(&nv), &nd, "after {:?} on {}: {}", st, v, nv);
                let again = StridedView::new(nv.shape(), nv.strides(), nv.offset(), nv.mask()).unwrap();
                prop_assert_eq!(&again, &nv, "canonical form is a fixed point");
                v = nv;
                d = nd;
            }
        }
    }
}
