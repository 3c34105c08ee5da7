//! The interpreter's errors: a bad launch, or an op that broke a rule.

use crate::eval::EvalError;

/// Why an interpreter run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    /// The launch passed the wrong number of arguments.
    #[error("kernel `{kernel}` takes {expected} argument(s), found {found}")]
    ArgCount {
        /// The kernel's name.
        kernel: String,
        /// The number of parameters.
        expected: usize,
        /// The number of arguments.
        found: usize,
    },
    /// An argument does not match its parameter.
    #[error("argument {index} (`{param}`): expected {expected}, found {found}")]
    Arg {
        /// The argument's position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// What the parameter requires.
        expected: String,
        /// What was passed.
        found: String,
    },
    /// A grid extent does not fit the `i32` that `program_id` returns.
    #[error("grid {grid:?}: every extent must be at most {}", i32::MAX)]
    Grid {
        /// The requested grid.
        grid: [u32; 3],
    },
    /// A region names an op that is not in the function's arena (the
    /// function did not pass the verifier).
    #[error("malformed IR: a region names op #{op}, which is not in the function")]
    DanglingOp {
        /// The arena index of the missing op.
        op: usize,
    },
    /// An op of one program instance broke a rule.
    #[error("program ({}, {}, {}): {op}: {fault}", program[0], program[1], program[2])]
    Op {
        /// The program instance `(x, y, z)`.
        program: [u32; 3],
        /// The op, as [`crate::ValueNames::describe_site`] writes it: its
        /// source location and tensor parameters, and the op text.
        op: String,
        /// The broken rule (boxed: it carries the offending values).
        fault: Box<Fault>,
    },
}

/// The rule an op broke, with the offending values.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Fault {
    /// A partition view's window at a negative offset or of a negative
    /// extent.
    #[error("a partition view's window at offsets {offsets:?}{}: offsets and extents must be at least 0", extents.as_ref().map_or(String::new(), |e| format!(" with extents {e:?}")))]
    ViewWindow {
        /// The offsets, per axis.
        offsets: Vec<i128>,
        /// The extents, per axis, when given.
        extents: Option<Vec<i128>>,
    },
    /// `get_tensor` at an index outside the tensor array.
    #[error("tensor index {index} is outside the tensor array of {count} tensors")]
    TensorIndex {
        /// The index.
        index: i128,
        /// The number of tensors in the array.
        count: usize,
    },
    /// A partition index outside the view's index space: the reference
    /// requires `0 <= i_k` and `i_k * tile_k < extent_k` on every axis.
    #[error("partition index {index:?} is outside the index space of the view (tile {tile:?} over extents {extents:?}: needs 0 <= i_k and i_k * tile_k < extent_k)")]
    IndexSpace {
        /// The partition index.
        index: Vec<i128>,
        /// The partition (tile) shape.
        tile: Vec<usize>,
        /// The tensor's extents.
        extents: Vec<usize>,
    },
    /// An unmasked access to a partition that is partially out of bounds.
    #[error("partition {index:?} (tile {tile:?}) is partially outside the tensor of extents {extents:?}: element {element:?} is out of bounds (use the masked form)")]
    PartialPartition {
        /// The partition index.
        index: Vec<i128>,
        /// The partition (tile) shape.
        tile: Vec<usize>,
        /// The tensor's extents.
        extents: Vec<usize>,
        /// The tensor coordinate of the first offending element, row-major.
        element: Vec<usize>,
    },
    /// Two elements of one access share an address (the reference leaves a
    /// non-injective tensor span undefined).
    #[error("elements {first:?} and {second:?} of the tensor share one address: the tensor's strides are not injective")]
    Aliasing {
        /// The tensor coordinate of the first element.
        first: Vec<usize>,
        /// The tensor coordinate of the second element.
        second: Vec<usize>,
    },
    /// An unmasked layout-view access outside the tensor's element space.
    #[error("element {coordinate:?} of the layout view {layout} (base {base}) is at offset {offset}, outside the tensor's element space [0, {space}) (use the masked form)")]
    LViewOutside {
        /// The tile coordinate of the first offending element.
        coordinate: Vec<usize>,
        /// The view's layout.
        layout: String,
        /// The view's base offset.
        base: i128,
        /// The element offset it maps to.
        offset: i128,
        /// The size of the tensor's element space.
        space: i128,
    },
    /// An unmasked access to an element of a masked layout view (an edge
    /// tile) past its extent along a mode.
    #[error("element {coordinate:?} of the layout view {layout} is past the edge tile's extent {extent} along mode {mode} (use the masked form)")]
    LViewPastEdge {
        /// The tile coordinate of the first such element.
        coordinate: Vec<usize>,
        /// The view's layout.
        layout: String,
        /// The mode it is past the extent of.
        mode: usize,
        /// The view's extent along that mode.
        extent: i128,
    },
    /// A layout-view store whose layout sends two elements to one offset.
    #[error("elements {first:?} and {second:?} of the layout view {layout} are both at offset {offset}: a store needs an injective layout")]
    LViewAliasing {
        /// The tile coordinate of the first element.
        first: Vec<usize>,
        /// The tile coordinate of the second element.
        second: Vec<usize>,
        /// The view's layout.
        layout: String,
        /// The shared element offset.
        offset: i128,
    },
    /// An element of an atomic or a gather whose mask holds but whose index
    /// lies outside the tensor.
    #[error("element {element:?} reaches index {index:?}, outside the tensor of extents {extents:?} (mask it off)")]
    IndexOutside {
        /// The element's coordinate in the operand tiles.
        element: Vec<usize>,
        /// Its tensor index.
        index: Vec<i128>,
        /// The tensor's extents.
        extents: Vec<usize>,
    },
    /// An `assert` whose condition is false somewhere.
    #[error("assertion failed{}: {message}", element.as_ref().map(|e| format!(" at element {e:?}")).unwrap_or_default())]
    Assert {
        /// The assertion's number in its function.
        id: u32,
        /// The message with its values.
        message: String,
        /// The first false element of a tile condition (row-major).
        element: Option<Vec<usize>>,
    },
    /// A `for` whose step is zero or negative.
    #[error("the step must be positive, found {step}")]
    NonPositiveStep {
        /// The step.
        step: i128,
    },
    /// A `for` or `while` that ran more iterations than the configured
    /// limit.
    #[error("the loop ran more than {limit} iterations (see Options::max_loop_iterations)")]
    IterationLimit {
        /// The limit.
        limit: u64,
    },
    /// An elementwise op applied to ill-typed operands.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// Operands or results of the wrong kind, shape or dtype: the function
    /// did not pass the verifier.
    #[error("malformed IR: {0}")]
    Type(String),
}
