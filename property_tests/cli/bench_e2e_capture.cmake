# bench_e2e_capture.cmake: FUSEPROOF_CAPTURE_FFN=DIR fuseproof e2e run (small, CPU) writes the first FFN site's
# inputs; `fuseproof bench --dist e2e --e2e-capture DIR` then runs on them. FUSEPROOF, DIR.
file(REMOVE_RECURSE ${DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -E env FUSEPROOF_CAPTURE_FFN=${DIR}/capture
                        ${FUSEPROOF} e2e run --config small --device cpu --modes high --formats rgb24 --out ${DIR}/run
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0 OR NOT err MATCHES "captured blocks.0.ffn inputs \\(336 x 256 bf16\\)")
  message(FATAL_ERROR "e2e run: exit ${rc}, no capture line")
endif()
execute_process(COMMAND ${FUSEPROOF} bench --backend emulated --shapes 2x256 --dtypes bf16,fp16 --vectors 16
                        --maths direct,table-range-bulk --reps 1 --dist e2e --e2e-capture ${DIR}/capture
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}exit ${rc}")
if(NOT rc EQUAL 0 OR NOT out MATCHES "2x256 +fp16 +e2e +built-in +16 table-range-bulk .* exact")
  message(FATAL_ERROR "bench --dist e2e: exit ${rc}, or no exact e2e row")
endif()
