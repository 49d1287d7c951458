# Included first by each check script: with SKIP set, prints it as the reason the check cannot
# run here. ctest marks a test skipped by exit code 77 (SKIP_RETURN_CODE) or, on a CMake too old
# for cmake_language(EXIT) (before 3.29), by this line (SKIP_REGULAR_EXPRESSION); there the
# including script returns itself when SKIP is set.
if(DEFINED SKIP)
  message(NOTICE "wsp-tree: SKIPPED: ${SKIP}")
  if(CMAKE_VERSION VERSION_GREATER_EQUAL 3.29)
    cmake_language(EXIT 77)
  endif()
endif()
