// fuseproof_app.cpp: wires the subcommands of cli/, audit/ and e2e/ that this configuration built into one app.
#include "cli/fuseproof_app.h"

#include "audit/audit_cli.h"
#include "audit/reference_audit.h"
#include "cli/eval_command.h"
#include "cli/formats_command.h"
#include "cli/ops_command.h"
#include "cli/table_command.h"
#include "cli/stages_command.h"
#include "cli/sweep_command.h"
#if FUSEPROOF_WITH_BENCH_CLI
#include "cli/bench_command.h"
#endif
#if FUSEPROOF_WITH_E2E_CLI
#include "e2e/e2e_cli.h"
#endif
#if FUSEPROOF_WITH_VIDEO_CLI
#include "e2e/video_cli.h"
#endif

namespace fuseproof::cli {

std::unique_ptr<CLI::App> make_fuseproof_app() {
  auto app = std::make_unique<CLI::App>(
      "fuseproof: prove a fused GPU kernel changes not one output bit against eager PyTorch", "fuseproof");
  app->require_subcommand(1);
  audit::add_reference_audit_command(*app);
  add_ops_command(*app);
  add_eval_command(*app);
  add_table_command(*app);
  add_sweep_command(*app);
  add_stages_command(*app);
  add_formats_command(*app);
#if FUSEPROOF_WITH_BENCH_CLI
  add_bench_command(*app);
#endif
  audit::add_audit_subcommand(*app);
#if FUSEPROOF_WITH_E2E_CLI
  e2e::add_e2e_subcommand(*app);
#endif
#if FUSEPROOF_WITH_VIDEO_CLI
  e2e::add_video_subcommand(*app);
#endif
  return app;
}

}  // namespace fuseproof::cli
