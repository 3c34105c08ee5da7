//! Two attributes of thread ops: a shuffle's mode and what a check
//! checks.

/// The data movement of a warp shuffle, as PTX `shfl.sync.<mode>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShuffleMode {
    /// `idx`: read lane `b` of the segment.
    Idx,
    /// `up`: read lane `lane - b`, own value below the segment start.
    Up,
    /// `down`: read lane `lane + b`, own value past the segment end.
    Down,
    /// `bfly`: read lane `lane ^ b`, own value past the segment end.
    Bfly,
}

impl ShuffleMode {
    /// Every mode.
    pub const ALL: [ShuffleMode; 4] = [
        ShuffleMode::Idx,
        ShuffleMode::Up,
        ShuffleMode::Down,
        ShuffleMode::Bfly,
    ];

    /// The mode of PTX name `name`.
    pub fn from_name(name: &str) -> Option<ShuffleMode> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The PTX name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Bfly => "bfly",
        }
    }
}

/// What a [`super::ThreadOpKind::Check`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckKind {
    /// `bounds`: every element an unmasked access reaches lies inside the
    /// tensor; the values are the partition index.
    Bounds,
    /// `step`: a loop's step is positive; the value is the step.
    Step,
    /// `index`: an element of an atomic or a gather whose mask holds lies
    /// inside the tensor; the values are its tensor index.
    Index,
    /// `assert`: a `device_assert!` holds; the values are the assertion's
    /// number and the values its message formats (any scalar dtypes).
    Assert,
    /// `window`: a partition view's window has no negative offset or
    /// extent; the values are its offsets, then its extents.
    Window,
    /// `tensor_index`: `get_tensor`'s index lies in its tensor array; the
    /// values are the index and the number of tensors.
    TensorIndex,
}

impl CheckKind {
    /// Every kind.
    pub const ALL: [CheckKind; 6] = [
        CheckKind::Bounds,
        CheckKind::Step,
        CheckKind::Index,
        CheckKind::Assert,
        CheckKind::Window,
        CheckKind::TensorIndex,
    ];

    /// The kind named `name` in the text form.
    pub fn from_name(name: &str) -> Option<CheckKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind's name in the text form.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Bounds => "bounds",
            CheckKind::Step => "step",
            CheckKind::Index => "index",
            CheckKind::Assert => "assert",
            CheckKind::Window => "window",
            CheckKind::TensorIndex => "tensor_index",
        }
    }
}
