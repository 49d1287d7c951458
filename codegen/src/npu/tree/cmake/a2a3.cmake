# The A2/A3 header check and Perf-Sim, one ctest, run as `cmake -D... -P a2a3.cmake`.
#
# Compiles every AICore kernel of the tree under PTO-ISA's A2/A3 cost-model build
# (-D__COSTMODEL -D__NPU_ARCH__=2201), whose static_asserts reject the instruction forms the
# 910B (dav-c220) lacks, then links them with perf/perf_sim.cpp and runs it: each kernel
# through Perf-Sim, into kernel_cycles.json. Every kernel is compiled, and each one that fails
# is named with the compiler's first lines.
#
# Inputs (-D):
#   PTO_ISA_PATH   the PTO-ISA checkout
#   CXX            a C++20 compiler (clang >= 17, or g++ >= 12 for the cost model)
#   PYTHON         python3, to generate PTO-ISA's formula headers when they are missing
#   TREE           the tree's folder
#   KERNELS        the AICore kernels, comma-separated
#   MIXED          those of them that are one mixed launch of a cube core and its vector cores,
#                  comma-separated: compiled with both cores' code, as PTO-ISA's fa_perf_sim is
#   NPU_ARCH       PTO-ISA's __NPU_ARCH__ of the architecture they are written for (2201: A2/A3)
#   WORK           a folder of this check's own (emptied first); kernel_cycles.json goes there
#   SKIP           if set, print it as the reason the check cannot run here and report a skip

include("${CMAKE_CURRENT_LIST_DIR}/skip.cmake")
if(DEFINED SKIP)
  return()
endif()

foreach(var PTO_ISA_PATH CXX TREE NPU_ARCH WORK)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "wsp-tree: a2a3.cmake needs -D${var}=...")
  endif()
endforeach()

# The commits this tree's emitter is tested against; see README.md.
set(tested "d07bd4b6 (2026-07-08)")

string(REPLACE "," ";" KERNELS "${KERNELS}")
string(REPLACE "," ";" MIXED "${MIXED}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/obj")

set(commit "unknown")
find_program(GIT git)
if(GIT)
  execute_process(COMMAND "${GIT}" -C "${PTO_ISA_PATH}" rev-parse --short=8 HEAD
    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(commit "unknown")
  endif()
endif()
message(STATUS "PTO-ISA at ${PTO_ISA_PATH}, commit ${commit}; tested against ${tested}")

# The cost model's formula headers are generated from CSVs in the checkout, in place, as
# PTO-ISA's own tests/run_costmodel.py does; both, since its header includes both backends.
set(costmodel "${PTO_ISA_PATH}/include/pto/costmodel")
if(NOT EXISTS "${costmodel}/perf_sim/launch.hpp")
  message(FATAL_ERROR "wsp-tree: ${PTO_ISA_PATH} (commit ${commit}) has no A2/A3 cost model "
    "(include/pto/costmodel/perf_sim/launch.hpp): it is older than this tree's emitter was "
    "tested against; check out ${tested}")
endif()
foreach(backend a2a3 a5)
  set(dir "${costmodel}/${backend}/formula_costmodel")
  if(NOT EXISTS "${dir}/formula_params_generated.hpp")
    if(NOT PYTHON)
      message(FATAL_ERROR "wsp-tree: ${dir}/formula_params_generated.hpp is missing and no python3 "
        "was found to run gen_formula_params_header.py beside it")
    endif()
    execute_process(COMMAND "${PYTHON}" "${dir}/gen_formula_params_header.py"
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "wsp-tree: ${dir}/gen_formula_params_header.py failed:\n${out}")
    endif()
    message(STATUS "generated ${dir}/formula_params_generated.hpp")
  endif()
endforeach()

set(flags -std=c++20 -O0 -D__COSTMODEL -D__NPU_ARCH__=${NPU_ARCH} -DPTO_COMM_NOT_SUPPORTED
  "-I${costmodel}/stubs" "-I${PTO_ISA_PATH}/include" "-I${TREE}/include"
  -Wno-ignored-attributes -Wno-deprecated-declarations)
if(CXX MATCHES "clang")
  list(APPEND flags -Wno-macro-redefined)
endif()

# A checkout whose cost model does not build cannot check any kernel: the test is skipped,
# saying why, before any kernel is blamed.
file(WRITE "${WORK}/probe.cpp" "#include <pto_wsp/costmodel.hpp>\n#include <pto/costmodel/perf_sim/launch.hpp>\nint main() { return 0; }\n")
execute_process(COMMAND "${CXX}" ${flags} -fsyntax-only "${WORK}/probe.cpp"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  string(SUBSTRING "${out}" 0 3000 out)
  message(NOTICE "${out}")
  string(CONCAT SKIP "PTO-ISA at ${PTO_ISA_PATH} (commit ${commit}) does not build its A2/A3 "
    "cost model with ${CXX} (the compiler's first lines are above), so no kernel can be "
    "checked here. This tree is tested against ${tested}; PTO-ISA's HEAD 3186c381 does not "
    "build it")
  include("${CMAKE_CURRENT_LIST_DIR}/skip.cmake")
  return()
endif()

set(objects "")
set(failed "")
foreach(k IN LISTS KERNELS)
  set(obj "${WORK}/obj/${k}.o")
  set(cores_${k} "")
  list(FIND MIXED "${k}" mixed_at)
  if(mixed_at GREATER -1)
    set(cores_${k} -D__DAV_C220_CUBE__ -D__DAV_CUBE__ -D__DAV_VEC__)
  endif()
  execute_process(
    COMMAND "${CXX}" ${flags} ${cores_${k}} -include pto_wsp/costmodel.hpp -c "${TREE}/aicore/${k}.cpp" -o "${obj}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(STATUS "ok: ${k}")
    list(APPEND objects "${obj}")
  else()
    string(SUBSTRING "${out}" 0 2000 out)
    message(STATUS "FAILED: ${k} does not build for A2/A3:\n${out}")
    list(APPEND failed "${k}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "wsp-tree: AICore kernels that PTO-ISA's A2/A3 headers reject: ${failed}")
endif()

execute_process(
  COMMAND "${CXX}" ${flags} "-DWSP_PTO_ISA_COMMIT=\"${commit}\"" -c "${TREE}/perf/perf_sim.cpp"
    -o "${WORK}/perf_sim.o"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "wsp-tree: perf/perf_sim.cpp does not build:\n${out}")
endif()
execute_process(
  COMMAND "${CXX}" "${WORK}/perf_sim.o" ${objects} -o "${WORK}/perf_sim"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "wsp-tree: linking perf_sim failed:\n${out}")
endif()
# PTO_BW_MODE changes Perf-Sim's bandwidth model: the figures are its default's.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -E env --unset=PTO_BW_MODE "${WORK}/perf_sim" "${WORK}/kernel_cycles.json"
  WORKING_DIRECTORY "${WORK}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "wsp-tree: perf_sim failed (${rc}):\n${out}")
endif()
# Its own lines only, not Perf-Sim's per-kernel report.
string(REGEX MATCHALL "[^\n]*(cycles on|wrote)[^\n]*" lines "${out}")
list(JOIN lines "\n" lines)
message(STATUS "PTO-ISA ${commit}, Perf-Sim:\n${lines}")
