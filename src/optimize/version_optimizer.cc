#include "optimize/version_optimizer.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file_text.h"
#include "optimize/candidate_check.h"
#include "optimize/comparison_samples.h"
#include "optimize/export_script.h"
#include "optimize/optimize_stamp.h"
#include "repository/version_files.h"

namespace inferd::optimize {
namespace {

namespace fs = std::filesystem;

std::string In(const VersionJob& job, std::string_view file) {
  return (fs::path(job.version_dir) / file).string();
}

// The temporary name a file is written under before it is renamed into place.
std::string Temporary(const VersionJob& job, std::string_view file) {
  return (fs::path(job.version_dir) / ("." + std::string(file) + ".tmp")).string();
}

void RemoveQuietly(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

Status MoveIntoPlace(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) return Internal("cannot rename '" + from + "' to '" + to + "': " + ec.message());
  return Status::Ok();
}

Status WriteAtomically(const VersionJob& job, std::string_view file, const std::string& text) {
  const std::string tmp = Temporary(job, file);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      RemoveQuietly(tmp);
      return Internal("cannot write '" + tmp + "'");
    }
  }
  return MoveIntoPlace(tmp, In(job, file));
}

CandidateRow Row(std::string_view candidate, std::string_view file) {
  CandidateRow row;
  row.candidate = candidate;
  row.file = file;
  return row;
}

// A model.onnx that is there and that no earlier run of ours reports having
// written (its optimize.json lists model.onnx as present) is the user's own:
// it is never replaced nor removed.
bool UsersOwnOnnx(const VersionJob& job) {
  std::error_code ec;
  if (!fs::exists(In(job, repository::kOnnxFile), ec)) return false;
  auto kept = ParseReportJson(ReadWholeFile(In(job, repository::kOptimizeReportFile)));
  if (!kept.ok()) return true;
  for (const auto& row : kept->rows) {
    if (row.file == repository::kOnnxFile && row.present) return false;
  }
  return true;
}

bool FilesPresent(const VersionJob& job, const OptimizeReport& report) {
  for (const auto& row : report.rows) {
    std::error_code ec;
    if (row.present && !fs::is_regular_file(In(job, row.file), ec)) return false;
  }
  return true;
}

}  // namespace

StatusOr<VersionOutcome> VersionOptimizer::Run(const VersionJob& job) const {
  const std::string model_pt = In(job, repository::kTorchscriptFile);
  ASSIGN_OR_RETURN(const std::string digest, Sha256File(model_pt));
  VersionOutcome outcome;
  OptimizeReport& report = outcome.report;
  report.stamp = MakeStamp(digest, options_.script_digest, job.config);
  report.model = job.config.name;
  report.version = job.version;

  const std::string report_path = In(job, repository::kOptimizeReportFile);
  if (!options_.force) {
    std::error_code ec;
    if (fs::is_regular_file(report_path, ec)) {
      auto kept = ParseReportJson(ReadWholeFile(report_path));
      // A report whose reference did not run is tried again.
      if (kept.ok() && kept->stamp == report.stamp && !kept->rows.empty() &&
          kept->rows[0].compared && FilesPresent(job, *kept)) {
        outcome.report = std::move(*kept);
        outcome.up_to_date = true;
        return outcome;
      }
    }
  }
  outcome.problem = MakeCandidates(job, &report);
  if (!outcome.problem.ok()) return outcome;  // nothing to report: the export did not run
  outcome.problem = Compare(job, &report);
  // The report is written even when the comparison failed: the rows say where.
  Status written = WriteAtomically(job, repository::kOptimizeReportFile, WriteReportJson(report));
  if (outcome.problem.ok()) outcome.problem = written;
  return outcome;
}

Status VersionOptimizer::MakeCandidates(const VersionJob& job, OptimizeReport* report) const {
  const std::string onnx = In(job, repository::kOnnxFile);
  const std::string optimized = In(job, repository::kOnnxOptimizedFile);
  const std::string int8 = In(job, repository::kOnnxInt8File);
  CandidateRow reference = Row("torchscript", repository::kTorchscriptFile);
  reference.present = true;
  reference.result = "the reference (fp32)";
  CandidateRow onnx_row = Row("onnx", repository::kOnnxFile);
  CandidateRow optimized_row = Row("onnx_optimized", repository::kOnnxOptimizedFile);
  CandidateRow int8_row = Row("onnx_int8", repository::kOnnxInt8File);

  ExportRequest request;
  request.python = options_.python;
  request.script = options_.export_script;
  request.model_pt = In(job, repository::kTorchscriptFile);
  request.spec_json = ExportSpecJson(job.config);
  request.onnx_out = Temporary(job, repository::kOnnxFile);
  const bool users_onnx = UsersOwnOnnx(job);
  request.int8_out = Temporary(job, repository::kOnnxInt8File);
  request.result = Temporary(job, "optimize.result.json");
  request.log = Temporary(job, "optimize.log");
  request.threads = options_.threads;
  spdlog::info("model '{}' version {}: exporting ({} {})", job.config.name, job.version,
               request.python, request.script);
  auto exported = RunExportScript(request);
  RemoveQuietly(request.result);
  RemoveQuietly(request.log);
  if (!exported.ok()) {
    RemoveQuietly(request.onnx_out);
    RemoveQuietly(request.int8_out);
    return exported.status().WithContext("model '" + job.config.name + "' version " +
                                         std::to_string(job.version) + ": the export");
  }

  // The export the candidates below are made from: model.onnx, or its
  // temporary file when model.onnx is the user's (kept as it is, unlisted).
  std::string exported_onnx = onnx;
  if (exported->onnx_ok && users_onnx) {
    exported_onnx = request.onnx_out;
    onnx_row.result = "exported (opset " + std::to_string(exported->opset) +
                      "), not written: the " + std::string(repository::kOnnxFile) +
                      " already there is not one inferd optimize wrote, and is kept";
    spdlog::warn("model '{}' version {}: {} is not one inferd optimize wrote: it is kept, "
                 "and the candidates are made from a new export",
                 job.config.name, job.version, onnx);
  } else if (exported->onnx_ok) {
    RETURN_IF_ERROR(MoveIntoPlace(request.onnx_out, onnx));
    onnx_row.present = true;
    onnx_row.result = "exported (opset " + std::to_string(exported->opset) + ")";
  } else {
    RemoveQuietly(request.onnx_out);
    if (!users_onnx) RemoveQuietly(onnx);
    onnx_row.result = "not exported: " + exported->onnx_reason;
  }

  if (!exported->onnx_ok) {
    RemoveQuietly(optimized);
    optimized_row.result = "not made: no ONNX export";
  } else if (onnx_ == nullptr) {
    RemoveQuietly(optimized);
    optimized_row.result = "not made: this binary has no onnxruntime backend";
  } else {
    const std::string tmp = Temporary(job, repository::kOnnxOptimizedFile);
    Status made = onnx_->WriteOptimizedModel(exported_onnx, tmp);
    if (made.ok()) made = MoveIntoPlace(tmp, optimized);
    if (made.ok()) {
      optimized_row.present = true;
      optimized_row.result = "ONNX Runtime's extended fusions";
    } else {
      RemoveQuietly(tmp);
      RemoveQuietly(optimized);
      optimized_row.result = "not made: " + made.message();
    }
  }

  if (exported_onnx != onnx) RemoveQuietly(exported_onnx);
  if (exported->int8_ok) {
    RETURN_IF_ERROR(MoveIntoPlace(request.int8_out, int8));
    int8_row.present = true;
    int8_row.result = "int8: " + std::to_string(exported->quantized) + " MatMul/Gemm (" +
                      exported->int8_scheme + ")";
    if (exported->left > 0) int8_row.result += "; fp32: " + exported->int8_notes;
  } else {
    RemoveQuietly(request.int8_out);
    RemoveQuietly(int8);
    int8_row.result = "not made: " + exported->int8_reason;
  }
  report->rows = {reference, onnx_row, optimized_row, int8_row};
  return Status::Ok();
}

Status VersionOptimizer::Compare(const VersionJob& job, OptimizeReport* report) const {
  CandidateRow& reference = report->rows[0];
  auto samples = MakeComparisonSamples(job.config, job.model_dir);
  if (!samples.ok()) {
    reference.error = "no samples: " + samples.status().message();
    return samples.status();
  }
  report->samples = samples->samples;
  report->sample_source = samples->source;

  // The reference: model.pt as the torch backend serves it in fp32, frozen,
  // with no variant trials (their timings are not what is compared here).
  config::ModelConfig fp32 = job.config;
  fp32.precision = config::Precision::kFp32;
  fp32.variants = config::Variants::kFrozen;
  ReferenceRun ref;
  {
    auto model = torch_->Load({In(job, repository::kTorchscriptFile), fp32});
    if (!model.ok()) {
      reference.error = model.status().message();
      return model.status();
    }
    auto run = RunReference(**model, *samples);
    if (!run.ok()) {
      reference.error = run.status().message();
      return run.status();
    }
    ref = std::move(*run);
  }  // the reference's memory goes before the candidates load
  reference.compared = true;
  reference.ms_per_item = ref.ms_per_item;

  for (size_t i = 1; i < report->rows.size(); ++i) {
    CandidateRow& row = report->rows[i];
    if (!row.present) continue;
    if (onnx_ == nullptr) {
      row.error = "this binary has no onnxruntime backend to run it";
      continue;
    }
    auto model = onnx_->Load({In(job, row.file), job.config});
    if (!model.ok()) {
      row.error = model.status().message();
      continue;
    }
    auto measured = MeasureCandidate(**model, *samples, ref);
    if (!measured.ok()) {
      row.error = measured.status().message();
      continue;
    }
    row.compared = true;
    row.max_abs_error = measured->max_abs_error;
    row.max_rel_error = measured->max_rel_error;
    row.top1_agreed = measured->top1_agreed;
    row.top1_checked = measured->top1_checked;
    row.ms_per_item = measured->ms_per_item;
  }
  return Status::Ok();
}

}  // namespace inferd::optimize
