// `inferd optimize --model-store DIR [--models a,b] [--force]`: the
// ahead-of-time step that writes, beside each TorchScript model.pt of a store,
// an ONNX export, the export after ONNX Runtime's graph fusions and an int8
// copy, and prints for each version a table of what was made (or why not)
// and how far each candidate's outputs are from model.pt's (docs/OPTIMIZE.md).
// model.pt is only read. Python (tools/optimize_export.py) runs here, never on
// the request path.
//
// Every version folder to be written is probed first (a file created and
// removed): a store that cannot be written is refused before anything is
// made. Models of other backends are listed and left alone.
//
// Exit codes: 0 done (a model that cannot be exported is a result, shown with
// the reason); 2 a bad store, an unknown model in --models or an invalid
// config; 3 a version folder cannot be written (nothing was written); 1 a
// step failed (the export script could not run, model.pt did not load or
// failed on the samples).
// Thread-compatible: run from one thread.
#pragma once

#include <iostream>
#include <string>

namespace inferd::optimize {

struct OptimizeCommandOptions {
  std::string model_store;
  std::string models = "all";  // all, or a,b,c
  std::string python = "/usr/bin/python3";
  std::string export_script;  // empty: tools/optimize_export.py found by FindExportScript
  int threads = 1;            // torch and ONNX Runtime threads for export and comparison
  bool force = false;         // make every candidate again, even when up to date
};

// The export script: `flag` when given; else tools/optimize_export.py beside
// the binary (an install), one folder up (build/ in the source tree), or in
// the source tree this binary was built from. Empty when none exists.
std::string FindExportScript(const std::string& flag);

int RunOptimizeCommand(const OptimizeCommandOptions& options, std::ostream& out,
                       std::ostream& err = std::cerr);

}  // namespace inferd::optimize
