/* The target-initialization functions llvm-sys declares (and inkwell calls in
 * `Target::initialize_all` and `initialize_native`) as real symbols: LLVM's C
 * API defines them `static inline` in llvm-c/Target.h, so they exist only
 * where a C file calls them. llvm-sys compiles its own copy only when it finds
 * LLVM itself; tile's build script finds LLVM (build.rs) and compiles this.
 * "All" is the targets tile compiles for (NVPTX, AMDGPU, X86, AArch64), the
 * ones whose libraries it links when it links LLVM statically. */
#include <llvm-c/Target.h>

#define EACH_TARGET(step) \
    LLVMInitializeNVPTX##step(); \
    LLVMInitializeAMDGPU##step(); \
    LLVMInitializeX86##step(); \
    LLVMInitializeAArch64##step();

void LLVM_InitializeAllTargetInfos(void) { EACH_TARGET(TargetInfo) }
void LLVM_InitializeAllTargets(void) { EACH_TARGET(Target) }
void LLVM_InitializeAllTargetMCs(void) { EACH_TARGET(TargetMC) }
void LLVM_InitializeAllAsmPrinters(void) { EACH_TARGET(AsmPrinter) }
void LLVM_InitializeAllAsmParsers(void) {
    LLVMInitializeAMDGPUAsmParser();
    LLVMInitializeX86AsmParser();
    LLVMInitializeAArch64AsmParser();
}
void LLVM_InitializeAllDisassemblers(void) {
    LLVMInitializeAMDGPUDisassembler();
    LLVMInitializeX86Disassembler();
    LLVMInitializeAArch64Disassembler();
}
LLVMBool LLVM_InitializeNativeTarget(void) { return LLVMInitializeNativeTarget(); }
LLVMBool LLVM_InitializeNativeAsmParser(void) { return LLVMInitializeNativeAsmParser(); }
LLVMBool LLVM_InitializeNativeAsmPrinter(void) { return LLVMInitializeNativeAsmPrinter(); }
LLVMBool LLVM_InitializeNativeDisassembler(void) { return LLVMInitializeNativeDisassembler(); }
