// Compiled only when LLVM is linked statically (feature `static-llvm`).
//
// lld's ELF driver initializes every target LLVM was built with (LTO needs
// them), and LLVM's pass pipelines register the passes of every plugin linked
// into LLVM's tools (Polly, on distributions that build it in). Linked
// statically, tile carries the libraries of its own targets (NVPTX, AMDGPU,
// X86, AArch64) and no Polly: the other targets' initializers are generated
// as functions that do nothing (build.rs, `stub_targets.c`), and Polly's
// plugin entry registers nothing.
//
// The entry returns LLVM's `PassPluginLibraryInfo` (llvm/Passes/PassPlugin.h
// in the LLVM source; some distributions do not install the header): the
// plugin API version, a name, a version and the registration callback.
#include <cstdint>

namespace llvm {
class PassBuilder;
}

struct PassPluginLibraryInfo {
    uint32_t api_version;
    const char *name;
    const char *version;
    void (*register_callbacks)(llvm::PassBuilder &);
};

static void register_nothing(llvm::PassBuilder &) {}

PassPluginLibraryInfo getPollyPluginInfo() {
    // LLVM_PLUGIN_API_VERSION.
    return {1, "Polly (not linked)", "0", register_nothing};
}
