// What an exception in flight says about itself, without throwing again: for
// the messages of the runner and the calibrator, which turn anything a model
// or a hook throws into a Status.
#pragma once

#include <exception>
#include <new>
#include <string>

namespace inferd::scheduler::internal {

inline std::string DescribeException(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace inferd::scheduler::internal
