//! The one error type of the layout algebra.

use thiserror::Error;

/// Why a layout operation refused its input.
///
/// Every message names the operation, the rule that failed and the
/// offending values, so a caller can print it as is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// The text at byte `pos` of `input` did not match the grammar.
    #[error("parse error at byte {pos} of `{input}`: expected {expected}")]
    Parse {
        /// The whole text being parsed.
        input: String,
        /// Byte offset of the first character that did not fit.
        pos: usize,
        /// What the parser wanted at `pos`.
        expected: &'static str,
    },
    /// Two int-tuples that must have the same tree do not.
    #[error("{op}: {left} and {right} are not congruent")]
    NotCongruent {
        /// The operation that needed congruent operands.
        op: &'static str,
        /// The first operand.
        left: String,
        /// The second operand.
        right: String,
    },
    /// `shape_div(a, b)` with neither operand dividing the other.
    #[error("shape_div({a}, {b}): neither divides the other")]
    ShapeDiv {
        /// The dividend.
        a: i64,
        /// The divisor.
        b: i64,
    },
    /// An operation-specific rule failed; `detail` names the values.
    #[error("{op}: {rule}: {detail}")]
    Rule {
        /// The operation, e.g. `composition`.
        op: &'static str,
        /// The rule, e.g. `stride divisibility condition fails`.
        rule: &'static str,
        /// The offending layouts and numbers.
        detail: String,
    },
    /// A size, stride or offset does not fit in an `i64`.
    #[error("{op}: arithmetic overflow in {detail}")]
    Overflow {
        /// The operation that overflowed.
        op: &'static str,
        /// What was being computed.
        detail: String,
    },
}

impl LayoutError {
    /// Shorthand for [`LayoutError::Rule`].
    pub(crate) fn rule(op: &'static str, rule: &'static str, detail: impl Into<String>) -> Self {
        LayoutError::Rule {
            op,
            rule,
            detail: detail.into(),
        }
    }
}

/// The result type of the layout algebra.
pub type Result<T> = std::result::Result<T, LayoutError>;
