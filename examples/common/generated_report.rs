//! What the check of the generated programs prints and writes: a table per
//! target (images, ran, identical, within bounds, rejected by both, not
//! compiled, failed), the first failure's whole message, and a JSON file
//! of every record.

#[path = "json.rs"]
mod json;
use crate::generated_run::{Outcome, Record};
use std::fmt::Write as _;

/// The counts of one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Seeds with an image for it, launched.
    pub ran: usize,
    /// Of those, identical to the interpreter.
    pub identical: usize,
    /// Within the bounds.
    pub within_bounds: usize,
    /// Rejected by the interpreter and by the kernel's own checks.
    pub rejected_by_both: usize,
    /// Seeds the builder could not compile for it.
    pub not_compiled: usize,
    /// Failures.
    pub failed: usize,
}

/// The counts of `target` among `records`.
pub fn counts(records: &[Record], target: &str) -> Counts {
    let mut c = Counts::default();
    for record in records.iter().filter(|r| r.target == target) {
        match record.outcome {
            Outcome::NotCompiled(_) => c.not_compiled += 1,
            _ => c.ran += 1,
        }
        match record.outcome {
            Outcome::Identical => c.identical += 1,
            Outcome::WithinBounds => c.within_bounds += 1,
            Outcome::RejectedByBoth => c.rejected_by_both += 1,
            Outcome::NotCompiled(_) => {}
            Outcome::Failed(_) => c.failed += 1,
        }
    }
    c
}

/// The table of `targets` (and the targets not run here, with why), and
/// the first failure's message if any.
pub fn table(records: &[Record], targets: &[String], not_here: &[(String, String)]) -> String {
    let mut out = format!(
        "{:<10} {:>6} {:>10} {:>14} {:>17} {:>13} {:>7}\n",
        "target", "ran", "identical", "within bounds", "rejected by both", "not compiled", "failed"
    );
    for target in targets {
        let c = counts(records, target);
        let _ = writeln!(
            out,
            "{target:<10} {:>6} {:>10} {:>14} {:>17} {:>13} {:>7}",
            c.ran, c.identical, c.within_bounds, c.rejected_by_both, c.not_compiled, c.failed
        );
    }
    for (target, why) in not_here {
        let _ = writeln!(out, "{target:<10} not run: {why}");
    }
    let failed = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
        .count();
    match records.iter().find_map(|r| match &r.outcome {
        Outcome::Failed(message) => Some(message),
        _ => None,
    }) {
        Some(message) => {
            let _ = write!(out, "\n{failed} failed; the first:\n{message}\n");
        }
        None => {
            let _ = writeln!(out, "\nno failures");
        }
    }
    out
}

/// Every record, the counts per target and the targets not run, as JSON.
pub fn json(
    device: &str,
    records: &[Record],
    targets: &[String],
    not_here: &[(String, String)],
) -> String {
    let mut out = format!(
        "{{\n  \"device\": {},\n  \"targets\": [\n",
        json::string(device)
    );
    for (i, target) in targets.iter().enumerate() {
        let c = counts(records, target);
        let comma = if i + 1 < targets.len() { "," } else { "" };
        let _ = writeln!(
            out,
            "    {{\"target\": {}, \"ran\": {}, \"identical\": {}, \"within_bounds\": {}, \"rejected_by_both\": {}, \"not_compiled\": {}, \"failed\": {}}}{comma}",
            json::string(target), c.ran, c.identical, c.within_bounds, c.rejected_by_both, c.not_compiled, c.failed
        );
    }
    out.push_str("  ],\n  \"not_run\": [\n");
    for (i, (target, why)) in not_here.iter().enumerate() {
        let comma = if i + 1 < not_here.len() { "," } else { "" };
        let _ = writeln!(
            out,
            "    {{\"target\": {}, \"why\": {}}}{comma}",
            json::string(target),
            json::string(why)
        );
    }
    out.push_str("  ],\n  \"cases\": [\n");
    for (i, record) in records.iter().enumerate() {
        let comma = if i + 1 < records.len() { "," } else { "" };
        let detail = match &record.outcome {
            Outcome::NotCompiled(why) | Outcome::Failed(why) => {
                format!(", \"detail\": {}", json::string(why))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "    {{\"seed\": {}, \"target\": {}, \"outcome\": {}{detail}}}{comma}",
            record.seed,
            json::string(&record.target),
            json::string(record.outcome.name())
        );
    }
    out.push_str("  ]\n}\n");
    out
}
