// ModelInfer: the gRPC codec over the request path every protocol shares
// (serving/): resolve, parse, submit; the answer is encoded back on the
// call's queue thread and counted with the code sent.
#include "grpc/handlers.h"
#include "grpc/infer_codec.h"
#include "grpc/status_conversion.h"
#include "serving/v2_inference.h"

namespace inferd::grpc {

using inference::ModelInferRequest;
using inference::ModelInferResponse;

namespace {

void InferWith(const serving::Services& services,
               const CallPtr<ModelInferRequest, ModelInferResponse>& call,
               const repository::ModelHandle& handle) {
  const serving::Call& info = call->info();
  auto answer_error = [&](const std::string& model, int64_t version, const Status& st) {
    serving::CountAnswer(services, info, model, version, st.code());
    call->Respond([st](ModelInferResponse*) { return ToGrpcStatus(st); });
  };
  auto parsed = ParseModelInferRequest(call->request_owner());
  if (!parsed.ok()) return answer_error(handle->name(), handle->version(), parsed.status());
  serving::V2ResponseContext out =
      serving::MakeResponseContext(handle->name(), handle->version(), *parsed);
  auto request = serving::MakeInferenceRequest(handle->config(), std::move(*parsed), info.received);
  if (!request.ok()) return answer_error(handle->name(), handle->version(), request.status());

  // The answer (kept by the call until it is sent) must not hold the call itself,
  // nor the model (the cache may unload it once its requests are done).
  auto done = [call, name = handle->name(), version = handle->version(), services, info,
               out = std::move(out)](StatusOr<scheduler::InferenceResponse> result) mutable {
    call->Respond([name, version, services, info, out,
                   result = std::move(result)](ModelInferResponse* response) {
      Status st = result.status();
      if (result.ok()) st = WriteModelInferResponse(*result, out, response);
      serving::CountAnswer(services, info, name, version, st.code(),
                           result.ok() ? &*result : nullptr);
      return ToGrpcStatus(st);
    });
  };
  serving::Submit(services, handle, std::move(*request), info, std::move(done));
}

}  // namespace

// The model may have to be loaded first (lazy, or evicted under the memory
// budget): the rest then runs on the repository's load thread when the load
// ends, never blocking the queue thread; the wait is bounded by the call's
// deadline (else the model's request_timeout_ms).
void HandleModelInfer(const serving::Services& services,
                      const CallPtr<ModelInferRequest, ModelInferResponse>& call) {
  const ModelInferRequest& req = call->request();
  serving::AcquireModel(
      services, call->info(), req.model_name(), req.model_version(),
      [services, call](StatusOr<serving::AcquiredModel> model) {
        if (!model.ok()) {  // counted by AcquireModel
          Status st = model.status();
          return call->Respond([st](ModelInferResponse*) { return ToGrpcStatus(st); });
        }
        InferWith(services, call, model->handle);
      });
}

}  // namespace inferd::grpc
