//! The structured control-flow ops, whose lines open regions: `for`,
//! `while` and `if`.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::parser::{count, Parser};
use super::syntax::{ResultTypes, Stages, Syntax};
use crate::function::{OpId, Region};
use crate::ops::OpKind;
use crate::types::Type;
use crate::Value;

impl<'a> Parser<'_, 'a> {
    /// `for %iv = %lo to %hi step %step [iter(%a = %init, ...)] [stages(n)]
    /// [: types] {`
    /// ops `}`; the cursor is after `for`. The induction variable has the
    /// type of `%lo`; the carried values have the loop's result types.
    pub fn parse_for(
        &mut self,
        defs: &[Token<'a>],
        keyword: &Token<'_>,
    ) -> Result<OpId, ParseError> {
        let iv = self.match_token(TokenKind::Value, "the induction variable")?;
        self.match_token(TokenKind::Equals, "`=` after the induction variable")?;
        let lo = self.match_operand("the lower bound")?;
        self.match_keyword("to", "`to` after the lower bound")?;
        let hi = self.match_operand("the upper bound")?;
        self.match_keyword("step", "`step` after the upper bound")?;
        let step = self.match_operand("the step")?;
        let mut operands = vec![lo, hi, step];
        let carried = self.parse_iter(&mut operands)?;
        let stages = Stages::parse(self, &mut operands)?;
        let types = self.parse_carried_types(defs, keyword, &carried)?;
        let loc = self.parse_location()?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the loop body")?;
        let names: Vec<Token<'a>> = std::iter::once(iv).chain(carried).collect();
        let mut arg_types = vec![self.func.ty(lo).clone()];
        arg_types.extend(types.iter().cloned());
        let body = self.parse_carried_region(&open, &names, &arg_types)?;
        let op = self
            .func
            .create_op(OpKind::For { stages }, operands, types, vec![body]);
        self.func.ops[op].loc = loc;
        Ok(op)
    }

    /// `while [iter(%a = %init, ...)] [: types] {` ops `} do[(%b, ...)] {`
    /// ops `}`; the cursor is after `while`. Both regions' arguments have
    /// the loop's result types.
    pub fn parse_while(
        &mut self,
        defs: &[Token<'a>],
        keyword: &Token<'_>,
    ) -> Result<OpId, ParseError> {
        let mut operands = Vec::new();
        let carried = self.parse_iter(&mut operands)?;
        let types = self.parse_carried_types(defs, keyword, &carried)?;
        let loc = self.parse_location()?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the loop condition")?;
        let cond = self.parse_carried_region(&open, &carried, &types)?;
        self.match_keyword("do", "`do` after the condition of `while`")?;
        let mut names = Vec::new();
        if self.eat(&TokenKind::LParen) {
            loop {
                names.push(self.match_token(TokenKind::Value, "a carried value name")?);
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                self.match_token(TokenKind::Comma, "`,` or `)` after a carried value")?;
            }
        }
        if names.len() != types.len() {
            return Err(Self::error_at(
                keyword,
                format!(
                    "the body of `while` takes {} but the loop carries {}",
                    count(names.len(), "value"),
                    count(types.len(), "value")
                ),
            ));
        }
        let open = self.match_token(TokenKind::LBrace, "`{` to open the loop body")?;
        let body = self.parse_carried_region(&open, &names, &types)?;
        let op = self
            .func
            .create_op(OpKind::While, operands, types, vec![cond, body]);
        self.func.ops[op].loc = loc;
        Ok(op)
    }

    /// `reduce_with %x, ... axis n [keepdim] combine(%a, ..., %b, ...)
    /// [: types] {` ops `}` and `scan_with` (without `keepdim`), the line
    /// up to `combine` read by the op table; the cursor is at the op's
    /// name. The region's arguments are scalars of the
    /// operands' dtypes, twice.
    pub fn parse_combine(
        &mut self,
        defs: &[Token<'a>],
        keyword: &Token<'_>,
    ) -> Result<OpId, ParseError> {
        let mut operands = Vec::new();
        let pending = self.parse_line::<OpKind>(&mut operands)?;
        self.match_keyword(
            "combine",
            "`combine(..)` naming the combine function's arguments",
        )?;
        self.match_token(TokenKind::LParen, "`(` after `combine`")?;
        let mut names = Vec::new();
        loop {
            names.push(self.match_token(TokenKind::Value, "an argument name")?);
            if self.eat(&TokenKind::RParen) {
                break;
            }
            self.match_token(TokenKind::Comma, "`,` or `)` after an argument")?;
        }
        if names.len() != 2 * operands.len() {
            return Err(Self::error_at(
                keyword,
                format!(
                    "a combine of {} takes {} but names {}",
                    count(operands.len(), "tile"),
                    count(2 * operands.len(), "argument"),
                    names.len()
                ),
            ));
        }
        let types = self.parse_result_types(defs)?;
        let kind = pending(&ResultTypes {
            op: keyword,
            types: &types,
        })?;
        let loc = self.parse_location()?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the combine function")?;
        let elements: Vec<Type> = operands
            .iter()
            .map(|&v| Type::Scalar(self.func.ty(v).dtype()))
            .collect();
        let arg_types: Vec<Type> = elements.iter().chain(&elements).cloned().collect();
        let region = self.parse_carried_region(&open, &names, &arg_types)?;
        let op = self.func.create_op(kind, operands, types, vec![region]);
        self.func.ops[op].loc = loc;
        Ok(op)
    }

    /// `[iter(%a = %init, ...)]`: the carried values' names, their initial
    /// values appended to `operands`.
    fn parse_iter(&mut self, operands: &mut Vec<Value>) -> Result<Vec<Token<'a>>, ParseError> {
        let mut carried = Vec::new();
        if self.eat_keyword("iter") {
            self.match_token(TokenKind::LParen, "`(` after `iter`")?;
            loop {
                carried.push(self.match_token(TokenKind::Value, "a carried value name")?);
                self.match_token(TokenKind::Equals, "`=` after a carried value name")?;
                operands.push(self.match_operand("the initial value")?);
                if self.eat(&TokenKind::RParen) {
                    break;
                }
                self.match_token(TokenKind::Comma, "`,` or `)` after a carried value")?;
            }
        }
        Ok(carried)
    }

    /// The result types of a loop that carries the values `carried`: as
    /// many as there are.
    fn parse_carried_types(
        &mut self,
        defs: &[Token<'a>],
        keyword: &Token<'_>,
        carried: &[Token<'a>],
    ) -> Result<Vec<Type>, ParseError> {
        let types = self.parse_result_types(defs)?;
        if carried.len() != types.len() {
            return Err(Self::error_at(
                keyword,
                format!(
                    "`{}` carries {} but has {}",
                    keyword.text,
                    count(carried.len(), "value"),
                    count(types.len(), "result type")
                ),
            ));
        }
        Ok(types)
    }

    /// A region whose arguments, named `names`, have `types`, in its own
    /// scope.
    fn parse_carried_region(
        &mut self,
        open: &Token<'_>,
        names: &[Token<'a>],
        types: &[Type],
    ) -> Result<Region, ParseError> {
        let args: Vec<_> = types
            .iter()
            .enumerate()
            .map(|(index, ty)| self.func.new_region_arg(index, ty.clone()))
            .collect();
        self.scopes.push();
        for (token, &value) in names.iter().zip(&args) {
            self.scopes.define(token, value)?;
        }
        let ops = self.parse_region_ops(open)?;
        self.scopes.pop();
        Ok(Region { args, ops })
    }

    /// `if %cond [: types] {` ops `} else {` ops `}`; the cursor is after
    /// `if`.
    pub fn parse_if(&mut self, defs: &[Token<'a>]) -> Result<OpId, ParseError> {
        let cond = self.match_operand("the condition")?;
        let types = self.parse_result_types(defs)?;
        let loc = self.parse_location()?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the then-region")?;
        let then_region = self.parse_scoped_region(&open)?;
        self.match_keyword("else", "`else` after the then-region of `if`")?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the else-region")?;
        let else_region = self.parse_scoped_region(&open)?;
        let op = self.func.create_op(
            OpKind::If,
            vec![cond],
            types,
            vec![then_region, else_region],
        );
        self.func.ops[op].loc = loc;
        Ok(op)
    }

    /// A region without arguments, in its own scope.
    fn parse_scoped_region(&mut self, open: &Token<'_>) -> Result<Region, ParseError> {
        self.scopes.push();
        let ops = self.parse_region_ops(open)?;
        self.scopes.pop();
        Ok(Region {
            args: Vec::new(),
            ops,
        })
    }
}
