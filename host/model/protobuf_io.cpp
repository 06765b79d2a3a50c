#include "model/protobuf_io.h"

#include <google/protobuf/message_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "frugal/error.h"

namespace frugal {

std::string read_file_bytes(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("cannot read " + what + " '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error("cannot open " + what + " '" + path + "': " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) throw Error("cannot read " + what + " '" + path + "': cannot tell its size");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size))
    throw Error("cannot read " + what + " '" + path + "': " + std::strerror(errno));
  return bytes;
}

void parse_protobuf(google::protobuf::MessageLite& msg, const void* data, size_t size,
                    const std::string& origin, const std::string& what) {
  // Protobuf prints parse failures to stderr itself; our Error says it better.
  static std::once_flag silenced;
  std::call_once(silenced, [] { google::protobuf::SetLogHandler(nullptr); });
  if (size == 0) throw Error(origin + ": file is empty, not " + what);
  if (size > static_cast<size_t>(INT_MAX))
    throw Error(origin + ": larger than 2 GiB, which protobuf cannot parse");
  if (!msg.ParseFromArray(data, static_cast<int>(size)))
    throw Error(origin + ": not " + what + " (protobuf parse failed: truncated or corrupted?)");
}

}  // namespace frugal
