//! Lazy tiles: values computed inside the loop of the op that consumes them.
//!
//! A lazy tile (`fuse.rs` chooses them) is an expression over element
//! coordinates: a tile in the frame, a scalar, `full`, `iota`, a deferred
//! load, an elementwise op of lazy operands, or a `broadcast`/`expand` of
//! one. The first op that is not lazy itself — its **root** — evaluates the
//! whole expression in one loop nest over its own shape and stores only the
//! result: `fma(c · r, w, b)` over broadcast rows and vectors is one pass
//! over the tile instead of one per op, and no intermediate tile takes frame
//! space or cache.
//!
//! Deferred loads are read from their tensors in that loop, with a second
//! version of the loop for tensors whose last stride is 1 at run time (so
//! LLVM sees consecutive elements). A masked load whose partition is partial
//! at run time is copied into the frame with its padding after all, and the
//! expression then reads the copy.

use super::error::HostError;
use super::frame::{row_major, TileRef};
use super::kernel::{HostKernel, HostValue};
use super::memory::DeferredLoad;
use crate::scalar::Nans;
use inkwell::types::VectorType;
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};
use tile_ir::{DType, OpId, OpKind, Scalar, Type, Value};

/// A lazy tile: how to compute its element at a coordinate.
#[derive(Clone)]
pub(super) enum Expr<'ctx> {
    /// A tile in the frame.
    Tile(TileRef),
    /// A scalar, the same at every coordinate.
    Scalar(BasicValueEnum<'ctx>),
    /// `full`: a constant.
    Full(Scalar),
    /// `iota` of a dtype and shape: the row-major index.
    Iota { dtype: DType, shape: Vec<usize> },
    /// A load not copied yet.
    Load(DeferredLoad<'ctx>),
    /// An elementwise op on operands of `dtypes` with a result of `dtype`,
    /// its NaNs as `nans` says (`nan.rs`).
    Op {
        kind: OpKind,
        dtype: DType,
        dtypes: Vec<DType>,
        operands: Vec<Expr<'ctx>>,
        nans: Nans,
    },
    /// A broadcast (or expand) of an operand of `shape`, aligned to the
    /// right; its axes of extent 1 repeat.
    Broadcast {
        operand: Box<Expr<'ctx>>,
        shape: Vec<usize>,
    },
}

/// Where an expression's deferred loads are read.
#[derive(Clone, Copy)]
enum Reads {
    /// From their tensors (their partitions are whole).
    Tensors,
    /// From their places in the frame (copied already).
    Copies,
}

impl<'ctx> Expr<'ctx> {
    /// The deferred loads of the expression.
    pub(super) fn loads(&self) -> Vec<&DeferredLoad<'ctx>> {
        let mut loads = Vec::new();
        self.visit_loads(&mut |load| loads.push(load));
        loads
    }

    fn visit_loads<'e>(&'e self, visit: &mut dyn FnMut(&'e DeferredLoad<'ctx>)) {
        match self {
            Expr::Load(load) => visit(load),
            Expr::Op { operands, .. } => operands.iter().for_each(|e| e.visit_loads(visit)),
            Expr::Broadcast { operand, .. } => operand.visit_loads(visit),
            Expr::Tile(_) | Expr::Scalar(_) | Expr::Full(_) | Expr::Iota { .. } => {}
        }
    }

    /// An op's expression with each operand replaced by `map(operand)`;
    /// any other expression as it is.
    fn map_operands(
        &self,
        map: &mut dyn FnMut(&Expr<'ctx>) -> Result<Expr<'ctx>, HostError>,
    ) -> Result<Expr<'ctx>, HostError> {
        let Expr::Op {
            kind,
            dtype,
            dtypes,
            operands,
            nans,
        } = self
        else {
            return Ok(self.clone());
        };
        Ok(Expr::Op {
            kind: kind.clone(),
            dtype: *dtype,
            dtypes: dtypes.clone(),
            operands: operands.iter().map(map).collect::<Result<_, _>>()?,
            nans: *nans,
        })
    }

    /// The expression with each load replaced by `replace(load)`.
    fn map_loads(
        &self,
        replace: &mut dyn FnMut(&DeferredLoad<'ctx>) -> Result<Expr<'ctx>, HostError>,
    ) -> Result<Expr<'ctx>, HostError> {
        Ok(match self {
            Expr::Load(load) => replace(load)?,
            Expr::Op { .. } => self.map_operands(&mut |e| e.map_loads(replace))?,
            Expr::Broadcast { operand, shape } => Expr::Broadcast {
                operand: Box::new(operand.map_loads(replace)?),
                shape: shape.clone(),
            },
            other => other.clone(),
        })
    }
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// The expression of op `id` (`full`, `iota`, an elementwise op, or a
    /// `broadcast`/`expand`) over the values of its operands.
    pub(super) fn expr_of(&self, id: OpId) -> Result<Expr<'ctx>, HostError> {
        let op = self.func.op(id);
        Ok(match &op.kind {
            OpKind::Full { value, .. } => Expr::Full(*value),
            OpKind::Iota { dtype, .. } => Expr::Iota {
                dtype: *dtype,
                shape: self.tile_shape(self.result(id)?)?,
            },
            OpKind::Broadcast { .. } | OpKind::Expand { .. } => {
                let v = *op
                    .operands
                    .first()
                    .ok_or_else(|| HostError::internal("a broadcast without an operand"))?;
                let shape = match self.func.ty(v) {
                    Type::Scalar(_) => Vec::new(),
                    _ => self.tile_shape(v)?,
                };
                Expr::Broadcast {
                    operand: Box::new(self.operand_expr(v)?),
                    shape,
                }
            }
            kind => Expr::Op {
                kind: kind.clone(),
                dtype: self.func.ty(self.result(id)?).dtype(),
                dtypes: op
                    .operands
                    .iter()
                    .map(|&v| self.func.ty(v).dtype())
                    .collect(),
                operands: op
                    .operands
                    .iter()
                    .map(|&v| self.operand_expr(v))
                    .collect::<Result<_, _>>()?,
                nans: self.nans_of(id),
            },
        })
    }

    /// Whether any operand of `id` is a lazy tile.
    pub(super) fn has_lazy_operand(&self, id: OpId) -> Result<bool, HostError> {
        for &v in self.operands(id) {
            if let HostValue::Lazy(_) = self.value(v)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The value of `v` as an expression.
    fn operand_expr(&self, v: Value) -> Result<Expr<'ctx>, HostError> {
        match self.value(v)? {
            HostValue::Tile(t) => Ok(Expr::Tile(t)),
            HostValue::Scalar(s) => Ok(Expr::Scalar(s)),
            HostValue::Lazy(e) => Ok(e),
            _ => Err(HostError::internal(format!(
                "{} is not a tile or a scalar",
                self.names.name(v)
            ))),
        }
    }

    /// The static shape of the tile value `v`.
    fn tile_shape(&self, v: Value) -> Result<Vec<usize>, HostError> {
        match self.func.ty(v) {
            Type::Tile(t) => Ok(t.shape.dims().to_vec()),
            other => Err(HostError::internal(format!("a tile shape of a {other}"))),
        }
    }

    /// Computes op `id`, whose operands include a lazy tile, into a new
    /// place for its result.
    pub(super) fn evaluate_op(&mut self, id: OpId) -> Result<(), HostError> {
        let expr = self.expr_of(id)?;
        let result = self.result(id)?;
        let out = self.place_of(result)?;
        self.evaluate(&expr, &out)?;
        self.define(result, HostValue::Tile(out));
        Ok(())
    }

    /// Computes `expr` into `out` (its shape) in one loop nest.
    pub(super) fn evaluate(&mut self, expr: &Expr<'ctx>, out: &TileRef) -> Result<(), HostError> {
        let expr = &self.rows_computed_once(expr, &out.shape)?;
        let loads = expr.loads();
        let mut whole = None;
        for w in loads.iter().filter_map(|load| load.whole()) {
            whole = Some(match whole {
                None => w,
                Some(all) => self.e.b.build_and(all, w, "whole")?,
            });
        }
        match whole {
            None => self.evaluate_fused(expr, out),
            // A partial partition is copied with its padding after all.
            Some(whole) => self.either(whole, &mut |l| l.evaluate_fused(expr, out), &mut |l| {
                for load in &loads {
                    l.materialize(load)?;
                }
                l.evaluate_loop(expr, out, Reads::Copies)
            }),
        }
    }

    /// [`Self::evaluate`] reading loads from their tensors: twice, with the
    /// last strides known to be 1 where they are at run time, and as given.
    fn evaluate_fused(&mut self, expr: &Expr<'ctx>, out: &TileRef) -> Result<(), HostError> {
        let mut all_unit: Option<IntValue<'ctx>> = None;
        let contiguous = expr.map_loads(&mut |load| {
            Ok(Expr::Load(match self.contiguous_load(load)? {
                Some((unit, load)) => {
                    all_unit = Some(match all_unit {
                        None => unit,
                        Some(all) => self.e.b.build_and(all, unit, "units")?,
                    });
                    load
                }
                None => load.clone(),
            }))
        })?;
        match all_unit {
            Some(all_unit) => self.either(
                all_unit,
                &mut |l| l.evaluate_loop(&contiguous, out, Reads::Tensors),
                &mut |l| l.evaluate_loop(expr, out, Reads::Tensors),
            ),
            None => self.evaluate_loop(expr, out, Reads::Tensors),
        }
    }

    /// The loop nest over `out` that stores `expr` at every coordinate.
    /// Broadcasts that repeat along the last axis are read once per row,
    /// before the innermost loop ([`Self::hoisted`]).
    fn evaluate_loop(
        &mut self,
        expr: &Expr<'ctx>,
        out: &TileRef,
        reads: Reads,
    ) -> Result<(), HostError> {
        let strides = out.strides();
        let Some((&last, outer)) = out.shape.split_last() else {
            let v = self.element_of(expr, &[], reads)?;
            return self.set(out, self.i64(0), v);
        };
        self.nest_static(outer, &mut |l, rows| {
            let mut j = rows.to_vec();
            j.push(l.i64(0));
            let row = l.hoisted(expr, &j, reads)?;
            let n = l.i64(last as i64);
            l.counted(n, &mut |l, i| {
                if let Some(c) = j.last_mut() {
                    *c = i;
                }
                let v = l.element_of(&row, &j, reads)?;
                let at = l.linear(&j, &strides, 0)?;
                l.set(out, at, v)
            })
        })
    }

    /// Elements `column`, `column + 1`, … of row `row` of the rank-2,
    /// load-free `expr`, as one vector of `ty` (a block fold's row).
    pub(super) fn row_vector(
        &self,
        expr: &Expr<'ctx>,
        row: usize,
        column: IntValue<'ctx>,
        ty: VectorType<'ctx>,
    ) -> Result<VectorValue<'ctx>, HostError> {
        let i32t = self.e.ctx.i32_type();
        let mut v = ty.get_undef();
        for c in 0..ty.get_size() {
            let at = self
                .e
                .b
                .build_int_nsw_add(column, self.i64(c.into()), "col")?;
            let x = self.element_of(expr, &[self.i64(row as i64), at], Reads::Copies)?;
            v = self
                .e
                .b
                .build_insert_element(v, x, i32t.const_int(c.into(), false), "row")?;
        }
        Ok(v)
    }

    /// `expr` (of `shape`) with each op whose value is the same in every row
    /// (it reads only scalars, constants and broadcasts along the leading
    /// axes, and no load) computed once for one row into a new place of the
    /// frame, and read from there as a broadcast. Layernorm's column mask
    /// `iota < cols` over `[8, 384]` is then 384 compares, not 3,072 (which
    /// LLVM also widened to 64-bit lanes, the loop counter's width).
    fn rows_computed_once(
        &mut self,
        expr: &Expr<'ctx>,
        shape: &[usize],
    ) -> Result<Expr<'ctx>, HostError> {
        let Some((&last, outer)) = shape.split_last() else {
            return Ok(expr.clone());
        };
        if outer.iter().product::<usize>() < 2 {
            return Ok(expr.clone());
        }
        match expr {
            Expr::Op { dtype, .. } if same_in_every_row(expr) && expr.loads().is_empty() => {
                let row = self.place(&[last], *dtype);
                let n = self.i64(last as i64);
                self.counted(n, &mut |l, i| {
                    let mut j = vec![l.i64(0); outer.len()];
                    j.push(i);
                    let v = l.element_of(expr, &j, Reads::Tensors)?;
                    l.set(&row, i, v)
                })?;
                Ok(Expr::Broadcast {
                    operand: Box::new(Expr::Tile(row)),
                    shape: vec![last],
                })
            }
            Expr::Op { .. } => expr.map_operands(&mut |e| self.rows_computed_once(e, shape)),
            other => Ok(other.clone()),
        }
    }

    /// `expr` with each broadcast that repeats along the last axis replaced
    /// by its value in the row that starts at `j`. Read inside the innermost
    /// loop, such an element has the same frame address on every trip, and
    /// LLVM cannot tell that the loop's stores to the same frame leave it
    /// alone: it would keep the loop scalar.
    fn hoisted(
        &self,
        expr: &Expr<'ctx>,
        j: &[IntValue<'ctx>],
        reads: Reads,
    ) -> Result<Expr<'ctx>, HostError> {
        Ok(match expr {
            Expr::Broadcast { shape, .. } if shape.last().is_none_or(|&e| e == 1) => {
                Expr::Scalar(self.element_of(expr, j, reads)?)
            }
            Expr::Op { .. } => expr.map_operands(&mut |e| self.hoisted(e, j, reads))?,
            other => other.clone(),
        })
    }

    /// The element of `expr` at coordinate `j` (`i64`s, one per axis of its
    /// shape).
    fn element_of(
        &self,
        expr: &Expr<'ctx>,
        j: &[IntValue<'ctx>],
        reads: Reads,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        match expr {
            Expr::Tile(t) => self.get(t, self.linear(j, &t.strides(), 0)?),
            Expr::Scalar(s) => Ok(*s),
            Expr::Full(value) => Ok(self.e.constant(*value)?),
            Expr::Iota { dtype, shape } => {
                let i = self.linear(j, &row_major(shape), 0)?;
                Ok(self.e.cast(i.into(), DType::U64, *dtype, Nans::Canonical)?)
            }
            Expr::Load(load) => match reads {
                Reads::Tensors => self.read_deferred(load, j),
                Reads::Copies => {
                    let t = &load.place;
                    self.get(t, self.linear(j, &t.strides(), 0)?)
                }
            },
            Expr::Op {
                kind,
                dtypes,
                operands,
                nans,
                ..
            } => {
                let args = operands
                    .iter()
                    .map(|e| self.element_of(e, j, reads))
                    .collect::<Result<Vec<_>, _>>()?;
                self.apply(kind, dtypes, &args, *nans)
            }
            Expr::Broadcast { operand, shape } => {
                let lead = j
                    .len()
                    .checked_sub(shape.len())
                    .ok_or_else(|| HostError::internal("a broadcast to a lower rank"))?;
                let k: Vec<IntValue<'ctx>> = shape
                    .iter()
                    .zip(&j[lead..])
                    .map(|(&extent, &c)| if extent == 1 { self.i64(0) } else { c })
                    .collect();
                self.element_of(operand, &k, reads)
            }
        }
    }
}

/// Whether `expr`, evaluated over a tile of two or more axes, has the same
/// value in every row: it depends on the last coordinate alone.
fn same_in_every_row(expr: &Expr<'_>) -> bool {
    match expr {
        Expr::Scalar(_) | Expr::Full(_) => true,
        Expr::Tile(_) | Expr::Load(_) | Expr::Iota { .. } => false,
        Expr::Op { operands, .. } => operands.iter().all(same_in_every_row),
        // Read at the trailing coordinates, the leading ones of extent 1.
        Expr::Broadcast { shape, .. } => shape
            .split_last()
            .is_none_or(|(_, leading)| leading.iter().all(|&e| e == 1)),
    }
}
