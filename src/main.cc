// inferd: a model inference server. Subcommands: serve | topology | bench | plan | optimize.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "app/serve_command.h"
#include "bench/bench_flags.h"
#include "bench/bench_runner.h"
#include "bench/server_metrics.h"
#include "memory/allocator.h"
#include "optimize/optimize_command.h"
#include "backend/backend_set.h"
#include "plan/plan_command.h"
#include "profile/calibration_annotation.h"
#include "profile/profile_command.h"
#include "topology/topology_command.h"

int main(int argc, char** argv) {
  inferd::memory::ConfigureAllocator();
  CLI::App app{"inferd: serves TorchScript, ONNX and XGBoost models over HTTP and gRPC, natively, within the CPU budget"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error")->capture_default_str();

  inferd::app::ServeOptions serve;
  auto* s = app.add_subcommand("serve", "serve the models of a model store");
  s->add_option("--model-store", serve.model_store, "DIR holding <model>/config.yaml, <model>/<version>/model.pt")
      ->required();
  s->add_option("--models", serve.models, "models served: all, or a,b,c (others load by hand)")
      ->capture_default_str();
  s->add_flag("--lazy-load", serve.lazy_load,
              "load each model on its first request (config.yaml `load: eager|lazy` overrides)");
  s->add_option("--load-threads", serve.load_threads, "threads that load and unload models")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  s->add_option("--memory-budget", serve.memory_budget,
                "memory for loaded models: SIZE (bytes, K/M/G suffixes) or auto (70% of the "
                "cgroup or machine memory); least recently used idle models are unloaded to fit");
  s->add_option("--memory-limit", serve.memory_limit,
                "the process's resident memory that memory admission keeps batches under: SIZE "
                "(default: the cgroup's memory limit, if any; docs/ROBUSTNESS.md)");
  s->add_option("--bind", serve.bind,
                "address of all the ports; other than loopback it needs --auth-keys or "
                "--allow-unauthenticated")
      ->capture_default_str();
  s->add_option("--auth-keys", serve.auth_keys,
                "YAML file of API keys: inference/management/metrics lists (docs/SECURITY.md); "
                "re-read on change and on SIGHUP");
  s->add_flag("--allow-unauthenticated", serve.allow_unauthenticated,
              "serve a --bind other than loopback without --auth-keys, on purpose");
  auto* tls_cert = s->add_option("--tls-cert", serve.tls_cert,
                                 "PEM certificate (chain): HTTPS on the HTTP ports, TLS on gRPC");
  auto* tls_key = s->add_option("--tls-key", serve.tls_key, "PEM private key of --tls-cert");
  tls_cert->needs(tls_key);
  tls_key->needs(tls_cert);
  s->add_option("--http-port", serve.http_port, "inference port (0 = any free port)")->capture_default_str();
  s->add_option("--management-port", serve.management_port, "management port (0 = any)")
      ->capture_default_str();
  s->add_option("--metrics-port", serve.metrics_port, "metrics port (0 = any)")->capture_default_str();
  s->add_option("--grpc-port", serve.grpc_port, "KServe v2 gRPC port (0 = any)")->capture_default_str();
  s->add_option("--cpus", serve.cpus, "narrow the CPU budget, e.g. 0-3,6");
  s->add_option("--auto-threads", serve.auto_threads, "cores per executor for `instances: auto` models")
      ->capture_default_str();
  s->add_option("--widen-lone-requests", serve.widen_lone_requests,
                "run a lone request (nothing else queued) on the cores of every idle executor")
      ->capture_default_str();
  s->add_option("--drain-timeout", serve.drain_timeout_s, "seconds queued work may take after SIGTERM")
      ->capture_default_str();
  s->add_option("--body-limit", serve.body_limit, "largest request body in bytes (413 past it)")
      ->capture_default_str();
  s->add_option("--network-threads", serve.network_threads,
                "HTTP threads per port and gRPC completion-queue threads")->capture_default_str();
  s->add_option("--max-connections", serve.max_connections,
                "open connections per HTTP port; past it new ones answer 503 (0 = no limit)")
      ->capture_default_str();
  s->add_option("--max-queue-bytes", serve.max_queue_bytes,
                "bytes of requests queued or running, all models; past it 503 (0 = no limit)")
      ->capture_default_str();

  s->add_flag("--no-supervisor", serve.no_supervisor,
              "serve in this process, without the supervisor that keeps the ports and starts "
              "a new serving process when one crashes (docs/ROBUSTNESS.md)");
  s->add_option("--state-dir", serve.state_dir,
                "folder of the crash journal and history; keep it across restarts (a Kubernetes "
                "emptyDir) so that a model that crashes the server twice in ten minutes is "
                "quarantined (default: a private temp folder)");
  // Internal: how the supervisor starts the serving process.
  s->add_option("--serving-sockets", serve.serving_sockets)->group("");
  s->add_option("--restarts", serve.restarts)->group("");
  s->add_option("--previous-exit", serve.previous_exit)->group("");
  s->add_option("--ready-fd", serve.ready_fd)->group("");
  serve.argv.assign(argv, argv + argc);

  inferd::topology::TopologyCommandOptions topo;
  auto* t = app.add_subcommand("topology", "print the CPU budget and the core plan");
  auto* topo_store =
      t->add_option("--model-store", topo.model_store, "plan for the models of this store");
  t->add_flag("--json", topo.json, "JSON instead of text");
  bool calibrate = false;
  t->add_flag("--calibrate", calibrate,
              "load each model as the server does (precision chosen under the accuracy "
              "guard, its table printed) and calibrate its batch sizes on its planned "
              "executor; exit 2 if a model fails")
      ->needs(topo_store);
  t->add_option("--cpus", topo.cpus, "narrow the CPU budget, e.g. 0-3,6");
  t->add_option("--auto-threads", topo.plan.auto_threads, "cores per executor for auto models")
      ->capture_default_str();

  inferd::bench::BenchOptions bench;
  auto* b = app.add_subcommand("bench", "load generator: closed/open loop sweeps, tables, plots");
  inferd::bench::AddBenchFlags(b, &bench);

  inferd::plan::PlanCommandOptions plan;
  auto* p = app.add_subcommand("plan", "pack models onto the fewest nodes; emit Kubernetes objects");
  auto* models_flag =
      p->add_option("--models", plan.models_file, "YAML: models: [{name, rps, core_ms, memory}]");
  inferd::profile::ProfileCommandOptions profile;
  auto* store_flag =
      p->add_option("--profile-store", profile.store_dir,
                    "measure core_ms and memory of this model store's models instead of --models")
          ->excludes(models_flag);
  p->add_option("--rps", profile.rps_file, "with --profile-store: YAML `model: peak req/s`")
      ->needs(store_flag);
  p->add_option("--default-rps", profile.default_rps, "req/s of the models --rps leaves out")
      ->needs(store_flag);
  p->add_option("--save-models", profile.save_models,
                "write the measured models file here (--profile-store, --from-metrics)");
  p->add_option("--profile-runs", profile.profile.runs, "measured forwards per model (median)")
      ->needs(store_flag)
      ->capture_default_str();
  p->add_option("--profile-warmup", profile.profile.warmup_runs, "unmeasured forwards first")
      ->needs(store_flag)
      ->capture_default_str();
  p->add_flag("--profile-batched", profile.profile.batched,
              "core_ms per item at the batch size calibration chooses, not at batch 1")
      ->needs(store_flag);
  p->add_option("--variable-dim", profile.profile.variable_dim,
                "length of -1 dims when profiling (0: a text model's max_length, else 1)")
      ->needs(store_flag)
      ->capture_default_str();
  p->add_option("--node-cores", plan.node_cores, "cores of one node");
  p->add_option("--node-memory", plan.node_memory, "memory of one node, e.g. 64Gi");
  p->add_option("--node-type", plan.node_types,
                "NAME:CORES:MEMORY:PRICE, repeatable: the cheapest mix of these types");
  p->add_option("--node-price", plan.node_price, "per hour, for --node-cores/--node-memory beside --node-type");
  p->add_option("--current", plan.current_plan, "the --json of the running plan: rebalance it");
  p->add_option("--rebalance-target", plan.rebalance_target,
                "with --current: remove nodes while over this x the lower bound")
      ->capture_default_str();
  auto* metrics_flag =
      p->add_option("--from-metrics", plan.from_metrics,
                    "/metrics URLs of running inferd servers: rps and core_ms from their traffic")
          ->delimiter(',')
          ->excludes(store_flag);
  p->add_option("--metrics-window", plan.metrics_window_s, "seconds between the two scrapes")
      ->needs(metrics_flag)
      ->capture_default_str();
  p->add_option("--headroom", plan.headroom, "share of each node left free")->capture_default_str();
  p->add_flag("--json", plan.json, "JSON instead of text");
  p->add_option("--emit-k8s", plan.emit_k8s_dir, "write Deployments, Services, routes, KServe to DIR");
  p->add_option("--image", plan.k8s.image, "container image of the pods")->capture_default_str();
  p->add_option("--drain-timeout", plan.k8s.drain_timeout_s, "the pods' inferd serve --drain-timeout")
      ->capture_default_str();
  p->add_option("--gateway-class", plan.k8s.gateway_class, "GatewayClass of the emitted Gateway")
      ->capture_default_str();

  inferd::optimize::OptimizeCommandOptions optimize;
  auto* o = app.add_subcommand(
      "optimize",
      "write ONNX, ONNX-Runtime-optimized and int8 candidates beside each TorchScript model.pt "
      "and compare them with it (docs/OPTIMIZE.md)");
  o->add_option("--model-store", optimize.model_store, "DIR holding <model>/<version>/model.pt")
      ->required();
  o->add_option("--models", optimize.models, "models to optimize: all, or a,b,c")
      ->capture_default_str();
  o->add_flag("--force", optimize.force, "make every candidate again, even when up to date");
  o->add_option("--threads", optimize.threads, "threads of the export and the comparison")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  o->add_option("--python", optimize.python, "the python3 with python3-torch and python3-onnx")
      ->capture_default_str();
  o->add_option("--export-script", optimize.export_script,
                "tools/optimize_export.py (default: beside the binary or in its source tree)");

  CLI11_PARSE(app, argc, argv);
  // Logs go to stderr; stdout carries only what a command prints (the bound
  // ports of `serve`, the reports of `topology` and `bench`).
  spdlog::set_default_logger(spdlog::stderr_color_mt("inferd"));
  spdlog::set_level(spdlog::level::from_str(log_level));

  if (*s) return inferd::app::RunServe(serve);
  if (*t && calibrate) {
    auto backend = inferd::backend::BackendSet::Create();
    if (!backend.ok()) return std::cerr << backend.status().message() << "\n", 1;
    return inferd::topology::RunTopologyCommand(
        topo, std::cout, std::cerr,
        inferd::profile::BatchCalibrationAnnotator(**backend, topo.model_store));
  }
  if (*t) return inferd::topology::RunTopologyCommand(topo, std::cout);
  if (*b) return inferd::bench::RunBench(bench);
  if (*o) return inferd::optimize::RunOptimizeCommand(optimize, std::cout);
  if (*p && !profile.store_dir.empty()) {
    auto backend = inferd::backend::BackendSet::Create();
    if (!backend.ok()) return std::cerr << backend.status().message() << "\n", 1;
    return inferd::profile::RunProfiledPlan(profile, plan, **backend, std::cout);
  }
  if (*p && plan.models_file.empty() && plan.from_metrics.empty()) {
    std::cerr << "inferd plan: give --models FILE or --profile-store DIR, or --from-metrics URL\n";
    return 2;
  }
  if (*p && !profile.save_models.empty() && profile.store_dir.empty() && plan.from_metrics.empty()) {
    std::cerr << "inferd plan: --save-models needs --profile-store or --from-metrics\n";
    return 2;
  }
  plan.save_models = profile.save_models;
  plan.fetch_metrics = inferd::bench::FetchMetricsText;
  if (*p) return inferd::plan::RunPlanCommand(plan, std::cout);
  return 2;
}
