# shellcheck shell=bash
# Environment for building and testing tile; `source scripts/env.sh` (scripts/setup.sh installs
# what it points at). Safe to source more than once.
_tile_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LLVM_SYS_221_PREFIX="${LLVM_SYS_221_PREFIX:-/usr/lib/llvm-22}"
case ":$PATH:" in
*":$LLVM_SYS_221_PREFIX/bin:"*) ;;
*) export PATH="$LLVM_SYS_221_PREFIX/bin:$PATH" ;;
esac
# .tools/bin (ptxas) goes first, then LLVM 22's tools ahead of any older LLVM in /usr/bin.
case ":$PATH:" in
*":$_tile_root/.tools/bin:"*) ;;
*) export PATH="$_tile_root/.tools/bin:$PATH" ;;
esac
unset _tile_root
