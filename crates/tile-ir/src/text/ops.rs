//! The middle of an op's line for every op without regions: its operands and
//! attributes, between the op name and the `:` before the result types.
//!
//! Ops whose operands are a plain list (elementwise ops, `select`, `fma`,
//! `dot`, `cat`, `yield`) take any number of them here; their arity is the
//! verifier's business, so ill-typed programs still parse.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::literal::Literal;
use super::parser::{article, Parser};
use crate::function::Value;
use crate::lview::LViewOp;
use crate::ops::{
    ArgKind, AtomicOp, BinaryOp, CmpPred, DotPrecision, MemOrder, MemScope, OpKind, Padding,
    ReduceKind, ScanKind, UnaryOp,
};
use crate::types::{Shape, Type};

/// An op's kind as far as its line says; some attributes (a constant's dtype,
/// a `full`'s shape) come from the result type, which follows.
pub(crate) enum Attrs {
    /// Complete.
    Ready(OpKind),
    /// `constant <literal>`
    Constant(Literal),
    /// `full <literal>`
    Full(Literal),
    /// `iota`
    Iota,
    /// `pad ... value <literal>`
    Pad {
        low: Vec<usize>,
        high: Vec<usize>,
        value: Literal,
    },
    /// `load_masked ... pad(<literal>)`
    LoadMaskedValue(Literal),
    /// `lview_load_masked ... pad(<literal>)`
    LViewLoadMaskedValue(Literal),
}

impl Attrs {
    /// The op kind, given the op's result types.
    pub fn finish(self, name: &Token<'_>, types: &[Type]) -> Result<OpKind, ParseError> {
        let ty = || match types {
            [ty] => Ok(ty),
            _ => Err(Parser::error_at(
                name,
                format!(
                    "`{}` needs one result type to take its attributes from, found {}",
                    name.text,
                    types.len()
                ),
            )),
        };
        let tile_shape = |ty: &Type| {
            ty.tile_shape().cloned().ok_or_else(|| {
                Parser::error_at(
                    name,
                    format!(
                        "`{}` takes its shape from its result type, which must be a tile, found `{ty}`",
                        name.text
                    ),
                )
            })
        };
        Ok(match self {
            Attrs::Ready(kind) => kind,
            Attrs::Iota => {
                let ty = ty()?;
                OpKind::Iota {
                    shape: tile_shape(ty)?,
                    dtype: ty.dtype(),
                }
            }
            Attrs::Constant(value) => OpKind::Constant {
                value: value.to_scalar(ty()?.dtype())?,
            },
            Attrs::Full(value) => {
                let ty = ty()?;
                OpKind::Full {
                    value: value.to_scalar(ty.dtype())?,
                    shape: tile_shape(ty)?,
                }
            }
            Attrs::Pad { low, high, value } => OpKind::Pad {
                low,
                high,
                value: value.to_scalar(ty()?.dtype())?,
            },
            Attrs::LoadMaskedValue(value) => OpKind::LoadMasked {
                padding: Padding::Value(value.to_scalar(ty()?.dtype())?),
            },
            Attrs::LViewLoadMaskedValue(value) => OpKind::LView(LViewOp::LoadMasked {
                padding: Padding::Value(value.to_scalar(ty()?.dtype())?),
            }),
        })
    }
}

impl Parser<'_, '_> {
    /// Everything between an op's name and its result types.
    pub fn parse_op_body(&mut self, name: &Token<'_>) -> Result<(Attrs, Vec<Value>), ParseError> {
        if let Some(op) = UnaryOp::from_name(name.text) {
            return Ok(ready(OpKind::Unary(op), self.match_operand_list()?));
        }
        if let Some(op) = BinaryOp::from_name(name.text) {
            return Ok(ready(OpKind::Binary(op), self.match_operand_list()?));
        }
        if let Some(body) = self.parse_lview_body(name)? {
            return Ok(body);
        }
        Ok(match name.text {
            "program_id" => {
                let axis = self.match_grid_axis()?;
                ready(OpKind::ProgramId { axis }, vec![])
            }
            "num_programs" => {
                let axis = self.match_grid_axis()?;
                ready(OpKind::NumPrograms { axis }, vec![])
            }
            "constant" => (Attrs::Constant(self.parse_literal()?), vec![]),
            "full" => (Attrs::Full(self.parse_literal()?), vec![]),
            "iota" => (Attrs::Iota, vec![]),
            "cmp" => {
                let what = "comparison predicate";
                let pred = self.match_name_of(what, CmpPred::from_name, CmpPred::ALL)?;
                ready(OpKind::Cmp(pred), self.match_operand_list()?)
            }
            "select" => ready(OpKind::Select, self.match_operand_list()?),
            "fma" => ready(OpKind::Fma, self.match_operand_list()?),
            "dot" => {
                let what = "dot precision";
                let precision =
                    self.match_name_of(what, DotPrecision::from_name, DotPrecision::ALL)?;
                ready(OpKind::Dot { precision }, self.match_operand_list()?)
            }
            "dot_scaled" => ready(OpKind::DotScaled, self.match_operand_list()?),
            "yield" => ready(OpKind::Yield, self.match_operand_list()?),
            "cast" | "bitcast" => {
                let x = self.match_operand("an operand")?;
                self.match_keyword("to", "`to` before the target dtype")?;
                let to = self.match_dtype()?;
                let kind = if name.text == "cast" {
                    OpKind::Cast { to }
                } else {
                    OpKind::Bitcast { to }
                };
                ready(kind, vec![x])
            }
            "broadcast" | "reshape" | "expand" => {
                let x = self.match_operand("an operand")?;
                self.match_keyword("to", "`to` before the target shape")?;
                let shape = Shape::new(self.match_int_list("dimension")?);
                let kind = match name.text {
                    "broadcast" => OpKind::Broadcast { shape },
                    "reshape" => OpKind::Reshape { shape },
                    _ => OpKind::Expand { shape },
                };
                ready(kind, vec![x])
            }
            "permute" => {
                let x = self.match_operand("an operand")?;
                let perm = self.match_int_list("axis")?;
                ready(OpKind::Permute { perm }, vec![x])
            }
            "flip" => {
                let x = self.match_operand("an operand")?;
                let axes = self.match_int_list("axis")?;
                ready(OpKind::Flip { axes }, vec![x])
            }
            "slice" => {
                let x = self.match_operand("an operand")?;
                let ranges = self.match_bracket_list("slice", Self::match_slice_range)?;
                let kind = OpKind::Slice {
                    start: ranges.iter().map(|r| r.0).collect(),
                    stop: ranges.iter().map(|r| r.1).collect(),
                    step: ranges.iter().map(|r| r.2).collect(),
                };
                ready(kind, vec![x])
            }
            "pad" => {
                let x = self.match_operand("an operand")?;
                self.match_keyword("low", "`low` and the padding before each axis")?;
                let low = self.match_int_list("padding")?;
                self.match_keyword("high", "`high` and the padding after each axis")?;
                let high = self.match_int_list("padding")?;
                self.match_keyword("value", "`value` and the padding value")?;
                let value = self.parse_literal()?;
                (Attrs::Pad { low, high, value }, vec![x])
            }
            "cat" => {
                let operands = self.match_operand_list()?;
                let axis = self.match_axis()?;
                ready(OpKind::Cat { axis }, operands)
            }
            "reduce" => {
                let kind =
                    self.match_name_of("reduction", ReduceKind::from_name, ReduceKind::ALL)?;
                let x = self.match_operand("an operand")?;
                let axis = self.match_axis()?;
                let keepdim = self.eat_keyword("keepdim");
                ready(
                    OpKind::Reduce {
                        kind,
                        axis,
                        keepdim,
                    },
                    vec![x],
                )
            }
            "arg" => {
                let kind = self.match_name_of("arg-reduction", ArgKind::from_name, ArgKind::ALL)?;
                let x = self.match_operand("an operand")?;
                let axis = self.match_axis()?;
                let keepdim = self.eat_keyword("keepdim");
                ready(
                    OpKind::ArgReduce {
                        kind,
                        axis,
                        keepdim,
                    },
                    vec![x],
                )
            }
            "scan" => {
                let kind = self.match_name_of("scan", ScanKind::from_name, ScanKind::ALL)?;
                let x = self.match_operand("an operand")?;
                let axis = self.match_axis()?;
                ready(OpKind::Scan { kind, axis }, vec![x])
            }
            "dim" => {
                let x = self.match_operand("a tensor operand")?;
                let axis = self.match_axis()?;
                ready(OpKind::Dim { axis }, vec![x])
            }
            "partition_view" => {
                let mut operands = vec![self.match_operand("a tensor operand")?];
                let shape = Shape::new(self.match_int_list("dimension")?);
                for clause in ["offset", "extent"] {
                    if !self.eat_keyword(clause) {
                        break;
                    }
                    self.match_token(TokenKind::LParen, &format!("`(` after `{clause}`"))?;
                    operands.extend(self.match_operand_list()?);
                    self.match_token(TokenKind::RParen, &format!("`)` after the {clause}s"))?;
                }
                ready(OpKind::PartitionView { shape }, operands)
            }
            "load" => ready(OpKind::Load, self.match_view_access()?),
            "load_masked" => {
                let operands = self.match_view_access()?;
                (self.match_padding()?, operands)
            }
            "store" | "store_masked" => {
                let tile = self.match_operand("the stored tile")?;
                self.match_token(TokenKind::Comma, "`,` after the stored tile")?;
                let mut operands = vec![tile];
                operands.extend(self.match_view_access()?);
                let kind = match name.text {
                    "store" => OpKind::Store,
                    _ => OpKind::StoreMasked,
                };
                ready(kind, operands)
            }
            "atomic" => {
                let op = self.match_name_of("atomic update", AtomicOp::from_name, AtomicOp::ALL)?;
                let order =
                    self.match_name_of("memory order", MemOrder::from_name, MemOrder::ALL)?;
                let scope =
                    self.match_name_of("memory scope", MemScope::from_name, MemScope::ALL)?;
                let mut operands = self.match_view_access()?;
                self.match_token(TokenKind::Comma, "`,` after the indices")?;
                operands.extend(self.match_operand_list()?);
                ready(OpKind::Atomic { op, order, scope }, operands)
            }
            "fence" => {
                let order =
                    self.match_name_of("memory order", MemOrder::from_name, MemOrder::ALL)?;
                let scope =
                    self.match_name_of("memory scope", MemScope::from_name, MemScope::ALL)?;
                ready(OpKind::Fence { order, scope }, Vec::new())
            }
            "barrier" => ready(OpKind::Barrier, Vec::new()),
            "gdc_wait" => ready(OpKind::GridWait, Vec::new()),
            "gdc_launch_dependents" => ready(OpKind::GridLaunchDependents, Vec::new()),
            "gather" => {
                let mut operands = self.match_view_access()?;
                self.match_token(TokenKind::Comma, "`,` after the indices")?;
                operands.extend(self.match_operand_list()?);
                ready(OpKind::Gather, operands)
            }
            "assert" => {
                let id = self.match_u32("the assertion's number")?;
                let message = self.match_string("the assertion's message")?;
                ready(OpKind::Assert { id, message }, self.match_operand_list()?)
            }
            "print" => {
                let id = self.match_u32("the print's number")?;
                let message = self.match_string("the print's message")?;
                ready(OpKind::Print { id, message }, self.match_operand_list()?)
            }
            other => return Err(Self::error_at(name, format!("unknown op `{other}`"))),
        })
    }

    /// A grid axis: an integer that fits in a byte.
    fn match_grid_axis(&mut self) -> Result<u8, ParseError> {
        let token = self.peek().clone();
        let axis = self.match_usize("a grid axis")?;
        u8::try_from(axis)
            .map_err(|_| Self::error_at(&token, format!("grid axis {axis} is out of range")))
    }

    /// `axis <n>`
    fn match_axis(&mut self) -> Result<usize, ParseError> {
        self.match_keyword("axis", "`axis`")?;
        self.match_usize("an axis")
    }

    /// A word naming one variant of an attribute enum.
    fn match_name_of<T: std::fmt::Display + Copy>(
        &mut self,
        what: &str,
        from_name: impl Fn(&str) -> Option<T>,
        all: &[T],
    ) -> Result<T, ParseError> {
        let expected = |found: String| {
            let names: Vec<String> = all.iter().map(|v| format!("`{v}`")).collect();
            format!(
                "expected {} ({}), found {found}",
                article(what),
                names.join(", ")
            )
        };
        if !self.peek_is(&TokenKind::Ident) {
            let found = self.peek().describe();
            return Err(Self::error_at(self.peek(), expected(found)));
        }
        let token = self.bump();
        from_name(token.text)
            .ok_or_else(|| Self::error_at(&token, expected(format!("`{}`", token.text))))
    }

    /// `start:stop:step`
    fn match_slice_range(&mut self) -> Result<(usize, usize, usize), ParseError> {
        let start = self.match_usize("the start of a slice")?;
        self.match_token(TokenKind::Colon, "`:` after the start of a slice")?;
        let stop = self.match_usize("the stop of a slice")?;
        self.match_token(
            TokenKind::Colon,
            "`:` and the step after the stop of a slice",
        )?;
        let step = self.match_usize("the step of a slice")?;
        Ok((start, stop, step))
    }

    /// `%view[%i, ...]`: the view, then the partition indices.
    fn match_view_access(&mut self) -> Result<Vec<Value>, ParseError> {
        let view = self.match_operand("a view operand")?;
        let indices = self.match_bracket_list("index", |p| p.match_operand("an index"))?;
        let mut operands = vec![view];
        operands.extend(indices);
        Ok(operands)
    }

    /// `pad(zero|nan|posinf|neginf|<constant>)`
    pub fn match_padding(&mut self) -> Result<Attrs, ParseError> {
        self.match_keyword("pad", "`pad(...)` after the indices of `load_masked`")?;
        self.match_token(TokenKind::LParen, "`(` after `pad`")?;
        let fixed = [
            ("zero", Padding::Zero),
            ("nan", Padding::Nan),
            ("posinf", Padding::PosInf),
            ("neginf", Padding::NegInf),
        ];
        let padding = match fixed.iter().find(|(word, _)| self.peek().is_keyword(word)) {
            Some(&(_, padding)) => {
                self.bump();
                Attrs::Ready(OpKind::LoadMasked { padding })
            }
            None => Attrs::LoadMaskedValue(self.parse_literal()?),
        };
        self.match_token(TokenKind::RParen, "`)` to close `pad(`")?;
        Ok(padding)
    }
}

/// A complete op kind with its operands.
fn ready(kind: OpKind, operands: Vec<Value>) -> (Attrs, Vec<Value>) {
    (Attrs::Ready(kind), operands)
}
