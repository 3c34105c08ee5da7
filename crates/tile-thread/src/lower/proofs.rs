//! Static bounds proofs: which axes of an access's partition index are in
//! bounds on every execution, so that the access needs no check there.
//!
//! A load or store of partition `i` of a view with tiles of `T` elements
//! along axis `d` of tensor `t` touches `i·T … i·T + T − 1` along that axis.
//! It is in bounds when `i ≥ 0` and
//!
//! ```text
//! i < ⌊dim(t, d) / q⌋ + o      with  q ≥ T  and  o ≤ 0
//! ```
//!
//! because then `i·T + T − 1 ≤ (⌊dim/q⌋ − 1)·q + q − 1 < dim`. The analysis
//! finds such facts by walking the tile IR once, keeping per integer scalar
//! a [`Range`]: numeric bounds (sound under the dtype's wrapping, since an
//! op only keeps its facts when the result provably does not wrap), the
//! value's exact form `⌊dim/q⌋ + o` when it has one, and forms it is known to
//! lie below. Facts come from
//!
//! * `dim` (its form, `0 ≤ dim < 2³¹`), integer constants, `program_id ≥ 0`;
//! * `+`/`−` of a constant (the forms shift), `/` of a positive constant (the
//!   form's divisor grows: `x ≤ ⌊d/q⌋` gives `⌊x/k⌋ ≤ ⌊d/(q·k)⌋`), `min` (the forms of both), `max`, `×` by a
//!   constant, widening casts;
//! * a `for` induction variable: `lo ≤ iv < hi` (the loop never wraps), so
//!   `iv < f − 1` for every form `f` that `hi` lies below;
//! * the condition of an `if` (`cmp` of integers, `and` in the then branch,
//!   `or` in the else branch, `not`), assumed in the branch it guards.
//!
//! Anything else (loop-carried values, `if` results, loads) is unknown: the
//! analysis only ever proves less, and an unproven access keeps its check.

use std::collections::HashMap;
use tile_ir::{BinaryOp, CmpPred, DType, Function, OpId, OpKind, Region, Type, UnaryOp, Value};

/// Per load and store of a function, which axes of its partition index are
/// proven in bounds (see the module doc).
#[derive(Debug, Default)]
pub(super) struct Proofs {
    proven: HashMap<OpId, Vec<bool>>,
}

impl Proofs {
    /// Analyzes every load and store of `func`.
    pub(super) fn analyze(func: &Function) -> Proofs {
        let mut analysis = Analysis {
            func,
            proofs: Proofs::default(),
        };
        analysis.region(&func.body, &mut HashMap::new());
        analysis.proofs
    }

    /// Whether axis `axis` of the partition index of `access` is proven in
    /// bounds.
    pub(super) fn proven(&self, access: OpId, axis: usize) -> bool {
        self.proven
            .get(&access)
            .and_then(|axes| axes.get(axis))
            .copied()
            .unwrap_or(false)
    }
}

/// `⌊dim(tensor, axis) / div⌋ + offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Form {
    tensor: Value,
    axis: usize,
    div: i128,
    offset: i128,
}

impl Form {
    fn shifted(self, by: i128) -> Form {
        Form {
            offset: self.offset + by,
            ..self
        }
    }
}

/// What is known about an integer scalar (its value as a number of its
/// dtype: unsigned dtypes are never negative).
#[derive(Clone, Debug, PartialEq)]
struct Range {
    lower: i128,
    upper: i128,
    /// The value is exactly this form.
    exact: Option<Form>,
    /// The value is strictly below each of these forms.
    below: Vec<Form>,
}

impl Range {
    /// Nothing known but the dtype's range.
    fn of(dtype: DType) -> Option<Range> {
        let (lower, upper) = dtype_bounds(dtype)?;
        Some(Range {
            lower,
            upper,
            exact: None,
            below: Vec::new(),
        })
    }

    fn interval(lower: i128, upper: i128) -> Range {
        Range {
            lower,
            upper,
            exact: None,
            below: Vec::new(),
        }
    }

    /// Every form the value is strictly below.
    fn strict_uppers(&self) -> Vec<Form> {
        let mut forms = self.below.clone();
        forms.extend(self.exact.map(|f| f.shifted(1)));
        forms
    }

    /// The value plus the constant `c`, or `None` if that may wrap.
    fn plus(&self, c: i128, dtype: DType) -> Option<Range> {
        let (min, max) = dtype_bounds(dtype)?;
        let (lower, upper) = (self.lower + c, self.upper + c);
        (lower >= min && upper <= max).then(|| Range {
            lower,
            upper,
            exact: self.exact.map(|f| f.shifted(c)),
            below: self.below.iter().map(|f| f.shifted(c)).collect(),
        })
    }

    fn constant(&self) -> Option<i128> {
        (self.lower == self.upper).then_some(self.lower)
    }

    /// Keeps `forms` that are not there yet.
    fn add_below(&mut self, forms: impl IntoIterator<Item = Form>) {
        for f in forms {
            if !self.below.contains(&f) {
                self.below.push(f);
            }
        }
    }
}

/// The numeric range of an integer dtype.
fn dtype_bounds(dtype: DType) -> Option<(i128, i128)> {
    let bits = dtype.bits();
    if dtype.is_signed_int() {
        Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1))
    } else if dtype.is_unsigned_int() {
        Some((0, (1i128 << bits) - 1))
    } else {
        None
    }
}

/// The facts known at a point of the program, by value.
type Facts = HashMap<Value, Range>;

struct Analysis<'f> {
    func: &'f Function,
    proofs: Proofs,
}

impl Analysis<'_> {
    fn region(&mut self, region: &Region, facts: &mut Facts) {
        for &id in &region.ops {
            self.op(id, facts);
        }
    }

    /// The integer dtype of a scalar value.
    fn int_dtype(&self, v: Value) -> Option<DType> {
        match self.func.ty(v) {
            Type::Scalar(d) if d.is_int() => Some(*d),
            _ => None,
        }
    }

    /// What is known about `v` (its dtype's range if nothing else).
    fn range(&self, v: Value, facts: &Facts) -> Option<Range> {
        facts
            .get(&v)
            .cloned()
            .or_else(|| Range::of(self.int_dtype(v)?))
    }

    fn op(&mut self, id: OpId, facts: &mut Facts) {
        let func = self.func;
        let op = func.op(id);
        match &op.kind {
            OpKind::Load | OpKind::LoadMasked { .. } => self.access(id, &op.operands, facts),
            OpKind::Store | OpKind::StoreMasked => {
                self.access(id, op.operands.get(1..).unwrap_or_default(), facts)
            }
            OpKind::For { .. } => self.for_loop(op, facts),
            OpKind::While => self.while_loop(op, facts),
            OpKind::If => {
                if let (Some(&cond), [then, otherwise]) = (op.operands.first(), &op.regions[..]) {
                    for (region, truth) in [(then, true), (otherwise, false)] {
                        let mut inner = facts.clone();
                        self.assume(cond, truth, &mut inner);
                        self.region(region, &mut inner);
                    }
                }
            }
            _ => {
                if let [result] = op.results[..] {
                    if let Some(range) = self.derive(&op.kind, &op.operands, result, facts) {
                        facts.insert(result, range);
                    }
                }
            }
        }
    }

    /// The range of the scalar result of a side-effect-free op.
    fn derive(
        &self,
        kind: &OpKind,
        operands: &[Value],
        result: Value,
        facts: &Facts,
    ) -> Option<Range> {
        let dtype = self.int_dtype(result)?;
        let (min, max) = dtype_bounds(dtype)?;
        let arg = |k: usize| self.range(*operands.get(k)?, facts);
        let fits = |lower: i128, upper: i128| lower >= min && upper <= max;
        match kind {
            OpKind::Constant { value } => {
                let c = value.to_i128()?;
                Some(Range::interval(c, c))
            }
            OpKind::ProgramId { .. } => Some(Range::interval(0, max)),
            OpKind::NumPrograms { .. } => Some(Range::interval(1, max)),
            OpKind::Dim { axis } => Some(Range {
                exact: Some(Form {
                    tensor: *operands.first()?,
                    axis: *axis,
                    div: 1,
                    offset: 0,
                }),
                ..Range::interval(0, max)
            }),
            OpKind::Cast { to } if to.is_int() => {
                let x = arg(0)?;
                let (lo, hi) = dtype_bounds(*to)?;
                (x.lower >= lo && x.upper <= hi).then_some(x)
            }
            OpKind::Binary(b) => {
                let (x, y) = (arg(0)?, arg(1)?);
                match b {
                    BinaryOp::Add => match (x.constant(), y.constant()) {
                        (_, Some(c)) => x.plus(c, dtype),
                        (Some(c), _) => y.plus(c, dtype),
                        _ => {
                            let (lower, upper) = (x.lower + y.lower, x.upper + y.upper);
                            fits(lower, upper).then(|| Range::interval(lower, upper))
                        }
                    },
                    BinaryOp::Sub => match y.constant() {
                        Some(c) => x.plus(-c, dtype),
                        None => {
                            let (lower, upper) = (x.lower - y.upper, x.upper - y.lower);
                            fits(lower, upper).then(|| Range::interval(lower, upper))
                        }
                    },
                    BinaryOp::Mul => {
                        let (x, k) = match (x.constant(), y.constant()) {
                            (_, Some(k)) => (x, k),
                            (Some(k), _) => (y, k),
                            _ => return None,
                        };
                        let (lower, upper) = (x.lower * k, x.upper * k);
                        (k >= 0 && fits(lower, upper)).then(|| Range::interval(lower, upper))
                    }
                    BinaryOp::Div => {
                        let k = y.constant().filter(|&k| k > 0)?;
                        if x.lower < 0 {
                            return None;
                        }
                        let exact = x.exact.filter(|f| f.offset == 0).map(|f| Form {
                            div: f.div * k,
                            ..f
                        });
                        // x ≤ ⌊d/q⌋ implies ⌊x/k⌋ ≤ ⌊d/(q·k)⌋.
                        let mut range = Range {
                            exact,
                            ..Range::interval(x.lower / k, x.upper / k)
                        };
                        range.add_below(
                            x.strict_uppers()
                                .into_iter()
                                .filter(|f| f.offset <= 1)
                                .map(|f| Form {
                                    div: f.div * k,
                                    offset: 1,
                                    ..f
                                }),
                        );
                        Some(range)
                    }
                    BinaryOp::Min => {
                        let mut r = Range::interval(x.lower.min(y.lower), x.upper.min(y.upper));
                        r.add_below(x.strict_uppers());
                        r.add_below(y.strict_uppers());
                        Some(r)
                    }
                    BinaryOp::Max => {
                        Some(Range::interval(x.lower.max(y.lower), x.upper.max(y.upper)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `for iv = lo to hi`: the body runs with `lo ≤ iv < hi`.
    fn for_loop(&mut self, op: &tile_ir::Op, facts: &mut Facts) {
        let Some(body) = op.regions.first() else {
            return;
        };
        let mut inner = facts.clone();
        if let (Some(&iv), [lo, hi, ..]) = (body.args.first(), &op.operands[..]) {
            if let (Some(lo), Some(hi), Some(own)) = (
                self.range(*lo, facts),
                self.range(*hi, facts),
                self.range(iv, facts),
            ) {
                let upper = (hi.upper - 1).min(own.upper);
                let mut range = Range::interval(lo.lower.max(own.lower), upper);
                // iv < hi < f implies iv < f − 1.
                range.add_below(hi.strict_uppers().into_iter().map(|f| f.shifted(-1)));
                inner.insert(iv, range);
            }
        }
        self.region(body, &mut inner);
    }

    /// A `while` body runs only where its condition held on the same carried
    /// values, so what the condition implies for its arguments holds for
    /// the body's. A carried integer is also assumed to keep the lower bound
    /// of its initial value, an induction that is checked on what the body
    /// yields: where it fails, the loop is analyzed again without it (and
    /// the accesses proven under it are forgotten).
    fn while_loop(&mut self, op: &tile_ir::Op, facts: &Facts) {
        let [cond, body] = &op.regions[..] else {
            return;
        };
        let mut kept: Vec<Option<i128>> = op
            .operands
            .iter()
            .map(|&v| self.range(v, facts).map(|r| r.lower))
            .collect();
        loop {
            let before = self.proofs.proven.clone();
            let mut inner = facts.clone();
            for (&arg, lower) in cond.args.iter().zip(&kept) {
                let whole = self.int_dtype(arg).and_then(Range::of);
                if let (Some(lower), Some(whole)) = (lower, whole) {
                    inner.insert(arg, Range::interval(*lower, whole.upper));
                }
            }
            self.region(cond, &mut inner);
            let go = cond.ops.last().map(|&y| &self.func.op(y).operands);
            if let Some(&[go]) = go.map(Vec::as_slice) {
                self.assume(go, true, &mut inner);
            }
            for (a, b) in cond.args.iter().zip(&body.args) {
                if let Some(range) = inner.get(a).cloned() {
                    inner.insert(*b, range);
                }
            }
            self.region(body, &mut inner);
            let yielded = body.ops.last().map(|&y| self.func.op(y).operands.clone());
            let mut broken = false;
            for (k, lower) in kept.iter_mut().enumerate() {
                let Some(bound) = *lower else {
                    continue;
                };
                let next = yielded.as_ref().and_then(|y| y.get(k).copied());
                let holds = next
                    .and_then(|v| self.range(v, &inner))
                    .is_some_and(|r| r.lower >= bound);
                if !holds {
                    *lower = None;
                    broken = true;
                }
            }
            if !broken {
                return;
            }
            self.proofs.proven = before;
        }
    }

    /// Adds to `facts` what holds when the bool `cond` is `truth`.
    fn assume(&self, cond: Value, truth: bool, facts: &mut Facts) {
        let Some(id) = self.func.defining_op(cond) else {
            return;
        };
        let op = self.func.op(id);
        match (&op.kind, &op.operands[..]) {
            (OpKind::Unary(UnaryOp::Not), [x]) => self.assume(*x, !truth, facts),
            (OpKind::Binary(BinaryOp::And), [a, b]) if truth => {
                self.assume(*a, true, facts);
                self.assume(*b, true, facts);
            }
            (OpKind::Binary(BinaryOp::Or), [a, b]) if !truth => {
                self.assume(*a, false, facts);
                self.assume(*b, false, facts);
            }
            (OpKind::Cmp(pred), [a, b]) => {
                let pred = if truth { *pred } else { negation(*pred) };
                match pred {
                    CmpPred::Lt => self.assume_below(*a, *b, true, facts),
                    CmpPred::Le => self.assume_below(*a, *b, false, facts),
                    CmpPred::Gt => self.assume_below(*b, *a, true, facts),
                    CmpPred::Ge => self.assume_below(*b, *a, false, facts),
                    CmpPred::Eq => {
                        self.assume_below(*a, *b, false, facts);
                        self.assume_below(*b, *a, false, facts);
                    }
                    CmpPred::Ne => {}
                }
            }
            _ => {}
        }
    }

    /// Adds `a < b` (`strict`) or `a ≤ b` to `facts`.
    fn assume_below(&self, a: Value, b: Value, strict: bool, facts: &mut Facts) {
        let (Some(x), Some(y)) = (self.range(a, facts), self.range(b, facts)) else {
            return;
        };
        let gap = i128::from(strict);
        let mut x2 = x.clone();
        x2.upper = x.upper.min(y.upper - gap);
        x2.add_below(y.strict_uppers().into_iter().map(|f| f.shifted(-gap)));
        let mut y2 = y;
        y2.lower = y2.lower.max(x.lower + gap);
        facts.insert(a, x2);
        facts.insert(b, y2);
    }

    /// Records which axes of a load or store through `view[indices]` are
    /// proven in bounds.
    fn access(&mut self, id: OpId, view_and_indices: &[Value], facts: &Facts) {
        let Some((&view, indices)) = view_and_indices.split_first() else {
            return;
        };
        let Some(def) = self.func.defining_op(view).map(|v| self.func.op(v)) else {
            return;
        };
        let (OpKind::PartitionView { shape }, [tensor]) = (&def.kind, &def.operands[..]) else {
            return;
        };
        let proven = indices
            .iter()
            .zip(shape.dims())
            .enumerate()
            .map(|(axis, (&i, &tile))| {
                self.range(i, facts).is_some_and(|r| {
                    r.lower >= 0
                        && r.strict_uppers().iter().any(|f| {
                            f.tensor == *tensor
                                && f.axis == axis
                                && f.div >= tile as i128
                                && f.offset <= 0
                        })
                })
            })
            .collect();
        self.proofs.proven.insert(id, proven);
    }
}

/// The predicate that holds when `pred` does not (on integers).
fn negation(pred: CmpPred) -> CmpPred {
    match pred {
        CmpPred::Eq => CmpPred::Ne,
        CmpPred::Ne => CmpPred::Eq,
        CmpPred::Lt => CmpPred::Ge,
        CmpPred::Ge => CmpPred::Lt,
        CmpPred::Le => CmpPred::Gt,
        CmpPred::Gt => CmpPred::Le,
    }
}
