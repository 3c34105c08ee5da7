//! The demo's check mode (`demo --check`), run by the GPU bundle (`scripts/gpu-bundle.sh`):
//! every example, and the runtime's own checks (`runtime_checks.rs`), on the best device
//! and on the CPU device of one process.

#[path = "json.rs"]
mod json;
use crate::common::{Example, Inputs};
use std::fmt::Write as _;
use std::process::ExitCode;
use tile::{Device, DeviceKind};

/// One checked item: a kernel's result on a device, or an example that
/// failed before it had results.
struct Item {
    name: String,
    device: String,
    ok: bool,
    detail: String,
}

/// The demo's `--check [--json FILE]`: every example on the best GPU (if
/// any) and on the CPU device, each from the same inputs and checked
/// against plain Rust; a table of pass or fail per item, the first
/// failure's whole message, and with `--json` every item in `FILE`.
/// Fails when an item failed.
pub fn check(examples: &[(&str, Example)], json: Option<&str>) -> ExitCode {
    let mut devices = Vec::new();
    match Device::best() {
        Ok(dev) if dev.kind() != DeviceKind::Cpu => {
            println!("device: {dev} ({} multiprocessors)", dev.multiprocessors());
            devices.push(dev);
        }
        Ok(_) => println!("device: no GPU, the CPU device only"),
        Err(e) => println!("device: none usable ({e}), the CPU device only"),
    }
    for (api, probe) in [("CUDA", Device::cuda(0)), ("HIP", Device::hip(0))] {
        match probe {
            Ok(dev) => println!("{api}: found {dev}"),
            Err(why) => println!("{api}: not found ({why})"),
        }
    }
    devices.push(Device::cpu());
    let items: Vec<Item> = devices
        .iter()
        .flat_map(|dev| {
            let mut items = check_examples(dev, examples);
            items.extend(check_runtime(dev));
            items
        })
        .collect();
    let failed = items.iter().filter(|i| !i.ok).count();
    print_table(&items);
    if let Some(first) = items.iter().find(|i| !i.ok) {
        println!(
            "\nfirst failure: {} on {}:\n{}",
            first.name, first.device, first.detail
        );
    }
    println!("\n{} items, {failed} failed", items.len());
    if let Some(path) = json {
        if let Err(e) = std::fs::write(path, to_json(&items)) {
            eprintln!("writing {path}: {e}");
            return ExitCode::from(2);
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Every example on `dev`, each from the same inputs as on every device.
fn check_examples(dev: &Device, examples: &[(&str, Example)]) -> Vec<Item> {
    let mut items = Vec::new();
    for &(name, run) in examples {
        match run(dev, &mut Inputs::default()) {
            Ok(rows) => items.extend(rows.into_iter().map(|row| Item {
                ok: row.max_error <= row.tolerance,
                detail: format!(
                    "{} on {}: error {:.2e} against plain Rust (at most {:.0e}), {:.3} ms",
                    row.shape,
                    row.code,
                    row.max_error,
                    row.tolerance,
                    row.time.as_secs_f64() * 1e3
                ),
                name: row.kernel,
                device: dev.to_string(),
            })),
            Err(e) => items.push(Item {
                name: name.to_string(),
                device: dev.to_string(),
                ok: false,
                detail: e.to_string(),
            }),
        }
    }
    items
}

/// The runtime's own checks on `dev` (`runtime_checks.rs`).
fn check_runtime(dev: &Device) -> Vec<Item> {
    crate::runtime_checks::run(dev)
        .into_iter()
        .map(|(name, outcome)| Item {
            name: format!("runtime: {name}"),
            device: dev.to_string(),
            ok: outcome.is_ok(),
            detail: outcome.unwrap_or_else(|why| why),
        })
        .collect()
}

fn print_table(items: &[Item]) {
    println!("\n{:<32} {:<10} {:<6} detail", "item", "device", "result");
    for item in items {
        let verdict = if item.ok { "ok" } else { "FAILED" };
        let first_line = item.detail.lines().next().unwrap_or_default();
        println!(
            "{:<32} {:<10} {:<6} {first_line}",
            item.name, item.device, verdict
        );
    }
}

/// The items as a JSON array of objects.
fn to_json(items: &[Item]) -> String {
    let mut out = String::from("[\n");
    for (i, item) in items.iter().enumerate() {
        let comma = if i + 1 < items.len() { "," } else { "" };
        let _ = writeln!(
            out,
            "  {{\"item\": {}, \"device\": {}, \"ok\": {}, \"detail\": {}}}{comma}",
            json::string(&item.name),
            json::string(&item.device),
            item.ok,
            json::string(&item.detail)
        );
    }
    out.push_str("]\n");
    out
}
