//! Where the lines of `device_print!` go: the records compiled code left
//! in a launch's print area (`tile_abi::device_print`), formatted from the
//! kernel's IR, in program order, to the device's sink (standard output
//! unless [`Device::on_print`](crate::Device::on_print) says otherwise).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use tile_abi::device_print::{records, PrintRecord};
use tile_ir::device_print::{PrintSpec, Printed};
use tile_ir::Function;

/// A function that receives printed lines.
type Sink = Box<dyn FnMut(&Printed) + Send>;

/// A device's destination for printed lines: standard output, or a
/// function given to [`Device::on_print`](crate::Device::on_print).
#[derive(Clone, Default)]
pub(crate) struct PrintSink(Arc<Mutex<Option<Sink>>>);

impl fmt::Debug for PrintSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrintSink")
    }
}

impl PrintSink {
    /// Sends later lines to `sink`.
    pub(crate) fn set(&self, sink: Sink) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Hands `lines` to the sink, in order.
    pub(crate) fn send(&self, lines: &[Printed]) {
        if lines.is_empty() {
            return;
        }
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for line in lines {
            match &mut *guard {
                Some(sink) => sink(line),
                None => println!("{line}"),
            }
        }
    }
}

/// Formats the records of the print `area` of a launch of `func` and hands
/// them to `out`: sorted by program (x fastest, then y, then z), each
/// program's in the order they were written. Records that did not fit the
/// area are counted in a warning.
pub(crate) fn deliver(func: &Function, area: &[u8], out: &mut dyn FnMut(&Printed)) {
    let (mut records, dropped) = records(area);
    records.sort_by_key(|r: &PrintRecord| [r.program[2], r.program[1], r.program[0]]);
    let mut specs: HashMap<u32, Option<PrintSpec>> = HashMap::new();
    for r in records {
        let spec = specs
            .entry(r.id)
            .or_insert_with(|| PrintSpec::find(func, r.id));
        let line = match spec {
            Some(spec) => spec.line(r.program, r.element as usize, &r.values),
            None => Printed {
                program: r.program,
                element: None,
                text: format!("print {} is not in the kernel's IR", r.id),
            },
        };
        out(&line);
    }
    if dropped > 0 {
        tracing::warn!(
            kernel = %func.name,
            dropped,
            "lines of device_print! did not fit the launch's print area"
        );
    }
}
