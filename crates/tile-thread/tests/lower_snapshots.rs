//! Snapshots of the passes' outputs: the layouts assigned to small tiles and
//! the printed thread-level programs of small specializations of the samples.

use tile_ir::{samples, ValueNames};
use tile_thread::layout_assign::{assign, DistLayout};
use tile_thread::lower::{lower, LowerOptions};

#[test]
fn blocked_layouts() {
    let text: Vec<String> = [
        (&[3usize, 5][..], 1u32),
        (&[4, 128], 4),
        (&[100], 2),
        (&[16, 8], 4),
        (&[2, 3, 4], 1),
        (&[1, 7], 2),
    ]
    .iter()
    .map(|(shape, warps)| {
        format!(
            "{warps} warps: {}",
            DistLayout::blocked(shape, *warps, 1).unwrap()
        )
    })
    .collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn every_element_has_exactly_one_live_holder() {
    for shape in [
        &[3usize, 5][..],
        &[4, 128],
        &[100],
        &[1, 7],
        &[2, 3, 4],
        &[33, 2],
        &[1],
    ] {
        for warps in [1u32, 2, 4, 8] {
            for vec in [1, 2, 4] {
                let l = DistLayout::blocked(shape, warps, vec).unwrap();
                let padded: usize = l.padded.iter().product();
                let numel: usize = shape.iter().product();
                let mut seen = vec![0u32; padded];
                let mut live = 0;
                for t in 0..32 * warps as usize {
                    for v in 0..l.registers() {
                        let (_, is_live, _) = l.coordinate(t, v);
                        let at = l
                            .padded_coordinate(t, v)
                            .iter()
                            .zip(l.padded_strides())
                            .map(|(c, s)| c * s)
                            .sum::<usize>();
                        seen[at] += 1;
                        live += usize::from(is_live);
                    }
                }
                assert!(seen.iter().all(|&n| n == 1), "{l}");
                assert_eq!(live, numel, "{l}");
            }
        }
    }
}

#[test]
fn every_element_of_a_slice_has_exactly_one_owner() {
    for (shape, axis) in [
        (&[5usize, 6][..], 1),
        (&[4, 128][..], 1),
        (&[16, 8][..], 0),
        (&[2, 3, 4][..], 2),
    ] {
        for warps in [1u32, 2, 4] {
            let parent = DistLayout::blocked(shape, warps, 2).unwrap();
            let slice = parent.slice(axis);
            assert!(slice.broadcasts_to(&parent) && !parent.broadcasts_to(&slice));
            let numel: usize = slice.shape.iter().product();
            let mut owners = vec![0u32; numel];
            let mut copies = vec![0u32; numel];
            for t in 0..32 * warps as usize {
                for v in 0..slice.registers() {
                    let (c, live, owner) = slice.coordinate(t, v);
                    let at = c
                        .iter()
                        .zip(row_major(&slice.shape))
                        .map(|(c, s)| c * s)
                        .sum::<usize>();
                    if live {
                        copies[at] += 1;
                        owners[at] += u32::from(owner);
                    }
                }
            }
            assert!(owners.iter().all(|&n| n == 1), "{slice}");
            // Every copy of the parent's elements along the axis is there.
            assert!(copies.iter().all(|&n| n as usize >= shape[axis]), "{slice}");
        }
    }
}

#[test]
fn every_element_of_a_dropped_layout_has_exactly_one_owner() {
    for shape in [
        &[5usize, 6][..],
        &[4, 128][..],
        &[16, 8][..],
        &[3, 2, 4][..],
    ] {
        for warps in [1u32, 2, 4] {
            let parent = DistLayout::blocked(shape, warps, 2).unwrap();
            let dropped = parent.drop_axis(0).unwrap();
            assert!(dropped.broadcasts_to(&parent), "{dropped}");
            assert_eq!(parent.fit(&shape[1..]).as_ref(), Some(&dropped));
            assert_eq!(dropped.registers(), parent.registers());
            let numel: usize = dropped.shape.iter().product();
            let mut owners = vec![0u32; numel];
            for t in 0..32 * warps as usize {
                for v in 0..dropped.registers() {
                    let (c, live, owner) = dropped.coordinate(t, v);
                    // The parent's element at (any row, c) sits in this register.
                    let (pc, plive, _) = parent.coordinate(t, v);
                    assert_eq!(&pc[1..], c.as_slice());
                    assert!(!plive || live);
                    if live {
                        let at = c
                            .iter()
                            .zip(row_major(&dropped.shape))
                            .map(|(c, s)| c * s)
                            .sum::<usize>();
                        owners[at] += u32::from(owner);
                    }
                }
            }
            assert!(owners.iter().all(|&n| n == 1), "{dropped}");
        }
    }
}

/// A permuted layout holds, in every register of every thread, the element
/// of the permuted coordinate that the layout held there: blocked layouts
/// (with padding and slices), a `wgmma` accumulator and a rank-3 permutation.
#[test]
fn a_permuted_layout_holds_the_same_registers() {
    let mut layouts = Vec::new();
    for shape in [
        &[5usize, 6][..],
        &[64, 128][..],
        &[16, 8][..],
        &[3, 2, 4][..],
    ] {
        for (warps, width) in [(1u32, 1), (4, 2), (4, 8)] {
            let blocked = DistLayout::blocked(shape, warps, width).unwrap();
            layouts.push((warps, blocked.slice(0)));
            layouts.push((warps, blocked));
        }
    }
    layouts.push((
        4,
        DistLayout::wgmma_accumulator(128, [64, 64], [1, 1]).unwrap(),
    ));
    for (warps, layout) in layouts {
        let rank = layout.shape.len();
        let perm: Vec<usize> = (0..rank).map(|i| (i + 1) % rank).collect();
        let permuted = layout.permuted(&perm).unwrap();
        assert_eq!(permuted.registers(), layout.registers());
        for t in 0..32 * warps as usize {
            for v in 0..layout.registers() {
                let (c, live, owner) = layout.coordinate(t, v);
                let moved: Vec<usize> = perm.iter().map(|&d| c[d]).collect();
                assert_eq!(
                    permuted.coordinate(t, v),
                    (moved, live, owner),
                    "{layout} t{t} v{v}"
                );
            }
        }
    }
    let square = DistLayout::blocked(&[8, 8], 1, 2).unwrap();
    assert!(square.permuted(&[0, 0]).is_none());
    assert!(square.permuted(&[1]).is_none());
}

fn row_major(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

#[test]
fn layout_plan_of_softmax() {
    let func = samples::softmax(2, 12).unwrap();
    let plan = assign(&func, 2, tile_thread::TensorCores::None, Default::default()).unwrap();
    let names = ValueNames::new(&func);
    let text: Vec<String> = plan
        .values
        .iter()
        .map(|(v, l)| format!("{}: {l}", names.name(*v)))
        .collect();
    insta::assert_snapshot!(text.join("\n"));
}

#[test]
fn vector_add_program() {
    let program = lower(&samples::vector_add(40).unwrap(), &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}

/// Whole vectors of tensors promised aligned: no `align`, no `opaque`, no
/// per-element offsets, every lane masked by the vector's condition.
#[test]
fn vector_add_aligned_program() {
    let func = samples::with_aligned_tensors(samples::vector_add(256).unwrap());
    let program = lower(&func, &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}

#[test]
fn softmax_program() {
    let program = lower(&samples::softmax(1, 3).unwrap(), &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}

#[test]
fn matmul_program() {
    let program = lower(
        &samples::matmul(2, 2, 2, tile_ir::DType::F16).unwrap(),
        &LowerOptions::warps(1),
    )
    .unwrap();
    insta::assert_snapshot!(program.to_string());
}

#[test]
fn layernorm_program() {
    let program = lower(&samples::layernorm(1, 4).unwrap(), &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}

#[test]
fn transpose_program() {
    let program = lower(&samples::transpose(2, 4).unwrap(), &LowerOptions::warps(1)).unwrap();
    insta::assert_snapshot!(program.to_string());
}
