# shellcheck shell=bash
# The project-local Triton that scripts/compile-vs-triton.sh and scripts/corpus-vs-triton.sh
# compile with (no GPU needed): `source scripts/triton-venv.sh` installs TILE_TRITON_SPEC
# (default triton==3.9.0) into .tools/triton-venv on first use and sets TRITON_PYTHON to its
# interpreter. The stamp .tools/triton-venv/.tile-installed records what was installed.
_tile_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_triton_venv="$_tile_root/.tools/triton-venv"
_triton_spec="${TILE_TRITON_SPEC:-triton==3.9.0}"
if [[ "$(cat "$_triton_venv/.tile-installed" 2>/dev/null || true)" != "$_triton_spec" ]]; then
    printf 'triton-venv: installing %s into %s (a download of several hundred MB, once)\n' \
        "$_triton_spec" "$_triton_venv" >&2
    python3 -m venv "$_triton_venv"
    "$_triton_venv/bin/pip" install --quiet "$_triton_spec"
    echo "$_triton_spec" >"$_triton_venv/.tile-installed"
fi
export TRITON_PYTHON="$_triton_venv/bin/python"
unset _tile_root _triton_venv _triton_spec
