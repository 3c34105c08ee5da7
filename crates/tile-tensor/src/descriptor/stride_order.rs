//! Layouts and how they derive unknown strides.

use std::fmt;

use super::DescriptorError;

/// The layout strides are derived for and checked against (CK's
/// `tensor_layout::gemm::RowMajor` / `ColumnMajor` and
/// `BypassLayoutVerification`). The last two dims are the matrix; any dims
/// before them are batch dims, laid out row-major around the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrideOrder {
    /// The last dim has stride 1; the one before it is the leading dimension.
    RowMajor,
    /// The second-to-last dim has stride 1; the last is the leading dimension.
    ColumnMajor,
    /// Strides are taken as given (0 allowed, for broadcasts): nothing is
    /// derived or checked beyond one non-negative stride per dim.
    Bypass,
}

impl fmt::Display for StrideOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StrideOrder::RowMajor => "RowMajor",
            StrideOrder::ColumnMajor => "ColumnMajor",
            StrideOrder::Bypass => "Bypass",
        })
    }
}

impl StrideOrder {
    /// For a matrix layout of rank >= 2, the `(inner, outer)` dims: the
    /// unit-stride dim and the leading dim.
    pub(crate) fn matrix_dims(self, rank: usize) -> Option<(usize, usize)> {
        match self {
            _ if rank < 2 => None,
            StrideOrder::RowMajor => Some((rank - 1, rank - 2)),
            StrideOrder::ColumnMajor => Some((rank - 2, rank - 1)),
            StrideOrder::Bypass => None,
        }
    }

    /// Packed strides for `lengths`: the inner matrix dim 1, each other dim the
    /// span of the dims inside it (the outer matrix dim, then the batch dims
    /// from the innermost out). Lengths of 0 count as 1 so strides stay positive.
    pub(crate) fn packed_strides(self, lengths: &[usize]) -> Result<Vec<usize>, DescriptorError> {
        let rank = lengths.len();
        let mut order: Vec<usize> = (0..rank).rev().collect();
        if let Some((inner, outer)) = self.matrix_dims(rank) {
            order[0] = inner;
            order[1] = outer;
        }
        let mut strides = vec![0; rank];
        let mut span = 1usize;
        for dim in order {
            strides[dim] = span;
            span = span
                .checked_mul(lengths[dim].max(1))
                .ok_or(DescriptorError::Overflow {
                    what: "a packed stride",
                })?;
        }
        Ok(strides)
    }

    /// Completes unknown (`<= 0`) strides of the two matrix dims: the inner
    /// one becomes 1, the outer one the inner length times the inner stride.
    /// Other dims are left as given.
    pub(crate) fn complete(
        self,
        lengths: &[usize],
        strides: &mut [i64],
    ) -> Result<(), DescriptorError> {
        let Some((inner, outer)) = self.matrix_dims(lengths.len()) else {
            return Ok(());
        };
        if strides[inner] <= 0 {
            strides[inner] = 1;
        }
        if strides[outer] <= 0 {
            let length =
                i64::try_from(lengths[inner].max(1)).map_err(|_| DescriptorError::Overflow {
                    what: "a completed stride",
                })?;
            strides[outer] =
                length
                    .checked_mul(strides[inner])
                    .ok_or(DescriptorError::Overflow {
                        what: "a completed stride",
                    })?;
        }
        Ok(())
    }
}
