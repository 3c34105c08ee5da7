//! The call log: every CUDA and HIP entry point the stand-in exports
//! appends one entry, in call order, to a log of the process, so a test can
//! check which calls a runtime made, on which streams, and which of them
//! serialize with work on other streams.
//!
//! # Format
//!
//! The log's text is one line per call, each ending in `\n`:
//!
//! ```text
//! <name> <kind> <stream> <serializes>
//! ```
//!
//! * `name`: the exported entry point, as the library exports it
//!   (`cuMemcpyHtoDAsync_v2`, `hipModuleLaunchKernel`);
//! * `kind`: `launch` (`cuLaunchKernel`, `cuGraphLaunch`,
//!   `hipModuleLaunchKernel`), `alloc` (device or pinned memory allocated
//!   or freed), `copy` (every copy and fill, synchronous or not), `sync`
//!   (the host waits: a context, device, stream or event synchronize) or
//!   `other`;
//! * `stream`: the stream handle the call takes, in hexadecimal with `0x`
//!   (`0x0` when it takes none; synchronous copies and fills, which run
//!   on the legacy stream, give `0x0` too);
//! * `serializes`: `1` if the call is ordered with work on other streams
//!   under CUDA's implicit synchronization, else `0`. Work enqueued on the
//!   legacy stream (`0x0`, `0x1`) serializes, and so does work on a
//!   blocking stream (created with flags 0) and on the per-thread stream,
//!   which wait for and are waited on by legacy-stream work; work on a
//!   non-blocking stream does not. Host waits serialize, and so do device
//!   and pinned allocations and frees, which synchronize the device
//!   (documented for the frees, de facto for the allocations). Calls that
//!   enqueue nothing (queries, creation, capture control) do not.
//!
//! For example, a launch on a non-blocking stream followed by a stream
//! synchronize:
//!
//! ```text
//! cuLaunchKernel launch 0x1003 0
//! cuStreamSynchronize sync 0x1003 1
//! ```
//!
//! The library exports [`tile_standin_calls`], which writes the text, and
//! [`tile_standin_calls_clear`]; [`parse`] reads the text back. A failed
//! call is logged too: the log says what was called, not what succeeded.

use crate::driver::Driver;
use std::fmt;
use std::sync::Mutex;

/// What a call does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// A kernel or graph launch.
    Launch,
    /// An allocation or free of device or pinned memory.
    Alloc,
    /// A copy or fill.
    Copy,
    /// The host waits.
    Sync,
    /// Anything else.
    Other,
}

impl CallKind {
    const ALL: [CallKind; 5] = [
        CallKind::Launch,
        CallKind::Alloc,
        CallKind::Copy,
        CallKind::Sync,
        CallKind::Other,
    ];

    /// Its word in the log.
    pub fn word(self) -> &'static str {
        match self {
            CallKind::Launch => "launch",
            CallKind::Alloc => "alloc",
            CallKind::Copy => "copy",
            CallKind::Sync => "sync",
            CallKind::Other => "other",
        }
    }
}

impl fmt::Display for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// One logged call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The entry point's exported name.
    pub name: String,
    /// What it does.
    pub kind: CallKind,
    /// The stream it takes, 0 if none.
    pub stream: u64,
    /// Whether it is ordered with work on other streams.
    pub serializes: bool,
}

/// A call's line, without its `\n`.
impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let serializes = u8::from(self.serializes);
        write!(
            f,
            "{} {} {:#x} {serializes}",
            self.name, self.kind, self.stream
        )
    }
}

/// Reads a log's text: one [`Call`] per line. The error names the first
/// malformed line (from 1) and what it lacks.
pub fn parse(text: &str) -> Result<Vec<Call>, String> {
    text.lines()
        .enumerate()
        .map(|(i, line)| parse_line(line).map_err(|e| format!("line {}: {e}: `{line}`", i + 1)))
        .collect()
}

fn parse_line(line: &str) -> Result<Call, String> {
    let fields: Vec<&str> = line.split(' ').collect();
    let [name, kind, stream, serializes] = fields[..] else {
        return Err(format!(
            "expected 4 fields separated by single spaces, found {}",
            fields.len()
        ));
    };
    if name.is_empty() {
        return Err("expected an entry point's name".into());
    }
    let kind = CallKind::ALL
        .into_iter()
        .find(|k| k.word() == kind)
        .ok_or("expected a kind: launch, alloc, copy, sync or other")?;
    let stream = stream
        .strip_prefix("0x")
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .ok_or("expected a stream in hexadecimal with `0x`")?;
    let serializes = match serializes {
        "0" => false,
        "1" => true,
        _ => return Err("expected serializes as 0 or 1".into()),
    };
    Ok(Call {
        name: name.into(),
        kind,
        stream,
        serializes,
    })
}

/// What a call does to streams, for its entry's stream and serializes.
#[derive(Clone, Copy)]
pub(crate) enum On {
    /// Nothing stream-ordered: no stream, no serialization.
    Nothing,
    /// Enqueues work on the stream: serializes if the stream does.
    Stream(u64),
    /// Names the stream but enqueues nothing (a query, a capture call).
    Names(u64),
    /// The host waits for the stream (0: the device or context).
    Waits(u64),
    /// Synchronizes the device without a stream (allocations, frees).
    Device,
}

/// An entry: the name, kind, stream and serializes.
type Entry = (&'static str, CallKind, u64, bool);

/// The log.
static LOG: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn log() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // Entries are pushed whole; a panic elsewhere leaves the log intact.
    LOG.lock().unwrap_or_else(|e| e.into_inner())
}

/// Appends a call of `name` to the log, its stream and serialization read
/// from `driver`'s streams.
pub(crate) fn record(driver: &Driver, name: &'static str, kind: CallKind, on: On) {
    let (stream, serializes) = match on {
        On::Nothing => (0, false),
        On::Stream(s) => (s, driver.serializes_with_legacy(s)),
        On::Names(s) => (s, false),
        On::Waits(s) => (s, true),
        On::Device => (0, true),
    };
    log().push((name, kind, stream, serializes));
}

/// The log's text.
fn text() -> String {
    log()
        .iter()
        .map(|&(name, kind, stream, serializes)| {
            let call = Call {
                name: name.into(),
                kind,
                stream,
                serializes,
            };
            format!("{call}\n")
        })
        .collect()
}

/// Writes the call log's text (see the [module docs](self)), UTF-8 and
/// without a NUL, into the `capacity` bytes at `buffer` if it fits; returns
/// its length either way, so a caller may ask with a capacity of 0 first.
///
/// # Safety
///
/// `buffer` is null or valid for writes of `capacity` bytes.
#[no_mangle]
pub unsafe extern "C" fn tile_standin_calls(buffer: *mut u8, capacity: usize) -> usize {
    let text = text();
    if !buffer.is_null() && text.len() <= capacity {
        // SAFETY: `text.len() <= capacity` bytes (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), buffer, text.len()) };
    }
    text.len()
}

/// Empties the call log.
///
/// # Safety
///
/// None.
#[no_mangle]
pub unsafe extern "C" fn tile_standin_calls_clear() {
    log().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_prints_as_its_line_and_parses_back() {
        let call = Call {
            name: "cuMemcpyHtoDAsync_v2".into(),
            kind: CallKind::Copy,
            stream: 0x1003,
            serializes: false,
        };
        assert_eq!(call.to_string(), "cuMemcpyHtoDAsync_v2 copy 0x1003 0");
        assert_eq!(
            parse(&format!("{call}\n{call}\n")),
            Ok(vec![call.clone(), call])
        );
    }
}
