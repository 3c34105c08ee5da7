// The C interface of tile-codegen's two C++ files (build/assemble.cpp and
// build/link.cpp), declared once more on the Rust side in src/native.rs.
// Each function returns 0 on success; its out-parameters then hold what it
// made, and on failure the messages, in memory from `malloc` that the caller
// frees with `tile_native_free`.
#ifndef TILE_NATIVE_H
#define TILE_NATIVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Assembles `text` (LLVM's assembly for `triple` and `cpu`) into an ELF
// object: the object on success, the assembler's messages on failure.
int tile_mc_assemble(const char *triple, const char *cpu, const char *text,
                     size_t text_len, char **out, size_t *out_len);

// Runs lld's ELF linker on `argc` arguments (without the program name);
// `messages` gets what it printed, on success too. The caller serializes
// calls: lld keeps its state in globals. Returns 2 when lld cannot run again
// in this process.
int tile_lld_link(const char *const *argv, size_t argc, char **messages,
                  size_t *messages_len);

void tile_native_free(char *bytes);

#ifdef __cplusplus
}
#endif

#endif
