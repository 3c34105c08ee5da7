//! Streaming stores: tiles written to large outputs with non-temporal
//! stores, whole cache lines straight to memory.
//!
//! A plain store to a line that is not in the cache first reads the line
//! (read-for-ownership), so a kernel that reads `n` bytes and writes `m`
//! moves `n + 2m`; a non-temporal store (`vmovntps`/`movntps` on x86-64)
//! writes whole lines without reading them, and `n + m` move. It pays only
//! where the output would not stay in the cache anyway and nothing reads it
//! back, so a store streams when all of these hold:
//!
//! * statically: the level is x86-64 (`vector_bytes`: 32 on x86-64-v3, 16
//!   on baseline x86-64; none elsewhere); the kernel stores to the tensor
//!   and never reads it (no load through any view of it); a tile row (the
//!   last axis) has at least two cache lines of bytes (`MIN_ROW`);
//! * at run time: the tensor holds at least the *streaming threshold* of
//!   bytes (the packet's last slot, `tile_runtime::cpu::default_stream_threshold`:
//!   three quarters of the last-level cache unless set), its last axis has
//!   stride 1, and its base address is a multiple of the element size.
//!
//! Otherwise the plain loop of `memory.rs` stores the box. The streaming
//! path stores the same box row by row: the bytes before the row's first
//! 64-byte boundary and after its last one with plain stores (one of 32,
//! 16, …, element-size bytes per set bit of their count), the
//! whole lines between with aligned non-temporal vector stores of the
//! frame's bytes (a tile's frame bytes are its elements as stored, bool as
//! 0 or 1), so the memory written is the same, bit for bit, and only inside
//! the box (masked edge tiles included). Unaligned or user buffers stream
//! their aligned middles; the runtime's checks are unchanged.
//!
//! Non-temporal stores are weakly ordered: every return of a kernel with a
//! streaming store is preceded by `sfence`, so its stores are globally
//! visible before the runner sees the instance finished.

use super::error::HostError;
use super::frame::TileRef;
use super::kernel::{HostKernel, TensorArg};
use super::plan::HostPlan;
use inkwell::module::Module;
use inkwell::values::{BasicValue, InstructionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use tile_abi::HostIsa;
use tile_ir::{Function, OpId, OpKind, Type, ValueDef};

/// The cache line: the unit a non-temporal store writes without reading.
const LINE: u64 = 64;

/// The fewest bytes of a tile row that stream: two lines. A 32 × 32 f32
/// transpose writes 128 bytes to each of 32 rows; with tensor buffers on
/// line boundaries those are two whole lines, and streaming them measured
/// 9.5 against 5.8 GB/s stored plainly (with four lines as the minimum, on
/// `malloc`'s buffers 16 bytes past a boundary, streaming was 5% slower).
const MIN_ROW: u64 = 2 * LINE;

/// The fence intrinsic that orders non-temporal stores.
const SFENCE: &str = "llvm.x86.sse.sfence";

/// How a kernel streams its stores (present only if some store may stream
/// on this level).
pub(super) struct Streaming<'ctx> {
    /// Bytes of one vector store.
    vector_bytes: u64,
    /// The streaming threshold from the packet (`i64`).
    pub(super) threshold: IntValue<'ctx>,
}

impl<'ctx> Streaming<'ctx> {
    /// Streaming on `isa` with the threshold `threshold` for a kernel whose
    /// plan is `plan`, or `None` where no store can stream.
    pub(super) fn new(plan: &HostPlan, isa: HostIsa, threshold: IntValue<'ctx>) -> Option<Self> {
        let vector_bytes = vector_bytes(isa)?;
        (!plan.streams.is_empty()).then_some(Streaming {
            vector_bytes,
            threshold,
        })
    }
}

/// Whether op `id` of `func` is a store of a partition whose tile may stream
/// (the static conditions of the module doc), given the parameters the
/// kernel writes and never reads (`write_only`, [`write_only_params`]).
pub(super) fn may_stream(func: &Function, id: OpId, write_only: &[bool]) -> bool {
    let op = func.op(id);
    let (OpKind::Store | OpKind::StoreMasked, [value, view, ..]) =
        (&op.kind, op.operands.as_slice())
    else {
        return false;
    };
    let Type::Tile(tile) = func.ty(*value) else {
        return false;
    };
    let param = match tile_ir::lview::viewed_tensor(func, *view).map(|t| func.values[t].def) {
        Some(ValueDef::Param(index)) => index,
        _ => return false,
    };
    let size = tile.dtype.size_bytes() as u64;
    let row = tile.shape.dims().last().map_or(0, |&r| r as u64 * size);
    write_only.get(param).copied().unwrap_or(false) && row >= MIN_ROW && LINE.is_multiple_of(size)
}

/// The bytes of a non-temporal vector store on `isa`, if it streams.
pub(super) fn vector_bytes(isa: HostIsa) -> Option<u64> {
    match isa {
        HostIsa::X86_64V3 => Some(32),
        HostIsa::X86_64 => Some(16),
        // AArch64 has `stnp`, but its pay-off is untested: plain stores.
        HostIsa::Aarch64 => None,
    }
}

/// Per parameter: whether the kernel stores to it (a tensor) and never
/// reads it. A read through a view whose tensor cannot be traced makes
/// every parameter count as read.
pub(super) fn write_only_params(func: &Function) -> Vec<bool> {
    let n = func.params.len();
    let (mut written, mut read) = (vec![false; n], vec![false; n]);
    let mut untraced = false;
    let param = |v| match tile_ir::lview::viewed_tensor(func, v).map(|t| func.values[t].def) {
        Some(ValueDef::Param(index)) if index < n => Some(index),
        _ => None,
    };
    func.walk(&mut |id| {
        let op = func.op(id);
        if op.kind.writes_memory() {
            // The view operand of every store is operand 1.
            if let Some(index) = op.operands.get(1).and_then(|&v| param(v)) {
                written[index] = true;
            }
        }
        if op.kind.reads_memory() {
            let traced: Vec<usize> = op.operands.iter().filter_map(|&v| param(v)).collect();
            untraced |= traced.is_empty();
            for index in traced {
                read[index] = true;
            }
        }
    });
    written
        .iter()
        .zip(&read)
        .map(|(&w, &r)| w && !r && !untraced)
        .collect()
}

/// Declares the store fence in `module` (x86-64 only).
pub(super) fn declare_fence(module: &Module<'_>) {
    let ctx = module.get_context();
    let void = ctx.void_type().fn_type(&[], false);
    module.add_function(SFENCE, void, None);
}

impl<'a, 'ctx> HostKernel<'a, 'ctx> {
    /// The run-time condition (an `i1`) under which store `id` of `tile` to
    /// `tensor` streams, or `None` where it never does.
    pub(super) fn stream_condition(
        &self,
        id: OpId,
        tensor: &TensorArg<'ctx>,
        tile: &TileRef,
    ) -> Result<Option<IntValue<'ctx>>, HostError> {
        let Some(s) = &self.streaming else {
            return Ok(None);
        };
        if !self.plan.streams.contains(&id) {
            return Ok(None);
        }
        let size = tile.dtype.size_bytes() as u64;
        let b = &self.e.b;
        let i64t = self.e.ctx.i64_type();
        let mut bytes = self.i64(size as i64);
        for &e in &tensor.extents {
            bytes = b.build_int_mul(bytes, e, "bytes")?;
        }
        let large = b.build_int_compare(IntPredicate::UGE, bytes, s.threshold, "large")?;
        let Some(&inner) = tensor.strides.last() else {
            return Ok(None);
        };
        let dense = b.build_int_compare(IntPredicate::EQ, inner, self.i64(1), "dense")?;
        let addr = b.build_ptr_to_int(tensor.base, i64t, "addr")?;
        let skew = b.build_and(addr, self.i64(size as i64 - 1), "skew")?;
        let aligned = b.build_int_compare(IntPredicate::EQ, skew, self.i64(0), "aligned")?;
        let ok = b.build_and(large, dense, "stream")?;
        Ok(Some(b.build_and(ok, aligned, "stream")?))
    }

    /// `stream` (from [`Self::stream_condition`]) where the rows of the box
    /// `bounds` of `tile` hold at least a line of bytes (a partial edge
    /// tile's may not).
    pub(super) fn rows_stream(
        &self,
        stream: IntValue<'ctx>,
        tile: &TileRef,
        bounds: &[IntValue<'ctx>],
    ) -> Result<IntValue<'ctx>, HostError> {
        let Some(&row) = bounds.last() else {
            return Ok(self.e.ctx.bool_type().const_zero());
        };
        let b = &self.e.b;
        let bytes = b.build_int_mul(row, self.i64(tile.dtype.size_bytes() as i64), "bytes")?;
        let long = b.build_int_compare(IntPredicate::SGE, bytes, self.i64(LINE as i64), "long")?;
        Ok(b.build_and(stream, long, "stream")?)
    }

    /// Stores the box `bounds` of `tile` to `tensor` from the address
    /// `base`, row by row, lines in the middle of each row non-temporal.
    /// Only where [`Self::stream_condition`] holds.
    pub(super) fn stream_box(
        &mut self,
        tensor: &TensorArg<'ctx>,
        base: PointerValue<'ctx>,
        tile: &TileRef,
        bounds: &[IntValue<'ctx>],
    ) -> Result<(), HostError> {
        let Some((&row, outer)) = bounds.split_last() else {
            return Err(HostError::internal("a streaming store of a scalar tile"));
        };
        let strides = tile.strides();
        self.nest(outer, &mut |l, j| {
            let at = l.strided(j, &tensor.strides)?;
            let from = l.linear(j, &strides, 0)?;
            let ty = l.e.mem_type(tile.dtype);
            let dst = l.gep(ty, base, at)?;
            let src = l.element(tile, from)?;
            l.stream_row(dst, src, row, tile.dtype.size_bytes() as u64)
        })
    }

    /// Copies `n` elements of `size` bytes from the frame at `src` to
    /// memory at `dst` (a multiple of `size`): the whole lines inside the
    /// row with non-temporal vector stores, the bytes before the first line
    /// boundary and after the last with plain stores of 32, 16, …, `size`
    /// bytes (one per set bit of their count), which touch no streamed line.
    fn stream_row(
        &mut self,
        dst: PointerValue<'ctx>,
        src: PointerValue<'ctx>,
        n: IntValue<'ctx>,
        size: u64,
    ) -> Result<(), HostError> {
        let vector = self
            .streaming
            .as_ref()
            .map(|s| s.vector_bytes)
            .ok_or_else(|| HostError::internal("a streaming store without streaming"))?;
        let ctx = self.e.ctx;
        let i64t = ctx.i64_type();
        let b = &self.e.b;
        let c = |v: u64| i64t.const_int(v, false);
        let shift = c(LINE.trailing_zeros().into());
        // head = min((−dst) mod 64, bytes); lines = (bytes − head) / 64.
        let addr = b.build_ptr_to_int(dst, i64t, "addr")?;
        let neg = b.build_int_sub(c(0), addr, "neg")?;
        let gap = b.build_and(neg, c(LINE - 1), "gap")?;
        let bytes = b.build_int_mul(n, c(size), "bytes")?;
        let short = b.build_int_compare(IntPredicate::ULT, bytes, gap, "short")?;
        let head = b.build_select(short, bytes, gap, "head")?.into_int_value();
        let rest = b.build_int_sub(bytes, head, "rest")?;
        let lines = b.build_right_shift(rest, shift, false, "lines")?;
        let end = b.build_int_add(head, b.build_left_shift(lines, shift, "middle")?, "end")?;
        let tail = b.build_int_sub(bytes, end, "tail")?;
        let i8t = ctx.i8_type();
        let kind = ctx.get_kind_id("nontemporal");
        let nontemporal = ctx.metadata_node(&[ctx.i32_type().const_int(1, false).into()]);
        // `width` bytes from the frame's byte `at` of the row to the
        // tensor's; `Some(align)` marks the store non-temporal.
        let copy = |l: &mut Self, width: u64, at, streamed: Option<u64>| -> Result<(), HostError> {
            let ty = i8t.vec_type(width as u32);
            let v = l.e.b.build_load(ty, l.gep(i8t.into(), src, at)?, "v")?;
            aligned(v.as_instruction_value(), 1)?;
            let store = l.e.b.build_store(l.gep(i8t.into(), dst, at)?, v)?;
            aligned(Some(store), streamed.unwrap_or(1))?;
            if streamed.is_some() {
                store
                    .set_metadata(nontemporal, kind)
                    .map_err(|e| HostError::internal(format!("marking a store: {e}")))?;
            }
            Ok(())
        };
        // The `count` (< 64, a multiple of `size`) bytes from byte `from`:
        // a piece of each width whose bit is set, widest first.
        let ragged = |l: &mut Self, from: IntValue<'ctx>, count: IntValue<'ctx>| {
            let mut width = LINE / 2;
            while width >= size {
                let b = &l.e.b;
                let bit = b.build_and(count, c(width), "bit")?;
                let set = b.build_int_compare(IntPredicate::NE, bit, c(0), "set")?;
                let before = b.build_and(count, c(!(2 * width - 1)), "before")?;
                let at = b.build_int_add(from, before, "at")?;
                l.either(set, &mut |l| copy(l, width, at, None), &mut |_| Ok(()))?;
                width /= 2;
            }
            Ok::<(), HostError>(())
        };
        ragged(self, c(0), head)?;
        self.counted(lines, &mut |l, k| {
            let line = l.e.b.build_left_shift(k, shift, "line")?;
            let line = l.e.b.build_int_add(head, line, "line")?;
            for part in 0..LINE / vector {
                let at = l.e.b.build_int_add(line, c(part * vector), "at")?;
                copy(l, vector, at, Some(vector))?;
            }
            Ok(())
        })?;
        ragged(self, end, tail)
    }

    /// Emits `sfence` where the kernel streams: before each return, so its
    /// non-temporal stores are visible to whoever sees it return.
    pub(super) fn fence_streams(&self) -> Result<(), HostError> {
        if self.streaming.is_none() {
            return Ok(());
        }
        let fence = self
            .e
            .module
            .get_function(SFENCE)
            .ok_or_else(|| HostError::internal("the store fence is not declared"))?;
        self.e.b.build_call(fence, &[], "")?;
        Ok(())
    }
}

/// Sets the alignment of a memory access.
fn aligned(inst: Option<InstructionValue<'_>>, bytes: u64) -> Result<(), HostError> {
    inst.ok_or_else(|| HostError::internal("a memory access that is not an instruction"))?
        .set_alignment(bytes as u32)
        .map_err(|e| HostError::internal(format!("setting an alignment: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::samples;

    #[test]
    fn only_outputs_never_read_may_stream() {
        // vector_add(x, y, out), transpose(x, out), layernorm(x, w, b, out, eps).
        let add = samples::vector_add(64).unwrap();
        assert_eq!(write_only_params(&add), [false, false, true]);
        let t = samples::transpose(8, 8).unwrap();
        assert_eq!(write_only_params(&t), [false, true]);
        let ln = samples::layernorm(2, 16).unwrap();
        assert_eq!(write_only_params(&ln), [false, false, false, true, false]);
    }

    #[test]
    fn only_x86_64_streams() {
        assert_eq!(vector_bytes(HostIsa::X86_64V3), Some(32));
        assert_eq!(vector_bytes(HostIsa::X86_64), Some(16));
        assert_eq!(vector_bytes(HostIsa::Aarch64), None);
    }
}
