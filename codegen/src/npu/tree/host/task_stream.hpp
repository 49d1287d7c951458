// One line of the task stream, in the format `wsp run --dump-tasks` writes, for the host
// replay and the ACL runner:
//   task=<id> kind=<kernel|barrier|collective> name=<..> index=<v,..|-> aicpu=<q|-> stream=<s|-> after=<p,..|->
#pragma once

#include <cstdint>
#include <string>

#include "pto_wsp/expander.hpp"

namespace pto_wsp {

// `v0,v1,...`, or `-` for none.
template <typename T>
inline void append_list(std::string& out, const T* v, uint32_t n) {
    if (n == 0) out += "-";
    for (uint32_t i = 0; i < n; ++i) {
        if (i) out += ",";
        out += std::to_string(v[i]);
    }
}

// The line up to and including `after=`: its predecessors follow (the replay may learn of one
// more after the task was issued).
inline std::string task_line_head(const TaskRecord& t) {
    std::string line = "task=" + std::to_string(t.id);
    if (t.kind == TaskKind::Kernel) {
        line += std::string(" kind=kernel name=") + t.name + " index=";
        append_list(line, t.index, t.index_len);
        line += " aicpu=" + std::to_string(t.aicpu) + " stream=" + std::to_string(t.stream);
    } else {
        line += t.kind == TaskKind::Barrier ? std::string(" kind=barrier name=-")
                                            : std::string(" kind=collective name=") + t.name;
        line += " index=- aicpu=- stream=-";
    }
    return line + " after=";
}

} // namespace pto_wsp
