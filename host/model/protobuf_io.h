// Reading files and parsing protobuf messages with errors that name the file.
#pragma once

#include <cstddef>
#include <string>

namespace google::protobuf {
class MessageLite;
}

namespace frugal {

// Whole file as bytes. Throws Error naming `path` when it is missing, a
// directory or unreadable; `what` says what the file was meant to be.
std::string read_file_bytes(const std::string& path, const std::string& what);

// ParseFromArray with protobuf's own stderr logging silenced; throws Error
// "<origin>: not <what> (...)" when the bytes are not a valid message.
void parse_protobuf(google::protobuf::MessageLite& msg, const void* data, size_t size,
                    const std::string& origin, const std::string& what);

// The same, read straight from the file `path` without holding its bytes in
// memory beside the parsed message (a model's weights are then held once).
// Errors name the path as read_file_bytes's and parse_protobuf's do.
// `file_what` names the file in read errors ("ONNX model"), `what` the message
// in parse errors ("an ONNX model").
void parse_protobuf_file(google::protobuf::MessageLite& msg, const std::string& path,
                         const std::string& file_what, const std::string& what);

}  // namespace frugal
