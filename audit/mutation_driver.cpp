// mutation_driver.cpp: one child process per mutant (a crash or a hung CUDA context cannot take the driver down).
#include "audit/mutation_driver.h"

#include "audit/audit_isolation.h"

#include "audit/audit_protocol.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "audit/kernel_runner.h"
#include "common/remove_tree.h"

extern char** environ;

namespace fuseproof::audit {

const char* mutant_status_name(MutantStatus s) {
  switch (s) {
    case MutantStatus::kKilled: return "killed";
    case MutantStatus::kSurvived: return "survived";
    case MutantStatus::kTimeout: return "timeout";
    case MutantStatus::kError: return "error";
  }
  return "error";
}

namespace fs = std::filesystem;

namespace {

std::vector<std::string> child_args(const AuditOptions& o, const std::string& backend, const std::string& plugin,
                                    const std::string& json) {
  std::vector<std::string> a{audit_child_exe(), "audit", "--plugin", plugin, "--backend", backend, "--json", json,
                             "--no-reference", "--dtype", o.dtype, "--seed", std::to_string(o.seed)};
  // Every other option that differs from its default, as the reproduce line writes them.
  std::istringstream rest(reproduce_options(o, {"seed", "op", "dtype"}));
  for (std::string word; rest >> word;) a.push_back(word);
  if (o.first_fail) a.push_back("--first-fail");
  if (!o.golden_dir.empty()) a.insert(a.end(), {"--golden-dir", o.golden_dir});
  if (!o.golden_build_dir.empty()) a.insert(a.end(), {"--golden-build-dir", o.golden_build_dir});
  return a;
}

}  // namespace

MutationResult run_mutants(const AuditOptions& base, const std::string& dir, int timeout_s) {
  MutationResult m;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("audit: --mutants " + dir + " is not a directory");
  std::vector<std::string> plugins;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") plugins.push_back(fs::absolute(e.path()).string());
  std::sort(plugins.begin(), plugins.end());
  std::string backend = base.backend;
  if (backend.empty()) backend = cuda_runner_available(nullptr) ? "cuda" : "emulated";
  m.backend = backend;
  char tmpl[] = "/tmp/fuseproof-mutants-XXXXXX";
  const char* work = mkdtemp(tmpl);
  if (!work) throw std::runtime_error("audit: cannot create a temporary directory under /tmp");
  for (const std::string& p : plugins) {
    std::string kernel_name;
    try {
      const Plugin probe = Plugin::load(p, "");
      if (probe.info().cuda() != (backend == "cuda")) continue;  // the other memory kind: another run
      if (!base.op.empty() && probe.info().op != base.op) continue;  // --op: the mutants of that op only
      kernel_name = probe.info().kernel_name;
    } catch (const PluginError& e) {
      MutantOutcome o;
      o.plugin = p;
      o.status = MutantStatus::kError;
      o.first_record = e.what();
      m.mutants.push_back(o);
      continue;
    }
    const std::string stem = fs::path(p).stem().string();
    const std::string json = std::string(work) + "/" + stem + ".json", log = std::string(work) + "/" + stem + ".log";
    const auto args = child_args(base, backend, p, json);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const int sp = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    MutantOutcome o;
    o.plugin = p;
    o.kernel_name = kernel_name;
    if (sp != 0) throw std::runtime_error("audit: cannot start a child audit: " + std::string(std::strerror(sp)));
    int status = 0;
    bool timed_out = false;
    for (;;) {
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(timeout_s)) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::ifstream jin(json);
    if (jin) o.report = nlohmann::json::parse(jin, nullptr, false);
    if (o.report.is_discarded()) o.report = nullptr;  // unreadable: null (a discarded value dumps as invalid JSON)
    // Killed only by a reported FAIL: a mutant whose audit crashed, hung or wrote no report was not judged.
    if (timed_out) {
      o.status = MutantStatus::kTimeout;
      o.first_record = "the whole audit of this mutant ran past --mutant-timeout " + std::to_string(timeout_s) + " s";
    } else if (WIFSIGNALED(status)) {
      o.status = MutantStatus::kError;
      o.first_record = "the audit itself died of signal " + std::to_string(WTERMSIG(status));
    } else if (WEXITSTATUS(status) == 0) {
      o.status = MutantStatus::kSurvived;
    } else if (WEXITSTATUS(status) == 1 && o.report.is_object() && o.report["killed_by"].is_object()) {
      const auto& k = o.report["killed_by"];
      o.status = MutantStatus::kKilled;
      o.killed_by = k.value("class", "");
      o.dtype = k.value("dtype", "");
      o.mismatches = k.value("mismatches", uint64_t(0));
      o.stopped_early = k.value("stopped_early", false);
      o.fault = k.value("fault", "");
      o.first_record = k.value("first_record", "");
      for (const auto& c : o.report["checks"])
        if (c.value("status", "") == "fail") o.failing_classes.push_back(c.value("class", "") + " " + c.value("dtype", ""));
      // A class that died outside any call into the mutant says nothing about the mutant (an auditor's own crash would
      // otherwise "kill" every mutant at once; docs/AUDIT.md, Mutants): not a kill.
      if (o.fault.find(kOutsideAnyCall) != std::string::npos) {
        o.status = MutantStatus::kError;
        o.first_record = "not judged: its first failing class (" + o.killed_by + " " + o.dtype + ") died outside any "
                         "call into it: " + o.fault;
      }
    } else if (WEXITSTATUS(status) == 1) {
      o.status = MutantStatus::kError;
      o.first_record = "exit 1 without a JSON report naming the failing class";
    } else {
      o.status = MutantStatus::kError;
      std::ifstream lin(log);
      std::string line, last;
      while (std::getline(lin, line))
        if (!line.empty()) last = line;
      o.first_record = "exit " + std::to_string(WEXITSTATUS(status)) + ": " + last;
    }
    std::printf("  %-40s %-8s %s %s %llu%s mismatches%s (%.1f s)\n", fs::path(p).filename().c_str(),
                mutant_status_name(o.status), o.killed_by.c_str(), o.dtype.c_str(), (unsigned long long)o.mismatches, o.stopped_early ? "+" : "",
                o.fault.empty() ? "" : ", a fault", o.seconds);
    if (!o.first_record.empty()) std::printf("      %s\n", o.first_record.substr(0, 300).c_str());
    std::fflush(stdout);
    m.mutants.push_back(std::move(o));
  }
  remove_tree(work);
  for (const auto& o : m.mutants) {
    if (o.status == MutantStatus::kError) continue;
    ++m.total;
    m.killed += o.status == MutantStatus::kKilled;
  }
  return m;
}

nlohmann::json mutation_json(const MutationResult& m) {
  nlohmann::json j;
  j["tool"] = "fuseproof audit --mutants";
  j["backend"] = m.backend;
  j["killed"] = m.killed;
  j["total"] = m.total;
  j["score"] = m.total ? double(m.killed) / double(m.total) : 0.0;
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& o : m.mutants)
    arr.push_back({{"plugin", o.plugin}, {"kernel", o.kernel_name}, {"status", mutant_status_name(o.status)}, {"killed_by", o.killed_by},
                   {"dtype", o.dtype}, {"mismatches", o.mismatches}, {"stopped_early", o.stopped_early},
                   {"first_record", o.first_record}, {"fault", o.fault}, {"failing_classes", o.failing_classes},
                   {"seconds", o.seconds}, {"report", o.report}});
  j["mutants"] = arr;
  return j;
}

std::string mutation_markdown(const MutationResult& m) {
  std::ostringstream md;
  md << "# fuseproof mutation run (" << m.backend << ")\n\n";
  md << "**Mutation score: " << m.killed << " / " << m.total << "**\n\n";
  md << "| mutant | status | killed by | dtype | mismatches | every failing class | first record (or fault) | time (s) |\n"
        "|---|---|---|---|---:|---|---|---:|\n";
  for (const auto& o : m.mutants) {
    std::string classes;
    for (const auto& c : o.failing_classes) classes += (classes.empty() ? "" : ", ") + c;
    std::string rec = o.first_record;
    for (char& ch : rec)
      if (ch == '|') ch = '/';
    md << "| " << (o.kernel_name.empty() ? fs::path(o.plugin).filename().string() : o.kernel_name) << " | "
       << mutant_status_name(o.status) << " | " << o.killed_by << " | " << o.dtype << " | " << o.mismatches << (o.stopped_early ? "+" : "")
       << " | " << classes << " | `" << rec << "` | " << o.seconds << " |\n";
  }
  md << "\n`+`: the check class stopped at --stop-after mismatches.\n";
  return md.str();
}

}  // namespace fuseproof::audit
