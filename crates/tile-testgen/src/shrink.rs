//! The shrinker: greedy reduction of a failing case.
//!
//! Each round lists the edits of the current case, simplest-first: a smaller
//! grid; a store dropped; an `if` replaced by one of its branches; an op's
//! results replaced by an operand of the same type (a loop's by its initial
//! values) or by zeros; a tensor argument cropped, made row-major
//! contiguous, or zeroed (whole, by halves, quarters, ... 64ths of its
//! buffer, and element by element when it is small); a scalar argument
//! zeroed. The first edit whose
//! result still verifies and still fails is kept, and the pass goes on with
//! the edits of the smaller case; passes repeat until one keeps nothing.
//! After an IR edit, ops whose results are unused and that have no effect,
//! and parameters no op reads, are removed, and the kernel is compacted by a
//! text round trip. Every edit makes the case strictly smaller or simpler, so
//! shrinking ends; it also stops after [`MAX_ATTEMPTS`] calls of the predicate.

use crate::tensors::{contiguous, cropped, is_contiguous};
use crate::Case;
use tile_ir::interp::{Arg, HostTensor};
use tile_ir::passes::{Dce, Pass};
use tile_ir::text::parse_function;
use tile_ir::verify::verify;
use tile_ir::{Function, OpId, OpKind, Region, Scalar, Type, Value, ValueDef};

/// The most calls of the predicate one shrink makes.
pub const MAX_ATTEMPTS: usize = 4000;

/// Reduces `case` while `still_fails` holds, and returns the smallest case
/// found (`case` itself when no edit keeps it failing).
///
/// Every case passed to `still_fails` verifies; whether it also runs is the
/// predicate's business (a predicate that tests for a wrong result should
/// return `false` when the interpreter rejects the case).
pub fn shrink(case: &Case, still_fails: impl Fn(&Case) -> bool) -> Case {
    let mut best = case.clone();
    let mut attempts = 0;
    loop {
        // One pass over the edits; after a kept edit the list is rebuilt and
        // the pass goes on from the same position.
        let mut changed = false;
        let mut edits_now = edits(&best);
        let mut at = 0;
        while let Some(edit) = edits_now.get(at) {
            let Some(candidate) = apply(&best, edit).filter(|c| !same(c, &best)) else {
                at += 1;
                continue;
            };
            if attempts == MAX_ATTEMPTS {
                return best;
            }
            attempts += 1;
            if still_fails(&candidate) {
                best = candidate;
                changed = true;
                edits_now = edits(&best);
            } else {
                at += 1;
            }
        }
        if !changed {
            return best;
        }
    }
}

/// Whether two cases are the same program, grid and arguments (an edit that
/// changes nothing is no progress).
fn same(a: &Case, b: &Case) -> bool {
    a.grid == b.grid && a.args == b.args && a.func.to_string() == b.func.to_string()
}

/// One way to make a case smaller.
#[derive(Clone, Debug)]
enum Edit {
    /// Sets a grid axis to a smaller extent.
    Grid { axis: usize, extent: u32 },
    /// Removes a store.
    DropStore(OpId),
    /// Replaces an `if` by the ops of one branch, a `for` by one run of its
    /// body with the induction variable at the lower bound, or a `while` by
    /// one run of its body (branch 1) on the initial values.
    Inline { op: OpId, branch: usize },
    /// Replaces each result by an operand of its type: for a loop, its
    /// initial values; otherwise the single result by the operand at this
    /// position.
    ToOperand(OpId, usize),
    /// Replaces each result by a zero of its type.
    ToZero(OpId),
    /// Halves a tensor argument's extent along an axis.
    Crop { arg: usize, axis: usize },
    /// Makes a tensor argument row-major contiguous.
    Contiguous(usize),
    /// Sets every byte of an argument to zero.
    Zero(usize),
    /// Sets the bytes of buffer elements `start..end` of a tensor to zero.
    ZeroElements {
        arg: usize,
        start: usize,
        end: usize,
    },
}

/// The edits of `case`, simplest-first.
fn edits(case: &Case) -> Vec<Edit> {
    let mut edits = Vec::new();
    for (axis, &g) in case.grid.iter().enumerate() {
        if g > 1 {
            edits.push(Edit::Grid { axis, extent: 1 });
            if g > 2 {
                edits.push(Edit::Grid {
                    axis,
                    extent: g / 2,
                });
            }
        }
    }
    let mut ops = Vec::new();
    case.func.walk(&mut |op| ops.push(op));
    ops.reverse();
    let kind = |op: OpId| &case.func.op(op).kind;
    edits.extend(
        ops.iter()
            .filter(|&&op| matches!(kind(op), OpKind::Store | OpKind::StoreMasked))
            .map(|&op| Edit::DropStore(op)),
    );
    for &op in &ops {
        match kind(op) {
            OpKind::If => {
                edits.push(Edit::Inline { op, branch: 0 });
                edits.push(Edit::Inline { op, branch: 1 });
            }
            OpKind::For { .. } => edits.push(Edit::Inline { op, branch: 0 }),
            OpKind::While => edits.push(Edit::Inline { op, branch: 1 }),
            _ => {}
        }
    }
    for &op in &ops {
        let operands = case.func.op(op).operands.len();
        edits.extend((0..operands).map(|i| Edit::ToOperand(op, i)));
    }
    edits.extend(ops.iter().map(|&op| Edit::ToZero(op)));
    for (arg, a) in case.args.iter().enumerate() {
        if let Arg::Tensor(t) = a {
            for (axis, &e) in t.shape().iter().enumerate() {
                if e > 1 {
                    edits.push(Edit::Crop { arg, axis });
                }
            }
            edits.push(Edit::Contiguous(arg));
        }
    }
    edits.extend((0..case.args.len()).map(Edit::Zero));
    for (arg, a) in case.args.iter().enumerate() {
        if let Arg::Tensor(t) = a {
            // Halves, quarters, ... 64ths of the buffer, and each element of
            // a small one.
            let len = t.data().len() / t.dtype().size_bytes();
            let each = if len <= 64 { len } else { 64 };
            for parts in [2, 4, 8, 16, 32, 64, each]
                .into_iter()
                .filter(|&p| p <= len)
            {
                let size = len.div_ceil(parts);
                for start in (0..len).step_by(size) {
                    let end = (start + size).min(len);
                    edits.push(Edit::ZeroElements { arg, start, end });
                }
            }
        }
    }
    edits
}

/// `case` with `edit` applied, or `None` when the edit does not apply or
/// leaves an invalid kernel.
fn apply(case: &Case, edit: &Edit) -> Option<Case> {
    let mut out = case.clone();
    match *edit {
        Edit::Grid { axis, extent } => out.grid[axis] = extent,
        Edit::Crop { arg, axis } => {
            let Arg::Tensor(t) = &case.args[arg] else {
                return None;
            };
            let mut extents = t.shape().to_vec();
            extents[axis] = extents[axis].div_ceil(2);
            out.args[arg] = Arg::Tensor(cropped(t, &extents));
        }
        Edit::Contiguous(arg) => match &case.args[arg] {
            Arg::Tensor(t) if !is_contiguous(t) => out.args[arg] = Arg::Tensor(contiguous(t)),
            _ => return None,
        },
        Edit::Zero(arg) => out.args[arg] = zeroed(&case.args[arg])?,
        Edit::ZeroElements { arg, start, end } => {
            let Arg::Tensor(t) = &case.args[arg] else {
                return None;
            };
            let size = t.dtype().size_bytes();
            let mut data = t.data().to_vec();
            let range = &mut data[start * size..end * size];
            if range.iter().all(|&b| b == 0) {
                return None;
            }
            range.fill(0);
            let t = HostTensor::with_strides(t.dtype(), t.shape(), t.strides(), t.offset(), data);
            out.args[arg] = Arg::Tensor(t.ok()?);
        }
        Edit::DropStore(op) => {
            edit_region_of(&mut out.func, op, |region, at| {
                region.ops.remove(at);
            });
            finish_ir(&mut out)?;
        }
        Edit::Inline { op, branch } => {
            let mut taken = out.func.ops[op].regions.get(branch)?.clone();
            let terminator = taken.ops.pop()?;
            let mut yielded = out.func.op(terminator).operands.clone();
            let results = out.func.op(op).results.clone();
            let operands = out.func.op(op).operands.clone();
            // A loop's body once: iv = lo, carried values = initial values.
            let entry = match out.func.op(op).kind {
                OpKind::For { .. } => {
                    let mut entry = vec![operands[0]];
                    entry.extend_from_slice(&operands[3..]);
                    Some(entry)
                }
                OpKind::While => Some(operands),
                _ => None,
            };
            if let Some(entry) = entry {
                for (arg, value) in taken.args.clone().into_iter().zip(entry) {
                    replace_uses(&mut out.func, arg, value);
                    for y in &mut yielded {
                        if *y == arg {
                            *y = value;
                        }
                    }
                }
            }
            edit_region_of(&mut out.func, op, |region, at| {
                region.ops.splice(at..=at, taken.ops);
            });
            for (r, v) in results.into_iter().zip(yielded) {
                replace_uses(&mut out.func, r, v);
            }
            finish_ir(&mut out)?;
        }
        Edit::ToOperand(op, index) => {
            let o = out.func.op(op);
            let pairs: Vec<(Value, Value)> = match o.kind {
                OpKind::For { .. } if index == 0 && !o.results.is_empty() => o
                    .results
                    .iter()
                    .copied()
                    .zip(o.operands[3..].iter().copied())
                    .collect(),
                OpKind::While if index == 0 && !o.results.is_empty() => o
                    .results
                    .iter()
                    .copied()
                    .zip(o.operands.iter().copied())
                    .collect(),
                OpKind::For { .. } | OpKind::While => return None,
                _ => {
                    let result = *o.results.first().filter(|_| o.results.len() == 1)?;
                    let operand = *o.operands.get(index)?;
                    if out.func.ty(operand) != out.func.ty(result) {
                        return None;
                    }
                    vec![(result, operand)]
                }
            };
            for (r, v) in pairs {
                replace_uses(&mut out.func, r, v);
            }
            finish_ir(&mut out)?;
        }
        Edit::ToZero(op) => {
            let o = out.func.op(op);
            let already_zero = match &o.kind {
                OpKind::Constant { value } | OpKind::Full { value, .. } => {
                    *value == Scalar::zero(value.dtype())
                }
                _ => false,
            };
            let results = o.results.clone();
            if already_zero || results.is_empty() {
                return None;
            }
            for r in results {
                let ty = out.func.ty(r).clone();
                let zero = zero_op(&mut out.func, &ty)?;
                replace_uses(&mut out.func, r, zero);
            }
            finish_ir(&mut out)?;
        }
    }
    Some(out)
}

/// An argument with every byte zero, or `None` when it already is.
fn zeroed(arg: &Arg) -> Option<Arg> {
    match arg {
        Arg::Scalar(s) if s.to_bits() != 0 => Some(Arg::Scalar(Scalar::zero(s.dtype()))),
        Arg::Tensor(t) if t.data().iter().any(|&b| b != 0) => {
            let data = vec![0; t.data().len()];
            HostTensor::with_strides(t.dtype(), t.shape(), t.strides(), t.offset(), data)
                .ok()
                .map(Arg::Tensor)
        }
        _ => None,
    }
}

/// A new `constant` or `full` zero of a data type, first in the body.
fn zero_op(func: &mut Function, ty: &Type) -> Option<Value> {
    let value = Scalar::zero(ty.dtype());
    let kind = match ty {
        Type::Scalar(_) => OpKind::Constant { value },
        Type::Tile(t) => OpKind::Full {
            value,
            shape: t.shape.clone(),
        },
        _ => return None,
    };
    let op = func.create_op(kind, Vec::new(), vec![ty.clone()], Vec::new());
    func.body.ops.insert(0, op);
    func.op(op).results.first().copied()
}

/// Makes every use of `from` a use of `to`.
fn replace_uses(func: &mut Function, from: Value, to: Value) {
    for op in func.ops.values_mut() {
        for operand in &mut op.operands {
            if *operand == from {
                *operand = to;
            }
        }
    }
}

/// Calls `edit` with the region that holds `target` and its position there.
fn edit_region_of(func: &mut Function, target: OpId, edit: impl FnOnce(&mut Region, usize)) {
    let mut body = std::mem::take(&mut func.body);
    let mut edit = Some(edit);
    find_in(func, &mut body, target, &mut edit);
    func.body = body;
}

fn find_in<F: FnOnce(&mut Region, usize)>(
    func: &mut Function,
    region: &mut Region,
    target: OpId,
    edit: &mut Option<F>,
) {
    if let Some(at) = region.ops.iter().position(|&op| op == target) {
        if let Some(edit) = edit.take() {
            edit(region, at);
        }
        return;
    }
    for &op in &region.ops {
        let mut nested = std::mem::take(&mut func.ops[op].regions);
        for r in &mut nested {
            find_in(func, r, target, edit);
        }
        func.ops[op].regions = nested;
    }
}

/// Prunes dead ops and unused parameters, compacts the kernel, and checks
/// that it verifies.
fn finish_ir(case: &mut Case) -> Option<()> {
    Dce.run(&mut case.func);
    prune_params(case);
    if let Ok(compact) = parse_function(&case.func.to_string()) {
        case.func = compact;
    }
    verify(&case.func).ok()
}

/// Removes the parameters no op reads, with their arguments.
fn prune_params(case: &mut Case) {
    let used = case.func.used_values();
    let keep: Vec<bool> = case
        .func
        .params
        .iter()
        .map(|p| used.contains(&p.value))
        .collect();
    if keep.iter().all(|&k| k) {
        return;
    }
    let mut flags = keep.iter();
    case.func.params.retain(|_| *flags.next().unwrap_or(&true));
    let mut flags = keep.iter();
    case.args.retain(|_| *flags.next().unwrap_or(&true));
    for index in 0..case.func.params.len() {
        let value = case.func.params[index].value;
        case.func.values[value].def = ValueDef::Param(index);
    }
}
