# One ctest check of an emitted tree, run as `cmake -D... -P check.cmake`.
#
# A script rather than a chain of add_test commands so that one test runs several programs in
# order, stops at the first that fails, and shows that program's own output as the reason.
#
# Inputs (-D):
#   SKIP     if set, print it as the reason the check cannot run here and report a skip
#   EXPECTED the task stream (tasks.txt) and tensors (tensors/) `wsp emit` wrote for this check
#   WSP      optional: a `wsp` executable whose `wsp run` gives the expected task stream and
#            tensors instead, live (any binding then works, not only the emitted ones)
#   SOURCE   the tree's copy of the .wsp source
#   REPLAY   the replay executable (host kernels or PTO-ISA CPU-sim kernels)
#   COMPARE  the wsp_compare executable
#   WORK     a folder of this check's own (emptied first)
#   BIND     optional `symbol=value`, passed to both sides; the replay's stream (or, for a
#            symbol only task scalars read, its tensors) must then differ from its own without the
#            binding (the rebinding reaches the expander at run time)

include("${CMAKE_CURRENT_LIST_DIR}/skip.cmake")
if(DEFINED SKIP)
  return()
endif()

foreach(var EXPECTED SOURCE REPLAY COMPARE WORK)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "wsp-tree: check.cmake needs -D${var}=...")
  endif()
endforeach()

# Runs one program; on failure stops the check with the command line and everything it printed.
function(step)
  execute_process(
    COMMAND ${ARGN}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  list(JOIN ARGN " " line)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "wsp-tree: FAILED (${rc}): ${line}\n${out}")
  endif()
  string(STRIP "${out}" out)
  message(STATUS "ok: ${line}")
  if(NOT out STREQUAL "")
    message(STATUS "${out}")
  endif()
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/actual/tensors")

set(bind_args "")
if(DEFINED BIND AND NOT BIND STREQUAL "")
  set(bind_args --bind "${BIND}")
endif()

set(expected "${EXPECTED}")
if(DEFINED WSP AND NOT WSP STREQUAL "")
  # --simulate-npu: the program as `wsp emit` lays it out (kernels split per core), on cpu_sim.
  set(expected "${WORK}/expected")
  file(MAKE_DIRECTORY "${expected}/tensors")
  step("${WSP}" run "${SOURCE}" --simulate-npu ${bind_args}
    --dump-tasks "${expected}/tasks.txt"
    --dump-tensors "${expected}/tensors")
elseif(NOT EXISTS "${expected}/tasks.txt")
  message(FATAL_ERROR "wsp-tree: no ${expected}/tasks.txt: emit the tree again, or configure with "
    "-DWSP_EXECUTABLE=<wsp> to compute the expected outputs with `wsp run`")
else()
  message(STATUS "expected outputs: ${expected} (written by `wsp emit`)")
endif()
step("${REPLAY}" ${bind_args}
  --dump-tasks "${WORK}/actual/tasks.txt"
  --out "${WORK}/actual/tensors")
step("${COMPARE}" tasks "${expected}/tasks.txt" "${WORK}/actual/tasks.txt")
# Tensors computed through a narrower float are compared at its tolerance (tolerances.txt,
# written by `wsp emit` beside this script).
step("${COMPARE}" tensors "${expected}/tensors" "${WORK}/actual/tensors"
  --via "${CMAKE_CURRENT_LIST_DIR}/tolerances.txt")

if(bind_args)
  # The same binary without the binding: the two streams must differ, or the symbol never
  # reached the expander (it would have been folded in at emit time). A symbol only task
  # scalars read (`Symbol("s")`) leaves the stream as it is and changes the numbers instead.
  file(MAKE_DIRECTORY "${WORK}/default/tensors")
  step("${REPLAY}"
    --dump-tasks "${WORK}/default/tasks.txt"
    --out "${WORK}/default/tensors")
  execute_process(
    COMMAND "${COMPARE}" differ "${WORK}/default/tasks.txt" "${WORK}/actual/tasks.txt"
    RESULT_VARIABLE streams_differ OUTPUT_QUIET ERROR_QUIET)
  if(streams_differ EQUAL 0)
    message(STATUS "ok: the binding changes the task stream")
  else()
    execute_process(
      COMMAND "${COMPARE}" tensors "${WORK}/default/tensors" "${WORK}/actual/tensors"
        --via "${CMAKE_CURRENT_LIST_DIR}/tolerances.txt"
      RESULT_VARIABLE tensors_same OUTPUT_QUIET ERROR_QUIET)
    if(tensors_same EQUAL 0)
      message(FATAL_ERROR "wsp-tree: FAILED: binding ${BIND} changes neither the task stream "
        "nor any tensor: the symbol never reached the expander")
    endif()
    message(STATUS "ok: the binding changes the tensors (the task stream is the same)")
  endif()
endif()
