// Model names: the one place that decides whether a client's text may name a
// model of the store.
//
// A model name is the name of one folder directly inside the model store, so
// it must be usable as one path component and as text in JSON answers and
// metric labels. Every entry point of the repository (Get, Acquire, Load,
// Unload, GetStatus) checks names here before touching the file system, and
// the store scan skips folders whose names fail (with a warning), so no other
// code needs to defend against them.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace inferd::repository {

// Longest name in bytes: NAME_MAX of Linux file systems (ext4, xfs, tmpfs).
inline constexpr size_t kMaxModelNameBytes = 255;

// OK when `name` can name a model folder: 1..255 bytes of valid UTF-8 (no
// overlong forms, no surrogates), no control characters (NUL, newline, DEL
// and the C1 range), no '/' or '\', not "." or "..". kInvalidArgument
// otherwise, with a message saying which rule failed (the name is shown
// escaped, so the message itself is always printable UTF-8).
Status ValidateModelName(std::string_view name);

// `text` with bytes outside printable ASCII written as \xNN, at most
// `max_bytes` of it (then "..."): safe to put in a message or a log line.
std::string EscapeForMessage(std::string_view text, size_t max_bytes = 80);

}  // namespace inferd::repository
