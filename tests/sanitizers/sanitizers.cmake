# GGLMBS_SANITIZE=ON (scripts/sanitize.sh): every test of this directory runs with the sanitizers set to
# stop at the first error, LeakSanitizer on. ASan and LeakSanitizer write their reports to files under
# <build>/sanitizer-reports and exit with status 86: that fails the test whose process it is, but a
# test that expects a failure (a bad input run by test_app) would take it for one, so
# test_sanitizer_reports, run after all the others, fails if any report was written and prints them.
# UBSan ignores log_path next to ASan (GCC 12), so it reports on stderr and aborts (SIGABRT), which no
# test takes for an expected failure.
if(CMAKE_VERSION VERSION_LESS 3.19)
  message(FATAL_ERROR "GGLMBS_SANITIZE needs CMake 3.19 or later (cmake_language(DEFER))")
endif()
set(MBS_SANITIZER_REPORTS ${PROJECT_BINARY_DIR}/sanitizer-reports)
# fast_unwind_on_malloc=0: Open MPI's components are built without frame pointers and unloaded in
# MPI_Finalize, so only full unwinding records the MPI_Init frames its suppressions (lsan.supp) match.
set(MBS_SANITIZER_ENVIRONMENT
  "ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:detect_leaks=1:fast_unwind_on_malloc=0:exitcode=86:log_path=${MBS_SANITIZER_REPORTS}/asan"
  "UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1"
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp:print_suppressions=0")

# Every input of tests/inputs/bad through the instrumented program: the error paths users hit.
add_test(NAME test_sanitizer_bad_inputs COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/bad_inputs.sh $<TARGET_FILE:gglmbs_app> ${PROJECT_SOURCE_DIR})

function(mbs_sanitize_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t ${tests})
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${MBS_SANITIZER_ENVIRONMENT})
    set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED sanitizer_reports)
    # An MPI test on <n> ranks counts as n processors for ctest -j: instrumented ranks oversubscribing
    # the cores, next to other tests, slow down many times over (Open MPI polls while it waits).
    if(t MATCHES "_np([0-9]+)$")
      set_property(TEST ${t} PROPERTY PROCESSORS ${CMAKE_MATCH_1})
    endif()
  endforeach()
  add_test(NAME test_sanitizer_reports_clear COMMAND sh ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/reports.sh clear ${MBS_SANITIZER_REPORTS})
  add_test(NAME test_sanitizer_reports COMMAND sh ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/reports.sh check ${MBS_SANITIZER_REPORTS})
  set_tests_properties(test_sanitizer_reports_clear PROPERTIES FIXTURES_SETUP sanitizer_reports)
  set_tests_properties(test_sanitizer_reports PROPERTIES FIXTURES_CLEANUP sanitizer_reports)
endfunction()
cmake_language(DEFER CALL mbs_sanitize_tests)
