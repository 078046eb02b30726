// Prometheus text exposition format (0.0.4) helpers: escaping and number
// formatting. Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "metrics/registry.h"

namespace inferd::metrics {

// Label values: backslash, double quote and newline are escaped.
std::string EscapeLabelValue(std::string_view value);
// HELP text: backslash and newline are escaped (quotes are not).
std::string EscapeHelp(std::string_view help);
// Shortest text that reads back as the same double; +Inf, -Inf, NaN as Prometheus spells them.
std::string FormatValue(double value);
// `{a="x",b="y"}` (empty string for no labels); `extra` (e.g. le) is appended last.
std::string FormatLabels(const Labels& labels, std::string_view extra_name = {},
                         std::string_view extra_value = {});
// True for [a-zA-Z_:][a-zA-Z0-9_:]* (metric names) or, with colons disallowed, label names.
bool IsValidName(std::string_view name, bool allow_colon);

}  // namespace inferd::metrics
