//! The reference interpreter: the meaning of a kernel, and the oracle every
//! other execution path is compared against bit for bit.
//!
//! [`run`] executes every program instance of a grid sequentially (x
//! fastest, then y, then z) over host tensors. Elementwise semantics come from
//! [`crate::eval`]; the orders of accumulation of reductions, scans and `dot`,
//! and the bounds rules of loads and stores, are specified in
//! `docs/semantics.md` and implemented in this module's files. The
//! interpreter never panics: where the reference says "undefined behavior"
//! (an index outside a view's index space, an unmasked access to a partially
//! out-of-bounds partition, aliasing strides) it returns an [`InterpError`]
//! naming the program instance, the op and the offending values, and it
//! reports IR that did not pass the verifier as [`Fault::Type`].

mod args;
mod assert;
mod atomic;
mod buffer;
mod combine;
mod control;
mod device_print;
mod dot;
mod elementwise;
mod error;
mod fp4_pairs;
mod lview;
mod memory;
mod movement;
mod reduce;
pub mod tensor;
mod value;

pub use buffer::HostBuffer;
pub use error::{Fault, InterpError};
pub use tensor::{Element, HostTensor, TensorError};
pub(crate) use value::Tile;

use crate::function::{Function, Op, OpId, Region, Value};
use crate::names::ValueNames;
use crate::ops::{OpKind, Route};
use crate::scalar::Scalar;
use value::{RtValue, TensorRef};

/// A kernel argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// The value of a scalar parameter.
    Scalar(Scalar),
    /// The tensor of a tensor parameter; stores write into it.
    Tensor(HostTensor),
    /// The tensors of a tensor-array parameter, in index order; stores
    /// write into them.
    Tensors(Vec<HostTensor>),
}

/// Limits of an interpreter run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The most iterations one execution of a `for` may run before the run
    /// fails with [`Fault::IterationLimit`] (instead of hanging).
    pub max_loop_iterations: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_loop_iterations: 1 << 24,
        }
    }
}

/// Checks `args` against `func`'s parameters and `grid` against the `i32`
/// range of `program_id`, as [`run`] does before running anything: other
/// execution paths share these launch rules and their errors.
pub fn check_launch(func: &Function, grid: [u32; 3], args: &[Arg]) -> Result<(), InterpError> {
    args::check(func, args)?;
    if grid.iter().any(|&g| i32::try_from(g).is_err()) {
        return Err(InterpError::Grid { grid });
    }
    Ok(())
}

/// Runs `func` over `grid` with the default [`Options`].
pub fn run(func: &Function, grid: [u32; 3], args: &mut [Arg]) -> Result<(), InterpError> {
    run_with(func, grid, args, &Options::default())
}

/// Runs every program instance of `grid` in order (x fastest, then y, then
/// z) over `args`, which are first checked against the parameters.
pub fn run_with(
    func: &Function,
    grid: [u32; 3],
    args: &mut [Arg],
    options: &Options,
) -> Result<(), InterpError> {
    run_printing(func, grid, args, options, &mut |line| println!("{line}"))
}

/// [`run_with`], handing the lines of the kernel's `print` ops to `print`
/// (in the order the programs run them) instead of standard output.
pub fn run_printing(
    func: &Function,
    grid: [u32; 3],
    args: &mut [Arg],
    options: &Options,
    print: &mut dyn FnMut(crate::device_print::Printed),
) -> Result<(), InterpError> {
    check_launch(func, grid, args)?;
    check_handles(func, &func.body)?;
    let names = ValueNames::new(func);
    let mut machine = Interpreter {
        func,
        names: &names,
        args,
        options,
        grid,
        program: [0; 3],
        env: Vec::new(),
        print,
    };
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                machine.program = [x, y, z];
                machine.env = (0..func.values.len()).map(|_| None).collect();
                for (param, arg) in func.params.iter().zip(0..) {
                    let value = match &machine.args[arg] {
                        Arg::Scalar(s) => RtValue::Scalar(*s),
                        Arg::Tensor(_) => RtValue::Tensor(TensorRef { arg, element: None }),
                        Arg::Tensors(_) => RtValue::Tensors(arg),
                    };
                    machine.define(param.value, value);
                }
                machine.run_region(&func.body)?;
            }
        }
    }
    Ok(())
}

/// Checks that every op named by `region` and its nested regions exists, so
/// that naming values (which walks the regions) cannot fail.
fn check_handles(func: &Function, region: &Region) -> Result<(), InterpError> {
    for &id in &region.ops {
        let op = func
            .ops
            .get(id)
            .ok_or(InterpError::DanglingOp { op: id.index() })?;
        for nested in &op.regions {
            check_handles(func, nested)?;
        }
    }
    Ok(())
}

/// The state of one run: the function, the arguments, and the values of the
/// current program instance.
struct Interpreter<'a> {
    func: &'a Function,
    names: &'a ValueNames,
    args: &'a mut [Arg],
    options: &'a Options,
    grid: [u32; 3],
    program: [u32; 3],
    /// The value of each SSA value (by arena index) defined so far.
    env: Vec<Option<RtValue>>,
    /// Where the lines of `print` ops go.
    print: &'a mut dyn FnMut(crate::device_print::Printed),
}

impl<'a> Interpreter<'a> {
    /// Runs the ops of `region` in order; returns the operands of the `yield`
    /// that ends it, or `None` when it has none (the body).
    fn run_region(&mut self, region: &'a Region) -> Result<Option<Vec<RtValue>>, InterpError> {
        for &id in &region.ops {
            if let Some(yielded) = self.run_op(id)? {
                return Ok(Some(yielded));
            }
        }
        Ok(None)
    }

    /// Runs one op; returns `Some` of the yielded values for a `yield`.
    fn run_op(&mut self, id: OpId) -> Result<Option<Vec<RtValue>>, InterpError> {
        let Some(op) = self.func.ops.get(id) else {
            return Err(InterpError::DanglingOp { op: id.index() });
        };
        let operands = self.operands(op).map_err(|f| self.error(id, f))?;
        let results = match op.kind.route() {
            Route::Yield => return Ok(Some(operands)),
            Route::For => self.run_for(id, op, &operands)?,
            Route::While => self.run_while(id, op, &operands)?,
            Route::Combine => self.run_combine(id, op, &operands)?,
            Route::If => self.run_if(id, op, &operands)?,
            _ => self
                .compute(&op.kind, &operands)
                .map_err(|f| self.error(id, f))?,
        };
        self.bind(op, results).map_err(|f| self.error(id, f))?;
        Ok(None)
    }

    /// The value of every non-region op, by its family.
    fn compute(&mut self, kind: &OpKind, operands: &[RtValue]) -> Result<Vec<RtValue>, Fault> {
        let one = match kind.route() {
            Route::ProgramId { axis } => self.grid_value(self.program, axis)?,
            Route::NumPrograms { axis } => self.grid_value(self.grid, axis)?,
            Route::Constant(value) => RtValue::Scalar(*value),
            Route::Elementwise => elementwise::run(kind, operands)?,
            Route::Movement => movement::movement(kind, operands)?,
            Route::Fp4Pairs => fp4_pairs::run(kind, operands)?,
            Route::Reduce => reduce::reduce(kind, operands)?,
            Route::Dot(precision) => dot::dot(precision, operands)?,
            Route::DotScaled => dot::dot_scaled(operands)?,
            Route::Assert { id, message } => {
                assert::assert(id, message, operands)?;
                return Ok(Vec::new());
            }
            Route::MultipleOf { id, divisor } => assert::multiple_of(id, divisor, operands)?,
            Route::Print { message, .. } => {
                device_print::print(message, operands, self.program, &mut *self.print)?;
                return Ok(Vec::new());
            }
            // The interpreter runs one program at a time, each in order:
            // nothing to order.
            Route::Barrier
            | Route::Fence { .. }
            | Route::GridWait
            | Route::GridLaunchDependents => return Ok(Vec::new()),
            Route::Memory => match kind {
                OpKind::Atomic { op, .. } => atomic::atomic(*op, operands, self.args)?,
                OpKind::Gather => atomic::gather(operands, self.args)?,
                OpKind::Scatter => {
                    atomic::scatter(operands, self.args)?;
                    return Ok(Vec::new());
                }
                _ if kind.writes_memory() => {
                    memory::store(kind, operands, self.args)?;
                    return Ok(Vec::new());
                }
                _ => memory::read(kind, operands, self.args)?,
            },
            Route::LayoutView(op) => match lview::run(op, operands, self.args)? {
                Some(view) => view,
                None => return Ok(Vec::new()),
            },
            // Ops with regions run in `run_op`, never here.
            Route::Combine | Route::For | Route::While | Route::If | Route::Yield => {
                return Err(Fault::Type(format!("`{}` outside its place", kind.name())))
            }
        };
        Ok(vec![one])
    }

    /// `program_id` or `num_programs` along `axis`, from `ids`.
    fn grid_value(&self, ids: [u32; 3], axis: u8) -> Result<RtValue, Fault> {
        let id = ids
            .get(usize::from(axis))
            .ok_or_else(|| Fault::Type(format!("grid axis {axis} is not 0, 1 or 2")))?;
        // The grid was checked to fit i32.
        Ok(RtValue::Scalar(Scalar::I32(
            i32::try_from(*id).unwrap_or(i32::MAX),
        )))
    }

    /// The current values of `op`'s operands.
    fn operands(&self, op: &Op) -> Result<Vec<RtValue>, Fault> {
        op.operands.iter().map(|&v| self.value(v)).collect()
    }

    /// The current value of `v`.
    fn value(&self, v: Value) -> Result<RtValue, Fault> {
        self.env
            .get(v.index())
            .and_then(Option::as_ref)
            .cloned()
            .ok_or_else(|| {
                Fault::Type(format!(
                    "{} is used before it is defined",
                    self.names.name(v)
                ))
            })
    }

    /// Defines `v` (an index out of the arena is ignored: it cannot be read).
    fn define(&mut self, v: Value, value: RtValue) {
        if let Some(slot) = self.env.get_mut(v.index()) {
            *slot = Some(value);
        }
    }

    /// Defines `op`'s results, checking their number and declared types.
    fn bind(&mut self, op: &Op, results: Vec<RtValue>) -> Result<(), Fault> {
        self.bind_values(&op.results, results, "result")
    }

    /// Defines each of `targets` as the matching value, checking the count
    /// and each declared type.
    fn bind_values(
        &mut self,
        targets: &[Value],
        values: Vec<RtValue>,
        what: &str,
    ) -> Result<(), Fault> {
        if targets.len() != values.len() {
            return Err(Fault::Type(format!(
                "{} {what}(s) declared, {} computed",
                targets.len(),
                values.len()
            )));
        }
        for (&target, value) in targets.iter().zip(values) {
            let declared = self
                .func
                .values
                .get(target)
                .map(|info| &info.ty)
                .ok_or_else(|| {
                    Fault::Type(format!(
                        "{what} {} is not in the function",
                        self.names.name(target)
                    ))
                })?;
            if !value.has_type(declared) {
                return Err(Fault::Type(format!(
                    "{what} {} is declared {declared} but is a {}",
                    self.names.name(target),
                    value.describe()
                )));
            }
            self.define(target, value);
        }
        Ok(())
    }

    /// An error of op `id` in the current program instance.
    fn error(&self, id: OpId, fault: Fault) -> InterpError {
        InterpError::Op {
            program: self.program,
            op: self.names.describe_site(self.func, id),
            fault: Box::new(fault),
        }
    }
}
