//! Runs named passes over a kernel written in the text form.

use tile_ir::passes::PassManager;
use tile_ir::text::parse_function;

/// The kernel `src` after the passes `names`, printed.
pub fn after(names: &[&str], src: &str) -> String {
    let mut func = parse_function(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let mut pm = PassManager::new();
    for name in names {
        pm.add(name).unwrap();
    }
    pm.run(&mut func, |_, _| {}).unwrap();
    func.to_string()
}
