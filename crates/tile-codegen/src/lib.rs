//! LLVM code generation (work in progress).
