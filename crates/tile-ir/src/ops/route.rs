//! Where each stage handles an op: [`Route`], written once for every stage
//! that runs or compiles ops one by one (the interpreter, the lowering to
//! thread-level programs, the host back end).

use super::{DotPrecision, MemOrder, MemScope, OpFamily, OpKind};
use crate::lview::LViewOp;
use crate::scalar::Scalar;

/// The handler an op goes to in a stage: its [`OpFamily`], split where
/// stages handle one op of the family by itself (the grid's two ids,
/// the combining reductions, each control-flow op, each sync op). Stages
/// match on it exhaustively, so a new op is routed here once and a stage
/// without a handler for it does not compile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Route<'a> {
    /// `program_id`.
    ProgramId {
        /// The grid axis.
        axis: u8,
    },
    /// `num_programs`.
    NumPrograms {
        /// The grid axis.
        axis: u8,
    },
    /// `constant`.
    Constant(&'a Scalar),
    /// `full`, `iota` and the elementwise ops ([`OpFamily::Elementwise`]).
    Elementwise,
    /// The movement ops ([`OpFamily::Movement`]).
    Movement,
    /// `reduce`, `arg` and `scan`: folds by a built-in operation.
    Reduce,
    /// `reduce_with` and `scan_with`: folds by a region.
    Combine,
    /// `dot`.
    Dot(DotPrecision),
    /// `dot_scaled`.
    DotScaled,
    /// `unpack_fp4` and `pack_fp4`: the interpreter runs them; the
    /// lowerings take them expanded (`passes::expand_fp4_pairs`).
    Fp4Pairs,
    /// The tensor ops ([`OpFamily::Memory`]).
    Memory,
    /// `for`.
    For,
    /// `while`.
    While,
    /// `if`.
    If,
    /// `yield`, which ends a region.
    Yield,
    /// A layout-view op.
    LayoutView(&'a LViewOp),
    /// `assert` number `id`.
    Assert {
        /// The assertion's number in the kernel.
        id: u32,
        /// Its message.
        message: &'a str,
    },
    /// `multiple_of`, checked as assertion number `id`.
    MultipleOf {
        /// The assertion's number in the kernel.
        id: u32,
        /// What the operand is a multiple of.
        divisor: u32,
    },
    /// `print` number `id`.
    Print {
        /// The print's number in the kernel.
        id: u32,
        /// Its message.
        message: &'a str,
    },
    /// `barrier`.
    Barrier,
    /// `fence`.
    Fence {
        /// Its order.
        order: MemOrder,
        /// Its scope.
        scope: MemScope,
    },
    /// `grid_wait`.
    GridWait,
    /// `grid_launch_dependents`.
    GridLaunchDependents,
}

impl OpKind {
    /// Where each stage handles the op.
    pub fn route(&self) -> Route<'_> {
        match self {
            OpKind::ProgramId { axis } => Route::ProgramId { axis: *axis },
            OpKind::NumPrograms { axis } => Route::NumPrograms { axis: *axis },
            OpKind::Constant { value } => Route::Constant(value),
            OpKind::Full { .. }
            | OpKind::Iota { .. }
            | OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Cmp(_)
            | OpKind::Select
            | OpKind::Fma
            | OpKind::Cast { .. }
            | OpKind::Bitcast { .. } => Route::Elementwise,
            OpKind::Broadcast { .. }
            | OpKind::Reshape { .. }
            | OpKind::Permute { .. }
            | OpKind::Expand { .. }
            | OpKind::Flip { .. }
            | OpKind::Slice { .. }
            | OpKind::Pad { .. }
            | OpKind::Cat { .. } => Route::Movement,
            OpKind::UnpackFp4 { .. } | OpKind::PackFp4 { .. } => Route::Fp4Pairs,
            OpKind::Reduce { .. } | OpKind::ArgReduce { .. } | OpKind::Scan { .. } => Route::Reduce,
            OpKind::ReduceWith { .. } | OpKind::ScanWith { .. } => Route::Combine,
            OpKind::Dot { precision } => Route::Dot(*precision),
            OpKind::DotScaled => Route::DotScaled,
            OpKind::Dim { .. }
            | OpKind::GetTensor
            | OpKind::NumTensors
            | OpKind::PartitionView { .. }
            | OpKind::Load
            | OpKind::LoadMasked { .. }
            | OpKind::Store
            | OpKind::StoreMasked
            | OpKind::Atomic { .. }
            | OpKind::Gather
            | OpKind::Scatter => Route::Memory,
            OpKind::For { .. } => Route::For,
            OpKind::While => Route::While,
            OpKind::If => Route::If,
            OpKind::Yield => Route::Yield,
            OpKind::Assert { id, message } => Route::Assert { id: *id, message },
            OpKind::MultipleOf { id, divisor } => Route::MultipleOf {
                id: *id,
                divisor: *divisor,
            },
            OpKind::Print { id, message } => Route::Print { id: *id, message },
            OpKind::Barrier => Route::Barrier,
            OpKind::Fence { order, scope } => Route::Fence {
                order: *order,
                scope: *scope,
            },
            OpKind::GridWait => Route::GridWait,
            OpKind::GridLaunchDependents => Route::GridLaunchDependents,
            OpKind::LView(op) => Route::LayoutView(op),
        }
    }

    /// The op's family.
    pub fn family(&self) -> OpFamily {
        self.route().family()
    }
}

impl Route<'_> {
    /// The family of the ops routed here.
    pub fn family(&self) -> OpFamily {
        match self {
            Route::ProgramId { .. } | Route::NumPrograms { .. } => OpFamily::Grid,
            Route::Constant(_) => OpFamily::Constant,
            Route::Elementwise => OpFamily::Elementwise,
            Route::Movement | Route::Fp4Pairs => OpFamily::Movement,
            Route::Reduce | Route::Combine => OpFamily::Reduction,
            Route::Dot(_) | Route::DotScaled => OpFamily::Dot,
            Route::Memory => OpFamily::Memory,
            Route::For | Route::While | Route::If | Route::Yield => OpFamily::Control,
            Route::LayoutView(_) => OpFamily::LayoutView,
            Route::Assert { .. } | Route::MultipleOf { .. } | Route::Print { .. } => {
                OpFamily::Debug
            }
            Route::Barrier
            | Route::Fence { .. }
            | Route::GridWait
            | Route::GridLaunchDependents => OpFamily::Sync,
        }
    }
}
