//! Front-end values and literal typing.
//!
//! Untyped literals and const parameters stay compile-time numbers until an
//! operation needs them as IR values; they then take the dtype of the other
//! operand (Triton's rule), or `i32` / `f32` / `bool` by default. Literals
//! with a suffix (`2.0f16`, `3i64`) are typed at once.

use super::Translator;
use crate::diag::poisoned;
use crate::signature::{dtype_named, dtype_of};
use quote::ToTokens;
use tile_ir::eval::round_f64;
use tile_ir::{DType, Scalar, Type, Value};

/// A value of the front end.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    /// An IR value: scalar, tile, tensor or view.
    Ir(Value),
    /// A compile-time integer (untyped literal, const parameter or folding
    /// of those).
    Int(i128),
    /// A compile-time float (untyped literal).
    Float(f64),
    /// A compile-time bool.
    Bool(bool),
    /// A tuple.
    Tuple(Vec<Val>),
    /// A compile-time CuTe layout (`make_layout(..)` and the algebra's
    /// functions, `layout_fns.rs`).
    Layout(tile_ir::layout::Layout),
    /// A window of a tensor (`t.offset(..)`, `t.window(..)`), which only
    /// `partition_view` takes.
    Window(Box<super::window::Window>),
    /// `()`.
    Unit,
    /// What a variable holds after the statement that would have defined
    /// it failed (`recover.rs`); reading it fails without a new error.
    Poisoned,
}

impl Val {
    /// Whether this is a compile-time number or bool.
    pub(crate) fn is_const(&self) -> bool {
        matches!(self, Val::Int(_) | Val::Float(_) | Val::Bool(_))
    }
}

impl Translator<'_> {
    /// The value of a literal.
    pub(crate) fn literal(&mut self, lit: &syn::Lit) -> syn::Result<Val> {
        match lit {
            syn::Lit::Int(i) => {
                let value: i128 = i.base10_parse().map_err(|e| self.with_label(e))?;
                match i.suffix() {
                    "" => Ok(Val::Int(value)),
                    s => {
                        let d = self.suffix_dtype(s, lit)?;
                        self.typed_const(Val::Int(value), d, lit).map(Val::Ir)
                    }
                }
            }
            syn::Lit::Float(f) => {
                let value: f64 = f.base10_parse().map_err(|e| self.with_label(e))?;
                match f.suffix() {
                    "" => Ok(Val::Float(value)),
                    s => {
                        let d = self.suffix_dtype(s, lit)?;
                        self.typed_const(Val::Float(value), d, lit).map(Val::Ir)
                    }
                }
            }
            syn::Lit::Bool(b) => Ok(Val::Bool(b.value)),
            other => Err(self.err(
                other,
                "only integer, float and bool literals are supported in tile kernels",
            )),
        }
    }

    fn suffix_dtype(&self, suffix: &str, lit: &syn::Lit) -> syn::Result<DType> {
        dtype_named(suffix)
            .ok_or_else(|| self.err(lit, format!("unsupported literal suffix `{suffix}`")))
    }

    /// The value a path names: a variable, a const parameter, or a typed
    /// constant such as `f32::INFINITY`.
    pub(crate) fn path(&mut self, p: &syn::ExprPath) -> syn::Result<Val> {
        if let Some(id) = p.path.get_ident() {
            let name = id.to_string();
            return match self.scopes.lookup(&name) {
                Some(b) if matches!(b.val, Val::Poisoned) => Err(poisoned()),
                Some(b) => Ok(b.val.clone()),
                None if self.helpers.contains_key(&name) => {
                    Err(self.err(p, format!("`{name}` is a helper: call it, `{name}(..)`")))
                }
                None => Err(self.err(p, format!("cannot find value `{name}` in this kernel"))),
            };
        }
        if let Some(value) = self.float_const(p)? {
            return Ok(Val::Ir(value));
        }
        if p.path.segments.len() == 2 && p.qself.is_none() {
            let (ty, name) = (
                &p.path.segments[0].ident,
                p.path.segments[1].ident.to_string(),
            );
            if let Some(d) = dtype_of(ty) {
                if let Some(missing) = missing_special(d, &name) {
                    return Err(self.err(p, missing));
                }
                let value = match (name.as_str(), d.is_float()) {
                    ("INFINITY", true) => Some(Val::Float(f64::INFINITY)),
                    ("NEG_INFINITY", true) => Some(Val::Float(f64::NEG_INFINITY)),
                    ("NAN", true) => Some(Val::Float(f64::NAN)),
                    ("MAX", _) | ("MIN", _) => Some(self.extreme(d, name == "MAX")),
                    _ => None,
                };
                if let Some(v) = value {
                    return self.typed_const(v, d, p).map(Val::Ir);
                }
            }
        }
        Err(self.err(p, "unknown path: a tile kernel names variables, parameters, const parameters and constants like `f32::INFINITY` and `std::f32::consts::PI`"))
    }

    /// A mathematical constant of `f32` or `f64`, as Rust names it:
    /// `std::f32::consts::PI`, `core::f64::consts::E` (or, shorter,
    /// `f32::consts::TAU`); `None` for other paths, an error for an unknown
    /// name.
    fn float_const(&mut self, p: &syn::ExprPath) -> syn::Result<Option<Value>> {
        let names: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let tail = match names.as_slice() {
            [root, ty, consts, name] if (root == "std" || root == "core") && consts == "consts" => {
                (ty, name)
            }
            [ty, consts, name] if consts == "consts" => (ty, name),
            _ => return Ok(None),
        };
        let dtype = match tail.0.as_str() {
            "f32" => DType::F32,
            "f64" => DType::F64,
            _ => return Ok(None),
        };
        let value = match FLOAT_CONSTS.iter().find(|(n, _)| n == tail.1) {
            Some(&(_, v)) => v,
            None => {
                let known: Vec<&str> = FLOAT_CONSTS.iter().map(|(n, _)| *n).collect();
                let msg = format!(
                    "no constant `{}` in `{}::consts`; it has {}",
                    tail.1,
                    tail.0,
                    known.join(", ")
                );
                return Err(self.err(p, msg));
            }
        };
        self.typed_const(Val::Float(value), dtype, p).map(Some)
    }

    fn extreme(&self, d: DType, max: bool) -> Val {
        match d.max_finite() {
            // The unsigned scale's least value is its smallest power of two.
            Some(_) if d == DType::F8E8M0 && !max => Val::Float(2f64.powi(-127)),
            Some(m) => Val::Float(if max { m } else { -m }),
            None => {
                let bits = d.bits();
                let (lo, hi) = if d.is_signed_int() {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                } else {
                    (0, (1i128 << bits) - 1)
                };
                Val::Int(if max { hi } else { lo })
            }
        }
    }

    /// The scalar constant of dtype `d` for a compile-time value.
    pub(crate) fn scalar_of(&self, v: &Val, d: DType, node: &dyn ToTokens) -> syn::Result<Scalar> {
        let scalar = match (v, d) {
            (Val::Bool(b), DType::Bool) => Some(Scalar::Bool(*b)),
            (Val::Int(i), d) if d.is_int() => {
                Scalar::wrapping_from_i128(d, *i).filter(|s| s.to_i128() == Some(*i)).ok_or_else(|| {
                    self.err(node, format!("the integer {i} does not fit in {d}"))
                })?
                .into()
            }
            (Val::Int(i), d) if d.is_float() => round_f64(*i as f64, d),
            (Val::Float(f), d) if d.is_float() => round_f64(*f, d),
            (Val::Float(f), d) => {
                return Err(self.err(node, format!("the float {f:?} cannot be used as {d}: write an integer, or cast the other side")))
            }
            (other, d) => return Err(self.err(node, format!("{} cannot be used as {d}", self.describe(other)))),
        };
        let scalar = scalar
            .ok_or_else(|| self.err(node, format!("{} cannot be used as {d}", self.describe(v))))?;
        let finite = match v {
            Val::Int(_) => true,
            Val::Float(f) => f.is_finite(),
            _ => false,
        };
        if finite && scalar.to_f64().is_infinite() {
            return Err(self.err(node, format!("{} overflows {d}", self.describe(v))));
        }
        Ok(scalar)
    }

    /// A scalar IR constant of dtype `d` for a compile-time value.
    pub(crate) fn typed_const(
        &mut self,
        v: Val,
        d: DType,
        node: &dyn ToTokens,
    ) -> syn::Result<Value> {
        let s = self.scalar_of(&v, d, node)?;
        self.ir(node, |b| b.constant(s))
    }

    /// The default dtype of a compile-time value: `i32` (or `i64` if it does
    /// not fit), `f32`, `bool`.
    pub(crate) fn default_dtype(v: &Val) -> Option<DType> {
        match v {
            Val::Int(i) if i32::try_from(*i).is_ok() => Some(DType::I32),
            Val::Int(_) => Some(DType::I64),
            Val::Float(_) => Some(DType::F32),
            Val::Bool(_) => Some(DType::Bool),
            _ => None,
        }
    }

    /// The value as an IR scalar or tile; compile-time values become
    /// constants of `want` or of their default dtype.
    pub(crate) fn data(
        &mut self,
        v: &Val,
        want: Option<DType>,
        node: &dyn ToTokens,
    ) -> syn::Result<Value> {
        match v {
            Val::Ir(x) => match self.ty(*x) {
                Type::Scalar(_) | Type::Tile(_) => Ok(*x),
                other => Err(self.err(
                    node,
                    format!(
                        "expected a scalar or a tile, found {}",
                        describe_type(&other)
                    ),
                )),
            },
            Val::Poisoned => Err(poisoned()),
            c if c.is_const() => {
                let d = match want {
                    Some(d) => d,
                    None => Self::default_dtype(c).unwrap_or(DType::I32),
                };
                self.typed_const(c.clone(), d, node)
            }
            other => Err(self.err(
                node,
                format!(
                    "expected a scalar or a tile, found {}",
                    self.describe(other)
                ),
            )),
        }
    }

    /// Applies a type annotation of a `let` (`let x: f32 = 1.0;`).
    pub(crate) fn annotate(
        &mut self,
        v: Val,
        ty: &syn::Type,
        node: &dyn ToTokens,
    ) -> syn::Result<Val> {
        let d = match ty {
            syn::Type::Path(p) => p.path.get_ident().and_then(dtype_of),
            _ => None,
        };
        let Some(d) = d else {
            return Err(self.err(ty, "only scalar element types can annotate a `let` (tiles are typed by their operations)"));
        };
        match &v {
            c if c.is_const() => self.typed_const(v.clone(), d, node).map(Val::Ir),
            Val::Ir(x) if self.ty(*x) == Type::Scalar(d) => Ok(v),
            other => Err(self.err(
                node,
                format!(
                    "mismatched types: the annotation says {d}, the value is {}",
                    self.describe(other)
                ),
            )),
        }
    }
}

/// A type as messages name it.
pub(crate) fn describe_type(ty: &Type) -> String {
    match ty {
        Type::Tensor(_) => {
            format!("the tensor {ty} (make a view with `partition_view` and load from it)")
        }
        Type::PartitionView(_) => {
            format!("the partition view {ty} (load from it with `.load(..)`)")
        }
        other => other.to_string(),
    }
}

/// The constants of Rust's `f32::consts` and `f64::consts`, as `f64`s
/// (rounded once to the dtype named).
const FLOAT_CONSTS: [(&str, f64); 19] = [
    ("PI", std::f64::consts::PI),
    ("TAU", std::f64::consts::TAU),
    ("E", std::f64::consts::E),
    ("SQRT_2", std::f64::consts::SQRT_2),
    ("LN_2", std::f64::consts::LN_2),
    ("LN_10", std::f64::consts::LN_10),
    ("LOG2_E", std::f64::consts::LOG2_E),
    ("LOG10_E", std::f64::consts::LOG10_E),
    ("LOG2_10", std::f64::consts::LOG2_10),
    ("LOG10_2", std::f64::consts::LOG10_2),
    ("FRAC_PI_2", std::f64::consts::FRAC_PI_2),
    ("FRAC_PI_3", std::f64::consts::FRAC_PI_3),
    ("FRAC_PI_4", std::f64::consts::FRAC_PI_4),
    ("FRAC_PI_6", std::f64::consts::FRAC_PI_6),
    ("FRAC_PI_8", std::f64::consts::FRAC_PI_8),
    ("FRAC_1_PI", std::f64::consts::FRAC_1_PI),
    ("FRAC_2_PI", std::f64::consts::FRAC_2_PI),
    ("FRAC_2_SQRT_PI", std::f64::consts::FRAC_2_SQRT_PI),
    ("FRAC_1_SQRT_2", std::f64::consts::FRAC_1_SQRT_2),
];

/// The error for naming `d::INFINITY`, `d::NEG_INFINITY` or `d::NAN` of a
/// float dtype that has no such value.
fn missing_special(d: DType, name: &str) -> Option<String> {
    let max = d.max_finite()?;
    if name.contains("INFINITY") && !d.has_infinity() {
        return Some(format!(
            "{d} has no infinity (its largest value is `{d}::MAX`, {max})"
        ));
    }
    let has_nan = !matches!(d, DType::F4E2M1 | DType::F6E2M3 | DType::F6E3M2);
    (name == "NAN" && !has_nan).then(|| {
        format!("{d} has no NaN (a NaN converted to {d} becomes its largest value, {max})")
    })
}
