//! `dot a[M, K] · b[K, N] + c[M, N]` in the interpreter's order: for each
//! `(m, n)`, `acc = c[m, n]` then `acc = fma(a[m, k], b[k, n], acc)` for `k`
//! ascending, operands widened exactly to the accumulator dtype (i8: `acc +
//! a · b` wrapping in i32), or for precision `tf32` rounded to TF32.
//!
//! Operands of a narrower dtype are widened once into frame tiles. Then a
//! register-blocked micro-kernel computes the result in blocks of [`ROWS`]
//! rows by `V` columns (`V` = [`VECTOR_BITS`] / the accumulator's width):
//! the `ROWS` accumulator vectors stay in registers across the whole `k`
//! loop, and each step loads one vector of `b`'s row `k` and broadcasts one
//! element of `a` per row into a vector `fma`. Every result element still
//! sees one `fma` per `k`, in ascending order, so the result is the
//! interpreter's bit for bit. Columns past the last whole vector and rows
//! past the last whole block take the same path with one column or one row.
//! NaNs are canonicalized once at the end, as the interpreter does (an `fma`
//! of a NaN is a NaN whatever its payload).

use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, HostValue};
use inkwell::types::{BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, VectorValue};
use tile_ir::{DType, DotPrecision, OpId, OpKind};

/// The rows of one block of the micro-kernel.
const ROWS: usize = 4;

/// The bits of one block's columns (two AVX2 registers).
const VECTOR_BITS: u32 = 512;

/// The shape of one `dot`, its widened operands and its result.
struct Dot {
    a: TileRef,
    b: TileRef,
    out: TileRef,
    k: usize,
    n: usize,
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// Emits `dot`.
    pub(super) fn dot(&mut self, id: OpId) -> Result<(), HostError> {
        let operands = self.operands(id);
        let [a, b, c] = operands else {
            return Err(HostError::internal("`dot` takes three operands"));
        };
        let (a, b, c) = (self.tile(*a)?, self.tile(*b)?, self.tile(*c)?);
        let (&[m, k], &[_, n]) = (a.shape.as_slice(), b.shape.as_slice()) else {
            return Err(HostError::internal("`dot` of tiles that are not matrices"));
        };
        let acc = c.dtype;
        let out = self.place_of(self.result(id)?)?;
        self.copy(&out, &c)?;
        let tf32 = matches!(
            self.func.op(id).kind,
            OpKind::Dot {
                precision: DotPrecision::Tf32
            }
        );
        let (a, b) = if tf32 {
            (self.rounded_tf32(a)?, self.rounded_tf32(b)?)
        } else {
            (self.widened(a, acc)?, self.widened(b, acc)?)
        };
        let d = Dot { a, b, out, k, n };
        let lanes = (VECTOR_BITS / acc.bits()) as usize;
        let whole_rows = m / ROWS * ROWS;
        let blocks = self.i64((m / ROWS) as i64);
        self.counted(blocks, &mut |l, block| {
            let m0 = l.e.b.build_int_nsw_mul(block, l.i64(ROWS as i64), "m0")?;
            l.rows(&d, m0, ROWS, lanes)
        })?;
        let rest = self.i64((m - whole_rows) as i64);
        self.counted(rest, &mut |l, r| {
            let m0 = l.e.b.build_int_nsw_add(r, l.i64(whole_rows as i64), "m0")?;
            l.rows(&d, m0, 1, lanes)
        })?;
        if acc.is_float() {
            let total = self.i64((m * n) as i64);
            let out = d.out.clone();
            self.counted(total, &mut |l, i| {
                let v = l.get(&out, i)?.into_float_value();
                let v = l.e.canonicalize(v, l.nans)?;
                l.set(&out, i, v.into())
            })?;
        }
        self.define_result(id, HostValue::Tile(d.out))
    }

    /// A new tile of `t`'s `f32` elements rounded to TF32: the operands of
    /// a `tf32` dot.
    fn rounded_tf32(&mut self, t: TileRef) -> Result<TileRef, HostError> {
        let rounded = self.place(&t.shape, DType::F32);
        let n = self.i64(t.numel() as i64);
        self.counted(n, &mut |l, i| {
            let v = l.get(&t, i)?.into_float_value();
            let v = l.e.round_tf32(v)?;
            l.set(&rounded, i, v.into())
        })?;
        Ok(rounded)
    }

    /// `t` itself if it has `dtype`, else a new tile of its elements cast
    /// (exactly) to `dtype`.
    fn widened(&mut self, t: TileRef, dtype: DType) -> Result<TileRef, HostError> {
        if t.dtype == dtype {
            return Ok(t);
        }
        let wide = self.place(&t.shape, dtype);
        let n = self.i64(t.numel() as i64);
        self.counted(n, &mut |l, i| {
            let v = l.get(&t, i)?;
            let v = l.e.cast(v, t.dtype, dtype, l.nans)?;
            l.set(&wide, i, v)
        })?;
        Ok(wide)
    }

    /// Rows `m0 … m0 + rows − 1` of the result: whole vectors of `lanes`
    /// columns, then the remaining columns one at a time.
    fn rows(
        &mut self,
        d: &Dot,
        m0: IntValue<'ctx>,
        rows: usize,
        lanes: usize,
    ) -> Result<(), HostError> {
        let whole = d.n / lanes * lanes;
        let chunks = self.i64((d.n / lanes) as i64);
        self.counted(chunks, &mut |l, chunk| {
            let n0 = l.e.b.build_int_nsw_mul(chunk, l.i64(lanes as i64), "n0")?;
            l.block(d, m0, rows, n0, lanes)
        })?;
        let rest = self.i64((d.n - whole) as i64);
        self.counted(rest, &mut |l, c| {
            let n0 = l.e.b.build_int_nsw_add(c, l.i64(whole as i64), "n0")?;
            l.block(d, m0, rows, n0, 1)
        })
    }

    /// The block of `rows` rows from `m0` and `lanes` columns from `n0`: its
    /// accumulators loaded, `k` steps of `fma`, stored back.
    fn block(
        &mut self,
        d: &Dot,
        m0: IntValue<'ctx>,
        rows: usize,
        n0: IntValue<'ctx>,
        lanes: usize,
    ) -> Result<(), HostError> {
        let dtype = d.out.dtype;
        let vector = self.vector_type(dtype, lanes)?;
        let (kk, nn) = (d.k as i64, d.n as i64);
        let mut slots = Vec::with_capacity(rows);
        let mut row_starts = Vec::with_capacity(rows);
        for r in 0..rows {
            let m = self.e.b.build_int_nsw_add(m0, self.i64(r as i64), "m")?;
            let at = self.linear(&[m, n0], &[nn, 1], 0)?;
            let slot = self.local(vector.into())?;
            let v = self.load_vector(&d.out, at, vector)?;
            self.e.b.build_store(slot, v)?;
            slots.push(slot);
            row_starts.push(m);
        }
        let steps = self.i64(kk);
        self.counted(steps, &mut |l, k| {
            let at = l.linear(&[k, n0], &[nn, 1], 0)?;
            let bv = l.load_vector(&d.b, at, vector)?;
            for (&slot, &m) in slots.iter().zip(&row_starts) {
                let at = l.linear(&[m, k], &[kk, 1], 0)?;
                let av = l.splat(l.get(&d.a, at)?, vector)?;
                let acc = l.e.b.build_load(vector, slot, "acc")?.into_vector_value();
                let next = l.fma_step(dtype, av, bv, acc)?;
                l.e.b.build_store(slot, next)?;
            }
            Ok(())
        })?;
        for (&slot, &m) in slots.iter().zip(&row_starts) {
            let at = self.linear(&[m, n0], &[nn, 1], 0)?;
            let acc = self
                .e
                .b
                .build_load(vector, slot, "acc")?
                .into_vector_value();
            self.store_vector(&d.out, at, acc)?;
        }
        Ok(())
    }

    /// `lanes` elements of `dtype` (f32, f64 or i32) as one LLVM vector.
    fn vector_type(&self, dtype: DType, lanes: usize) -> Result<VectorType<'ctx>, HostError> {
        let lanes = lanes as u32;
        Ok(match self.e.reg_type(dtype) {
            BasicTypeEnum::FloatType(t) => t.vec_type(lanes),
            BasicTypeEnum::IntType(t) => t.vec_type(lanes),
            _ => {
                return Err(HostError::internal(
                    "a dot accumulator that is not a number",
                ))
            }
        })
    }

    /// `acc + a · b` with one rounding (floats), or wrapping (integers).
    fn fma_step(
        &self,
        dtype: DType,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
        acc: VectorValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, HostError> {
        let bld = &self.e.b;
        if !dtype.is_float() {
            let p = bld.build_int_mul(a, b, "p")?;
            return Ok(bld.build_int_add(acc, p, "acc")?.into());
        }
        let f = self.e.intrinsic("llvm.fma", &[a.get_type().into()])?;
        bld.build_call(f, &[a.into(), b.into(), acc.into()], "fma")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| HostError::internal("llvm.fma returned nothing"))
    }

    /// `x` in every lane of a vector of type `vector`.
    fn splat(
        &self,
        x: BasicValueEnum<'ctx>,
        vector: VectorType<'ctx>,
    ) -> Result<VectorValue<'ctx>, HostError> {
        let bld = &self.e.b;
        let i32t = self.e.ctx.i32_type();
        let one = bld.build_insert_element(vector.get_undef(), x, i32t.const_zero(), "one")?;
        let zeros = i32t.vec_type(vector.get_size()).const_zero();
        Ok(bld.build_shuffle_vector(one, vector.get_undef(), zeros, "splat")?)
    }

    /// The vector of `tile`'s elements from `at` on.
    fn load_vector(
        &self,
        tile: &TileRef,
        at: IntValue<'ctx>,
        vector: VectorType<'ctx>,
    ) -> Result<VectorValue<'ctx>, HostError> {
        let ptr = self.element(tile, at)?;
        let v = self.e.b.build_load(vector, ptr, "vec")?;
        self.element_aligned(v.as_instruction_value(), tile.dtype)?;
        Ok(v.into_vector_value())
    }

    /// Stores `v` into `tile`'s elements from `at` on.
    fn store_vector(
        &self,
        tile: &TileRef,
        at: IntValue<'ctx>,
        v: VectorValue<'ctx>,
    ) -> Result<(), HostError> {
        let ptr = self.element(tile, at)?;
        let store = self.e.b.build_store(ptr, v)?;
        self.element_aligned(Some(store), tile.dtype)
    }

    /// Aligns a vector access to one element of `dtype` (rows start anywhere).
    fn element_aligned(
        &self,
        inst: Option<inkwell::values::InstructionValue<'ctx>>,
        dtype: DType,
    ) -> Result<(), HostError> {
        inst.ok_or_else(|| HostError::internal("a vector access that is not an instruction"))?
            .set_alignment(dtype.size_bytes() as u32)
            .map_err(|e| HostError::internal(format!("setting an alignment: {e}")))
    }
}
