#include "model/protobuf_io.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/message_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

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

namespace {

// Protobuf prints parse failures to stderr itself; our Error says it better.
void silence_protobuf() {
  static std::once_flag silenced;
  std::call_once(silenced, [] { google::protobuf::SetLogHandler(nullptr); });
}

void check_parse_size(uint64_t size, const std::string& origin, const std::string& what) {
  if (size == 0) throw Error(origin + ": file is empty, not " + what);
  if (size > static_cast<uint64_t>(INT_MAX))
    throw Error(origin + ": larger than 2 GiB, which protobuf cannot parse");
}

[[noreturn]] void parse_failed(const std::string& origin, const std::string& what) {
  throw Error(origin + ": not " + what + " (protobuf parse failed: truncated or corrupted?)");
}

// Closes the descriptor on every path out.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void parse_protobuf(google::protobuf::MessageLite& msg, const void* data, size_t size,
                    const std::string& origin, const std::string& what) {
  silence_protobuf();
  check_parse_size(size, origin, what);
  if (!msg.ParseFromArray(data, static_cast<int>(size))) parse_failed(origin, what);
}

void parse_protobuf_file(google::protobuf::MessageLite& msg, const std::string& path,
                         const std::string& file_what, const std::string& what) {
  silence_protobuf();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error("cannot read " + file_what + " '" + path + "': it is a directory");
  FileDescriptor f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw Error("cannot open " + file_what + " '" + path + "': " + std::strerror(errno));
  const off_t size = ::lseek(f.fd, 0, SEEK_END);
  if (size < 0 || ::lseek(f.fd, 0, SEEK_SET) != 0)
    throw Error("cannot read " + file_what + " '" + path + "': cannot tell its size");
  check_parse_size(static_cast<uint64_t>(size), path, what);
  google::protobuf::io::FileInputStream in(f.fd);
  if (!msg.ParseFromZeroCopyStream(&in)) {
    if (in.GetErrno() != 0)
      throw Error("cannot read " + file_what + " '" + path + "': " + std::strerror(in.GetErrno()));
    parse_failed(path, what);
  }
}

}  // namespace frugal
