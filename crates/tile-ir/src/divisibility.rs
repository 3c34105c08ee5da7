//! The power of two each integer scalar of a function is known to be a
//! multiple of, whatever the arguments: Triton's divisibility analysis for
//! the values `tile` addresses with (a window's offset, a loop's index).
//! Powers of two are what vector accesses need, and they survive the
//! wrapping of integer arithmetic (modulo `2^bits`), which other divisors
//! do not. In trailing zero bits `z(x)`, capped at the dtype's width
//! (which only 0 reaches):
//!
//! ```text
//! constant c              trailing zeros of c
//! a + b, a − b            min(z(a), z(b))        (also min, max)
//! a · b                   z(a) + z(b)
//! a << c                  z(a) + c
//! a rem c                 min(z(a), z(c))
//! multiple_of n  a        max(z(a), z(n))        (checked where it runs)
//! cast                    z(a)                   (the low bits are kept)
//! dim of an aligned tensor's rows     16 bytes in elements
//! a for loop's index      min(z(lower bound), z(step))
//! ```
//!
//! and nothing (0) of anything else.

use crate::dtype::DType;
use crate::function::{Function, ValueDef};
use crate::ops::{BinaryOp, OpKind};
use crate::types::{Type, TENSOR_ALIGNMENT};
use crate::Value;
use std::cell::RefCell;
use std::collections::HashMap;

/// The known power-of-two divisors of a function's integer scalars,
/// computed on demand.
pub struct Divisibility<'f> {
    func: &'f Function,
    /// Each `for` loop's induction variable, with its lower bound and step.
    inductions: HashMap<Value, (Value, Value)>,
    /// Trailing zero bits known so far.
    known: RefCell<HashMap<Value, u32>>,
}

impl<'f> Divisibility<'f> {
    /// The analysis of `func`.
    pub fn new(func: &'f Function) -> Self {
        let mut inductions = HashMap::new();
        func.walk(&mut |id| {
            let op = func.op(id);
            if let (OpKind::For { .. }, [lo, _, step, ..], [body]) =
                (&op.kind, op.operands.as_slice(), op.regions.as_slice())
            {
                if let Some(&iv) = body.args.first() {
                    inductions.insert(iv, (*lo, *step));
                }
            }
        });
        Divisibility {
            func,
            inductions,
            known: RefCell::new(HashMap::new()),
        }
    }

    /// The largest power of two `v` is known to be a multiple of on every
    /// run (1 where nothing is known, or `v` is not an integer scalar).
    pub fn divisor(&self, v: Value) -> u64 {
        1 << self.zeros(v).min(63)
    }

    /// The trailing zero bits `v` has on every run (its dtype's width: `v`
    /// is always 0).
    fn zeros(&self, v: Value) -> u32 {
        if let Some(&z) = self.known.borrow().get(&v) {
            return z;
        }
        let z = match self.func.ty(v) {
            Type::Scalar(dtype) if dtype.is_int() => self.derive(v, *dtype).min(width(*dtype)),
            _ => 0,
        };
        self.known.borrow_mut().insert(v, z);
        z
    }

    /// The trailing zeros of integer scalar `v` of `dtype` from its
    /// definition.
    fn derive(&self, v: Value, dtype: DType) -> u32 {
        if let Some(&(lo, step)) = self.inductions.get(&v) {
            return self.zeros(lo).min(self.zeros(step));
        }
        let ValueDef::Result { op, .. } = self.func.values[v].def else {
            return 0;
        };
        let op = self.func.op(op);
        let of = |i: usize| op.operands.get(i).map_or(0, |&x| self.zeros(x));
        let constant = |i: usize| -> Option<i128> {
            let def = self.func.defining_op(*op.operands.get(i)?)?;
            match &self.func.op(def).kind {
                OpKind::Constant { value } => value.to_i128(),
                _ => None,
            }
        };
        match &op.kind {
            OpKind::Constant { value } => value.to_i128().map_or(0, |c| trailing(c, dtype)),
            OpKind::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::Min | BinaryOp::Max) => {
                of(0).min(of(1))
            }
            OpKind::Binary(BinaryOp::Mul) => of(0).saturating_add(of(1)),
            OpKind::Binary(BinaryOp::Shl) => match constant(1) {
                Some(k) if (0..i128::from(width(dtype))).contains(&k) => of(0) + k as u32,
                _ => 0,
            },
            OpKind::Binary(BinaryOp::Rem) => match constant(1) {
                Some(c) if c != 0 => of(0).min(trailing(c, dtype)),
                _ => 0,
            },
            OpKind::MultipleOf { divisor, .. } => of(0).max(divisor.trailing_zeros()),
            OpKind::Cast { .. } => match op.operands.first().map(|&x| self.func.ty(x).dtype()) {
                // All zeros stay all zeros, at the new width.
                Some(from) if from.is_int() && of(0) >= width(from) => width(dtype),
                Some(from) if from.is_int() => of(0),
                _ => 0,
            },
            OpKind::Dim { axis } => match op.operands.first().map(|&t| self.func.ty(t)) {
                Some(Type::Tensor(t)) if t.aligned && axis + 1 == t.rank => {
                    (TENSOR_ALIGNMENT / t.dtype.size_bytes().max(1)).trailing_zeros()
                }
                _ => 0,
            },
            _ => 0,
        }
    }
}

/// The bits of an integer dtype.
fn width(dtype: DType) -> u32 {
    8 * dtype.size_bytes() as u32
}

/// The trailing zero bits of constant `c` of `dtype` (its width for 0).
fn trailing(c: i128, dtype: DType) -> u32 {
    if c == 0 {
        width(dtype)
    } else {
        c.trailing_zeros()
    }
}
