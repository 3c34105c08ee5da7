//! The structured control-flow ops, whose lines open regions: `for` and `if`.

use super::error::ParseError;
use super::lexer::{Token, TokenKind};
use super::parser::{count, Parser};
use crate::function::{OpId, Region};
use crate::ops::OpKind;

impl<'a> Parser<'_, 'a> {
    /// `for %iv = %lo to %hi step %step [iter(%a = %init, ...)] [: types] {`
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
        let mut carried = Vec::new();
        let mut operands = vec![lo, hi, step];
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
        let types = self.parse_result_types(defs)?;
        if carried.len() != types.len() {
            return Err(Self::error_at(
                keyword,
                format!(
                    "`for` carries {} but has {}",
                    count(carried.len(), "value"),
                    count(types.len(), "result type")
                ),
            ));
        }
        let loc = self.parse_location()?;
        let open = self.match_token(TokenKind::LBrace, "`{` to open the loop body")?;
        let iv_type = self.func.ty(lo).clone();
        let mut args = vec![self.func.new_region_arg(0, iv_type)];
        for (index, ty) in types.iter().enumerate() {
            args.push(self.func.new_region_arg(index + 1, ty.clone()));
        }
        self.scopes.push();
        for (token, &value) in std::iter::once(&iv).chain(&carried).zip(&args) {
            self.scopes.define(token, value)?;
        }
        let ops = self.parse_region_ops(&open)?;
        self.scopes.pop();
        let body = Region { args, ops };
        let op = self
            .func
            .create_op(OpKind::For, operands, types, vec![body]);
        self.func.ops[op].loc = loc;
        Ok(op)
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
