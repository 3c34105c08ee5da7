//! Python-style tuple printing for messages and `Display`: `()`, `(6,)`, `(2, 3)`.

use std::fmt;

/// Prints a slice as a Python tuple.
pub(crate) struct Tuple<'a, T>(pub &'a [T]);

impl<T: fmt::Display> fmt::Display for Tuple<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(")?;
        for (i, x) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{x}")?;
        }
        if self.0.len() == 1 {
            write!(f, ",")?;
        }
        write!(f, ")")
    }
}

/// Prints a list of `(begin, end)` ranges as a Python tuple of pairs.
pub(crate) struct Ranges<'a>(pub &'a [(usize, usize)]);

impl fmt::Display for Ranges<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self.0.iter().map(|(b, e)| format!("({b}, {e})")).collect();
        Tuple(&pairs).fmt(f)
    }
}
