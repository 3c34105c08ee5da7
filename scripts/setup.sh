#!/usr/bin/env bash
# One-time (and idempotent) set-up of the tools that tile needs to build and test:
#   * LLVM 22 and lld 22 from Debian's packages (tile-codegen's build script links
#     libLLVM-22.so for inkwell, and lld's static libraries, compiling its C++ with g++;
#     the tests compare its in-process assembler and linker with llvm-mc and ld.lld);
#   * ptxas from the PyPI package nvidia-cuda-nvcc, installed into .tools/cuda (project-local)
#     and exposed as .tools/bin/ptxas.
# It prints nothing when everything is already present. Afterwards, `source scripts/env.sh`
# puts the tools on PATH and sets LLVM_SYS_221_PREFIX (plain `cargo build` also works:
# .cargo/config.toml sets it too, and without it tile-codegen's build script looks for LLVM 22
# on PATH and in /usr/lib/llvm-22).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/env.sh
source "$ROOT/scripts/env.sh"

APT_PACKAGES=(llvm-22-dev lld-22 liblld-22-dev g++)
NVCC_PIP_SPEC="${TILE_NVCC_PIP_SPEC:-nvidia-cuda-nvcc==13.5.37}"
CUDA_DIR="$ROOT/.tools/cuda"
BIN_DIR="$ROOT/.tools/bin"
STAMP="$CUDA_DIR/.tile-installed"

say() { printf 'setup: %s\n' "$*" >&2; }

manual_help() {
    cat >&2 <<MSG
setup: FAILED: $1
setup: install these by hand, then run scripts/setup.sh again:
setup:   sudo apt-get update && sudo apt-get install -y ${APT_PACKAGES[*]}
setup:   python3 -m pip install --target "$CUDA_DIR" --no-deps '$NVCC_PIP_SPEC'
setup:   mkdir -p "$BIN_DIR" && ln -sf "\$(find "$CUDA_DIR" -type f -name ptxas | head -n1)" "$BIN_DIR/ptxas"
MSG
    exit 1
}

# --- Debian packages: LLVM 22, lld 22 and its libraries, a C++ compiler ------------------------
ptxas_ok() { [[ -x "$BIN_DIR/ptxas" ]] && "$BIN_DIR/ptxas" --version >/dev/null 2>&1; }
need_ptxas=0
if ! ptxas_ok || [[ "$(cat "$STAMP" 2>/dev/null || true)" != "$NVCC_PIP_SPEC" ]]; then
    need_ptxas=1
    # pip itself comes from Debian too when the machine has no working one.
    if ! python3 -m pip --version >/dev/null 2>&1; then
        APT_PACKAGES+=(python3 python3-pip)
    fi
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)" != "install ok installed" ]]; then
        missing+=("$pkg")
    fi
done
if ((${#missing[@]})); then
    SUDO=()
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO=(sudo)
        else
            manual_help "not root and sudo is not available to install: ${missing[*]}"
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || manual_help "apt-get not found (a Debian/Ubuntu machine is assumed)"
    say "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -qq >/dev/null ||
        manual_help "apt-get update failed"
    "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
        manual_help "apt-get install ${missing[*]} failed"
fi
[[ -x "$LLVM_SYS_221_PREFIX/bin/llvm-config" ]] ||
    manual_help "$LLVM_SYS_221_PREFIX/bin/llvm-config not found after installing ${APT_PACKAGES[*]}"
[[ -f "$LLVM_SYS_221_PREFIX/lib/liblldELF.a" ]] ||
    manual_help "$LLVM_SYS_221_PREFIX/lib/liblldELF.a not found after installing liblld-22-dev"
command -v c++ >/dev/null 2>&1 || manual_help "no C++ compiler (c++) after installing g++"
[[ -x "$LLVM_SYS_221_PREFIX/bin/ld.lld" ]] ||
    manual_help "$LLVM_SYS_221_PREFIX/bin/ld.lld not found after installing lld-22"
[[ -x "$LLVM_SYS_221_PREFIX/bin/llvm-mc" ]] ||
    manual_help "$LLVM_SYS_221_PREFIX/bin/llvm-mc not found after installing llvm-22-dev (it comes with llvm-22)"

# --- ptxas from PyPI, project-local ------------------------------------------------------------
if ((need_ptxas)); then
    command -v python3 >/dev/null 2>&1 || manual_help "python3 not found (needed for pip)"
    say "installing ptxas: pip install --target .tools/cuda $NVCC_PIP_SPEC"
    rm -rf "$CUDA_DIR"
    mkdir -p "$CUDA_DIR" "$BIN_DIR"
    # Installing into a private --target directory touches no system package, so neither
    # pip's root warning nor Debian's externally-managed-environment guard applies.
    PIP_ROOT_USER_ACTION=ignore PIP_BREAK_SYSTEM_PACKAGES=1 \
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$CUDA_DIR" "$NVCC_PIP_SPEC" >&2 ||
        manual_help "pip install $NVCC_PIP_SPEC failed"
    ptxas_path="$(find "$CUDA_DIR" -type f -name ptxas -path '*/bin/*' | head -n1)"
    [[ -n "$ptxas_path" ]] || manual_help "no bin/ptxas inside the pip package $NVCC_PIP_SPEC"
    chmod +x "$ptxas_path"
    # A relative link keeps working if the checkout moves.
    ln -sfn "../cuda/${ptxas_path#"$CUDA_DIR"/}" "$BIN_DIR/ptxas"
    ptxas_ok || manual_help "$BIN_DIR/ptxas does not run ('ptxas --version' failed)"
    printf '%s\n' "$NVCC_PIP_SPEC" >"$STAMP"
    say "ptxas: $("$BIN_DIR/ptxas" --version | tail -n1)"
fi

# --- cargo configuration ----------------------------------------------------------------------
if [[ ! -f "$ROOT/.cargo/config.toml" ]] || ! grep -q LLVM_SYS_221_PREFIX "$ROOT/.cargo/config.toml"; then
    manual_help ".cargo/config.toml with [env] LLVM_SYS_221_PREFIX is missing (restore it from git)"
fi
