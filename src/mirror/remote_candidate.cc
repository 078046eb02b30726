#include "mirror/remote_candidate.h"

#include <simdjson.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstring>
#include <map>
#include <thread>

#include "bench/bench_options.h"
#include "bench/http_connection.h"
#include "bench/step_result.h"
#include "common/json_writer.h"
#include "serving/bytes_elements.h"

namespace inferd::mirror {

namespace asio = boost::asio;

size_t WriteV2BinaryRequest(const scheduler::InferenceRequest& request,
                            const std::string& raw_input_name, std::string* body) {
  std::vector<NamedTensor> inputs = request.inputs;
  if (!request.raw.empty()) {
    std::vector<std::byte> elements;
    for (const auto& r : request.raw) serving::AppendBytesElement(elements, r.bytes);
    inputs = {{raw_input_name,
               Tensor::FromBytes(DataType::kBytes, {static_cast<int64_t>(request.raw.size())},
                                 std::move(elements))}};
  }
  JsonWriter w;
  w.BeginObject();
  if (!request.id.empty()) w.Key("id").String(request.id);
  w.Key("inputs").BeginArray();
  for (const auto& in : inputs) {
    w.BeginObject();
    w.Key("name").String(in.name);
    w.Key("datatype").String(DataTypeName(in.tensor.dtype()));
    w.Key("shape").BeginArray();
    for (int64_t d : in.tensor.shape()) w.Int(d);
    w.EndArray();
    w.Key("parameters").BeginObject();
    w.Key("binary_data_size").Uint(in.tensor.byte_size());
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.Key("parameters").BeginObject().Key("binary_data_output").Bool(true).EndObject();
  w.EndObject();
  *body = w.Take();
  const size_t header_length = body->size();
  for (const auto& in : inputs) {
    body->append(reinterpret_cast<const char*>(in.tensor.data()), in.tensor.byte_size());
  }
  return header_length;
}

namespace {

// A JSON `data` array (flattened) as a tensor of `dtype`.
StatusOr<Tensor> TensorFromJson(simdjson::dom::element data, DataType dtype, const Shape& shape,
                                const std::string& name) {
  Tensor t = Tensor::Allocate(dtype, shape);
  const int64_t n = t.num_elements();
  int64_t i = 0;
  std::vector<simdjson::dom::element> stack = {data};
  while (!stack.empty()) {
    simdjson::dom::element e = stack.back();
    stack.pop_back();
    if (e.is_array()) {
      simdjson::dom::array a = e.get_array();
      std::vector<simdjson::dom::element> items(a.begin(), a.end());
      for (auto it = items.rbegin(); it != items.rend(); ++it) stack.push_back(*it);
      continue;
    }
    double v = 0;
    if (e.get(v) != simdjson::SUCCESS) {
      int64_t iv = 0;
      bool bv = false;
      if (e.get(iv) == simdjson::SUCCESS) {
        v = static_cast<double>(iv);
      } else if (e.get(bv) == simdjson::SUCCESS) {
        v = bv;
      } else {
        return InvalidArgument("output '" + name + "': a data element is not a number");
      }
    }
    if (i >= n) break;
    std::byte* p = t.mutable_data() + i * static_cast<int64_t>(DataTypeSize(dtype));
    auto store = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
    switch (dtype) {
      case DataType::kFp32: store(static_cast<float>(v)); break;
      case DataType::kFp64: store(v); break;
      case DataType::kInt32: store(static_cast<int32_t>(v)); break;
      case DataType::kInt64: store(static_cast<int64_t>(v)); break;
      case DataType::kInt8: store(static_cast<int8_t>(v)); break;
      case DataType::kUint8:
      case DataType::kBool: store(static_cast<uint8_t>(v)); break;
      default:
        return InvalidArgument("output '" + name + "': JSON data of datatype " +
                               std::string(DataTypeName(dtype)) + " is not read; ask for binary");
    }
    ++i;
  }
  if (i != n) {
    return InvalidArgument("output '" + name + "': " + std::to_string(i) +
                           " data elements for shape " + ShapeToString(shape));
  }
  return t;
}

}  // namespace

StatusOr<std::vector<NamedTensor>> ParseV2Response(const std::string& body, size_t header_length) {
  if (header_length == std::string::npos) header_length = body.size();
  if (header_length > body.size()) {
    return InvalidArgument("Inference-Header-Content-Length " + std::to_string(header_length) +
                           " exceeds the body (" + std::to_string(body.size()) + " bytes)");
  }
  simdjson::dom::parser parser;
  simdjson::padded_string header(body.data(), header_length);
  simdjson::dom::element root;
  if (parser.parse(header).get(root) != simdjson::SUCCESS) {
    return InvalidArgument("the candidate's answer is not v2 JSON");
  }
  simdjson::dom::array outputs;
  if (root["outputs"].get(outputs) != simdjson::SUCCESS) {
    return InvalidArgument("the candidate's answer has no `outputs` list");
  }
  std::vector<NamedTensor> out;
  size_t offset = header_length;
  for (simdjson::dom::element o : outputs) {
    std::string_view name, datatype;
    simdjson::dom::array shape_json;
    if (o["name"].get(name) || o["datatype"].get(datatype) || o["shape"].get(shape_json)) {
      return InvalidArgument("an output of the candidate's answer lacks name, datatype or shape");
    }
    auto dtype = ParseDataType(datatype);
    if (!dtype) return InvalidArgument("output '" + std::string(name) + "': unknown datatype");
    Shape shape;
    for (simdjson::dom::element d : shape_json) {
      int64_t v = 0;
      if (d.get(v) || v < 0) return InvalidArgument("output '" + std::string(name) + "': bad shape");
      shape.push_back(v);
    }
    RETURN_IF_ERROR(CheckShape(shape, "output '" + std::string(name) + "'"));
    uint64_t size = 0;
    if (o["parameters"]["binary_data_size"].get(size) == simdjson::SUCCESS) {
      if (size > body.size() - offset) {
        return InvalidArgument("output '" + std::string(name) + "': binary data past the body");
      }
      const auto* p = reinterpret_cast<const std::byte*>(body.data() + offset);
      std::vector<std::byte> bytes(p, p + size);
      offset += size;
      if (*dtype != DataType::kBytes &&
          static_cast<int64_t>(size) != ByteSize(*dtype, shape)) {
        return InvalidArgument("output '" + std::string(name) + "': " + std::to_string(size) +
                               " bytes for " + ShapeToString(shape));
      }
      out.push_back({std::string(name), Tensor::FromBytes(*dtype, shape, std::move(bytes))});
      continue;
    }
    simdjson::dom::element data;
    if (o["data"].get(data)) {
      return InvalidArgument("output '" + std::string(name) + "': neither binary nor JSON data");
    }
    ASSIGN_OR_RETURN(Tensor t, TensorFromJson(data, *dtype, shape, std::string(name)));
    out.push_back({std::string(name), std::move(t)});
  }
  return out;
}

class RemoteCandidate::Client {
 public:
  Client(const Options& options, asio::ip::tcp::resolver::results_type endpoints,
         std::string request_head)
      : options_(options),
        endpoints_(std::move(endpoints)),
        request_head_(std::move(request_head)),
        work_(asio::make_work_guard(ioc_)),
        timer_(ioc_) {
    Tick();
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "inferd-mirror");
      ioc_.run();
    });
  }

  ~Client() {
    asio::post(ioc_, [this] {
      stopping_ = true;
      timer_.cancel();
      for (auto& c : connections_) c->Close();
      work_.reset();
    });
    thread_.join();  // the aborted reads have completed their copies by now
    for (auto& [id, done] : pending_) done(Unavailable("the mirror was removed"));
  }

  void Send(const scheduler::InferenceRequest& request, CandidateDone done) {
    auto copy = std::make_shared<scheduler::InferenceRequest>();
    copy->id = request.id;
    copy->inputs = request.inputs;
    copy->raw = request.raw;
    asio::post(ioc_, [this, copy, done = std::move(done)]() mutable {
      Start(*copy, std::move(done));
    });
  }

 private:
  // On the client thread.
  void Start(const scheduler::InferenceRequest& request, CandidateDone done) {
    if (stopping_) return done(Unavailable("the mirror was removed"));
    std::string body;
    const size_t header_length = WriteV2BinaryRequest(request, options_.raw_input_name, &body);
    auto bytes = std::make_shared<std::string>(
        request_head_ + "Content-Length: " + std::to_string(body.size()) +
        "\r\nInference-Header-Content-Length: " + std::to_string(header_length) + "\r\n\r\n");
    *bytes += body;
    std::shared_ptr<bench::HttpConnection> conn;
    for (auto& c : connections_) {
      if (!c->busy()) conn = c;
    }
    if (!conn) {
      conn = std::make_shared<bench::HttpConnection>(ioc_, endpoints_, options_.timeout);
      connections_.push_back(conn);
    }
    const uint64_t id = next_id_++;
    pending_[id] = std::move(done);
    bench::HttpConnection* raw = conn.get();
    conn->Send(bytes.get(), [this, id, bytes, raw](int status) { Finish(id, raw, status); });
  }

  void Finish(uint64_t id, bench::HttpConnection* conn, int status) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    CandidateDone done = std::move(it->second);
    pending_.erase(it);
    if (status == bench::kTimeout) {
      return done(DeadlineExceeded("no answer from " + options_.url + " within " +
                                   std::to_string(options_.timeout.count()) + " ms"));
    }
    if (status == bench::kConnectionError) {
      return done(Unavailable("cannot reach " + options_.url));
    }
    const auto& response = conn->response();
    if (status != 200) {
      return done(Unavailable(options_.url + " answered " + std::to_string(status) + ": " +
                              response.body().substr(0, 300)));
    }
    size_t header_length = std::string::npos;
    auto h = response.find("Inference-Header-Content-Length");
    if (h != response.end()) {
      try {
        header_length = std::stoul(std::string(h->value()));
      } catch (const std::exception&) {
        return done(Unavailable(options_.url + ": bad Inference-Header-Content-Length"));
      }
    }
    auto outputs = ParseV2Response(response.body(), header_length);
    if (!outputs.ok()) return done(Unavailable(options_.url + ": " + outputs.status().message()));
    done(std::move(*outputs));
  }

  void Tick() {
    timer_.expires_after(std::chrono::milliseconds(20));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      const auto now = std::chrono::steady_clock::now();
      for (auto& c : connections_) c->CloseIfExpired(now);
      Tick();
    });
  }

  const Options options_;
  const asio::ip::tcp::resolver::results_type endpoints_;
  const std::string request_head_;  // request line and headers but the lengths
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer timer_;
  // Only the client thread touches these (and the destructor, once it has joined it).
  bool stopping_ = false;
  std::vector<std::shared_ptr<bench::HttpConnection>> connections_;
  std::map<uint64_t, CandidateDone> pending_;
  uint64_t next_id_ = 0;
  std::thread thread_;
};

StatusOr<std::shared_ptr<RemoteCandidate>> RemoteCandidate::Create(const Options& options) {
  const std::string form = "expected http://host:port/v2/models/NAME[/versions/V]";
  auto url = bench::ParseUrl(options.url);
  if (!url.ok() || url->scheme != "http") {
    return InvalidArgument("mirror.to: '" + options.url + "': " + form);
  }
  const std::string& path = url->path_prefix;
  if (path.rfind("/v2/models/", 0) != 0 || path.size() == std::string("/v2/models/").size()) {
    return InvalidArgument("mirror.to: '" + options.url + "': " + form);
  }
  asio::io_context resolve_ctx;
  asio::ip::tcp::resolver resolver(resolve_ctx);
  boost::system::error_code ec;
  auto endpoints = resolver.resolve(url->host, url->port, ec);
  if (ec) {
    return Unavailable("mirror.to: '" + options.url + "': cannot resolve '" + url->host +
                       "': " + ec.message());
  }
  std::string host = url->host;
  if (url->port != "80") host += ":" + url->port;
  std::string head = "POST " + path + "/infer HTTP/1.1\r\nHost: " + host +
                     "\r\nUser-Agent: inferd-mirror\r\nContent-Type: application/octet-stream\r\n";
  auto client = std::make_unique<Client>(options, std::move(endpoints), std::move(head));
  return std::shared_ptr<RemoteCandidate>(new RemoteCandidate(std::move(client)));
}

RemoteCandidate::RemoteCandidate(std::unique_ptr<Client> client) : client_(std::move(client)) {}
RemoteCandidate::~RemoteCandidate() = default;

void RemoteCandidate::Send(const scheduler::InferenceRequest& request, TimePoint,
                           CandidateDone done) {
  client_->Send(request, std::move(done));
}

}  // namespace inferd::mirror
