// fuseproof_module.cpp: the extension fuseproof._fuseproof: the C++ audit engine run on a Python subject, the op spec
// and the audit's option table for the Python front end.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

#include "audit/audit_cli.h"
#include "audit/audit_engine.h"
#include "audit/audit_options.h"
#include "audit/audit_report.h"
#include "audit/op_spec_json.h"
#include "common/cli_exit.h"
#include "cli/quant_ops_listing.h"
#include "common/exit_status.h"
#include "python/python_quant_runner.h"
#include "python/python_runner.h"
#include "reference/dtype.h"
#include "reference/quant_spec.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

audit::Subject make_subject(py::object bridge, const py::dict& s, const std::string& op, const std::string& contract) {
  audit::Subject subject;
  audit::PluginInfo& info = subject.info;
  info.kernel_name = s["name"].cast<std::string>();
  info.path = s["description"].cast<std::string>();
  info.sha256 = s["sha256"].cast<std::string>();
  info.op = op;
  info.contract = contract;
  info.abi_version = 0;  // not a C-ABI plugin
  const bool cuda = s["cuda"].cast<bool>();
  info.memory = cuda ? FUSEPROOF_MEMORY_CUDA : FUSEPROOF_MEMORY_HOST;
  info.vector_bytes = 2;  // a torch op takes every width (a quantization op: every multiple of its block)
  subject.child_command = s["child_command"].cast<std::vector<std::string>>();
  subject.reproduce_prefix = s["reproduce_prefix"].cast<std::string>();
  // The runner is made in the process that runs the checks; the bridge is a Python object, touched with the GIL held.
  auto shared = std::shared_ptr<py::object>(new py::object(std::move(bridge)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  if (ref::find_quant_op(op)) {  // the bridge is a fuseproof._quant_bridge.QuantBridge
    subject.make_quant_runner = [shared, cuda]() -> std::unique_ptr<audit::QuantRunner> {
      py::gil_scoped_acquire gil;
      return std::make_unique<PythonQuantRunner>(*shared, cuda);
    };
    return subject;
  }
  subject.make_runner = [shared, cuda]() -> std::unique_ptr<audit::KernelRunner> {
    py::gil_scoped_acquire gil;
    return std::make_unique<PythonRunner>(*shared, cuda);
  };
  return subject;
}

/// (exit status, JSON report text); in a fault-isolation child (child_spec set): (its exit status, "").
/// `options_json`: the keyword options (the option table's keys) as a JSON object. The reports are the C++ audit's
/// (audit/audit_report.h): `report_format` "markdown" or "github" for `report_md`, JUnit XML to `report_junit`.
py::tuple run(py::object bridge, const py::dict& subject, const std::string& options_json,
              const std::string& report_md, const std::string& report_json, const std::string& child_spec,
              const std::string& report_junit, const std::string& report_format) {
  audit::ReportFiles reports;
  reports.markdown = report_md;
  reports.json = report_json;
  reports.junit = report_junit;
  const auto format = audit::parse_report_format(report_format);
  if (!format) throw UsageError("fuseproof audit: unknown report format " + report_format + " (markdown, github)");
  reports.markdown_format = *format;
  audit::AuditOptions opt;
  nlohmann::json kwargs = nlohmann::json::parse(options_json, nullptr, false);
  if (!kwargs.is_object()) throw UsageError("fuseproof audit: options must be a JSON object");
  if (kwargs.contains("command")) {
    opt.command = kwargs["command"].get<std::string>();
    kwargs.erase("command");
  }
  audit::options_from_python(opt, kwargs);
  audit::resolve_options(opt);
  if (const ref::QuantOpSpec* q = ref::find_quant_op(opt.op)) {
    if (opt.contract.empty()) opt.contract = ref::quant_contract_name(q->contracts[0].contract);
    const auto contract = ref::parse_quant_contract(opt.contract);
    if (!contract || !q->contract(*contract))
      throw UsageError("fuseproof audit: op " + opt.op + " has no contract " + opt.contract);
  } else {
    const ref::OpSpec* op = ref::find_op(opt.op);
    if (!op)
      throw UsageError("fuseproof audit: unknown op " + opt.op + " (" + ref::op_names() + ", " +
                       ref::quant_op_names() + ")");
    if (opt.contract.empty()) opt.contract = "eager";
    const auto contract = ref::parse_contract(opt.contract);
    if (!contract || !op->contract(*contract))
      throw UsageError("fuseproof audit: op " + opt.op + " has no contract " + opt.contract);
  }
  const audit::Subject s = make_subject(std::move(bridge), subject, opt.op, opt.contract);
  if (!child_spec.empty()) return py::make_tuple(audit::run_audit_child(child_spec, s), std::string());
  // Without a command that re-creates the subject (a lambda, a closure), the classes run in this process.
  if (s.child_command.empty()) opt.isolate = false;
  const OutputClaims claims = claim_output_paths(reports.outputs());
  audit::AuditResult r;
  try {
    r = audit::run_audit(opt, s);
  } catch (const MissingDataError& e) {
    audit::write_incomplete_reports({}, reports, "", e.what());
    throw;
  }
  const int status = audit::report_audits({r}, reports, "");
  return py::make_tuple(status, audit::report_json_of(r).dump());
}

/// ref::scale_offset for a layout named as scale_layout_name gives it (the bridge's tests check their cells by it).
int64_t scale_offset_named(const std::string& layout, int64_t r, int64_t k, int64_t rows, int64_t blocks) {
  for (auto l : {ref::ScaleLayout::kLinear, ref::ScaleLayout::kSwizzled128x4})
    if (layout == ref::scale_layout_name(l)) return ref::scale_offset(l, r, k, rows, blocks);
  throw UsageError("scale_offset: unknown layout " + layout + " (linear, swizzled-128x4)");
}

}  // namespace

}  // namespace fuseproof::python

PYBIND11_MODULE(_fuseproof, m) {
  m.doc() = "fuseproof's C++ audit engine (audit/) for Python subjects";
  py::register_exception<fuseproof::UsageError>(m, "UsageError", PyExc_ValueError);
  py::register_exception<fuseproof::MissingDataError>(m, "MissingDataError", PyExc_RuntimeError);
  py::register_exception<fuseproof::CorruptDataError>(m, "CorruptDataError", PyExc_RuntimeError);
  m.def("run", &fuseproof::python::run, py::arg("bridge"), py::arg("subject"), py::arg("options_json"),
        py::arg("report_md") = "", py::arg("report_json") = "", py::arg("child_spec") = "",
        py::arg("report_junit") = "", py::arg("report_format") = "markdown",
        "Runs the audit on a fuseproof._bridge.Bridge; returns (exit status, JSON report text)");
  m.def("file_sha256", &fuseproof::audit::file_sha256, py::arg("path"),
        "SHA-256 of a file, hex; empty when unreadable");
  m.def("flush_standard_output", [] { return fuseproof::flush_standard_output(); },
        "Flushes the C stdout the audit prints to; \"\" when every byte got there, else why not");
  m.def("op_spec", [] { return fuseproof::audit::op_spec_json().dump(); }, "The op spec as JSON (fuseproof ops --json)");
  m.def("quant_op_spec", [] { return fuseproof::cli::quant_ops_json().dump(); },
        "The quantization ops as JSON (quant_ops of fuseproof ops --json)");
  m.def("scale_offset", &fuseproof::python::scale_offset_named, py::arg("layout"), py::arg("r"), py::arg("k"), py::arg("rows"), py::arg("blocks"),
        "The cell of block (r, k) in a scales tensor (reference/quant_spec.h scale_offset)");
  m.def("option_table", [] { return fuseproof::audit::option_table_json().dump(); },
        "The audit's option table as JSON: key, flag, type, default, help");
}
