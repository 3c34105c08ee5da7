//! Global memory by parameter, tensor arrays included: each tensor of an
//! array is a global of its own, after the parameters' own; `get_tensor`
//! binds a parameter of kind [`ParamKind::Element`] to one of them for the
//! rest of the block.

use super::memory::Global;
use super::{Emulator, LockstepError, LockstepFault, Operands};
use crate::program::{OpId, ParamKind, Program};
use tile_ir::interp::Arg;
use tile_ir::Scalar;

/// The launch's globals: one per tensor parameter at its position (`None`
/// for other parameters), then the tensors of every array; and per
/// parameter, the globals of its array's tensors (empty for the others).
pub(super) type Globals = (Vec<Option<Global>>, Vec<Vec<usize>>);

/// Copies the tensor arguments into globals, checking each against its
/// parameter: `args` has one per passed parameter, and the tensors of
/// arrays, passed none, come after those.
pub(super) fn globals(program: &Program, args: &[Arg]) -> Result<Globals, LockstepFault> {
    let passed = program.params.iter().filter(|p| p.kind.is_passed()).count();
    if args.len() != passed || program.params[..passed].iter().any(|p| !p.kind.is_passed()) {
        return Err(LockstepFault::Malformed(format!(
            "{} arguments for {passed} passed parameters",
            args.len()
        )));
    }
    let fits = |t: &tile_ir::TensorType, host: &tile_ir::interp::HostTensor| {
        host.dtype() == t.dtype && host.shape().len() == t.rank
    };
    let mut globals = Vec::new();
    let mut pending = Vec::new();
    for (param, arg) in program.params.iter().zip(args) {
        let mismatch = || {
            LockstepFault::Malformed(format!(
                "the argument of `{}` does not match its type",
                param.name
            ))
        };
        globals.push(match (&param.kind, arg) {
            (ParamKind::Tensor(t), Arg::Tensor(host)) if fits(t, host) => {
                Some(Global::new(&param.name, host))
            }
            (ParamKind::Tensors(t), Arg::Tensors(hosts)) if hosts.iter().all(|h| fits(t, h)) => {
                pending.push((globals.len(), hosts));
                None
            }
            (ParamKind::Scalar(d), Arg::Scalar(s)) if s.dtype() == *d => None,
            _ => return Err(mismatch()),
        });
    }
    globals.resize_with(program.params.len(), || None);
    let mut arrays = vec![Vec::new(); globals.len()];
    for (param, hosts) in pending {
        for (k, host) in hosts.iter().enumerate() {
            arrays[param].push(globals.len());
            let name = format!("{}[{k}]", program.params[param].name);
            globals.push(Some(Global::new(&name, host)));
        }
    }
    Ok((globals, arrays))
}

/// Writes the globals back into the arguments they came from.
pub(super) fn write_back(
    (globals, arrays): Globals,
    args: &mut [Arg],
) -> Result<(), LockstepFault> {
    let mut globals: Vec<Option<Global>> = globals;
    for (param, arg) in args.iter_mut().enumerate() {
        let tensors = match arrays.get(param) {
            Some(elements) if !elements.is_empty() => elements
                .iter()
                .map(|&g| globals[g].take().map(Global::into_tensor))
                .collect::<Option<Result<Vec<_>, _>>>(),
            _ => None,
        };
        if let Some(tensors) = tensors {
            *arg = Arg::Tensors(tensors?);
        } else if let Some(global) = globals.get_mut(param).and_then(Option::take) {
            *arg = Arg::Tensor(global.into_tensor()?);
        }
    }
    Ok(())
}

impl Emulator<'_> {
    /// `get_tensor param = array[index]`: binds `param` to the array's
    /// tensor `index` (uniform; the lowering checks it is in range first).
    pub(super) fn get_tensor(
        &mut self,
        id: OpId,
        (param, array): (usize, usize),
        x: &Operands<'_>,
    ) -> Result<(), LockstepError> {
        let index = self.role(id, x, "index")?;
        let index = self.uniform(id, "a tensor index", index)?;
        let element = self.arrays.get(array).and_then(|elements| {
            let k = usize::try_from(index.to_i128()?).ok()?;
            elements.get(k).copied()
        });
        let element = element.ok_or_else(|| {
            let what = format!("tensor {index} of a tensor array of {}", self.count(array));
            self.error(Some(id), None, LockstepFault::Malformed(what))
        })?;
        self.bound[param] = Some(element);
        Ok(())
    }

    /// The number of tensors of array `array`, as `num_tensors` reads it.
    pub(super) fn num_tensors(&self, array: usize) -> Scalar {
        Scalar::I32(i32::try_from(self.count(array)).unwrap_or(i32::MAX))
    }

    fn count(&self, array: usize) -> usize {
        self.arrays.get(array).map_or(0, Vec::len)
    }
}
