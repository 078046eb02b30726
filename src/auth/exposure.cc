#include "auth/exposure.h"

#include <boost/asio/ip/address.hpp>

namespace inferd::auth {

Status CheckExposure(const std::string& bind_address, bool have_keys, bool allow_unauthenticated) {
  if (have_keys || allow_unauthenticated) return Status::Ok();
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(bind_address, ec);
  if (!ec && address.is_loopback()) return Status::Ok();
  return FailedPrecondition(
      "--bind " + bind_address +
      " makes the server reachable from other machines, and every API would be open to them: "
      "give --auth-keys FILE (docs/SECURITY.md), or --allow-unauthenticated if that is meant "
      "(a private network, a mesh that authenticates)");
}

}  // namespace inferd::auth
