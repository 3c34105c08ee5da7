//! What can go wrong while compiled host code runs, and how a status record
//! becomes an error.

use tile_abi::{FaultCode, HostCheck, Status};
use tile_ir::assertion::Assertion;
use tile_ir::Function;

/// What failed in a program instance: the faults of the interpreter's
/// `Fault` that compiled code checks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HostFault {
    /// A partition index outside the view's index space (masked or not).
    #[error("partition index {index:?} is outside the view's index space")]
    IndexSpace {
        /// The partition index (its first four axes).
        index: Vec<i64>,
    },
    /// An unmasked access to a partition partially outside the tensor.
    #[error("partition {index:?} is partially outside the tensor (use the masked form)")]
    PartialPartition {
        /// The partition index (its first four axes).
        index: Vec<i64>,
    },
    /// An unmasked layout-view access that reaches outside the tensor's
    /// element space.
    #[error("the layout view at base {base} reaches outside the tensor's element space (use the masked form)")]
    LViewOutside {
        /// The view's base offset.
        base: i64,
    },
    /// An unmasked access to a layout view that is an edge tile not whole.
    #[error("the layout view is an edge tile of {extent} element(s) along mode {mode}, not the whole tile an unmasked access needs (use the masked form)")]
    LViewPastEdge {
        /// The first mode the tile is short along.
        mode: i64,
        /// The view's extent along it.
        extent: i64,
    },
    /// An element of an atomic or a gather whose mask holds at an index
    /// outside the tensor.
    #[error("index {index:?} is outside the tensor (mask it off)")]
    IndexOutside {
        /// The tensor index (its first four axes).
        index: Vec<i64>,
    },
    /// A partition view's window at a negative offset or of a negative
    /// extent.
    #[error("a partition view's window at a negative offset or of a negative extent (its offsets, then extents, first four: {values:?}): each must be at least 0")]
    ViewWindow {
        /// The window's offsets, then its extents (the first four).
        values: Vec<i64>,
    },
    /// A `get_tensor` index outside its tensor array.
    #[error("tensor index {index} is outside the tensor array of {count} tensors")]
    TensorIndex {
        /// The index.
        index: i64,
        /// The number of tensors.
        count: i64,
    },
    /// A `device_assert!` whose condition is false.
    #[error("assertion failed: {message}")]
    Assert {
        /// The assertion's message with its values.
        message: String,
    },
    /// A `for` whose step is not positive.
    #[error("the step {step} of a loop is not positive")]
    NonPositiveStep {
        /// The step.
        step: i64,
    },
    /// A `for` that would run more iterations than the interpreter's limit.
    #[error("the loop would run {iterations} iterations, more than the limit of {limit}")]
    IterationLimit {
        /// The iterations the loop would run.
        iterations: i64,
        /// The limit (`tile_ir::interp::Options::max_loop_iterations`).
        limit: u64,
    },
}

/// Why compiled host code did not run to the end.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// An argument does not fit its parameter: count, dtype, rank, or an
    /// extent beyond `i32`.
    #[error("argument {index} (`{param}`): expected {expected}, found {found}")]
    Argument {
        /// The argument's position.
        index: usize,
        /// The parameter's name (empty for a missing or extra argument).
        param: String,
        /// What the parameter takes.
        expected: String,
        /// What was passed.
        found: String,
    },
    /// A tensor argument whose strides may send two elements to one address
    /// (the interpreter reports such an access; compiled code refuses the
    /// tensor).
    #[error("argument {index} (`{param}`): extents {extents:?} with strides {strides:?} may alias; compiled host code needs tensors whose elements have distinct addresses")]
    Aliasing {
        /// The argument's position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The tensor's extents.
        extents: Vec<usize>,
        /// The tensor's strides, in elements.
        strides: Vec<isize>,
    },
    /// A grid axis beyond the `i32` range of `program_id`.
    #[error("the grid {grid:?} has an axis above {}", i32::MAX)]
    Grid {
        /// The grid.
        grid: [u32; 3],
    },
    /// An op failed in a program instance (the first in the interpreter's
    /// order that failed).
    #[error("program ({}, {}, {}): {op}: {fault}", program[0], program[1], program[2])]
    Op {
        /// The program instance.
        program: [u32; 3],
        /// The op, as `tile_ir::ValueNames::describe_site` writes it: where
        /// it is in the kernel's source, the tensors it touches, its text.
        op: String,
        /// What failed.
        fault: HostFault,
    },
    /// The compiled code returned a status it cannot return, or its image
    /// does not match its kernel (a back-end bug).
    #[error("internal error in compiled host code: {0}")]
    Internal(String),
}

/// The error of `program` that returned `status`, given the kernel's
/// function and checks.
pub(super) fn failure(
    program: [u32; 3],
    status: Status,
    func: &Function,
    checks: &[HostCheck],
) -> RunError {
    let Some(site) = checks.get(status.check as usize) else {
        return RunError::Internal(format!(
            "status {status:?} names no check (the kernel has {})",
            checks.len()
        ));
    };
    let values = &status.index;
    let index = values[..usize::from(site.values.min(4))].to_vec();
    let fault = match FaultCode::from_u32(status.code) {
        Some(FaultCode::IndexSpace) => HostFault::IndexSpace { index },
        Some(FaultCode::PartialPartition) => HostFault::PartialPartition { index },
        Some(FaultCode::NonPositiveStep) => HostFault::NonPositiveStep { step: values[0] },
        Some(FaultCode::IterationLimit) => HostFault::IterationLimit {
            iterations: values[0],
            limit: FaultCode::iteration_limit(),
        },
        Some(FaultCode::LViewOutside) => HostFault::LViewOutside { base: values[0] },
        Some(FaultCode::LViewPastEdge) => HostFault::LViewPastEdge {
            mode: values[0],
            extent: values[1],
        },
        Some(FaultCode::IndexOutside) => HostFault::IndexOutside { index },
        Some(FaultCode::ViewWindow) => HostFault::ViewWindow { values: index },
        Some(FaultCode::TensorIndex) => HostFault::TensorIndex {
            index: values[0],
            count: values[1],
        },
        Some(FaultCode::Assert) => {
            let Some(assertion) = u32::try_from(values[0])
                .ok()
                .and_then(|id| Assertion::find(func, id))
            else {
                return RunError::Internal(format!("assertion {} is not in the kernel", values[0]));
            };
            HostFault::Assert {
                message: assertion.report(&values[1..]),
            }
        }
        // Host code has no per-thread checks.
        Some(FaultCode::OutsideTensor) | None => {
            return RunError::Internal(format!("status code {}", status.code))
        }
    };
    RunError::Op {
        program,
        op: site.op.to_string(),
        fault,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn check(op: &'static str, values: u8) -> HostCheck {
        HostCheck {
            op: Cow::Borrowed(op),
            values,
        }
    }

    /// A kernel with one assertion, number 4.
    fn func() -> Function {
        tile_ir::text::parse_function(
            r#"kernel @k(%x: f32) {
  %c = full false : tile<2xbool>
  %i = program_id 0 : i32
  assert 4 "x = {}, i = {}" %c, %x, %i
}"#,
        )
        .unwrap()
    }

    #[test]
    fn an_assertion_is_reported_with_its_message_and_values() {
        let checks = [check(
            "`device_assert!(..)` at src/k.rs:3:5 (`assert ...`)",
            3,
        )];
        let status = Status {
            code: FaultCode::Assert as u32,
            check: 0,
            index: [4, i64::from((-1.5f32).to_bits()), -2, 0],
            ..Status::default()
        };
        assert_eq!(
            failure([5, 0, 0], status, &func(), &checks).to_string(),
            "program (5, 0, 0): `device_assert!(..)` at src/k.rs:3:5 (`assert ...`): assertion failed: x = -1.5, i = -2"
        );
        let status = Status {
            index: [3, 0, 0, 0],
            ..status
        };
        assert!(matches!(
            failure([0; 3], status, &func(), &checks),
            RunError::Internal(m) if m == "assertion 3 is not in the kernel"
        ));
    }

    #[test]
    fn a_status_record_names_its_check_and_values() {
        let checks = [
            check("`%2 = load %0, %1` (a view of `x`)", 1),
            check(
                "`y.store(..)` at src/k.rs:4:9 (`store %3, %4, %5`, a view of `y`)",
                2,
            ),
        ];
        let status = Status {
            code: FaultCode::PartialPartition as u32,
            check: 1,
            index: [3, 4, 99, 99],
            ..Status::default()
        };
        let err = failure([2, 0, 1], status, &func(), &checks);
        assert_eq!(
            err.to_string(),
            "program (2, 0, 1): `y.store(..)` at src/k.rs:4:9 (`store %3, %4, %5`, a view of `y`): partition [3, 4] is partially outside the tensor (use the masked form)"
        );
        let status = Status {
            code: FaultCode::IterationLimit as u32,
            check: 0,
            index: [1 << 30, 0, 0, 0],
            ..Status::default()
        };
        assert_eq!(
            failure([0, 0, 0], status, &func(), &checks).to_string(),
            format!(
                "program (0, 0, 0): `%2 = load %0, %1` (a view of `x`): the loop would run 1073741824 iterations, more than the limit of {}",
                FaultCode::iteration_limit()
            )
        );
    }

    #[test]
    fn a_status_record_that_cannot_happen_is_an_internal_error() {
        let checks = [check("%2 = load %0, %1", 1)];
        let status = Status {
            code: 99,
            check: 0,
            ..Status::default()
        };
        assert!(
            matches!(failure([0; 3], status, &func(), &checks), RunError::Internal(m) if m == "status code 99")
        );
        let status = Status {
            code: 1,
            check: 7,
            ..Status::default()
        };
        assert!(
            matches!(failure([0; 3], status, &func(), &checks), RunError::Internal(m) if m.contains("names no check"))
        );
    }
}
