// lld's ELF linker inside the compiler's process, as `ld.lld` runs it in one
// of its own: the AMDGPU code objects and the host back end's shared objects
// are linked without starting a process that would spend most of its time
// loading libLLVM. The Rust side is src/native.rs, which serializes calls
// (lld keeps its state in globals until the link ends).

#include "lld/Common/Driver.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "native.h"

LLD_HAS_DRIVER(elf)

extern "C" int tile_lld_link(const char *const *argv, size_t argc,
                             char **messages, size_t *messages_len) {
  std::vector<const char *> args{"ld.lld"};
  args.insert(args.end(), argv, argv + argc);
  std::string printed;
  llvm::raw_string_ostream out(printed), err(printed);
  lld::Result result =
      lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
  out.flush();
  err.flush();
  *messages = static_cast<char *>(std::malloc(printed.size() + 1));
  if (*messages != nullptr) {
    std::memcpy(*messages, printed.data(), printed.size());
    (*messages)[printed.size()] = '\0';
    *messages_len = printed.size();
  } else {
    *messages_len = 0;
  }
  if (!result.canRunAgain)
    return 2;
  return result.retCode == 0 ? 0 : 1;
}
