//! The operations of the tile IR.
//!
//! An op is an [`OpKind`] (what it computes, with its static attributes), its
//! operands, its results and, for `for` and `if`, its regions. The typing rule
//! of every kind is in [`crate::rules`]; its meaning is defined by the
//! interpreter and described in `docs/ir.md`. The text name of each kind is
//! given in its doc comment, as the op is written in the text form.

use crate::dtype::DType;
use crate::lview::LViewOp;
use crate::scalar::Scalar;
use crate::text::syntax::{
    Axes, DTypeName, Decimal, Dimensions, GridAxis, Ints, KeepDim, Nested, PadValue, Paddings,
    Quoted, ResultDType, ResultShape, ResultValue, ShapeOf, SliceRanges, Stages, Word,
};
use crate::types::Shape;

table::op_table! {
/// What an op computes, with its static attributes.
///
/// Operands are listed in each variant's doc comment. Elementwise ops take
/// operands of one identical type (scalars, or tiles of one shape): broadcasts
/// are explicit in the IR.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `program_id <axis>`: the index of this program instance along grid axis
    /// 0, 1 or 2, as an `i32` scalar. No operands.
    ProgramId {
        /// The grid axis.
        axis: u8 as GridAxis,
    } = "program_id $axis",
    /// `num_programs <axis>`: the grid extent along axis 0, 1 or 2, as `i32`.
    NumPrograms {
        /// The grid axis.
        axis: u8 as GridAxis,
    } = "num_programs $axis",
    /// `constant <value>`: a scalar constant. No operands.
    Constant {
        /// The value (its dtype is the result's).
        value: Scalar as ResultValue,
    } = "constant $value",
    /// `full <value>`: a tile whose every element is `value`. No operands.
    Full {
        /// The element value (its dtype is the result's).
        value: Scalar as ResultValue,
        /// The result's shape.
        shape: Shape as ResultShape,
    } = "full $value",
    /// `iota`: a tile holding each element's row-major linear index, of an
    /// integer or float dtype. No operands.
    Iota {
        /// The result's shape.
        shape: Shape as ResultShape,
        /// The result's dtype.
        dtype: DType as ResultDType,
    } = "iota",
    /// `<unary op> %x`: elementwise on one operand.
    Unary(op: UnaryOp as Word) = "$op %operand*",
    /// `<binary op> %a, %b`: elementwise on two operands of one type.
    Binary(op: BinaryOp as Word) = "$op %operand*",
    /// `cmp <pred> %a, %b`: elementwise comparison; the result is `bool` of the
    /// operands' shape.
    Cmp(pred: CmpPred as Word) = "cmp $pred %operand*",
    /// `select %cond, %a, %b`: `cond ? a : b` elementwise; `cond` is `bool` of
    /// the same shape as `a` and `b`.
    Select = "select %operand*",
    /// `fma %a, %b, %c`: `a * b + c` with one rounding, on floats.
    Fma = "fma %operand*",
    /// `cast %x to <dtype>`: elementwise conversion (see `docs/ir.md` for the
    /// rounding and saturation rules).
    Cast {
        /// The result's dtype.
        to: DType as DTypeName,
    } = "cast %operand to $to",
    /// `bitcast %x to <dtype>`: elementwise, the bits of each element read
    /// as `<dtype>`, which has the operand's width (neither is `bool`).
    Bitcast {
        /// The result's dtype.
        to: DType as DTypeName,
    } = "bitcast %operand to $to",
    /// `broadcast %x to <shape>`: numpy broadcasting of a scalar or tile to a
    /// tile of `shape` (the operand's axes align to the right; each is 1 or
    /// equal to the target's).
    Broadcast {
        /// The result's shape.
        shape: Shape as ShapeOf<Dimensions>,
    } = "broadcast %operand to $shape",
    /// `reshape %x to <shape>`: the same elements in row-major order, in a tile
    /// of another shape with as many elements.
    Reshape {
        /// The result's shape.
        shape: Shape as ShapeOf<Dimensions>,
    } = "reshape %operand to $shape",
    /// `permute %x [p0, p1, ...]`: result axis `i` is operand axis `perm[i]`.
    Permute {
        /// A permutation of the operand's axes.
        perm: Vec<usize> as Ints<Axes>,
    } = "permute %operand $perm",
    /// `expand %x to <shape>`: tinygrad's expand: the same rank, axes of extent
    /// 1 repeated to the target extent, other axes unchanged.
    Expand {
        /// The result's shape.
        shape: Shape as ShapeOf<Dimensions>,
    } = "expand %operand to $shape",
    /// `flip %x [axes]`: reverses the order of elements along each listed axis.
    Flip {
        /// The axes to reverse, each at most once.
        axes: Vec<usize> as Ints<Axes>,
    } = "flip %operand $axes",
    /// `slice %x [start:stop:step, ...]`: per axis the elements
    /// `start, start+step, ...` below `stop`.
    Slice {
        /// Per axis: the indices taken.
        ranges: Vec<SliceRange> as SliceRanges,
    } = "slice %operand $ranges",
    /// `pad %x low [..] high [..] value <c>`: the operand surrounded by `low[i]`
    /// elements before and `high[i]` after along axis `i`, all equal to `value`.
    Pad {
        /// Per axis: elements added before.
        low: Vec<usize> as Ints<Paddings>,
        /// Per axis: elements added after.
        high: Vec<usize> as Ints<Paddings>,
        /// The padding value (of the operand's dtype).
        value: Scalar as ResultValue,
    } = "pad %operand low $low high $high value $value",
    /// `cat %a, %b, ... axis <n>`: concatenation of two or more tiles along an
    /// axis; all other extents and the dtype agree.
    Cat {
        /// The axis joined along.
        axis: usize as Decimal,
    } = "cat %operand* axis $axis",
    /// `unpack_fp4 %x axis <n>`: the OCP MX FP4 (E2M1) values packed two
    /// to a byte in a `u8` tile, as `f4e2m1`: along `axis`, element `2i` of
    /// the result is the low four bits of byte `i` and element `2i + 1` the
    /// high four (PyTorch's `float4_e2m1fn_x2`, Triton's `e2m1` operands);
    /// the axis is twice as long, the other axes unchanged.
    UnpackFp4 {
        /// The axis the pairs lie along.
        axis: usize as Decimal,
    } = "unpack_fp4 %operand axis $axis",
    /// `pack_fp4 %x axis <n>`: the inverse of `unpack_fp4`: an `f4e2m1`
    /// tile of even extent along `axis` as `u8` bytes, elements `2i` and
    /// `2i + 1` in byte `i`'s low and high four bits.
    PackFp4 {
        /// The axis the pairs lie along.
        axis: usize as Decimal,
    } = "pack_fp4 %operand axis $axis",
    /// `reduce <kind> %x axis <n> [keepdim]`: a reduction along one axis.
    Reduce {
        /// The combining operation.
        kind: ReduceKind as Word,
        /// The reduced axis.
        axis: usize as Decimal,
        /// Whether the reduced axis stays as an axis of extent 1.
        keepdim: bool as KeepDim,
    } = "reduce $kind %operand axis $axis$keepdim",
    /// `arg <argmax|argmin> %x axis <n> [keepdim]`: the `i32` index of the first
    /// maximum (minimum) along an axis.
    ArgReduce {
        /// Maximum or minimum.
        kind: ArgKind as Word,
        /// The reduced axis.
        axis: usize as Decimal,
        /// Whether the reduced axis stays as an axis of extent 1.
        keepdim: bool as KeepDim,
    } = "arg $kind %operand axis $axis$keepdim",
    /// `scan <cumsum|cumprod> %x axis <n>`: inclusive prefix sums (products).
    Scan {
        /// The combining operation.
        kind: ScanKind as Word,
        /// The scanned axis.
        axis: usize as Decimal,
    } = "scan $kind %operand axis $axis",
    /// `reduce_with %x, ... axis <n> [keepdim] combine(%a, ..., %b, ...)`:
    /// the lanes of the tiles `x, ...` (of one shape, any dtypes) folded left
    /// to right by the op's region, a user's combine function. The region
    /// takes the accumulated values `a, ...` (one per operand) and the next
    /// elements `b, ...`, scalars of the operands' dtypes, and yields the new
    /// accumulated values; it holds only constants and elementwise ops.
    /// Results: one per operand, of the operand's dtype, the axis removed
    /// (kept with extent 1 under `keepdim`; a scalar for a rank-1 operand
    /// without it).
    ReduceWith {
        /// The reduced axis.
        axis: usize as Decimal,
        /// Whether the reduced axis stays as an axis of extent 1.
        keepdim: bool as KeepDim,
    } = "reduce_with %operand* axis $axis$keepdim",
    /// `scan_with %x, ... axis <n> combine(%a, ..., %b, ...)`: the inclusive
    /// scan of [`OpKind::ReduceWith`]: element `k` of each result is the
    /// fold of its lane's elements `0..=k`.
    ScanWith {
        /// The scanned axis.
        axis: usize as Decimal,
    } = "scan_with %operand* axis $axis",
    /// `dot <precision> %a, %b, %c`: `a · b + c` for `a: [M, K]`, `b: [K, N]`,
    /// `c: [M, N]`, summed as the [`DotPrecision`] allows.
    Dot {
        /// The contract of the sum.
        precision: DotPrecision as Word,
    } = "dot $precision %operand*",
    /// `dot_scaled %a, [%a_scale,] %b, [%b_scale,] %c`: `a' · b' + c` for
    /// block-scaled operands (OCP MX, NVFP4), each element times its
    /// group's scale and rounded to `bf16` (or `f16`), summed as a `tensor`
    /// `dot` in `f32`; an operand of an element format has its scales
    /// beside it, one of `bf16` or `f16` none (see [`crate::scaled`]).
    DotScaled = "dot_scaled %operand*",
    /// `dim %t axis <n>`: the runtime extent of a tensor along an axis, `i32`.
    Dim {
        /// The tensor axis.
        axis: usize as Decimal,
    } = "dim %tensor axis $axis",
    /// `get_tensor %ts[%i]`: element `i` of a tensor array, a tensor; `i`
    /// is an integer scalar, and outside `0..num_tensors` a fault.
    GetTensor = "get_tensor %tensors[%index]",
    /// `num_tensors %ts`: the number of tensors of a tensor array, `i32`.
    NumTensors = "num_tensors %tensors",
    /// `partition_view %t [shape]`: the tensor cut into tiles of `shape`.
    ///
    /// `partition_view %t [shape] offset(%o0, ..)`, optionally followed by
    /// `extent(%n0, ..)`: a window of the tensor cut into tiles, whose
    /// element `c` is the tensor's element `o + c` and whose extent along
    /// axis `k` is `min(dim_k − o_k, n_k)` (0 where `o_k ≥ dim_k`; `n_k`
    /// absent: unbounded). Offsets and extents are integer scalars, one per
    /// axis, at least 0. Operands: the tensor, then the offsets, then the
    /// extents.
    PartitionView {
        /// The shape of one partition (the tile loaded and stored).
        shape: Shape as ShapeOf<Dimensions>,
    } = "partition_view %tensor $shape[? offset(%offset*$shape)?][? extent(%extent*$shape)?]",
    /// `load %v[%i, ...]`: the partition at the given partition index; every
    /// element must lie in the tensor.
    Load = "load %view[%index*]",
    /// `load_masked %v[%i, ...] pad(<padding>)`: as `load`, with elements
    /// outside the tensor replaced by the padding.
    LoadMasked {
        /// The value of elements outside the tensor.
        padding: Padding as PadValue,
    } = "load_masked %view[%index*] pad($padding)",
    /// `store %x, %v[%i, ...]`: writes a tile to the partition at the index;
    /// every element must lie in the tensor.
    Store = "store %tile, %view[%index*]",
    /// `store_masked %x, %v[%i, ...]`: as `store`, skipping elements outside
    /// the tensor.
    StoreMasked = "store_masked %tile, %view[%index*]",
    /// `atomic <op> <order> <scope> %t[%i0, ...], [%cmp,] %value, %mask`:
    /// for each element `j` of the tiles, in no defined order between
    /// elements, programs and threads, where `mask[j]` holds: reads the
    /// tensor element at `(i0[j], ...)`, writes `op(old, value[j])` (for
    /// `cas`: `value[j]` if `old` equals `cmp[j]` bit for bit) as one
    /// indivisible step, and returns `old` at `j` (the dtype's zero where
    /// the mask is false). Operands: the tensor, one integer index tile per
    /// tensor axis, `cmp` for `cas` only, the value and the `bool` mask, all
    /// tiles of one shape. An element whose mask holds must lie in the
    /// tensor; elements may share an address.
    Atomic {
        /// The update.
        op: AtomicOp as Word,
        /// How the update orders the program's other memory accesses.
        order: MemOrder as Word,
        /// Which threads the ordering is promised to.
        scope: MemScope as Word,
    } = "atomic $op $order $scope %tensor[%index*@tensor], %operand*",
    /// `fence <order> <scope>`: the program's memory accesses before the
    /// fence and after it are ordered as `order` says (`acquire`,
    /// `release`, `acq_rel` or `seq_cst`) for the threads of `scope`; a
    /// later relaxed atomic update releases what a release fence ordered
    /// before it, and an acquire fence acquires what earlier relaxed
    /// atomic reads found released (`docs/semantics.md`, "The memory
    /// model"). No operands, no results.
    Fence {
        /// What the fence orders.
        order: MemOrder as Word,
        /// Which threads the ordering is promised to.
        scope: MemScope as Word,
    } = "fence $order $scope",
    /// `barrier`: every access of the program before it happens before
    /// every access after it, for all the program's threads (Triton's
    /// `debug_barrier`). No operands, no results.
    Barrier = "barrier",
    /// `gdc_wait`: waits until the grids this launch depends on (the
    /// kernels queued before it on its stream) have finished and their
    /// writes are visible; no access of the program moves above it. Only a
    /// launch with programmatic dependent launch (sm_90+) can start before
    /// those grids finish, so elsewhere it has nothing to wait for. No
    /// operands, no results.
    GridWait = "gdc_wait",
    /// `gdc_launch_dependents`: the program is done with what the next
    /// launch on its stream may overlap (on sm_90+, that launch may start
    /// once every program has passed this or finished; it still waits for
    /// this grid's writes at its own `gdc_wait`). A scheduling hint
    /// elsewhere. No operands, no results.
    GridLaunchDependents = "gdc_launch_dependents",
    /// `gather %t[%i0, ...], %mask, %other`: reads the tensor element at
    /// `(i0[j], ...)` for each element `j` of the tiles where `mask[j]`
    /// holds, and `other[j]` where it does not (no memory is touched
    /// there). Operands: the tensor, one integer index tile per tensor
    /// axis, the `bool` mask and `other` (a tile of the tensor's dtype), all
    /// of one shape; the result is a tile of that shape. With scalars for
    /// all of them, it reads one element and the result is a scalar. An
    /// element whose mask holds must lie in the tensor; elements may share
    /// an address.
    Gather = "gather %tensor[%index*@tensor], %operand*",
    /// `scatter %t[%i0, ...], %value, %mask`: writes `value[j]` to the
    /// tensor element at `(i0[j], ...)` for each element `j` of the tiles
    /// where `mask[j]` holds (no memory is touched where it does not).
    /// Operands: the tensor, one integer index tile per tensor axis, the
    /// value (a tile of the tensor's dtype) and the `bool` mask, all of one
    /// shape. An element whose mask holds must lie in the tensor. Two
    /// elements at one address race, as two programs' stores do (the
    /// interpreter keeps the later in row-major order). No results.
    Scatter = "scatter %tensor[%index*@tensor], %operand*",
    /// `assert <id> "<message>" %cond, %a, ...`: a check the kernel's author
    /// wrote (`device_assert!`). The program fails where any element of
    /// `cond` (a `bool` scalar or tile) is false, with `message`, whose `{}`
    /// placeholders take the values of the scalar operands `a, ...` in
    /// order ([`crate::assertion::format`]; at most
    /// [`crate::assertion::MAX_VALUES`]). `id` names the assertion in what
    /// compiled code reports: every `assert` of one id in a function has
    /// the same message and operand dtypes. No results.
    Assert {
        /// The assertion's number in its function.
        id: u32 as Decimal,
        /// The message, with a `{}` per value operand.
        message: String as Quoted,
    } = "assert $id $message %operand*",
    /// `multiple_of <id> <divisor> %x`: `x`, an integer scalar, promised to
    /// be a multiple of `divisor` (at least 1; `multiple_of(x, n)` in
    /// kernels, Triton's `tl.multiple_of`). The result is `x`; later stages
    /// may take it to be divisible by `divisor` (a window starting at it
    /// along rows starts whole vectors). Where it is not, the program fails
    /// as assertion `id`, whose message
    /// ([`crate::assertion::multiple_of_message`]) formats `x`.
    MultipleOf {
        /// The assertion's number in its function.
        id: u32 as Decimal,
        /// What `x` is a multiple of.
        divisor: u32 as Decimal,
    } = "multiple_of $id $divisor %operand",
    /// `print <id> "<message>" %a, ...`: a line the kernel's author asked
    /// for (`device_print!`): `message` with its `{}` placeholders filled by
    /// the operands in order (at most [`crate::device_print::MAX_VALUES`]), once
    /// per program for scalars, once per element when some operands are
    /// tiles (all of one shape; scalars repeat). `id` names the print in
    /// what compiled code records: every `print` of one id in a function has
    /// the same message and operand types. No results.
    Print {
        /// The print's number in its function.
        id: u32 as Decimal,
        /// The message, with a `{}` per operand.
        message: String as Quoted,
    } = "print $id $message %operand*",
    /// `for %iv = %lo to %hi step %step iter(%a = %init, ...)`: a counted loop.
    /// Operands: lower bound, upper bound, step (one integer dtype, step > 0),
    /// then the initial values of the loop-carried values. One region whose
    /// arguments are the induction variable and the carried values; it ends
    /// with `yield` of the next carried values. Results: the final carried
    /// values.
    ///
    /// `for … stages(n)`: the loop's software pipeline on GPU targets with
    /// asynchronous copies keeps `n` iterations' tensor-core operands in
    /// flight (1 to 8; 1 pipelines nothing), whatever the kernel's
    /// `num_stages`; a hint the results do not depend on.
    For {
        /// The loop's own number of pipeline stages, if it has one.
        stages: Option<u32> as Stages,
    } = "for",
    /// `while iter(%a = %init, ...) { cond } do(%b, ...) { body }`: a loop
    /// that runs while a block-uniform condition holds. Operands: the
    /// initial values of the loop-carried values. Two regions, both taking
    /// the carried values as arguments: the condition region ends with
    /// `yield` of a `bool` scalar, the body with `yield` of the next carried
    /// values. The condition is computed before every iteration, and once
    /// more at the end; the results are the carried values it last saw
    /// false.
    While = "while",
    /// `if %cond`: operand a `bool` scalar; two regions (then, else), each
    /// ending with `yield` of the results.
    If = "if",
    /// `yield %a, ...`: ends a region of `for`, `while` or `if`, giving its
    /// values.
    Yield = "yield %operand*",
    /// A layout-view op (`layout_view`, `lview_*`): see [`LViewOp`].
    LView(op: LViewOp as Nested) = "$op",
}
}

// `attributes` defines `text_names!`, which the other attribute modules use.
#[macro_use]
mod attributes;
mod atomic;
mod elementwise;
mod route;
pub(crate) mod table;
pub use atomic::{AtomicOp, MemOrder, MemScope};
pub use attributes::{
    ArgKind, CmpPred, DotPrecision, Padding, ReduceKind, ScanKind, SliceRange, TextName,
};
pub use elementwise::{BinaryOp, UnaryOp};
pub use route::Route;

/// The family of an op: which part of every stage handles it. The
/// interpreter, the GPU lowering and the host back end dispatch on its
/// [`Route`], each to a file of its own per family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpFamily {
    /// `program_id`, `num_programs`: the program instance and the grid.
    Grid,
    /// `constant`: a scalar known when compiling.
    Constant,
    /// `full`, `iota` and the elementwise ops (`unary`, `binary`, `cmp`,
    /// `select`, `fma`, `cast`): a value computed element by element.
    Elementwise,
    /// `broadcast`, `reshape`, `permute`, `expand`, `flip`, `slice`, `pad`,
    /// `cat`: elements moved, not computed.
    Movement,
    /// `reduce`, `arg`, `scan`: folds along an axis.
    Reduction,
    /// `dot`: a matrix product.
    Dot,
    /// `dim`, `get_tensor`, `num_tensors`, `partition_view`, `load`,
    /// `load_masked`, `store`, `store_masked`, `atomic`: tensors, tensor
    /// arrays and partition views.
    Memory,
    /// `for`, `while`, `if`, `yield`: structured control flow.
    Control,
    /// `assert`, `print`: checks and lines the kernel's author wrote.
    Debug,
    /// `fence`, `barrier`: ordering between the program's memory accesses.
    Sync,
    /// The layout-view ops (`tile_ir::lview`).
    LayoutView,
}

impl OpKind {
    /// Whether the op writes memory, checks or prints something, or ends a
    /// region, so that it must stay even when its results are unused.
    pub fn has_side_effects(&self) -> bool {
        matches!(
            self,
            OpKind::Yield | OpKind::For { .. } | OpKind::While | OpKind::If
        ) || self.is_observable()
            || self.orders_memory()
    }

    /// Whether the op orders memory accesses across it (`fence`,
    /// `barrier`, the grid dependency ops): no access may move over it.
    pub fn orders_memory(&self) -> bool {
        matches!(
            self,
            OpKind::Fence { .. }
                | OpKind::Barrier
                | OpKind::GridWait
                | OpKind::GridLaunchDependents
        )
    }

    /// Whether running the op can be seen from outside the kernel: it
    /// writes memory, checks something or prints. A loop or `if` whose
    /// regions hold such an op must stay.
    pub fn is_observable(&self) -> bool {
        matches!(
            self,
            OpKind::Assert { .. } | OpKind::MultipleOf { .. } | OpKind::Print { .. }
        ) || self.writes_memory()
    }

    /// Whether the op itself writes memory (a store of either kind, a
    /// scatter, an atomic).
    pub fn writes_memory(&self) -> bool {
        match self {
            OpKind::Store | OpKind::StoreMasked | OpKind::Atomic { .. } | OpKind::Scatter => true,
            OpKind::LView(op) => op.writes_memory(),
            _ => false,
        }
    }

    /// Whether the op reads memory (so two of them are not interchangeable
    /// across a store).
    pub fn reads_memory(&self) -> bool {
        match self {
            OpKind::Load | OpKind::LoadMasked { .. } | OpKind::Atomic { .. } | OpKind::Gather => {
                true
            }
            OpKind::LView(op) => op.reads_memory(),
            _ => false,
        }
    }
}
