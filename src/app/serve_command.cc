#include "app/serve_command.h"

#include <signal.h>
#include <unistd.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>

#include "app/crash_recovery.h"
#include "auth/exposure.h"
#include "auth/key_store.h"
#include "backend/backend_set.h"
#include "common/thread_team.h"
#include "grpc/grpc_server.h"
#include "http/http_server.h"
#include "memory/allocator.h"
#include "dashboard/node_facts.h"
#include "dashboard/sampler.h"
#include "metrics/process_metrics.h"
#include "metrics/registry.h"
#include "mirror/mirror_set.h"
#include "pipeline/model_hooks.h"
#include "repository/memory_budget.h"
#include "repository/model_repository.h"
#include "scheduler/memory_admission.h"
#include "scheduler/scheduler.h"
#include "serving/request_metrics.h"
#include "serving/services.h"
#include "supervisor/listening_sockets.h"
#include "supervisor/supervisor.h"
#include "topology/core_plan.h"
#include "topology/cpu_budget.h"
#include "topology/plan_metrics.h"
#include "topology/topology_command.h"
#include "tls/certificate_store.h"

namespace inferd::app {
namespace {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The models the plan is made for: those loaded at start, or every one of the
// store. Models loaded later through the management API run as `auto`.
std::vector<config::ModelConfig> PlannedConfigs(const ServeOptions& options) {
  std::vector<std::string> problems;
  auto all = topology::LoadStoreConfigs(options.model_store, &problems);
  if (!all.ok()) return {};
  if (options.models == "all") return *all;
  std::vector<config::ModelConfig> chosen;
  for (const auto& name : SplitList(options.models)) {
    for (const auto& c : *all) {
      if (c.name == name) chosen.push_back(c);
    }
  }
  return chosen;
}

void LogPlan(const topology::CpuBudget& budget, const topology::CorePlan& plan) {
  spdlog::info("cpu budget: {} usable cores (cpus {})", budget.usable_cores(),
               [&] {
                 std::string s;
                 for (int c : budget.usable_cpus()) s += (s.empty() ? "" : ",") + std::to_string(c);
                 return s;
               }());
  for (const auto& e : plan.executors) {
    std::string cores;
    for (int c : e.cores) cores += (cores.empty() ? "" : ",") + std::to_string(c);
    spdlog::info("executor {}: {} intra-op thread(s) pinned to cpus {}", e.id, e.num_threads, cores);
  }
  for (const auto& m : plan.models) {
    spdlog::info("model '{}': up to {} executor(s) at once", m.name, m.max_concurrency);
  }
  for (const auto& w : plan.warnings) spdlog::warn("core plan: {}", w);
  for (const auto& n : plan.notes) spdlog::info("core plan: {}", n);
}

// Blocks until SIGTERM or SIGINT; runs `on_hangup` at each SIGHUP.
int WaitForSignal(const std::function<void()>& on_hangup) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  while (true) {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != SIGHUP) return sig;
    on_hangup();
  }
}

// The state dir of a process without a supervisor and without --state-dir.
std::string PrivateStateDir() {
  char dir[] = "/tmp/inferd-state-XXXXXX";
  return ::mkdtemp(dir) ? dir : "";
}

// Memory admission (scheduler/memory_admission.h): the limit is the smaller
// of --memory-limit SIZE and the cgroup's memory limit. Not --memory-budget:
// that budget is the models' own memory (the cache pages models to stay under
// it), far below what the whole process holds (libtorch, the allocator, the
// buffers), so a process limit read from it refused every request of a
// small cache. The probe reads /proc and the allocator, and measures each
// model's activation memory whether or not there is a limit.
void SetMemoryAdmission(int64_t limit_bytes, scheduler::Scheduler::Options* so) {
  so->memory_probe.resident = [] { return repository::ReadResidentBytes(); };
  so->memory_probe.take_peak = [] { return repository::TakePeakResidentBytes(); };
  so->memory_probe.release_free = [] { memory::ReleaseFreeMemory(); };
  if (limit_bytes > 0) {
    so->memory_limit = limit_bytes;
    so->memory_limit_source = "--memory-limit " + repository::FormatBytes(limit_bytes);
  }
  if (auto cgroup = repository::ReadCgroupMemoryLimit();
      cgroup && (so->memory_limit == 0 || cgroup->bytes < so->memory_limit)) {
    so->memory_limit = cgroup->bytes;
    so->memory_limit_source = cgroup->source;
  }
  if (so->memory_limit > 0) {
    spdlog::info("memory admission: limit {} ({}), less a margin of {}; a batch that would pass "
                 "it is cut, a request that cannot fit alone is refused",
                 repository::FormatBytes(so->memory_limit), so->memory_limit_source,
                 repository::FormatBytes(scheduler::AdmissionMargin(so->memory_limit)));
  }
}

}  // namespace

int RunServe(const ServeOptions& options) {
  if (!options.no_supervisor && options.serving_sockets.empty()) {
    return supervisor::RunSupervisor({options.argv, options.bind, options.http_port,
                                      options.management_port, options.metrics_port,
                                      options.grpc_port, options.state_dir,
                                      options.drain_timeout_s});
  }
  std::optional<supervisor::ServingSockets> inherited;
  if (!options.serving_sockets.empty()) {
    auto parsed = supervisor::ParseServingSockets(options.serving_sockets);
    if (!parsed.ok()) {
      spdlog::error("{}", parsed.status().message());
      return 1;
    }
    inherited = *parsed;
  }
  // Block the stop signals in every thread; the main thread waits for them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (auto exposed = auth::CheckExposure(options.bind, !options.auth_keys.empty(),
                                         options.allow_unauthenticated);
      !exposed.ok()) {
    spdlog::error("{}", exposed.message());
    return 1;
  }
  std::unique_ptr<auth::KeyStore> keys;
  if (!options.auth_keys.empty()) {
    auto created = auth::KeyStore::Create({options.auth_keys});
    if (!created.ok()) {
      spdlog::error("{}", created.status().message());
      return 1;
    }
    keys = std::move(*created);
  }
  std::unique_ptr<tls::CertificateStore> certificates;
  if (!options.tls_cert.empty() || !options.tls_key.empty()) {
    auto created = tls::CertificateStore::Create({options.tls_cert, options.tls_key});
    if (!created.ok()) {
      spdlog::error("{}", created.status().message());
      return 1;
    }
    certificates = std::move(*created);
  }

  topology::DetectOptions detect;
  detect.cpus = options.cpus;
  auto budget = topology::DetectCpuBudget(detect);
  if (!budget.ok()) {
    spdlog::error("cpu budget: {}", budget.status().message());
    return 1;
  }
  topology::PlanOptions plan_options;
  plan_options.auto_threads = options.auto_threads;
  auto plan = topology::MakeCorePlan(budget->usable, PlannedConfigs(options), plan_options);
  if (!plan.ok()) {
    spdlog::error("core plan: {}", plan.status().message());
    return 1;
  }
  LogPlan(*budget, *plan);
  SetIdleCores(budget->usable_cpus());  // where threads given up may run

  metrics::Registry registry;
  topology::ExportPlanMetrics(*budget, *plan, registry);
  metrics::ExportProcessMetrics(registry, {.cpu_stat_file = budget->cgroup.cpu_stat_file});
  registry
      .GetGauge("inferd_allocator_info", "the heap allocator linked into this binary",
                {{"allocator", std::string(memory::AllocatorName())}})
      .Set(1);

  // Before any model loads: the previous process's crash, this one's journal.
  const bool own_state_dir = options.state_dir.empty();
  CrashRecovery::Options co;
  co.state_dir = own_state_dir ? PrivateStateDir() : options.state_dir;
  co.previous_exit = options.previous_exit;
  co.restarts = options.restarts;
  co.metrics = &registry;
  auto recovery = CrashRecovery::Start(co);
  if (!recovery.ok()) {
    spdlog::error("{}", recovery.status().message());
    return 1;
  }

  backend::BackendSet::Options backend_options;
  backend_options.create.wide_calls = options.widen_lone_requests;
  auto backend = backend::BackendSet::Create(backend_options);
  if (!backend.ok()) {
    spdlog::error("{}", backend.status().message());
    return 1;
  }
  std::string budget_note;
  auto budget_bytes = repository::ResolveMemoryBudget(options.memory_budget, &budget_note);
  if (!budget_bytes.ok()) {
    spdlog::error("{}", budget_bytes.status().message());
    return 1;
  }
  if (!budget_note.empty()) spdlog::info("{}", budget_note);
  int64_t limit_bytes = 0;
  if (!options.memory_limit.empty()) {
    auto limit = repository::ParseByteSize(options.memory_limit);
    if (!limit.ok()) {
      spdlog::error("{}", limit.status().WithContext("--memory-limit").message());
      return 1;
    }
    limit_bytes = *limit;
  }
  scheduler::Scheduler::Options so;
  SetMemoryAdmission(limit_bytes, &so);
  for (const auto& e : plan->executors) so.executors.push_back({e.cores, e.num_threads});
  so.backend = backend->get();
  so.metrics = &registry;
  so.max_queue_bytes = options.max_queue_bytes;
  so.widen_lone_requests = options.widen_lone_requests;
  so.time_unbatched = true;  // max_batch_size 1 models: a limit from a measurement
  auto scheduler = scheduler::Scheduler::Create(so);
  if (!scheduler.ok()) {
    spdlog::error("scheduler: {}", scheduler.status().message());
    return 1;
  }

  const topology::CorePlan core_plan = *plan;
  repository::ModelRepository::Options ro;
  ro.store_dir = options.model_store;
  if (options.models != "all") ro.models = SplitList(options.models);
  ro.lazy_load = options.lazy_load;
  ro.load_threads = options.load_threads;
  ro.memory_budget = *budget_bytes;
  ro.metrics = &registry;
  // Unloaded models' memory goes back to the system, not to the heap's free lists.
  ro.release_memory = [] { memory::ReleaseFreeMemory(); };
  ro.backend = backend->get();
  ro.scheduler = scheduler->get();
  ro.hooks_factory = pipeline::MakeModelHooks;
  CrashRecovery* crashes = recovery->get();
  ro.placement = [core_plan, crashes](const config::ModelConfig& config,
                                      scheduler::ModelSpec* spec) {
    if (const auto* m = core_plan.FindModel(config.name)) {
      spec->max_concurrency = m->max_concurrency;
      spec->executor_ids = m->executor_ids;
    }
    spec->forward_mark = crashes->Mark(config.name, std::stoll(spec->version));
  };
  ro.on_load_asked = [crashes](const std::string& model) { crashes->OnLoadAsked(model); };
  auto repo = repository::ModelRepository::Create(ro);
  if (!repo.ok()) {
    spdlog::error("model store: {}", repo.status().message());
    return 1;
  }

  const int64_t rss_at_start = repository::ReadResidentBytes();
  spdlog::info("models: {} (memory budget {}, {} load threads; resident memory before loading {})",
               options.lazy_load ? "loaded on first request unless `load: eager`"
                                 : "loaded at start unless `load: lazy`",
               *budget_bytes > 0 ? repository::FormatBytes(*budget_bytes) : "none",
               options.load_threads, repository::FormatBytes(rss_at_start));
  (*recovery)->QuarantineAtStart(**repo);
  (*repo)->StartEagerLoads();

  dashboard::Sampler::Options dash;
  dash.metrics = &registry;
  dash.node = dashboard::DescribeNode(*budget, core_plan);
  auto sampler = dashboard::Sampler::Create(std::move(dash));
  if (!sampler.ok()) {
    spdlog::error("dashboard: {}", sampler.status().message());
    return 1;
  }
  // Traffic mirroring: the store's `mirror:` keys now, the management API later.
  mirror::MirrorSet mirrors({repo->get(), &registry});
  for (const auto& failure : mirrors.SetFromConfigs()) spdlog::error("mirror: {}", failure);

  std::atomic<bool> draining{false};
  // What every port's routes and handlers reach the server through.
  serving::RequestMetrics request_metrics(&registry);
  serving::Services services;
  services.repository = repo->get();
  services.metrics = &registry;
  services.request_metrics = &request_metrics;
  services.tap = &mirrors;
  services.ready = [&] { return !draining.load() && (*repo)->AllReady(); };

  std::vector<std::unique_ptr<http::HttpServer>> servers;
  using Role = http::HttpServer::Role;
  const std::pair<Role, int> ports[] = {{Role::kInference, options.http_port},
                                        {Role::kManagement, options.management_port},
                                        {Role::kMetrics, options.metrics_port}};
  for (const auto& [role, port] : ports) {
    http::HttpServer::Options ho;
    ho.role = role;
    ho.bind_address = options.bind;
    ho.port = static_cast<uint16_t>(port);
    ho.body_limit = options.body_limit;
    ho.threads = options.network_threads;
    ho.max_connections = options.max_connections;
    ho.keys = keys.get();
    ho.tls = certificates.get();
    ho.dashboard = sampler->get();
    ho.mirrors = &mirrors;
    if (inherited) {
      ho.listen_fd = role == Role::kInference    ? inherited->http_fd
                     : role == Role::kManagement ? inherited->management_fd
                                                 : inherited->metrics_fd;
    }
    auto server = http::HttpServer::Create(ho, services);
    if (!server.ok()) {
      spdlog::error("http: {}", server.status().message());
      return 1;
    }
    servers.push_back(std::move(*server));
  }
  grpc::GrpcServer::Options go;
  go.bind_address = options.bind;
  // The supervisor holds the gRPC port's number (listening_sockets.h).
  go.port = static_cast<uint16_t>(inherited ? inherited->grpc_port : options.grpc_port);
  go.threads = options.network_threads;
  go.max_message_bytes = options.body_limit;
  go.tls_cert = options.tls_cert;
  go.tls_key = options.tls_key;
  go.keys = keys.get();
  auto grpc_server = grpc::GrpcServer::Create(go, services);
  if (!grpc_server.ok()) {
    spdlog::error("grpc: {}", grpc_server.status().message());
    return 1;
  }
  for (auto& s : servers) s->Start();
  (*grpc_server)->Start();
  std::printf("inferd: listening http=%u management=%u metrics=%u grpc=%u\n", servers[0]->port(),
              servers[1]->port(), servers[2]->port(), (*grpc_server)->port());
  std::fflush(stdout);
  if (options.ready_fd >= 0) {  // the supervisor: a crash from now on is restarted
    const char up = 1;
    (void)!::write(options.ready_fd, &up, 1);
    ::close(options.ready_fd);
  }

  const bool started = (*repo)->WaitForStartup(TimePoint::max());
  spdlog::info("inferd: ready={}", started && services.ready());

  const int sig = WaitForSignal([&] {
    spdlog::info("received SIGHUP: re-reading the key and certificate files");
    if (keys) (void)keys->Reload();
    if (certificates) (void)certificates->Reload();
  });
  spdlog::info("received {}: draining (grace period {} s)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
               options.drain_timeout_s);
  // Refuse first, then report not ready: whoever sees readiness false (a
  // probe, a test) can count on new requests being refused from then on.
  (*scheduler)->StopAccepting();
  draining = true;
  const auto grace = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(options.drain_timeout_s));
  const TimePoint drain_start = Clock::Real()->Now();
  const bool idle = (*scheduler)->WaitIdle(drain_start + grace);
  // Forwards still running, or stuck in executor threads given up earlier,
  // cannot be stopped: the process exits without waiting for them (below).
  const int stuck = (*scheduler)->abandoned_executors();
  if (!idle) {
    spdlog::warn("drain: grace period over with requests still running");
    for (const auto& line : (*scheduler)->DescribeRunning()) {
      spdlog::warn("drain: abandoning the batch of {}", line);
    }
    // Told now, so that the ports close on answers written, not on clients
    // still waiting.
    const size_t told = (*scheduler)->AnswerUnfinished(Unavailable(fmt::format(
        "inferd is shutting down: its drain's grace period ({} s) ended before this request "
        "was answered",
        options.drain_timeout_s)));
    spdlog::warn("drain: {} request(s) answered 503, unfinished", told);
  }
  if (stuck > 0) {
    spdlog::warn("drain: abandoning {} executor thread(s) stuck in forwards given up earlier", stuck);
  }
  spdlog::info("drain: requests done after {} ms; closing the ports",
               std::chrono::duration_cast<std::chrono::milliseconds>(Clock::Real()->Now() -
                                                                     drain_start)
                   .count());
  // Calls still in flight (a repository load or unload, an answer being
  // sent) get what is left of the grace period, at least a second to send
  // the answers just computed: a fresh stop_grace here would let SIGTERM
  // take up to the drain's grace plus 5 s.
  const auto left = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 drain_start + grace - Clock::Real()->Now()),
                             std::chrono::milliseconds(1000));
  for (auto& s : servers) s->Stop(left);
  (*grpc_server)->Stop(left);
  (*recovery)->MarkClean();  // what still runs is abandoned on purpose
  if (!idle || stuck > 0) {
    // Destroying the scheduler would wait for the forwards still running:
    // end the process here, within the grace period, without destructors.
    // Threads given up at SCHED_IDLE get their priority back first: else
    // they die, and the process ends, only once other processes leave
    // their cores free.
    if (const int low = RaiseLoweredForExit(); low > 0) {
      spdlog::warn("inferd: {} thread(s) given up stay at SCHED_IDLE (raising them needs "
                   "CAP_SYS_NICE): the process ends once they get a core", low);
    }
    spdlog::info("inferd: stopped, abandoning what still runs");
    spdlog::shutdown();
    std::fflush(nullptr);
    std::_Exit(0);
  }
  spdlog::info("inferd: stopped");
  if (own_state_dir) {
    std::error_code ignored;
    std::filesystem::remove_all(co.state_dir, ignored);
  }
  return 0;
}

}  // namespace inferd::app
