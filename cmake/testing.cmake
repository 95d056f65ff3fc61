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
  # A list inside PROPERTIES must be escaped, or its second element is read as a property name.
  string(REPLACE ";" "\\;" _labels "${T_LABELS}")
  gtest_discover_tests(${T_NAME}
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT 60
    PROPERTIES LABELS "${_labels}" TIMEOUT ${T_TIMEOUT}
               ENVIRONMENT "FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR}\\;FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR}")
endfunction()
