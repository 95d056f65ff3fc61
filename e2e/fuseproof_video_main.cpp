// fuseproof_video_main.cpp: the standalone `fuseproof-video` executable (the same commands as `fuseproof video`).
#include <CLI/CLI.hpp>

#include "common/cli_exit.h"
#include "video_cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fuseproof-video: compare two videos (SHA-256, SSIM, PSNR); encode run frames to MP4", "fuseproof-video"};
  app.require_subcommand(1);
  fuseproof::e2e::add_video_commands(app);
  return fuseproof::parse_and_run(app, argc, argv);
}
