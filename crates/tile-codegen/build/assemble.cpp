// Assembles LLVM's assembly text into an ELF object inside the compiler's
// process, as `llvm-mc -filetype=obj` does in one of its own: the same MC
// objects, set up the same way, so the bytes are those `llvm-mc` writes
// (crates/tile-codegen/tests/emit_targets.rs compares them with LLVM's own
// object). One code generation gives the assembly, which tile embeds, and
// the object, without a second process that would spend most of its time
// loading libLLVM. The Rust side is src/native.rs.

#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "native.h"

using namespace llvm;

namespace {

/// A copy of `bytes` in memory from `malloc`, for the caller to free with
/// `tile_native_free`.
char *copy_out(StringRef bytes, size_t *len) {
  char *out = static_cast<char *>(std::malloc(bytes.size() + 1));
  if (out == nullptr) {
    *len = 0;
    return nullptr;
  }
  std::memcpy(out, bytes.data(), bytes.size());
  out[bytes.size()] = '\0';
  *len = bytes.size();
  return out;
}

/// Every diagnostic of the source manager, printed as `llvm-mc` prints it.
void collect(const SMDiagnostic &diagnostic, void *messages) {
  raw_string_ostream os(*static_cast<std::string *>(messages));
  diagnostic.print("tile", os, /*ShowColors=*/false);
}

} // namespace

extern "C" int tile_mc_assemble(const char *triple_name, const char *cpu,
                                const char *text, size_t text_len, char **out,
                                size_t *out_len) {
  std::string messages;
  auto fail = [&](StringRef why) {
    messages += why;
    *out = copy_out(messages, out_len);
    return 1;
  };
  std::string error;
  const Target *target = TargetRegistry::lookupTarget(triple_name, error);
  if (target == nullptr)
    return fail(error);
  Triple triple(triple_name);
  MCTargetOptions options;
  std::unique_ptr<MCRegisterInfo> registers(target->createMCRegInfo(triple_name));
  std::unique_ptr<MCAsmInfo> asm_info(
      target->createMCAsmInfo(*registers, triple_name, options));
  std::unique_ptr<MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple_name, cpu, ""));
  std::unique_ptr<MCInstrInfo> instructions(target->createMCInstrInfo());
  if (!registers || !asm_info || !subtarget || !instructions)
    return fail("LLVM has no machine-code layer for " + triple.str());

  SourceMgr sources;
  sources.setDiagHandler(collect, &messages);
  // A copy: the lexer reads up to a NUL after the text.
  sources.AddNewSourceBuffer(
      MemoryBuffer::getMemBufferCopy(StringRef(text, text_len), "kernel.s"),
      SMLoc());
  MCContext context(triple, asm_info.get(), registers.get(), subtarget.get(),
                    &sources, &options);
  // The context's own errors (relocations, fixups) go where the parser's do.
  context.setDiagnosticHandler(
      [&](const SMDiagnostic &diagnostic, bool, const SourceMgr &,
          std::vector<const MDNode *> &) { collect(diagnostic, &messages); });
  std::unique_ptr<MCObjectFileInfo> file_info(
      target->createMCObjectFileInfo(context, /*PIC=*/false));
  context.setObjectFileInfo(file_info.get());

  SmallString<0> object;
  raw_svector_ostream object_stream(object);
  MCCodeEmitter *emitter = target->createMCCodeEmitter(*instructions, context);
  MCAsmBackend *backend =
      target->createMCAsmBackend(*subtarget, *registers, options);
  if (emitter == nullptr || backend == nullptr)
    return fail("LLVM cannot write objects for " + triple.str());
  std::unique_ptr<MCStreamer> streamer(target->createMCObjectStreamer(
      triple, context, std::unique_ptr<MCAsmBackend>(backend),
      backend->createObjectWriter(object_stream),
      std::unique_ptr<MCCodeEmitter>(emitter), *subtarget));
  streamer->emitVersionForTarget(triple, VersionTuple(), nullptr,
                                 VersionTuple());

  // Declared after the streamer, so destroyed before it: the parser refers
  // to it to the end (destroying the streamer first made some objects differ
  // from run to run; tests/emit_targets.rs runs the assembler 200 times).
  std::unique_ptr<MCAsmParser> parser(
      createMCAsmParser(sources, context, *streamer, *asm_info));
  std::unique_ptr<MCTargetAsmParser> target_parser(target->createMCAsmParser(
      *subtarget, *parser, *instructions, options));
  if (!target_parser)
    return fail("LLVM has no assembly parser for " + triple.str());
  parser->setTargetParser(*target_parser);
  if (parser->Run(/*NoInitialTextSection=*/false) || context.hadError())
    return fail("");
  *out = copy_out(object, out_len);
  return *out == nullptr ? 1 : 0;
}

extern "C" void tile_native_free(char *bytes) { std::free(bytes); }
