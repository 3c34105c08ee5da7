//! Operators on scalars and tiles: numpy broadcasting (explicit `broadcast`
//! ops are inserted, since IR operands must have one type), literal typing,
//! compile-time folding of constants, and `as` casts.

use super::{Translator, Val};
use crate::signature::dtype_of;
use quote::ToTokens;
use syn::{BinOp, UnOp};
use tile_ir::{BinaryOp, CmpPred, DType, Scalar, Shape, Type, UnaryOp, Value};

/// A binary operation of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bin {
    /// An elementwise arithmetic or bitwise op.
    Arith(BinaryOp),
    /// A comparison.
    Cmp(CmpPred),
    /// `&&` or `||` (bool operands only).
    Logic(BinaryOp),
}

impl Bin {
    fn symbol(self) -> &'static str {
        match self {
            Bin::Arith(op) | Bin::Logic(op) => match op {
                BinaryOp::Add => "+",
                BinaryOp::Sub => "-",
                BinaryOp::Mul => "*",
                BinaryOp::Div => "/",
                BinaryOp::Rem => "%",
                BinaryOp::And if matches!(self, Bin::Logic(_)) => "&&",
                BinaryOp::Or if matches!(self, Bin::Logic(_)) => "||",
                BinaryOp::And => "&",
                BinaryOp::Or => "|",
                BinaryOp::Xor => "^",
                BinaryOp::Shl => "<<",
                BinaryOp::Shr => ">>",
                BinaryOp::Min => "min",
                BinaryOp::Max => "max",
                BinaryOp::Pow => "pow",
                BinaryOp::Atan2 => "atan2",
                BinaryOp::Hypot => "hypot",
            },
            Bin::Cmp(p) => match p {
                CmpPred::Eq => "==",
                CmpPred::Ne => "!=",
                CmpPred::Lt => "<",
                CmpPred::Le => "<=",
                CmpPred::Gt => ">",
                CmpPred::Ge => ">=",
            },
        }
    }
}

/// The language's op for a Rust binary operator, and whether it assigns.
fn bin_of(op: &BinOp) -> Option<(Bin, bool)> {
    use BinaryOp as B;
    Some(match op {
        BinOp::Add(_) => (Bin::Arith(B::Add), false),
        BinOp::Sub(_) => (Bin::Arith(B::Sub), false),
        BinOp::Mul(_) => (Bin::Arith(B::Mul), false),
        BinOp::Div(_) => (Bin::Arith(B::Div), false),
        BinOp::Rem(_) => (Bin::Arith(B::Rem), false),
        BinOp::And(_) => (Bin::Logic(B::And), false),
        BinOp::Or(_) => (Bin::Logic(B::Or), false),
        BinOp::BitXor(_) => (Bin::Arith(B::Xor), false),
        BinOp::BitAnd(_) => (Bin::Arith(B::And), false),
        BinOp::BitOr(_) => (Bin::Arith(B::Or), false),
        BinOp::Shl(_) => (Bin::Arith(B::Shl), false),
        BinOp::Shr(_) => (Bin::Arith(B::Shr), false),
        BinOp::Eq(_) => (Bin::Cmp(CmpPred::Eq), false),
        BinOp::Lt(_) => (Bin::Cmp(CmpPred::Lt), false),
        BinOp::Le(_) => (Bin::Cmp(CmpPred::Le), false),
        BinOp::Ne(_) => (Bin::Cmp(CmpPred::Ne), false),
        BinOp::Ge(_) => (Bin::Cmp(CmpPred::Ge), false),
        BinOp::Gt(_) => (Bin::Cmp(CmpPred::Gt), false),
        BinOp::AddAssign(_) => (Bin::Arith(B::Add), true),
        BinOp::SubAssign(_) => (Bin::Arith(B::Sub), true),
        BinOp::MulAssign(_) => (Bin::Arith(B::Mul), true),
        BinOp::DivAssign(_) => (Bin::Arith(B::Div), true),
        BinOp::RemAssign(_) => (Bin::Arith(B::Rem), true),
        BinOp::BitXorAssign(_) => (Bin::Arith(B::Xor), true),
        BinOp::BitAndAssign(_) => (Bin::Arith(B::And), true),
        BinOp::BitOrAssign(_) => (Bin::Arith(B::Or), true),
        BinOp::ShlAssign(_) => (Bin::Arith(B::Shl), true),
        BinOp::ShrAssign(_) => (Bin::Arith(B::Shr), true),
        _ => return None,
    })
}

/// The numpy broadcast of two shapes, or the axis where they disagree.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>, (usize, usize)> {
    let rank = a.len().max(b.len());
    let mut out = vec![1; rank];
    for i in 0..rank {
        let x = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let y = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => return Err((x, y)),
        };
    }
    Ok(out)
}

impl Translator<'_> {
    pub(crate) fn binary_expr(&mut self, e: &syn::ExprBinary) -> syn::Result<Val> {
        let Some((op, assigns)) = bin_of(&e.op) else {
            return Err(self.err(&e.op, "unsupported operator"));
        };
        let l = self.expr(&e.left)?;
        let r = self.expr(&e.right)?;
        let v = self.binary(op, l, r, e)?;
        if assigns {
            self.assign_to(&e.left, v, e)?;
            return Ok(Val::Unit);
        }
        Ok(v)
    }

    /// Applies a binary op with broadcasting and literal typing.
    pub(crate) fn binary(
        &mut self,
        op: Bin,
        l: Val,
        r: Val,
        node: &dyn ToTokens,
    ) -> syn::Result<Val> {
        if l.is_const() && r.is_const() {
            return self.fold(op, &l, &r, node);
        }
        let dtype = self.common_dtype(op, &l, &r, node)?;
        let a = self.data(&l, Some(dtype), node)?;
        let b = self.data(&r, Some(dtype), node)?;
        let (a, b) = self.broadcast_pair(a, b, op.symbol(), node)?;
        let out = match op {
            Bin::Arith(o) | Bin::Logic(o) => self.ir(node, |bld| bld.binary(o, a, b))?,
            Bin::Cmp(p) => self.ir(node, |bld| bld.cmp(p, a, b))?,
        };
        Ok(Val::Ir(out))
    }

    /// The dtype both operands take: the typed side's (both typed sides must
    /// agree), or the literals' default.
    pub(crate) fn common_dtype(
        &self,
        op: Bin,
        l: &Val,
        r: &Val,
        node: &dyn ToTokens,
    ) -> syn::Result<DType> {
        let typed = |v: &Val| match v {
            Val::Ir(x) => Some(self.ty(*x).dtype()),
            _ => None,
        };
        for v in [l, r] {
            if !v.is_const() {
                if let Val::Ir(x) = v {
                    if !self.ty(*x).is_data() {
                        return Err(self.err(
                            node,
                            format!(
                                "`{}` needs scalars or tiles, found {}",
                                op.symbol(),
                                super::value::describe_type(&self.ty(*x))
                            ),
                        ));
                    }
                } else {
                    return Err(self.err(
                        node,
                        format!(
                            "`{}` needs scalars or tiles, found {}",
                            op.symbol(),
                            self.describe(v)
                        ),
                    ));
                }
            }
        }
        let d = match (typed(l), typed(r)) {
            (Some(a), Some(b)) if a != b => {
                return Err(self.err(
                    node,
                    format!("mismatched dtypes {a} and {b} in `{}`: convert one side, e.g. `.cast::<{a}>()`", op.symbol()),
                ))
            }
            (Some(a), _) | (None, Some(a)) => a,
            (None, None) => Self::default_dtype(l).unwrap_or(DType::I32),
        };
        if matches!(op, Bin::Logic(_)) && d != DType::Bool {
            return Err(self.err(
                node,
                format!(
                    "`{}` needs bool operands, found {d}; for bitwise ops on integers use `&`, `|`",
                    op.symbol()
                ),
            ));
        }
        Ok(d)
    }

    /// Broadcasts two data values to their common shape.
    pub(crate) fn broadcast_pair(
        &mut self,
        a: Value,
        b: Value,
        what: &str,
        node: &dyn ToTokens,
    ) -> syn::Result<(Value, Value)> {
        let (ta, tb) = (self.ty(a), self.ty(b));
        let shape = match (ta.tile_shape(), tb.tile_shape()) {
            (None, None) => return Ok((a, b)),
            (Some(s), None) | (None, Some(s)) => s.clone(),
            (Some(x), Some(y)) => match broadcast_shapes(x.dims(), y.dims()) {
                Ok(s) => Shape(s),
                Err((p, q)) => {
                    return Err(self.err(
                        node,
                        format!("shapes {x} and {y} do not broadcast in `{what}`: extents {p} and {q} differ and neither is 1"),
                    ))
                }
            },
        };
        let a = self.broadcast_to_shape(a, &shape, node)?;
        let b = self.broadcast_to_shape(b, &shape, node)?;
        Ok((a, b))
    }

    /// `v` broadcast to `shape` (no op if it already has it).
    pub(crate) fn broadcast_to_shape(
        &mut self,
        v: Value,
        shape: &Shape,
        node: &dyn ToTokens,
    ) -> syn::Result<Value> {
        if self.ty(v).tile_shape() == Some(shape) {
            return Ok(v);
        }
        self.ir(node, |b| b.broadcast(v, shape.dims()))
    }

    fn fold(&self, op: Bin, l: &Val, r: &Val, node: &dyn ToTokens) -> syn::Result<Val> {
        use BinaryOp as B;
        let overflow = || {
            self.err(
                node,
                format!("`{}` overflows on these compile-time integers", op.symbol()),
            )
        };
        Ok(match (l, r) {
            (Val::Int(a), Val::Int(b)) => {
                let (a, b) = (*a, *b);
                match op {
                    Bin::Cmp(p) => Val::Bool(cmp(p, a.cmp(&b))),
                    Bin::Logic(_) => {
                        return Err(self.err(
                            node,
                            format!("`{}` needs bool operands, found integers", op.symbol()),
                        ))
                    }
                    Bin::Arith(o) => Val::Int(match o {
                        B::Add => a.checked_add(b).ok_or_else(overflow)?,
                        B::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                        B::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                        B::Div | B::Rem if b == 0 => {
                            return Err(
                                self.err(node, "division by zero in a compile-time expression")
                            )
                        }
                        B::Div => a / b,
                        B::Rem => a % b,
                        B::Min => a.min(b),
                        B::Max => a.max(b),
                        B::Pow => u32::try_from(b)
                            .ok()
                            .and_then(|e| a.checked_pow(e))
                            .ok_or_else(|| {
                                self.err(
                                    node,
                                    "`pow` of compile-time integers needs an exponent from 0 \
                                     and a result that fits; write a float (`2.0`) for a \
                                     float power",
                                )
                            })?,
                        B::Atan2 | B::Hypot => {
                            return Err(self.err(
                                node,
                                format!(
                                    "`{}` of compile-time integers: write floats (`3.0`)",
                                    op.symbol()
                                ),
                            ))
                        }
                        B::And => a & b,
                        B::Or => a | b,
                        B::Xor => a ^ b,
                        B::Shl => u32::try_from(b)
                            .ok()
                            .and_then(|s| a.checked_shl(s))
                            .ok_or_else(overflow)?,
                        B::Shr => u32::try_from(b)
                            .ok()
                            .and_then(|s| a.checked_shr(s))
                            .ok_or_else(overflow)?,
                    }),
                }
            }
            (Val::Bool(a), Val::Bool(b)) => match op {
                Bin::Logic(B::And) | Bin::Arith(B::And) => Val::Bool(*a && *b),
                Bin::Logic(B::Or) | Bin::Arith(B::Or) => Val::Bool(*a || *b),
                Bin::Arith(B::Xor) | Bin::Cmp(CmpPred::Ne) => Val::Bool(a != b),
                Bin::Cmp(CmpPred::Eq) => Val::Bool(a == b),
                _ => {
                    return Err(self.err(node, format!("`{}` is not defined on bools", op.symbol())))
                }
            },
            (Val::Bool(_), _) | (_, Val::Bool(_)) => {
                return Err(self.err(
                    node,
                    format!("`{}` cannot mix a bool with a number", op.symbol()),
                ))
            }
            _ => {
                let num = |v: &Val| match v {
                    Val::Int(i) => *i as f64,
                    Val::Float(f) => *f,
                    _ => 0.0,
                };
                let (a, b) = (num(l), num(r));
                match op {
                    Bin::Cmp(p) => Val::Bool(
                        a.partial_cmp(&b).is_some_and(|o| cmp(p, o))
                            || (p == CmpPred::Ne && a.is_nan()),
                    ),
                    Bin::Arith(B::Add) => Val::Float(a + b),
                    Bin::Arith(B::Sub) => Val::Float(a - b),
                    Bin::Arith(B::Mul) => Val::Float(a * b),
                    Bin::Arith(B::Div) => Val::Float(a / b),
                    Bin::Arith(B::Rem) => Val::Float(a % b),
                    Bin::Arith(B::Min) => Val::Float(a.min(b)),
                    Bin::Arith(B::Max) => Val::Float(a.max(b)),
                    // The oracle's functions, so that folding agrees with the IR.
                    Bin::Arith(f @ (B::Pow | B::Atan2 | B::Hypot)) => Val::Float(
                        tile_ir::eval::binary(f, Scalar::F64(a), Scalar::F64(b))
                            .map_or(f64::NAN, |s| s.to_f64()),
                    ),
                    _ => {
                        return Err(self.err(
                            node,
                            format!(
                                "`{}` needs integer or bool operands, found floats",
                                op.symbol()
                            ),
                        ))
                    }
                }
            }
        })
    }

    pub(crate) fn unary_expr(&mut self, e: &syn::ExprUnary) -> syn::Result<Val> {
        let op = match e.op {
            UnOp::Neg(_) => UnaryOp::Neg,
            UnOp::Not(_) => UnaryOp::Not,
            _ => {
                return Err(self.err(
                    e,
                    "dereferencing is not supported: tile kernels have no references",
                ))
            }
        };
        let v = self.expr(&e.expr)?;
        match (&v, op) {
            (Val::Int(i), UnaryOp::Neg) => i
                .checked_neg()
                .map(Val::Int)
                .ok_or_else(|| self.err(e, "`-` overflows on this compile-time integer")),
            (Val::Float(f), UnaryOp::Neg) => Ok(Val::Float(-f)),
            (Val::Bool(b), UnaryOp::Not) => Ok(Val::Bool(!b)),
            (Val::Int(i), UnaryOp::Not) => Ok(Val::Int(!i)),
            _ => {
                let x = self.data(&v, None, e)?;
                self.ir(e, |b| b.unary(op, x)).map(Val::Ir)
            }
        }
    }

    /// `x as T` on scalars.
    pub(crate) fn as_cast(&mut self, c: &syn::ExprCast) -> syn::Result<Val> {
        let d = match &*c.ty {
            syn::Type::Path(p) => p.path.get_ident().and_then(dtype_of),
            _ => None,
        };
        let Some(d) = d else {
            return Err(self.err(
                &c.ty,
                format!(
                    "`as` converts to an element type ({})",
                    crate::signature::ELEMENT_TYPES
                ),
            ));
        };
        let v = self.expr(&c.expr)?;
        match v {
            Val::Int(i) if d.is_int() => {
                let s = tile_ir::Scalar::wrapping_from_i128(d, i)
                    .ok_or_else(|| self.err(c, format!("{i} cannot convert to {d}")))?;
                self.ir(c, |b| b.constant(s)).map(Val::Ir)
            }
            Val::Float(f) if d.is_int() => self
                .typed_const(Val::Int(f.trunc() as i128), d, c)
                .map(Val::Ir),
            Val::Bool(x) if d.is_int() => {
                self.typed_const(Val::Int(i128::from(x)), d, c).map(Val::Ir)
            }
            c0 if c0.is_const() => self.typed_const(c0, d, c).map(Val::Ir),
            Val::Ir(x) => match self.ty(x) {
                Type::Scalar(from) if from == d => Ok(Val::Ir(x)),
                Type::Scalar(_) => self.ir(c, |b| b.cast(x, d)).map(Val::Ir),
                Type::Tile(_) => Err(self.err(
                    c,
                    format!("`as` converts scalars; convert a tile with `.cast::<{d}>()`"),
                )),
                other => Err(self.err(
                    &c.expr,
                    format!(
                        "cannot convert {} with `as`",
                        super::value::describe_type(&other)
                    ),
                )),
            },
            other => Err(self.err(
                &c.expr,
                format!("cannot convert {} with `as`", self.describe(&other)),
            )),
        }
    }
}

fn cmp(p: CmpPred, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match p {
        CmpPred::Eq => o == Equal,
        CmpPred::Ne => o != Equal,
        CmpPred::Lt => o == Less,
        CmpPred::Le => o != Greater,
        CmpPred::Gt => o == Greater,
        CmpPred::Ge => o != Less,
    }
}
