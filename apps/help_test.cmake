# apps/help_test.cmake: ah_help_test(TARGET...): for each program, the ctest
# <target>_help_without_mpirun (label help): tests/help_check.sh runs `<program> --help` with
# no mpirun and requires exit status 0 and a first line "usage: ..." (issue 28). Included by
# apps/CMakeLists.txt and by apps/device (which src/device adds first).
function(ah_help_test)
  if(NOT ANTHEAP_TESTS)
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      string(REPLACE "-" "_" name ${target})
      add_test(NAME ${name}_help_without_mpirun
               COMMAND sh ${CMAKE_SOURCE_DIR}/tests/help_check.sh $<TARGET_FILE:${target}>)
      set_tests_properties(${name}_help_without_mpirun PROPERTIES TIMEOUT 60 LABELS help)
    endif()
  endforeach()
endfunction()
