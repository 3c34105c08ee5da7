#!/usr/bin/env bash
# Builds and runs a scratch crate outside the workspace whose only dependency is `tile` (by
# path: the crates are not on a registry), the way a user's project would: no
# .cargo/config.toml, no scripts/env.sh, no LLVM_SYS_221_PREFIX, so tile-codegen's build
# script must find LLVM 22 on its own. Its kernel is launched on the CPU device, and its main
# reads the kernel's IR and PTX. Usage: scripts/user-crate.sh [scratch dir] (default: a new
# directory under $TMPDIR, removed afterwards). Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$(mktemp -d)}"
[ $# -ge 1 ] || trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/src"
cat >"$DIR/Cargo.toml" <<TOML
[package]
name = "tile-user"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
tile = { path = "$ROOT" }

[workspace]
TOML
cat >"$DIR/src/main.rs" <<'RS'
use tile::{tile_kernel, Device};

#[tile_kernel(configs(BLOCK = 64), targets = "sm_80,host")]
fn axpy<const BLOCK: usize>(x: &Tensor<f32>, y: &mut Tensor<f32>, a: f32) {
    let pid = program_id(0);
    let v = partition_view(y, [BLOCK]);
    v.store_masked(partition_view(x, [BLOCK]).load_masked(pid) * a + v.load_masked(pid), pid);
}

fn main() -> Result<(), tile::Error> {
    let dev = Device::cpu();
    let x = dev.tensor_from_slice(&[1.0f32; 100], &[100])?;
    let mut y = dev.tensor_from_slice(&[2.0f32; 100], &[100])?;
    axpy::<64>::launch(&dev, [2], (&x, &mut y, 3.0))?;
    assert_eq!(y.to_vec()?, vec![5.0; 100]);
    assert!(axpy::<64>::ir().starts_with("kernel @axpy("));
    assert!(axpy::<64>::ptx("sm_80").is_ok_and(|ptx| ptx.contains(".target sm_80")));
    println!("axpy ran on {}", dev.kernel_code(&axpy::<64>::kernel_spec())?);
    Ok(())
}
RS
cd "$DIR"
# What a user's shell has: no variable of this project's, no project config.
env -u LLVM_SYS_221_PREFIX -u CARGO_TARGET_DIR -u TILE_TARGETS -u TILE_DEV_TARGETS \
    cargo run --quiet
