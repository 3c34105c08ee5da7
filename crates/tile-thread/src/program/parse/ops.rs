//! The middle of each op's line: its name and operands, up to its type or
//! its region, one arm per op kind of [`ThreadOpKind`].

use super::{Line, Parser};
use crate::program::{CheckKind, LdMatrix, MmaKind, Reg, ShuffleMode, ThreadOpKind};
use tile_ir::text::{parse_scalar, ParseError, Token, TokenKind};
use tile_ir::{AtomicOp, BinaryOp, CmpPred, MemOrder, MemScope, UnaryOp};

impl<'a> Parser<'_, 'a> {
    /// The op's name and operands, up to its type or its region.
    pub(super) fn op_body(&mut self) -> Result<Line<'a>, ParseError> {
        let name = self.match_ident("an op")?;
        let mut region_args = Vec::new();
        let (kind, operands) = match name.text {
            "thread_id" => (ThreadOpKind::ThreadId, Vec::new()),
            "lane_id" => (ThreadOpKind::LaneId, Vec::new()),
            "warp_id" => (ThreadOpKind::WarpId, Vec::new()),
            "barrier" => (ThreadOpKind::Barrier, Vec::new()),
            "griddepcontrol" => {
                self.match_token(TokenKind::Dot, "`.wait` or `.launch_dependents`")?;
                if self.peek().is_keyword("wait") {
                    self.match_keyword("wait")?;
                    (ThreadOpKind::GridWait, Vec::new())
                } else {
                    self.match_keyword("launch_dependents")?;
                    (ThreadOpKind::GridLaunchDependents, Vec::new())
                }
            }
            "block_id" => (
                ThreadOpKind::BlockId {
                    axis: self.match_int("a grid axis")?,
                },
                Vec::new(),
            ),
            "grid_dim" => (
                ThreadOpKind::GridDim {
                    axis: self.match_int("a grid axis")?,
                },
                Vec::new(),
            ),
            "const" => return self.constant(),
            "param" => (
                ThreadOpKind::Param {
                    index: self.match_param()?,
                },
                Vec::new(),
            ),
            "dim" | "stride" => {
                let param = self.match_param()?;
                self.match_token(TokenKind::Dot, "`.` and an axis")?;
                let axis = self.match_int("an axis")?;
                let kind = if name.text == "dim" {
                    ThreadOpKind::TensorDim { param, axis }
                } else {
                    ThreadOpKind::TensorStride { param, axis }
                };
                (kind, Vec::new())
            }
            "align" => (
                ThreadOpKind::TensorAlign {
                    param: self.match_param()?,
                },
                Vec::new(),
            ),
            "cmp" => {
                let pred = self.match_ident("a comparison")?;
                let pred = CmpPred::from_name(pred.text).ok_or_else(|| {
                    Self::error_at(&pred, format!("unknown comparison `{}`", pred.text))
                })?;
                (ThreadOpKind::Cmp(pred), self.match_regs()?)
            }
            "select" => (ThreadOpKind::Select, self.match_regs()?),
            "fma" => (ThreadOpKind::Fma, self.match_regs()?),
            "opaque" => (ThreadOpKind::Opaque, self.match_regs()?),
            "cast" | "bitcast" => {
                let x = self.match_reg()?;
                self.match_keyword("to")?;
                let to = self.match_dtype()?;
                let kind = if name.text == "cast" {
                    ThreadOpKind::Cast { to }
                } else {
                    ThreadOpKind::Bitcast { to }
                };
                (kind, vec![x])
            }
            "ld" | "st" => return self.memory(&name),
            "atom" => {
                self.match_token(TokenKind::Dot, "`.global`")?;
                self.match_keyword("global")?;
                let word = |p: &mut Self, what: &str| -> Result<Token<'a>, ParseError> {
                    p.match_token(TokenKind::Dot, &format!("`.` and {what}"))?;
                    p.match_ident(what)
                };
                let update = word(self, "an atomic update")?;
                let op = AtomicOp::from_name(update.text).ok_or_else(|| {
                    Self::error_at(&update, format!("unknown atomic update `{}`", update.text))
                })?;
                let (order, scope) = self.order_and_scope()?;
                let param = self.match_param()?;
                let addr = self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                self.match_token(TokenKind::Comma, "`,`")?;
                let values = self.match_regs()?;
                self.match_keyword("mask")?;
                let mask = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                (
                    ThreadOpKind::AtomicGlobal {
                        param,
                        op,
                        order,
                        scope,
                    },
                    [addr, values, mask].concat(),
                )
            }
            "check" => {
                self.match_token(TokenKind::Dot, "`.` and a check kind")?;
                let kind = self.match_ident("a check kind")?;
                let kind = match kind.text {
                    "bounds" => CheckKind::Bounds,
                    "step" => CheckKind::Step,
                    "index" => CheckKind::Index,
                    "assert" => CheckKind::Assert,
                    "window" => CheckKind::Window,
                    other => return Err(Self::error_at(&kind, format!("unknown check `{other}`"))),
                };
                let ok = self.match_reg()?;
                let mut operands = vec![ok];
                operands.extend(self.match_reg_group(
                    TokenKind::LBracket,
                    TokenKind::RBracket,
                    "`[`",
                )?);
                let op = self.match_token(TokenKind::Str, "the checked op in quotes")?;
                let op = op
                    .string_value()
                    .ok_or_else(|| Self::error_at(&op, "a malformed escape in a string"))?;
                (ThreadOpKind::Check { kind, op }, operands)
            }
            "print" => {
                let id = self.match_int("the print's number")?;
                let on = self.match_reg()?;
                self.match_token(TokenKind::Comma, "`,` after the predicate")?;
                let element = self.match_reg()?;
                let mut operands = vec![on, element];
                operands.extend(self.match_reg_group(
                    TokenKind::LBracket,
                    TokenKind::RBracket,
                    "`[`",
                )?);
                (ThreadOpKind::Print { id }, operands)
            }
            "shfl" => {
                self.match_token(TokenKind::Dot, "`.` and a shuffle mode")?;
                let mode = self.match_ident("a shuffle mode")?;
                let mode = match mode.text {
                    "idx" => ShuffleMode::Idx,
                    "up" => ShuffleMode::Up,
                    "down" => ShuffleMode::Down,
                    "bfly" => ShuffleMode::Bfly,
                    other => {
                        return Err(Self::error_at(
                            &mode,
                            format!("unknown shuffle mode `{other}`"),
                        ))
                    }
                };
                let operands = self.match_regs()?;
                self.match_keyword("width")?;
                let width = self.match_int("the shuffle's width")?;
                (ThreadOpKind::Shuffle { mode, width }, operands)
            }
            "cp" => {
                self.match_token(TokenKind::Dot, "`.async`")?;
                self.match_keyword("async")?;
                if self.peek().kind == TokenKind::Dot {
                    self.bump();
                    let what = self.match_ident("`commit` or `wait`")?;
                    match what.text {
                        "commit" => (ThreadOpKind::CommitAsync, vec![]),
                        "wait" => {
                            let pending = self.match_int("the groups left in flight")?;
                            (ThreadOpKind::WaitAsync { pending }, vec![])
                        }
                        other => {
                            return Err(Self::error_at(
                                &what,
                                format!("unknown `cp.async.{other}`"),
                            ))
                        }
                    }
                } else {
                    let alloc = self.match_shared()?;
                    let index =
                        self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                    self.match_token(TokenKind::Comma, "`,`")?;
                    let param = self.match_param()?;
                    let addr =
                        self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                    self.match_keyword("count")?;
                    let n = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                    self.match_keyword("mask")?;
                    let m = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                    (
                        ThreadOpKind::CopyAsync { param, alloc },
                        [addr, index, n, m].concat(),
                    )
                }
            }
            "ldmatrix" => {
                self.match_token(TokenKind::Dot, "`.` and the matrix count")?;
                let count = self.match_ident("`x1`, `x2` or `x4`")?;
                let count = match count.text {
                    "x1" => 1,
                    "x2" => 2,
                    "x4" => 4,
                    other => {
                        return Err(Self::error_at(
                            &count,
                            format!("unknown matrix count `{other}`"),
                        ))
                    }
                };
                let trans = self.peek().kind == TokenKind::Dot;
                if trans {
                    self.bump();
                    self.match_keyword("trans")?;
                }
                let alloc = self.match_shared()?;
                let index =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                let shape = LdMatrix { count, trans };
                (ThreadOpKind::LdMatrix { alloc, shape }, index)
            }
            "wgmma" => self.wgmma()?,
            "tmem" => self.tmem()?,
            "tcgen05" => self.tcgen05()?,
            "mbarrier" => {
                self.match_token(TokenKind::Dot, "`.init`, `.expect_tx` or `.wait`")?;
                let what = self.match_ident("`init`, `expect_tx` or `wait`")?;
                let alloc = self.match_shared()?;
                let mut operands =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                self.match_token(TokenKind::Comma, "`,`")?;
                operands.push(self.match_reg()?);
                let kind = match what.text {
                    "init" => ThreadOpKind::MbarrierInit { alloc },
                    "expect_tx" => ThreadOpKind::MbarrierExpectTx { alloc },
                    "wait" => ThreadOpKind::MbarrierWait { alloc },
                    other => {
                        return Err(Self::error_at(&what, format!("unknown `mbarrier.{other}`")))
                    }
                };
                if !matches!(kind, ThreadOpKind::MbarrierWait { .. }) {
                    self.match_keyword("mask")?;
                    operands.extend(self.match_reg_group(
                        TokenKind::LParen,
                        TokenKind::RParen,
                        "`(`",
                    )?);
                }
                (kind, operands)
            }
            "tma" => {
                self.match_token(TokenKind::Dot, "`.load`")?;
                self.match_keyword("load")?;
                let alloc = self.match_shared()?;
                let mut operands =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                self.match_token(TokenKind::Comma, "`,`")?;
                let param = self.match_param()?;
                self.match_keyword("box")?;
                let rows = self.match_int("the box's rows")?;
                operands.extend(self.match_reg_group(
                    TokenKind::LBracket,
                    TokenKind::RBracket,
                    "`[`",
                )?);
                self.match_token(TokenKind::Comma, "`,`")?;
                let bar = self.match_shared()?;
                operands.extend(self.match_reg_group(
                    TokenKind::LBracket,
                    TokenKind::RBracket,
                    "`[`",
                )?);
                self.match_keyword("mask")?;
                operands.extend(self.match_reg_group(
                    TokenKind::LParen,
                    TokenKind::RParen,
                    "`(`",
                )?);
                let kind = ThreadOpKind::TmaLoad {
                    param,
                    rows,
                    alloc,
                    bar,
                };
                (kind, operands)
            }
            "fence" if self.peek_ident_after_dot() == Some("proxy") => {
                self.match_token(TokenKind::Dot, "`.proxy.async`")?;
                self.match_keyword("proxy")?;
                self.match_token(TokenKind::Dot, "`.async`")?;
                self.match_keyword("async")?;
                (ThreadOpKind::FenceProxyAsync, vec![])
            }
            "fence" => {
                let (order, scope) = self.order_and_scope()?;
                (ThreadOpKind::Fence { order, scope }, Vec::new())
            }
            "mma" => {
                self.match_token(TokenKind::Dot, "`.` and an instruction")?;
                let kind = self.mma_kind()?;
                (ThreadOpKind::Mma { kind }, self.match_regs()?)
            }
            "for" => {
                region_args.push(self.match_token(TokenKind::Value, "the induction variable")?);
                self.match_token(TokenKind::Equals, "`=`")?;
                let lo = self.match_reg()?;
                self.match_keyword("to")?;
                let hi = self.match_reg()?;
                self.match_keyword("step")?;
                let step = self.match_reg()?;
                let mut operands = vec![lo, hi, step];
                self.carried(&mut region_args, &mut operands)?;
                (ThreadOpKind::For, operands)
            }
            "while" => {
                let mut operands = Vec::new();
                self.carried(&mut region_args, &mut operands)?;
                (ThreadOpKind::While, operands)
            }
            "if" => (ThreadOpKind::If, vec![self.match_reg()?]),
            "yield" => (ThreadOpKind::Yield, self.match_regs()?),
            other => {
                if let Some(op) = UnaryOp::from_name(other) {
                    (ThreadOpKind::Unary(op), self.match_regs()?)
                } else if let Some(op) = BinaryOp::from_name(other) {
                    (ThreadOpKind::Binary(op), self.match_regs()?)
                } else {
                    return Err(Self::error_at(&name, format!("unknown op `{other}`")));
                }
            }
        };
        Ok(Line {
            kind,
            operands,
            results: Vec::new(),
            region_args,
        })
    }

    /// The instruction of an `mma`, named as [`MmaKind::name`] does
    /// (`m16n8k16.f16`, `wmma12.16x16x16.e4m3`): the tokens that touch,
    /// read as one word.
    fn mma_kind(&mut self) -> Result<MmaKind, ParseError> {
        let first = self.peek().clone();
        let mut name = String::new();
        let mut column = first.column;
        loop {
            let token = self.peek();
            let touches = token.line == first.line && token.column == column;
            if !touches || matches!(token.kind, TokenKind::Value | TokenKind::Newline) {
                break;
            }
            name.push_str(token.text);
            column += token.text.chars().count();
            self.bump();
        }
        MmaKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| Self::error_at(&first, format!("unknown mma `{name}`")))
    }

    /// `const <literal>`, its dtype read from the `: <dtype>` after it.
    fn constant(&mut self) -> Result<Line<'a>, ParseError> {
        let first = self.peek().clone();
        let mut text = String::new();
        if self.eat(&TokenKind::Minus) {
            text.push('-');
        }
        let token = self.bump();
        if !matches!(
            token.kind,
            TokenKind::Int | TokenKind::Float | TokenKind::Ident
        ) {
            return Err(Self::error_at(
                &token,
                format!("expected a constant, found {}", token.describe()),
            ));
        }
        text.push_str(token.text);
        // The dtype follows; read it ahead without consuming it.
        let (colon, dtype) = (self.peek().clone(), self.tokens.get(self.pos + 1).cloned());
        let dtype = match (colon.kind, dtype) {
            (TokenKind::Colon, Some(d)) => Self::dtype_of(&d)?,
            _ => return Err(self.expected("`:` and the constant's dtype")),
        };
        let value = parse_scalar(&text, dtype, first.line, first.column)?;
        Ok(Line {
            kind: ThreadOpKind::Const(value),
            operands: Vec::new(),
            results: Vec::new(),
            region_args: Vec::new(),
        })
    }

    /// A shared access's optional `.v<w>`: 1 without it.
    fn match_shared_width(&mut self) -> Result<u8, ParseError> {
        if self.peek().kind == TokenKind::Dot {
            self.match_width()
        } else {
            Ok(1)
        }
    }

    /// A global access's `[%addr]`, and a wide one's `if(%ok) else[%l...]`.
    fn match_global_address(&mut self) -> Result<Vec<Reg>, ParseError> {
        let mut regs = self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
        if self.peek().is_keyword("if") {
            self.bump();
            regs.extend(self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?);
            self.match_keyword("else")?;
            regs.extend(self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?);
        }
        Ok(regs)
    }

    /// The rest of `ld.global.v<w> ...`, `st.global.v<w> ...`,
    /// `ld.shared ...` and `st.shared ...`.
    fn memory(&mut self, name: &Token<'a>) -> Result<Line<'a>, ParseError> {
        self.match_token(TokenKind::Dot, "`.global` or `.shared`")?;
        let space = self.match_ident("`global` or `shared`")?;
        let load = name.text == "ld";
        let (kind, operands) = match (space.text, load) {
            ("global", true) => {
                let width = self.match_width()?;
                let param = self.match_param()?;
                let addressing = self.match_global_address()?;
                self.match_keyword("mask")?;
                let masks = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                self.match_keyword("other")?;
                let others = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                let operands = [addressing, masks, others].concat();
                (ThreadOpKind::LoadGlobal { param, width }, operands)
            }
            ("global", false) => {
                let width = self.match_width()?;
                let param = self.match_param()?;
                let addressing = self.match_global_address()?;
                self.match_token(TokenKind::Comma, "`,`")?;
                let values = self.match_regs()?;
                self.match_keyword("mask")?;
                let masks = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                (
                    ThreadOpKind::StoreGlobal { param, width },
                    [addressing, values, masks].concat(),
                )
            }
            ("shared", true) => {
                let width = self.match_shared_width()?;
                let alloc = self.match_shared()?;
                let index =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                (ThreadOpKind::LoadShared { alloc, width }, index)
            }
            ("shared", false) => {
                let width = self.match_shared_width()?;
                let alloc = self.match_shared()?;
                let index =
                    self.match_reg_group(TokenKind::LBracket, TokenKind::RBracket, "`[`")?;
                self.match_token(TokenKind::Comma, "`,`")?;
                let values = self.match_regs()?;
                self.match_keyword("mask")?;
                let mask = self.match_reg_group(TokenKind::LParen, TokenKind::RParen, "`(`")?;
                (
                    ThreadOpKind::StoreShared { alloc, width },
                    [index, values, mask].concat(),
                )
            }
            (other, _) => {
                return Err(Self::error_at(
                    &space,
                    format!("unknown memory space `{other}`"),
                ))
            }
        };
        Ok(Line {
            kind,
            operands,
            results: Vec::new(),
            region_args: Vec::new(),
        })
    }

    /// `iter(%a = %init, ...)` of a loop: the carried values' names pushed
    /// to `names`, their initial registers to `operands`.
    fn carried(
        &mut self,
        names: &mut Vec<Token<'a>>,
        operands: &mut Vec<Reg>,
    ) -> Result<(), ParseError> {
        self.match_keyword("iter")?;
        self.match_token(TokenKind::LParen, "`(`")?;
        while self.peek().kind == TokenKind::Value {
            names.push(self.bump());
            self.match_token(TokenKind::Equals, "`=`")?;
            operands.push(self.match_reg()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.match_token(TokenKind::RParen, "`)`")?;
        Ok(())
    }

    /// `.<order>.<scope>` of an atomic or a fence.
    fn order_and_scope(&mut self) -> Result<(MemOrder, MemScope), ParseError> {
        self.match_token(TokenKind::Dot, "`.` and a memory order")?;
        let order_word = self.match_ident("a memory order")?;
        let order = MemOrder::from_name(order_word.text).ok_or_else(|| {
            Self::error_at(
                &order_word,
                format!("unknown memory order `{}`", order_word.text),
            )
        })?;
        self.match_token(TokenKind::Dot, "`.` and a memory scope")?;
        let scope_word = self.match_ident("a memory scope")?;
        let scope = MemScope::from_name(scope_word.text).ok_or_else(|| {
            Self::error_at(
                &scope_word,
                format!("unknown memory scope `{}`", scope_word.text),
            )
        })?;
        Ok((order, scope))
    }
}
