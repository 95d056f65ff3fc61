# expect_output.cmake: runs a command (ARGS) and requires its exit status to be CODE (or one of CODE's alternatives,
# "0|1"), its stdout then stderr to match MATCH, and, with NOT_MATCH, not to match NOT_MATCH.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}exit ${rc}")
if(NOT rc MATCHES "^(${CODE})$")
  message(FATAL_ERROR "expected exit ${CODE}, got ${rc}")
endif()
if(DEFINED MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "stdout and stderr do not match '${MATCH}'")
endif()
if(DEFINED NOT_MATCH AND "${out}${err}" MATCHES "${NOT_MATCH}")
  message(FATAL_ERROR "stdout and stderr match '${NOT_MATCH}'")
endif()
