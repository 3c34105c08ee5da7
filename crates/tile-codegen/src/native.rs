//! The machine-code assembler and lld's ELF linker, run inside this process
//! through the C++ of `build/assemble.cpp` and `build/link.cpp` (compiled
//! and linked by build.rs): `llvm-mc` and `ld.lld` as libraries. A process of
//! either spends 15–20 ms loading libLLVM before it does a millisecond of
//! work, and an AMDGPU kernel needs both (docs/benchmarks.md).

use std::ffi::{c_char, c_int, CString};
use std::sync::Mutex;

extern "C" {
    fn tile_mc_assemble(
        triple: *const c_char,
        cpu: *const c_char,
        text: *const c_char,
        text_len: usize,
        out: *mut *mut c_char,
        out_len: *mut usize,
    ) -> c_int;
    fn tile_lld_link(
        argv: *const *const c_char,
        argc: usize,
        messages: *mut *mut c_char,
        messages_len: *mut usize,
    ) -> c_int;
    fn tile_native_free(bytes: *mut c_char);
}

/// Takes the bytes a C++ function returned in `malloc`'s memory, and frees
/// them.
fn take(bytes: *mut c_char, len: usize) -> Vec<u8> {
    if bytes.is_null() {
        return Vec::new();
    }
    // SAFETY: the C++ side returned `len` initialized bytes at `bytes`, from
    // `malloc`, and gave up its ownership of them.
    let out = unsafe { std::slice::from_raw_parts(bytes.cast::<u8>(), len) }.to_vec();
    // SAFETY: `bytes` came from `malloc` and is freed once, here.
    unsafe { tile_native_free(bytes) };
    out
}

/// A C string of `text`, or why there is none.
fn c_string(what: &str, text: &str) -> Result<CString, String> {
    CString::new(text).map_err(|_| format!("{what} `{text}` holds a NUL byte"))
}

/// Assembles `assembly` (LLVM's assembly for `triple` and `cpu`) into an ELF
/// object, as `llvm-mc -filetype=obj` would; on failure, the assembler's
/// messages.
pub(crate) fn assemble(triple: &str, cpu: &str, assembly: &str) -> Result<Vec<u8>, String> {
    let (triple, cpu) = (c_string("triple", triple)?, c_string("cpu", cpu)?);
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    // SAFETY: the strings are NUL-terminated and `assembly` is `text_len`
    // bytes long; all three outlive the call, which reads them only. `out`
    // and `len` are valid for writes.
    let status = unsafe {
        tile_mc_assemble(
            triple.as_ptr(),
            cpu.as_ptr(),
            assembly.as_ptr().cast(),
            assembly.len(),
            &mut out,
            &mut len,
        )
    };
    let bytes = take(out, len);
    match status {
        0 => Ok(bytes),
        _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// What a link printed, and whether it succeeded.
pub(crate) struct Linked {
    /// The link wrote its output.
    pub(crate) ok: bool,
    /// lld's messages (warnings, or the errors of a failed link).
    pub(crate) messages: String,
}

/// lld ends a link it cannot recover from (a crash in it) by saying it
/// cannot run again in this process; every later link then fails.
static LLD: Mutex<bool> = Mutex::new(true);

/// Runs `f` while no link runs. lld's driver sets LLVM's command-line
/// options for each link and puts the others back to their defaults, so an
/// option that code generation sets holds until the next link starts.
pub(crate) fn between_links<T>(f: impl FnOnce() -> T) -> T {
    let _links = LLD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f()
}

/// Runs lld's ELF linker with `args` (as `ld.lld` takes them, without the
/// program name). Links are serialized: lld keeps its state in globals.
pub(crate) fn lld(args: &[&str]) -> Result<Linked, String> {
    let args: Vec<CString> = args
        .iter()
        .map(|arg| c_string("a linker argument", arg))
        .collect::<Result<_, _>>()?;
    let argv: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
    // A link that panicked cannot have left lld's state half-changed: the
    // panic would have come from this side, before or after the call.
    let mut usable = LLD.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !*usable {
        return Err("lld failed beyond recovery earlier in this process".into());
    }
    let (mut out, mut len) = (std::ptr::null_mut(), 0);
    // SAFETY: `argv` holds `argv.len()` NUL-terminated strings that outlive
    // the call, which reads them only; `out` and `len` are valid for writes.
    // The lock serializes calls, as lld's globals need.
    let status = unsafe { tile_lld_link(argv.as_ptr(), argv.len(), &mut out, &mut len) };
    let messages = String::from_utf8_lossy(&take(out, len)).into_owned();
    if status == 2 {
        *usable = false;
    }
    Ok(Linked {
        ok: status == 0,
        messages,
    })
}
