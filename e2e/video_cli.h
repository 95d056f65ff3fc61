// video_cli.h: `fuseproof video compare|encode`: the video comparator (exit 0 identical, 1 different, 2 error) and encoder.
#pragma once

namespace CLI {
class App;
}

namespace fuseproof::e2e {

/// Adds `video` with compare and encode to `app` (the fuseproof CLI).
void add_video_subcommand(CLI::App& app);
/// Adds compare and encode directly to `app` (the standalone fuseproof-video). Statuses are thrown as
/// CLI::RuntimeError: compare 0 identical, 1 different, 2 error; encode 0 ok, 2 error.
void add_video_commands(CLI::App& app);

}  // namespace fuseproof::e2e
