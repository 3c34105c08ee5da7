/* The target-initialization functions llvm-sys declares (and inkwell calls in
 * `Target::initialize_all` and `initialize_native`) as real symbols: LLVM's C
 * API defines them `static inline` in llvm-c/Target.h, so they exist only
 * where a C file calls them. llvm-sys compiles its own copy only when it finds
 * LLVM itself; tile's build script finds LLVM (build.rs) and compiles this. */
#include <llvm-c/Target.h>

void LLVM_InitializeAllTargetInfos(void) { LLVMInitializeAllTargetInfos(); }
void LLVM_InitializeAllTargets(void) { LLVMInitializeAllTargets(); }
void LLVM_InitializeAllTargetMCs(void) { LLVMInitializeAllTargetMCs(); }
void LLVM_InitializeAllAsmPrinters(void) { LLVMInitializeAllAsmPrinters(); }
void LLVM_InitializeAllAsmParsers(void) { LLVMInitializeAllAsmParsers(); }
void LLVM_InitializeAllDisassemblers(void) { LLVMInitializeAllDisassemblers(); }
LLVMBool LLVM_InitializeNativeTarget(void) { return LLVMInitializeNativeTarget(); }
LLVMBool LLVM_InitializeNativeAsmParser(void) { return LLVMInitializeNativeAsmParser(); }
LLVMBool LLVM_InitializeNativeAsmPrinter(void) { return LLVMInitializeNativeAsmPrinter(); }
LLVMBool LLVM_InitializeNativeDisassembler(void) { return LLVMInitializeNativeDisassembler(); }
