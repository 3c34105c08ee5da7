//! The canonical form every operation returns (tinygrad's `View.create` rules).

use super::checked::{add, mul, product, signed};
use super::{StridedView, StridedViewError};

impl StridedView {
    /// Builds a view from parts already checked by the caller and canonicalizes it:
    /// an empty shape gets strides 0, offset 0 and no mask; size-1 axes get
    /// stride 0; a mask hiding nothing becomes `None`; a mask hiding everything
    /// becomes all `(0, 0)` with strides 0 and offset 0; an axis masked to one
    /// coordinate gets stride 0 with that coordinate's step folded into the offset.
    pub(crate) fn canonical(
        op: &'static str,
        shape: Vec<usize>,
        mut strides: Vec<isize>,
        mut offset: isize,
        mut mask: Option<Vec<(usize, usize)>>,
    ) -> Result<StridedView, StridedViewError> {
        if product(op, &shape)? == 0 {
            let rank = shape.len();
            return Ok(StridedView {
                shape,
                strides: vec![0; rank],
                offset: 0,
                mask: None,
            });
        }
        for (stride, &size) in strides.iter_mut().zip(&shape) {
            if size == 1 {
                *stride = 0;
            }
        }
        if let Some(ranges) = &mask {
            if ranges
                .iter()
                .zip(&shape)
                .all(|(&(b, e), &s)| b == 0 && e == s)
            {
                mask = None;
            } else if ranges.iter().any(|&(b, e)| b >= e) {
                let rank = shape.len();
                return Ok(StridedView {
                    shape,
                    strides: vec![0; rank],
                    offset: 0,
                    mask: Some(vec![(0, 0); rank]),
                });
            } else {
                for (stride, &(b, e)) in strides.iter_mut().zip(ranges) {
                    if e - b == 1 {
                        let step = mul(op, "the offset", signed(op, "a mask bound", b)?, *stride)?;
                        offset = add(op, "the offset", offset, step)?;
                        *stride = 0;
                    }
                }
            }
        }
        Ok(StridedView {
            shape,
            strides,
            offset,
            mask,
        })
    }
}
