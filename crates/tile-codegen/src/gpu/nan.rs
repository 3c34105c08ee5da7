//! Which ops of a thread-level program may leave their NaN results as the
//! hardware makes them (`crate::nans` explains why that is safe): the
//! arithmetic whose results only feed more arithmetic, such as the centered
//! and squared values of a layernorm before they are summed through shared
//! memory, or a bf16 product that RoPE subtracts from another (f16 and
//! bf16 results too: where a conversion instruction rounds them, its NaN
//! then needs no compare and select). A `select` and a shuffle pass a value on unchanged: the value is
//! observed where their result is, except that a `select` of two computed
//! values (both NaNs canonical in the interpreter) canonicalizes its own
//! result where that is observed ([`canonicalizing_selects`]): one compare
//! and select for the choice instead of one for each side. So do a `for` loop's carried values
//! (a sum accumulated over the loop's iterations is observed only where the
//! next iteration's or the loop's result is) and an `if`'s results. An
//! `mma` computes from its operands (its NaN result is canonical, whatever
//! theirs were: attention's `p` rounded to f16 for the second product needs
//! no compare and select; so does its `p` stored as the A of a
//! `tcgen05.mma` in tensor memory). Every other use that is not arithmetic (stores,
//! shared memory, a `while` loop's carried values) observes.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use tile_ir::DType;
use tile_thread::program::{OpId, Program, Reg, Roles, ThreadOpKind};

/// The operands of a `for` before its carried values: `lo`, `hi`, `step`.
const FOR_BOUNDS: usize = 3;

/// The `select`s of `program` whose two values are computed (results of
/// arithmetic, whose NaNs the interpreter makes canonical): such a select
/// may canonicalize its own result, leaving its operands' NaNs as
/// computed. A select of a loaded value must keep that value's bits.
pub(super) fn canonicalizing_selects(program: &Program) -> HashSet<OpId> {
    let mut producers = HashMap::new();
    for (id, op) in program.ops.iter() {
        for &r in &op.results {
            producers.insert(r, id);
        }
    }
    let computed = |r: Option<&Reg>| {
        r.and_then(|r| producers.get(r))
            .is_some_and(|&p| computes(&program.ops[p].kind))
    };
    program
        .ops
        .iter()
        .filter(|(_, op)| {
            matches!(op.kind, ThreadOpKind::Select)
                && matches!(op.results.as_slice(), [r] if is_float(program.dtype(*r)))
        })
        .filter(|(_, op)| {
            let roles = Roles::of(&op.kind, &op.operands);
            let value = |name| roles.as_ref().and_then(|r| r.get(name));
            computed(value("a")) && computed(value("b"))
        })
        .map(|(id, _)| id)
        .collect()
}

/// The ops of `program` whose results' NaN payloads no use observes, given
/// its [`canonicalizing_selects`].
pub(super) fn unobserved_nans(program: &Program, selects: &HashSet<OpId>) -> HashSet<OpId> {
    let mut flow = Flow {
        program,
        uses: HashMap::new(),
        owners: HashMap::new(),
        visiting: RefCell::new(HashSet::new()),
        selects,
    };
    let mut candidates = HashSet::new();
    for (id, op) in program.ops.iter() {
        for (at, &r) in op.operands.iter().enumerate() {
            flow.uses.entry(r).or_default().push((id, at));
        }
        for region in &op.regions {
            if let Some(&last) = region.ops.last() {
                flow.owners.insert(last, id);
            }
        }
        if matches!(op.results.as_slice(), [r] if is_float(program.dtype(*r)))
            && (computes(&op.kind) || passes_on(&op.kind))
        {
            candidates.insert(id);
        }
    }
    let result = |id: OpId| program.ops[id].results[0];
    let observing = |user, at, left: &HashSet<OpId>| flow.observes(user, at, left);
    crate::nans::unobserved(candidates, result, &flow.uses, observing)
}

/// Where values go: each register's users, and the op owning each region's
/// closing `yield`.
struct Flow<'p> {
    program: &'p Program,
    uses: HashMap<Reg, Vec<(OpId, usize)>>,
    owners: HashMap<OpId, OpId>,
    /// The registers whose uses are being examined: a value carried around
    /// a loop unchanged reaches itself, which adds no observer.
    visiting: RefCell<HashSet<Reg>>,
    /// The selects that canonicalize their own results.
    selects: &'p HashSet<OpId>,
}

impl Flow<'_> {
    /// Whether op `user` sees the NaN payload of its operand number `at`,
    /// given the ops whose NaN payloads are still taken as unobserved.
    fn observes(&self, user: OpId, at: usize, unobserved: &HashSet<OpId>) -> bool {
        let program = self.program;
        let op = &program.ops[user];
        let role = Roles::of(&op.kind, &op.operands).and_then(|r| r.role_at(at));
        match &op.kind {
            // The condition is a bool; the values are passed on.
            ThreadOpKind::Select => {
                role != Some("c") && !unobserved.contains(&user) && !self.selects.contains(&user)
            }
            // The value moves to another lane bit for bit.
            ThreadOpKind::Shuffle { .. } => role != Some("value") || !unobserved.contains(&user),
            // A tensor-core product whose result is NaN gives the canonical
            // NaN whatever the payloads of its NaN operands (`tile_hw::mma`,
            // `tile_hw::wgmma`).
            ThreadOpKind::Mma { .. } | ThreadOpKind::WgmmaRegisterA { .. } => false,
            // Halves stored to tensor memory are an A only `tcgen05.mma`
            // reads (`tile_thread::lower`'s `tensor_a.rs`), bytes the scales
            // only a block-scaled one reads (`tensor_scales.rs`): a product
            // again.
            ThreadOpKind::TmemStoreHalves | ThreadOpKind::TmemStoreBytes => role != Some("values"),
            // A cast to the operand's own dtype is the operand itself.
            ThreadOpKind::Cast { to } => Roles::of(&op.kind, &op.operands)
                .and_then(|r| r.get("x").copied())
                .is_some_and(|r| program.dtype(r) == *to),
            // An initial carried value.
            ThreadOpKind::For if at >= FOR_BOUNDS => {
                self.carried_observed(user, at - FOR_BOUNDS, unobserved)
            }
            ThreadOpKind::Yield => match self.owners.get(&user).map(|&o| (o, &program.ops[o].kind))
            {
                Some((owner, ThreadOpKind::For)) => self.carried_observed(owner, at, unobserved),
                Some((owner, ThreadOpKind::If)) => {
                    self.value_observed(program.ops[owner].results[at], unobserved)
                }
                _ => true,
            },
            kind => !computes(kind),
        }
    }

    /// Whether carried value `k` of the `for` op `owner` is observed: in
    /// the next iteration (the body's argument) or after the loop (its
    /// result).
    fn carried_observed(&self, owner: OpId, k: usize, unobserved: &HashSet<OpId>) -> bool {
        let op = &self.program.ops[owner];
        let argument = op.regions.first().and_then(|body| body.args.get(1 + k));
        match (argument, op.results.get(k)) {
            (Some(&argument), Some(&result)) => {
                self.value_observed(argument, unobserved) || self.value_observed(result, unobserved)
            }
            _ => true,
        }
    }

    /// Whether any use of `value` observes its NaN payload.
    fn value_observed(&self, value: Reg, unobserved: &HashSet<OpId>) -> bool {
        if !self.visiting.borrow_mut().insert(value) {
            return false;
        }
        let observed = self
            .uses
            .get(&value)
            .into_iter()
            .flatten()
            .any(|&(user, at)| self.observes(user, at, unobserved));
        self.visiting.borrow_mut().remove(&value);
        observed
    }
}

/// Whether `dtype` is a float whose NaNs the analysis follows.
fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// Whether an op of `kind` passes one of its operands on as its result,
/// bits unchanged: a `select`, a shuffle.
fn passes_on(kind: &ThreadOpKind) -> bool {
    matches!(kind, ThreadOpKind::Select | ThreadOpKind::Shuffle { .. })
}

/// Whether an op of `kind` computes its result from its operands' values,
/// so that a NaN operand's payload does not change it.
fn computes(kind: &ThreadOpKind) -> bool {
    matches!(
        kind,
        ThreadOpKind::Unary(_)
            | ThreadOpKind::Binary(_)
            | ThreadOpKind::Cmp(_)
            | ThreadOpKind::Fma
            | ThreadOpKind::Cast { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::unobserved_nans;
    use tile_thread::program::Program;

    /// The names of the ops whose NaN payloads are unobserved in a one-warp
    /// kernel over `x` and `out` (f32) whose body is `body`, sorted; `%0` is
    /// a thread's element index (i64), `%1` true and `%z` 0.0.
    fn unobserved(body: &str) -> Vec<String> {
        let text = format!(
            "kernel k warps 1 (x: tensor<f32, 1>, out: tensor<f32, 1>)
{{
  %t = thread_id : i32
  %0 = cast %t to i64 : i64
  %1 = const true : bool
  %z = const 0.0 : f32
{body}
}}
"
        );
        let program: Program =
            tile_thread::parse_program(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let selects = super::canonicalizing_selects(&program);
        let mut out: Vec<String> = unobserved_nans(&program, &selects)
            .into_iter()
            .map(|id| program.ops[id].kind.name().to_string())
            .collect();
        out.sort();
        out
    }

    #[test]
    fn arithmetic_canonicalizes_only_where_its_value_is_stored() {
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %b = mul %a, %a : f32
  %c = sqrt %b : f32
  %d = add %c, %a : f32
  st.global.v1 out[%0], %d mask(%1)";
        assert_eq!(unobserved(body), ["mul", "sqrt"]);
    }

    /// A select of two computed values canonicalizes its stored result
    /// itself, so both products keep their NaNs; a select of a loaded value
    /// passes it on, and the product beside it is observed.
    #[test]
    fn a_select_of_computed_values_canonicalizes_once() {
        let computed = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %b = mul %a, %a : f32
  %c = add %a, %a : f32
  %d = select %1, %b, %c : f32
  st.global.v1 out[%0], %d mask(%1)";
        assert_eq!(unobserved(computed), ["add", "mul"]);
        let loaded = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %b = mul %a, %a : f32
  %d = select %1, %a, %b : f32
  st.global.v1 out[%0], %d mask(%1)";
        assert_eq!(unobserved(loaded), Vec::<String>::new());
    }

    /// bf16 results are candidates too: the rounding to bf16, the products
    /// and their difference keep their NaNs; only the cast back to f32,
    /// whose result is stored, observes.
    #[test]
    fn narrow_float_arithmetic_canonicalizes_only_where_stored() {
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %h = cast %a to bf16 : bf16
  %p = mul %h, %h : bf16
  %q = mul %h, %h : bf16
  %d = sub %p, %q : bf16
  %w = cast %d to f32 : f32
  st.global.v1 out[%0], %w mask(%1)";
        assert_eq!(unobserved(body), ["cast", "mul", "mul", "sub"]);
    }

    /// An f16 operand of `mma.sync` (attention's `p`), rounded from f32:
    /// the product computes from it; its f32 results are stored.
    #[test]
    fn an_mma_observes_no_payload_of_its_operands() {
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %s = mul %a, %a : f32
  %h = cast %s to f16 : f16
  %d0, %d1, %d2, %d3 = mma.m16n8k16.f16 %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %h, %s, %s, %s, %s : f32
  st.global.v1 out[%0], %d0 mask(%1)";
        assert_eq!(unobserved(body), ["cast", "mul"]);
    }

    #[test]
    fn shuffles_and_selects_pass_on() {
        // `%m` goes through a select into arithmetic: unobserved; `%n` is
        // shuffled into a select into a store: observed, as are the
        // shuffle and the select.
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %c = cmp lt %a, %a : bool
  %m = sub %a, %a : f32
  %sm = select %c, %m, %a : f32
  %q = mul %sm, %sm : f32
  %n = add %q, %a : f32
  %lane = const 1 : i32
  %r = shfl.bfly %n, %lane width 32 : f32
  %s = select %c, %r, %a : f32
  st.global.v1 out[%0], %s mask(%1)";
        assert_eq!(unobserved(body), ["mul", "select", "sub"]);
    }

    #[test]
    fn a_shuffle_into_arithmetic_observes_nothing() {
        // A reduction's step: the partial maximum `%m` and its shuffle feed
        // the next maximum, which is stored.
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %m = mul %a, %a : f32
  %lane = const 1 : i32
  %r = shfl.bfly %m, %lane width 32 : f32
  %n = max %m, %r : f32
  st.global.v1 out[%0], %n mask(%1)";
        assert_eq!(unobserved(body), ["mul", "shfl"]);
    }

    #[test]
    fn a_cast_to_the_same_dtype_passes_its_operand_on() {
        let body = "  %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
  %b = mul %a, %a : f32
  %c = cast %b to f32 : f32
  %d = abs %a : f32
  %e = cast %d to f64 : f64
  %f = cast %e to f32 : f32
  st.global.v1 out[%0], %c mask(%1)
  st.global.v1 out[%0], %f mask(%1)";
        assert_eq!(unobserved(body), ["abs", "cast"]);
    }

    /// A row sum carried through a loop: its `add` is observed only where
    /// the next iteration's or the loop's result is (`loop_body` wraps the
    /// loop, whose result is `%s`, its carried value `%acc`).
    fn carried_sum(after: &str, inside: &str) -> Vec<String> {
        let body = format!(
            "  %lo = const 0 : i32
  %hi = const 4 : i32
  %st = const 1 : i32
  %s = for %i = %lo to %hi step %st iter(%acc = %z) : f32 {{
    %a = ld.global.v1 x[%0] mask(%1) other(%z) : f32
{inside}    %n = add %acc, %a : f32
    yield %n
  }}
{after}"
        );
        unobserved(&body)
    }

    #[test]
    fn a_carried_sum_is_observed_where_the_loop_result_or_next_iteration_is() {
        // Squared after the loop: only the square is stored.
        let squared = "  %m = mul %s, %s : f32\n  st.global.v1 out[%0], %m mask(%1)";
        assert_eq!(carried_sum(squared, ""), ["add"]);
        // Stored as it is.
        assert_eq!(
            carried_sum("  st.global.v1 out[%0], %s mask(%1)", ""),
            [] as [&str; 0]
        );
        // Stored in the next iteration (the square is stored too).
        let inside = "    st.global.v1 out[%0], %acc mask(%1)\n";
        assert_eq!(carried_sum(squared, inside), [] as [&str; 0]);
    }
}
