//! The lines of `print` ops (`device_print!` in kernels): what one line
//! says, and how a print's number and the bits compiled code recorded lead
//! back to it.
//!
//! A print of scalars gives one line per program; a print with tiles
//! (all of one shape) one line per element, in row-major order, with the
//! scalars repeated. Messages follow [`crate::assertion`]'s placeholders.

use crate::assertion::format;
use crate::function::Function;
use crate::interp::Tile;
use crate::ops::OpKind;
use crate::scalar::Scalar;
use crate::types::Type;
use crate::DType;
use std::fmt;

/// The most values a print's message formats (what a record of the print
/// area carries: `tile_abi::device_print`).
pub const MAX_VALUES: usize = 5;

/// One printed line: the program, the element it is about, the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// The program instance, `(x, y, z)`.
    pub program: [u32; 3],
    /// The tile element (`None` for a print of scalars).
    pub element: Option<Vec<usize>>,
    /// The message with its values.
    pub text: String,
}

impl fmt::Display for Printed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.program;
        write!(f, "program ({x}, {y}, {z})")?;
        if let Some(e) = &self.element {
            write!(f, " element {e:?}")?;
        }
        write!(f, ": {}", self.text)
    }
}

/// A print of a function: what its `print` ops of one number say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintSpec {
    /// The message.
    pub message: String,
    /// The dtypes of the values it formats.
    pub dtypes: Vec<DType>,
    /// The shape of its tiles (`None`: it prints scalars only).
    pub shape: Option<Vec<usize>>,
}

impl PrintSpec {
    /// The print numbered `id` in `func`, if a `print` of `func` has it.
    pub fn find(func: &Function, id: u32) -> Option<PrintSpec> {
        func.find_op(|op| match &op.kind {
            OpKind::Print { id: n, message } if *n == id => {
                let types = op.operands.iter().map(|&v| func.ty(v));
                Some(PrintSpec {
                    message: message.clone(),
                    dtypes: types.clone().map(Type::dtype).collect(),
                    shape: types
                        .filter_map(|t| t.tile_shape())
                        .next()
                        .map(|s| s.0.clone()),
                })
            }
            _ => None,
        })
    }

    /// The line of `program` about row-major element `element` whose values
    /// compiled code recorded as `bits` (each value's bit pattern in the low
    /// bits).
    pub fn line(&self, program: [u32; 3], element: usize, bits: &[i64]) -> Printed {
        let values: Vec<Scalar> = self
            .dtypes
            .iter()
            .zip(bits)
            .map(|(&dtype, &b)| Scalar::from_bits(dtype, b as u64))
            .collect();
        Printed {
            program,
            element: self.shape.as_ref().map(|s| Tile::unravel(element, s)),
            text: format(&self.message, &values),
        }
    }
}

/// Whether `func` has a `print` op (and so needs a print area).
pub fn prints(func: &Function) -> bool {
    func.find_op(|op| matches!(op.kind, OpKind::Print { .. }).then_some(()))
        .is_some()
}
