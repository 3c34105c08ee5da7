//! Random two-mode layouts (flat or hierarchical modes, non-negative
//! strides): loads through `lview_tile`, `lview_vectorize` and
//! `lview_distribute` agree with a dense evaluation written here, apart from
//! the layout module.

mod lview_support;
use lview_support::*;
use proptest::prelude::*;
use tile_ir::layout::Layout;
use tile_ir::lview::derive::derive;
use tile_ir::LViewOp;

/// One mode: its leaves' extents and strides (colexicographic).
#[derive(Clone, Debug)]
struct Mode {
    shape: Vec<usize>,
    stride: Vec<usize>,
}

impl Mode {
    fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// The offset of 1-D index `i` (below the size).
    fn at(&self, mut i: usize) -> usize {
        let mut offset = 0;
        for (s, d) in self.shape.iter().zip(&self.stride) {
            offset += (i % s) * d;
            i /= s;
        }
        offset
    }

    fn text(&self) -> (String, String) {
        let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        match self.shape.len() {
            1 => (self.shape[0].to_string(), self.stride[0].to_string()),
            _ => (
                format!("({})", join(&self.shape)),
                format!("({})", join(&self.stride)),
            ),
        }
    }
}

fn layout_text(modes: &[Mode]) -> String {
    let (shapes, strides): (Vec<_>, Vec<_>) = modes.iter().map(Mode::text).unzip();
    format!("({}):({})", shapes.join(","), strides.join(","))
}

fn cosize(modes: &[Mode]) -> usize {
    1 + modes.iter().map(|m| m.at(m.size() - 1)).sum::<usize>()
}

fn mode() -> impl Strategy<Value = Mode> {
    let flat = (1usize..=6, 0usize..=7).prop_map(|(n, d)| Mode {
        shape: vec![n],
        stride: vec![d],
    });
    let nested =
        ((1usize..=3, 1usize..=3), (0usize..=5, 0usize..=9)).prop_map(|((a, b), (d0, d1))| Mode {
            shape: vec![a, b],
            stride: vec![d0, d1],
        });
    prop_oneof![flat, nested]
}

/// Two modes and a divisor of each mode's size.
fn layout_and_divisors() -> impl Strategy<Value = (Vec<Mode>, [usize; 2], [usize; 2])> {
    (
        mode(),
        mode(),
        any::<[prop::sample::Index; 2]>(),
        any::<[prop::sample::Index; 2]>(),
    )
        .prop_map(|(a, b, pick, at)| {
            let modes = vec![a, b];
            let t = [0, 1].map(|k| {
                let size = modes[k].size();
                let divisors: Vec<usize> = (1..=size).filter(|t| size % t == 0).collect();
                divisors[pick[k].index(divisors.len())]
            });
            let i = [0, 1].map(|k| at[k].index(modes[k].size() / t[k]));
            (modes, t, i)
        })
}

/// Runs `ops` (ending in `%r = <op> %v ...` without a type) with the result
/// type the typing rule gives for `op` (the values are what is checked), or
/// `None` when the layout algebra cannot express the view (a hierarchical
/// mode that the extent does not split into whole sub-modes).
fn typed(ops: &str, op: LViewOp, len: usize, layout: &str, shape: &[usize]) -> Option<Vec<f32>> {
    let parsed: Layout = layout.parse().unwrap();
    let derived = derive(&op, &parsed).ok()?;
    let ops = format!("{ops} : lview<f32, {}>", derived.layout);
    Some(offsets_read(len, layout, &ops, shape).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn tile_reads_each_mode_at_tile_times_extent_plus_element((modes, t, i) in layout_and_divisors()) {
        let ops = format!("  %i0 = constant {} : i32\n  %i1 = constant {} : i32\n  %r = lview_tile %v [{}, {}] [%i0, %i1]", i[0], i[1], t[0], t[1]);
        let op = LViewOp::Tile { shape: t.to_vec() };
        let got = typed(&ops, op, cosize(&modes), &layout_text(&modes), &t);
        let want = dense(&t, |j| modes[0].at(i[0] * t[0] + j[0]) + modes[1].at(i[1] * t[1] + j[1]));
        prop_assume!(got.is_some());
        prop_assert_eq!(got.unwrap(), want);
    }

    #[test]
    fn vectorize_reads_outer_times_vector_plus_inner((modes, t, _i) in layout_and_divisors()) {
        let ops = format!("  %r = lview_vectorize %v [{}, {}]", t[0], t[1]);
        let shape = [modes[0].size() / t[0], modes[1].size() / t[1], t[0], t[1]];
        let op = LViewOp::Vectorize { shape: t.to_vec() };
        let got = typed(&ops, op, cosize(&modes), &layout_text(&modes), &shape);
        let want = dense(&shape, |j| modes[0].at(j[0] * t[0] + j[2]) + modes[1].at(j[1] * t[1] + j[3]));
        prop_assume!(got.is_some());
        prop_assert_eq!(got.unwrap(), want);
    }

    #[test]
    fn distribute_reads_thread_coordinate_plus_threads_times_element(
        (modes, t, _i) in layout_and_divisors(),
        column_major in any::<bool>(),
        tid in 0usize..40,
    ) {
        // The thread layout t0×t1, row- or column-major.
        let (d0, d1) = if column_major { (1, t[0]) } else { (t[1], 1) };
        let c = [tid / d0 % t[0], tid / d1 % t[1]];
        let ops = format!("  %tid = constant {tid} : i64\n  %r = lview_distribute %v <({},{}):({d0},{d1})> %tid", t[0], t[1]);
        let shape = [modes[0].size() / t[0], modes[1].size() / t[1]];
        let threads = format!("({},{}):({d0},{d1})", t[0], t[1]).parse().unwrap();
        let op = LViewOp::Distribute { threads };
        let got = typed(&ops, op, cosize(&modes), &layout_text(&modes), &shape);
        let want = dense(&shape, |j| modes[0].at(c[0] + t[0] * j[0]) + modes[1].at(c[1] + t[1] * j[1]));
        prop_assume!(got.is_some());
        prop_assert_eq!(got.unwrap(), want);
    }
}
