// fuseproof_module.cpp: the extension fuseproof._fuseproof: the C++ audit engine run on a Python subject.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "audit/audit_cli.h"
#include "audit/audit_engine.h"
#include "audit/audit_report.h"
#include "common/exit_status.h"
#include "python/python_runner.h"
#include "reference/dtype.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

template <typename T>
void take(const py::dict& d, const char* key, T* field) {
  if (d.contains(key) && !d[key].is_none()) *field = d[key].cast<T>();
}

audit::AuditOptions make_options(const py::dict& o) {
  audit::AuditOptions opt;
  take(o, "op", &opt.op);
  take(o, "backend", &opt.backend);
  take(o, "command", &opt.command);
  take(o, "seed", &opt.seed);
  take(o, "tanh_model", &opt.tanh_model);
  take(o, "domain_biases", &opt.domain_biases);
  take(o, "max_width", &opt.max_width);
  take(o, "property_cases", &opt.property_cases);
  take(o, "stop_after", &opt.stop_after);
  take(o, "records", &opt.records);
  take(o, "call_timeout", &opt.call_timeout_s);
  take(o, "isolate", &opt.isolate);
  take(o, "default_shapes", &opt.default_shapes);
  if (opt.op != "bias_gelu_tanh")
    throw UsageError("fuseproof audit: unknown op " + opt.op + " (known: bias_gelu_tanh)");
  if (!opt.tanh_model.empty() && !ref::parse_math_model(opt.tanh_model))
    throw UsageError("fuseproof audit: unknown tanh model " + opt.tanh_model + " (cuda, libm, exact)");
  if (opt.domain_biases > 65536)
    throw UsageError("fuseproof audit: domain_biases must be in 1..65536, got " + std::to_string(opt.domain_biases));
  if (opt.call_timeout_s <= 0)
    throw UsageError("fuseproof audit: call_timeout must be positive, got " + std::to_string(opt.call_timeout_s));
  opt.dtypes.clear();
  for (const auto& name : o["dtypes"].cast<std::vector<std::string>>()) opt.dtypes.push_back(*ref::parse_dtype(name));
  if (o.contains("only") && !o["only"].is_none()) {
    const std::string only = o["only"].cast<std::string>();
    opt.only = audit::parse_check_class(only);
    if (!opt.only) throw UsageError("fuseproof audit: unknown --only " + only + " (" + audit::check_class_list() + ")");
  }
  if (o.contains("shapes") && !o["shapes"].is_none()) opt.shapes = audit::parse_shapes(o["shapes"].cast<std::string>());
  if (o.contains("model") && !o["model"].is_none())
    for (const auto& s : audit::model_shapes(o["model"].cast<std::string>())) opt.shapes.push_back(s);
  return opt;
}

audit::Subject make_subject(py::object bridge, const py::dict& s, const std::string& op) {
  audit::Subject subject;
  audit::PluginInfo& info = subject.info;
  info.kernel_name = s["name"].cast<std::string>();
  info.path = s["description"].cast<std::string>();
  info.sha256 = s["sha256"].cast<std::string>();
  info.op = op;
  info.abi_version = 0;  // not a C-ABI plugin
  const bool cuda = s["cuda"].cast<bool>();
  info.memory = cuda ? FUSEPROOF_MEMORY_CUDA : FUSEPROOF_MEMORY_HOST;
  info.vector_bytes = 2;  // an elementwise torch op takes every width
  subject.child_command = s["child_command"].cast<std::vector<std::string>>();
  subject.reproduce_prefix = s["reproduce_prefix"].cast<std::string>();
  // The runner is made in the process that runs the checks; the bridge is a Python object, touched with the GIL held.
  auto shared = std::shared_ptr<py::object>(new py::object(std::move(bridge)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  subject.make_runner = [shared, cuda]() -> std::unique_ptr<audit::KernelRunner> {
    py::gil_scoped_acquire gil;
    return std::make_unique<PythonRunner>(*shared, cuda);
  };
  return subject;
}

/// (exit status, JSON report text); in a fault-isolation child (child_spec set): (its exit status, "").
py::tuple run(py::object bridge, const py::dict& subject, const py::dict& options, const std::string& report_md,
              const std::string& report_json, const std::string& child_spec) {
  audit::AuditOptions opt = make_options(options);
  const audit::Subject s = make_subject(std::move(bridge), subject, opt.op);
  if (!child_spec.empty()) return py::make_tuple(audit::run_audit_child(child_spec, s), std::string());
  // Without a command that re-creates the subject (a lambda, a closure), the classes run in this process.
  if (s.child_command.empty()) opt.isolate = false;
  for (const auto& p : {report_md, report_json})
    if (!p.empty()) audit::ensure_writable(p);
  const audit::AuditResult r = audit::run_audit(opt, s);
  const int status = audit::report_audit(r, report_md, report_json, "");
  return py::make_tuple(status, audit::report_json_of(r).dump());
}

}  // namespace

}  // namespace fuseproof::python

PYBIND11_MODULE(_fuseproof, m) {
  m.doc() = "fuseproof's C++ audit engine (audit/) for Python subjects";
  py::register_exception<fuseproof::UsageError>(m, "UsageError", PyExc_ValueError);
  py::register_exception<fuseproof::MissingDataError>(m, "MissingDataError", PyExc_RuntimeError);
  py::register_exception<fuseproof::CorruptDataError>(m, "CorruptDataError", PyExc_RuntimeError);
  m.def("run", &fuseproof::python::run, py::arg("bridge"), py::arg("subject"), py::arg("options"),
        py::arg("report_md") = "", py::arg("report_json") = "", py::arg("child_spec") = "",
        "Runs the audit on a fuseproof._bridge.Bridge; returns (exit status, JSON report text)");
  m.def("file_sha256", &fuseproof::audit::file_sha256, py::arg("path"),
        "SHA-256 of a file, hex; empty when unreadable");
}
