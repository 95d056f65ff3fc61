# testing.cmake: fuseproof_add_test() builds one GoogleTest executable and registers its cases with ctest labels.
include(GoogleTest)

# fuseproof_add_test(NAME <target> SOURCES <...> LIBS <...> LABELS <...> [TIMEOUT s])
function(fuseproof_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} fuseproof::test_support GTest::gtest_main)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 1500)
  endif()
  # gtest_discover_tests splits a list given in PROPERTIES (the second label would be read as a property name), so
  # the labels are set by a script that ctest includes after discovery, on the tests discovery listed.
  gtest_discover_tests(${T_NAME}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    TEST_LIST ${T_NAME}_TESTS
    PROPERTIES TIMEOUT ${T_TIMEOUT})
  set(_labels_file "${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_labels.cmake")
  file(WRITE "${_labels_file}"
    "if(${T_NAME}_TESTS)\n  set_tests_properties(\${${T_NAME}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${_labels_file}")
endfunction()

# fuseproof_add_refusal_tests(PREFIX <ctest prefix> COMMAND <executable> CASES "Name|args|stderr regex" ...)
# One ctest per case: the command must exit 2 with one stderr line (no final period) matching the regex.
function(fuseproof_add_refusal_tests)
  cmake_parse_arguments(R "" "PREFIX;COMMAND" "CASES" ${ARGN})
  foreach(_case IN LISTS R_CASES)
    string(REPLACE "|" ";" _parts "${_case}")
    list(GET _parts 0 _name)
    list(GET _parts 1 _args)
    list(GET _parts 2 _match)
    add_test(NAME ${R_PREFIX}.${_name}
      COMMAND ${CMAKE_COMMAND} "-DARGS=${R_COMMAND} ${_args}" -DCODE=2 "-DMATCH=${_match}"
              -P ${PROJECT_SOURCE_DIR}/property_tests/mutation/expect_exit.cmake)
    set_tests_properties(${R_PREFIX}.${_name} PROPERTIES LABELS validation TIMEOUT 60)
  endforeach()
endfunction()
