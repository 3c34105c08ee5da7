//! Every movement op and every high-level op, checked element by element
//! against the dense reference on a family of base views that covers
//! contiguous, padded (masked), flipped, shrunk, strided, expanded,
//! fully-masked and empty views.

mod strided_dense;

use strided_dense::{arange, Dense};
use tile_tensor::strided::{Index, StridedView, StridedViewError};

/// The base views, each with a name for failure messages.
fn bases() -> Vec<(&'static str, StridedView)> {
    vec![
        ("contiguous 2x3x4", arange(&[2, 3, 4])),
        (
            "padded 2x3",
            arange(&[2, 3]).pad(&[(1, 0), (2, 1)]).unwrap(),
        ),
        (
            "flipped+shrunk 4x5",
            arange(&[4, 5])
                .flip(&[1])
                .unwrap()
                .shrink(&[(1, 3), (0, 4)])
                .unwrap(),
        ),
        ("expanded 3x4", arange(&[3, 1]).expand(&[3, 4]).unwrap()),
        ("strided 7", arange(&[7]).stride(&[-2]).unwrap()),
        (
            "padded then strided 3x4",
            arange(&[3, 4])
                .pad(&[(2, 1), (0, 3)])
                .unwrap()
                .stride(&[2, -3])
                .unwrap(),
        ),
        (
            "fully masked 2x2",
            arange(&[2, 2])
                .pad(&[(0, 0), (3, 0)])
                .unwrap()
                .shrink(&[(0, 2), (0, 2)])
                .unwrap(),
        ),
        ("empty 0x3", arange(&[0, 3])),
        (
            "one-element masked axis 3x2",
            arange(&[1, 2]).pad(&[(1, 1), (0, 0)]).unwrap(),
        ),
    ]
}

fn same(name: &str, op: &str, view: &StridedView, dense: &Dense) {
    assert_eq!(&Dense::of(view), dense, "{op} on {name}: view {view}");
}

#[test]
fn permute_matches_dense() {
    for (name, v) in bases() {
        let rank = v.rank();
        let orders: Vec<Vec<usize>> = match rank {
            1 => vec![vec![0]],
            2 => vec![vec![1, 0], vec![0, 1]],
            _ => vec![vec![2, 0, 1], vec![1, 2, 0], vec![0, 2, 1]],
        };
        for order in orders {
            let signed: Vec<isize> = order.iter().map(|&a| a as isize).collect();
            same(
                name,
                "permute",
                &v.permute(&signed).unwrap(),
                &Dense::of(&v).permute(&order),
            );
        }
    }
}

#[test]
fn flip_matches_dense() {
    for (name, v) in bases() {
        for axes in [vec![0], vec![v.rank() - 1], (0..v.rank()).collect()] {
            let signed: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
            same(
                name,
                "flip",
                &v.flip(&signed).unwrap(),
                &Dense::of(&v).flip(&axes),
            );
        }
        // Negative axes count from the end.
        same(
            name,
            "flip(-1)",
            &v.flip(&[-1]).unwrap(),
            &Dense::of(&v).flip(&[v.rank() - 1]),
        );
    }
}

#[test]
fn shrink_matches_dense() {
    for (name, v) in bases() {
        let halves: Vec<(usize, usize)> = v.shape().iter().map(|&n| (n / 2, n)).collect();
        let fronts: Vec<(usize, usize)> = v.shape().iter().map(|&n| (0, n.div_ceil(2))).collect();
        let middles: Vec<(usize, usize)> = v
            .shape()
            .iter()
            .map(|&n| (n.min(1), n.saturating_sub(1).max(n.min(1))))
            .collect();
        for ranges in [halves, fronts, middles] {
            same(
                name,
                "shrink",
                &v.shrink(&ranges).unwrap(),
                &Dense::of(&v).shrink(&ranges),
            );
        }
    }
}

#[test]
fn pad_matches_dense() {
    for (name, v) in bases() {
        let grow: Vec<(isize, isize)> = (0..v.rank())
            .map(|a| (a as isize + 1, 2 - a as isize % 2))
            .collect();
        let mixed: Vec<(isize, isize)> = v
            .shape()
            .iter()
            .map(|&n| if n > 1 { (-1, 2) } else { (1, 0) })
            .collect();
        for padding in [grow, mixed] {
            same(
                name,
                "pad",
                &v.pad(&padding).unwrap(),
                &Dense::of(&v).pad(&padding),
            );
        }
    }
}

#[test]
fn expand_matches_dense() {
    for (name, v) in bases() {
        // A new leading axis of 2, and the inserted size-1 axis grown to 3.
        let unit = v.unsqueeze(0).unwrap();
        let mut target: Vec<usize> = vec![2];
        target.extend(unit.shape());
        target[1] = 3;
        let signed: Vec<isize> = target.iter().map(|&s| s as isize).collect();
        same(
            name,
            "expand",
            &unit.expand(&signed).unwrap(),
            &Dense::of(&unit).expand(&target),
        );
        // A trailing size-1 axis grown to 2 (its mask entry follows).
        let tail = v.unsqueeze(-1).unwrap();
        let mut target: Vec<usize> = tail.shape().to_vec();
        *target.last_mut().unwrap() = 2;
        let signed: Vec<isize> = target.iter().map(|&s| s as isize).collect();
        same(
            name,
            "expand last",
            &tail.expand(&signed).unwrap(),
            &Dense::of(&tail).expand(&target),
        );
        // -1 keeps sizes.
        let keep: Vec<isize> = vec![-1; v.rank()];
        same(
            name,
            "expand(-1..)",
            &v.expand(&keep).unwrap(),
            &Dense::of(&v),
        );
    }
}

#[test]
fn stride_matches_dense() {
    for (name, v) in bases() {
        for step in [2, -1, -2, 3] {
            let steps = vec![step; v.rank()];
            same(
                name,
                "stride",
                &v.stride(&steps).unwrap(),
                &Dense::of(&v).stride(&steps),
            );
        }
    }
}

#[test]
fn reshape_matches_dense_when_it_is_a_view() {
    let mut successes = 0;
    for (name, v) in bases() {
        let n = v.size();
        let mut targets = vec![vec![n], vec![1, n, 1]];
        if n % 2 == 0 && n > 0 {
            targets.push(vec![2, n / 2]);
            targets.push(vec![n / 2, 1, 2]);
        }
        for t in targets {
            let signed: Vec<isize> = t.iter().map(|&s| s as isize).collect();
            match v.reshape(&signed) {
                Ok(r) => {
                    successes += 1;
                    same(name, "reshape", &r, &Dense::of(&v).reshape(&t));
                }
                // Checked by hand: each of these merges axes that are not one
                // stride, or splits a padded range that is not a box.
                Err(StridedViewError::NeedsCopy { .. }) => {}
                Err(e) => panic!("reshape of {name} to {t:?}: unexpected error {e}"),
            }
        }
    }
    assert_eq!(successes, 18, "reshapes that stay views");
}

#[test]
fn getitem_matches_dense() {
    let t = arange(&[3, 4, 5]).pad(&[(1, 0), (0, 0), (0, 2)]).unwrap(); // 4x4x7, masked
    let s = |start: Option<isize>, stop: Option<isize>, step: Option<isize>| Index::Slice {
        start,
        stop,
        step,
    };
    let cases: Vec<Vec<Index>> = vec![
        vec![Index::At(1)],
        vec![Index::At(-1), Index::At(2)],
        vec![Index::At(0), Index::At(0), Index::At(0)], // a masked-out element of a 3-d view... at rank 0
        vec![Index::full(), Index::At(-2), s(None, None, Some(-1))],
        vec![
            s(Some(1), Some(-1), None),
            Index::NewAxis,
            s(None, None, Some(3)),
        ],
        vec![Index::Ellipsis, s(Some(-3), None, None)],
        vec![Index::NewAxis, Index::Ellipsis, Index::NewAxis],
        vec![
            Index::At(2),
            Index::Ellipsis,
            s(Some(6), Some(0), Some(-2)),
            Index::NewAxis,
        ],
        vec![s(Some(10), Some(-10), Some(-1))],
        vec![s(Some(-100), Some(100), Some(2)), s(Some(3), Some(1), None)],
        vec![s(None, None, Some(-3)), Index::full(), Index::At(5)],
    ];
    for idx in cases {
        match t.get(&idx) {
            Ok(v) => same(
                "padded 4x4x7",
                &format!("get {idx:?}"),
                &v,
                &Dense::of(&t).get(&idx),
            ),
            Err(e) => {
                // Only a rank-0 masked-out element may fail.
                assert_eq!(Dense::of(&t).get(&idx).data, vec![None], "get {idx:?}: {e}");
                assert!(
                    matches!(e, StridedViewError::NeedsCopy { op: "getitem", .. }),
                    "{e}"
                );
            }
        }
    }
    for (name, v) in bases() {
        let idx = vec![
            Index::Slice {
                start: None,
                stop: None,
                step: Some(-2),
            },
            Index::NewAxis,
        ];
        same(
            name,
            "get [::-2, None]",
            &v.get(&idx).unwrap(),
            &Dense::of(&v).get(&idx),
        );
    }
}

#[test]
fn squeeze_and_unsqueeze_match_dense() {
    for (name, v) in bases() {
        for at in 0..=v.rank() {
            let u = v.unsqueeze(at as isize).unwrap();
            let mut shape = v.shape().to_vec();
            shape.insert(at, 1);
            same(name, "unsqueeze", &u, &Dense::of(&v).reshape(&shape));
            same(
                name,
                "squeeze(at)",
                &u.squeeze(Some(at as isize)).unwrap(),
                &Dense::of(&v),
            );
        }
        let all: Vec<usize> = v.shape().iter().copied().filter(|&s| s != 1).collect();
        same(
            name,
            "squeeze()",
            &v.squeeze(None).unwrap(),
            &Dense::of(&v).reshape(&all),
        );
        same(
            name,
            "unsqueeze(-1)",
            &v.unsqueeze(-1).unwrap(),
            &Dense::of(&v).reshape(&[v.shape(), &[1]].concat()),
        );
    }
}

#[test]
fn transpose_matches_dense() {
    for (name, v) in bases() {
        let r = v.rank();
        let mut order: Vec<usize> = (0..r).collect();
        order.swap(0, r - 1);
        same(
            name,
            "transpose",
            &v.transpose(0, -1).unwrap(),
            &Dense::of(&v).permute(&order),
        );
    }
}

#[test]
fn flatten_and_unflatten_match_dense() {
    let t = arange(&[2, 3, 4]).pad(&[(0, 0), (0, 0), (1, 1)]).unwrap(); // masked inner axis
                                                                        // Leading axes merge; the masked inner axis does not merge with them.
    same(
        "padded",
        "flatten(0, 1)",
        &t.flatten(0, 1).unwrap(),
        &Dense::of(&t).reshape(&[6, 6]),
    );
    assert!(matches!(
        t.flatten(1, 2),
        Err(StridedViewError::NeedsCopy { op: "flatten", .. })
    ));
    // The valid range 1..5 of the padded axis is not a box in (3, 2) ...
    assert!(matches!(
        t.unflatten(-1, &[3, -1]),
        Err(StridedViewError::NeedsCopy {
            op: "unflatten",
            ..
        })
    ));
    // ... but 4..8 of a 12-wide axis is one row of (3, 4).
    let wide = arange(&[2, 3, 4]).pad(&[(0, 0), (0, 0), (4, 4)]).unwrap();
    let u = wide.unflatten(-1, &[3, -1]).unwrap();
    same(
        "padded wide",
        "unflatten",
        &u,
        &Dense::of(&wide).reshape(&[2, 3, 3, 4]),
    );
    for (name, v) in bases() {
        if let Ok(f) = v.flatten(0, -1) {
            same(name, "flatten", &f, &Dense::of(&v).reshape(&[v.size()]));
        }
        let first = v.shape()[0] as isize;
        same(
            name,
            "unflatten(0, (1, n))",
            &v.unflatten(0, &[1, first]).unwrap(),
            &Dense::of(&v).reshape(&[&[1], v.shape()].concat()),
        );
    }
}

#[test]
fn repeat_matches_dense_where_it_is_a_view() {
    let col = arange(&[3, 1]);
    for reps in [vec![1, 4], vec![2, 1, 5], vec![1, 1], vec![0, 3]] {
        same(
            "3x1",
            &format!("repeat {reps:?}"),
            &col.repeat(&reps).unwrap(),
            &Dense::of(&col).repeat(&reps),
        );
    }
    let expanded = arange(&[1, 3]).expand(&[2, 3]).unwrap(); // stride 0 on axis 0
    same(
        "expanded",
        "repeat",
        &expanded.repeat(&[3, 1]).unwrap(),
        &Dense::of(&expanded).repeat(&[3, 1]),
    );
    for (name, v) in bases() {
        let reps: Vec<usize> = [vec![2], vec![1; v.rank()]].concat();
        same(
            name,
            "repeat (2, 1, ..)",
            &v.repeat(&reps).unwrap(),
            &Dense::of(&v).repeat(&reps),
        );
    }
    assert!(matches!(
        arange(&[2, 3]).repeat(&[1, 2]),
        Err(StridedViewError::NeedsCopy { op: "repeat", .. })
    ));
}

#[test]
fn split_and_chunk_match_dense() {
    for (name, v) in bases() {
        let n = v.shape()[0];
        let parts = v.split_every(2, 0).unwrap();
        assert_eq!(parts.len(), n.div_ceil(2).max(1), "{name}");
        let mut begin = 0;
        for p in &parts {
            let mut ranges: Vec<(usize, usize)> = v.shape().iter().map(|&s| (0, s)).collect();
            ranges[0] = (begin, begin + p.shape()[0]);
            begin += p.shape()[0];
            same(name, "split_every", p, &Dense::of(&v).shrink(&ranges));
        }
        assert_eq!(begin, n);
        let chunks = v.chunk(3, -1).unwrap();
        let total: usize = chunks.iter().map(|c| *c.shape().last().unwrap()).sum();
        assert_eq!(total, *v.shape().last().unwrap(), "{name}");
        let mut begin = 0;
        for c in &chunks {
            let mut ranges: Vec<(usize, usize)> = v.shape().iter().map(|&s| (0, s)).collect();
            let last = ranges.len() - 1;
            ranges[last] = (begin, begin + c.shape()[last]);
            begin += c.shape()[last];
            same(name, "chunk", c, &Dense::of(&v).shrink(&ranges));
        }
    }
    let parts = arange(&[2, 5]).split(&[0, 2, 3], 1).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.shape()[1]).collect::<Vec<_>>(),
        [0, 2, 3]
    );
    same(
        "2x5",
        "split",
        &parts[2],
        &Dense::of(&arange(&[2, 5])).shrink(&[(0, 2), (2, 5)]),
    );
}

#[test]
fn index_rejects_coordinates_outside_the_shape() {
    let v = arange(&[2, 3]);
    assert_eq!(v.index(&[1, 2]), Some(5));
    assert_eq!(v.index(&[2, 0]), None);
    assert_eq!(v.index(&[0, 3]), None);
    assert_eq!(v.index(&[0]), None);
    assert_eq!(v.index(&[0, 0, 0]), None);
}
