// Forced into each AICore kernel compiled under PTO-ISA's A2/A3 cost-model build (-include, by
// cmake/a2a3.cmake). That build's list of instruction headers (pto/common/pto_instr_impl.hpp,
// `#ifdef __COSTMODEL`) leaves these out while pto/costmodel/pto_instr.hpp still calls their
// `*_IMPL`: a kernel using TCOLEXPAND*, TROWEXPANDMAX/MIN, TEXPANDS or TCI would not compile
// without them. After pto-inst.hpp: they need what it declares.
#pragma once
#include <cstddef>
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/npu/a2a3/TColExpand.hpp>
#include <pto/npu/a2a3/TColExpandAdd.hpp>
#include <pto/npu/a2a3/TColExpandSub.hpp>
#include <pto/npu/a2a3/TColExpandMul.hpp>
#include <pto/npu/a2a3/TColExpandDiv.hpp>
#include <pto/npu/a2a3/TColExpandMax.hpp>
#include <pto/npu/a2a3/TColExpandMin.hpp>
#include <pto/npu/a2a3/TRowExpandMax.hpp>
#include <pto/npu/a2a3/TRowExpandMin.hpp>
#include <pto/npu/a2a3/TExpandS.hpp>
#include <pto/npu/a2a3/TCI.hpp>
