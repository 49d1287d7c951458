// The host replay: runs the file's actions with the AICPU expander compiled for the host and a
// host scheduler standing in for the device. Tensors are host buffers, kernels the
// `wsp_kernel_<name>` functions (host/kernels_cpu.cpp, or the PTO-ISA CPU-sim adapters of
// aicore/), run one at a time when their predecessors have completed. The expander's issue loop
// calls back here to complete a task when its window is full; that runs the oldest ready task.
//
//   replay [--bind NAME=VALUE]... [--dump-tasks FILE] [--out DIR] [--data DIR] [--max-tasks N]
//
// Initial tensors come from DIR/NAME.npy (--data, default the tree's data/ folder) for every
// tensor whose `init` is not zeros (a missing file is an error), zeros otherwise. `save_npy` actions write relative to --out; at the end every tensor is written
// there as NAME.npy (as `wsp run --dump-tensors DIR`). --dump-tasks writes the task stream in
// the format of `wsp run --dump-tasks`, which tools/compare.cpp compares.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "npy.hpp"
#include "task_stream.hpp"
#include "pto_wsp/expander.hpp"
#include "pto_wsp/plan.hpp"

#ifndef PTO_WSP_TREE_DIR
#define PTO_WSP_TREE_DIR "."
#endif

namespace {

using namespace pto_wsp;

// A task issued and not yet completed.
struct Slot {
    TaskKind kind = TaskKind::Barrier;
    uint32_t kernel = 0;
    uint32_t waiting = 0; // predecessors not yet completed
    bool issued = false;
    bool done = false;
    std::vector<char*> tiles;
    std::vector<int64_t> strides;
    std::vector<double> scalars;
    std::vector<uint32_t> successors;
};

struct Host {
    std::vector<std::unique_ptr<uint64_t[]>> buffers; // 8-byte aligned, as the runtime's
    std::vector<char*> bases;
    std::vector<Slot> slots; // by task id
    std::deque<uint32_t> ready;
    // The task stream: per task its line up to `after=` and its predecessors, written at the
    // end (a satisfied edge may add a predecessor to a task issued earlier).
    bool dumping = false;
    std::string dump_head = "# wsp tasks v1\n";
    std::vector<std::string> lines;             // by task id
    std::vector<std::vector<uint32_t>> after;   // by task id
    std::vector<std::pair<uint32_t, std::string>> executions; // first task id, header line
};

bool issue(void* user, const TaskRecord& t, std::string* err) {
    Host& h = *static_cast<Host*>(user);
    if (t.id >= h.slots.size()) h.slots.resize(size_t(t.id) + 1);
    Slot& s = h.slots[t.id];
    if (s.issued) {
        *err = "task " + std::to_string(t.id) + " issued twice";
        return false;
    }
    s.issued = true;
    s.kind = t.kind;
    s.kernel = t.kernel;
    if (t.kind == TaskKind::Kernel) {
        if (t.kernel >= kPlan.kernel_count) {
            *err = "task " + std::to_string(t.id) + " names no kernel";
            return false;
        }
        s.tiles.assign(t.tiles, t.tiles + t.tile_count);
        s.strides.assign(t.strides, t.strides + 2 * t.tile_count);
        s.scalars.assign(t.scalars, t.scalars + t.scalar_count);
    }
    for (uint32_t i = 0; i < t.after_len; ++i) {
        uint32_t p = t.after[i];
        if (p >= t.id || p >= h.slots.size() || !h.slots[p].issued) {
            *err = "task " + std::to_string(t.id) + " waits for task " + std::to_string(p) +
                   ", which was not issued before it";
            return false;
        }
        if (!h.slots[p].done) {
            h.slots[p].successors.push_back(t.id);
            ++s.waiting;
        }
    }
    if (s.waiting == 0) h.ready.push_back(t.id);
    if (h.dumping) {
        std::string line = task_line_head(t);
        if (h.lines.size() <= t.id) {
            h.lines.resize(size_t(t.id) + 1);
            h.after.resize(size_t(t.id) + 1);
        }
        h.lines[t.id] = std::move(line);
        h.after[t.id].assign(t.after, t.after + t.after_len);
    }
    return true;
}

void satisfied_edge(void* user, uint32_t pred, uint32_t task) {
    Host& h = *static_cast<Host*>(user);
    if (!h.dumping || task >= h.after.size()) return;
    std::vector<uint32_t>& a = h.after[task];
    auto at = std::lower_bound(a.begin(), a.end(), pred);
    if (at == a.end() || *at != pred) a.insert(at, pred);
}

// The task stream in the format of `wsp run --dump-tasks`.
bool write_dump(const Host& h, const std::string& path, std::string* err) {
    std::string out = h.dump_head;
    size_t next_execution = 0;
    for (size_t id = 0; id < h.lines.size(); ++id) {
        while (next_execution < h.executions.size() && h.executions[next_execution].first <= id)
            out += h.executions[next_execution++].second;
        out += h.lines[id];
        append_list(out, h.after[id].data(), uint32_t(h.after[id].size()));
        out += "\n";
    }
    while (next_execution < h.executions.size()) out += h.executions[next_execution++].second;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        *err = "cannot write `" + path + "`: " + std::strerror(errno);
        return false;
    }
    bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) != 0 || !ok) {
        *err = "cannot write `" + path + "`";
        return false;
    }
    return true;
}

// Runs the oldest ready task (a kernel's function; barriers and collectives have no work
// left) and reports it.
bool complete_one(void* user, uint32_t* id, std::string* err) {
    Host& h = *static_cast<Host*>(user);
    if (h.ready.empty()) {
        *err = "no issued task is ready: the issued tasks wait for each other";
        return false;
    }
    uint32_t t = h.ready.front();
    h.ready.pop_front();
    Slot& s = h.slots[t];
    if (s.kind == TaskKind::Kernel) {
        KernelFn f = kHostKernels[s.kernel];
        f(s.tiles.data(), s.strides.data(), s.scalars.data());
    }
    s.done = true;
    for (uint32_t n : s.successors)
        if (--h.slots[n].waiting == 0) h.ready.push_back(n);
    std::vector<uint32_t>().swap(s.successors);
    std::vector<char*>().swap(s.tiles);
    std::vector<int64_t>().swap(s.strides);
    std::vector<double>().swap(s.scalars);
    *id = t;
    return true;
}

bool read_int(void* user, uint32_t tensor, uint64_t element, int64_t* value, std::string* err) {
    Host& h = *static_cast<Host*>(user);
    if (tensor >= kPlan.tensor_count) {
        *err = "no tensor #" + std::to_string(tensor);
        return false;
    }
    *value = read_element_int(kPlan.tensors[tensor].dtype, h.bases[tensor], element);
    return true;
}

bool collective(void* user, const CollectiveOp& op, std::string*) {
    Host& h = *static_cast<Host*>(user);
    run_collective_host(kPlan, op, h.bases[op.src], h.bases[op.dst]);
    return true;
}

bool make_dirs(const std::string& path, std::string* err) {
    std::string cur;
    size_t i = 0;
    while (i <= path.size()) {
        size_t j = path.find('/', i);
        if (j == std::string::npos) j = path.size();
        cur = path.substr(0, j);
        if (!cur.empty() && ::mkdir(cur.c_str(), 0777) != 0 && errno != EEXIST) {
            *err = "cannot create `" + cur + "`: " + std::strerror(errno);
            return false;
        }
        i = j + 1;
    }
    return true;
}

int fail(const std::string& message) {
    std::fprintf(stderr, "replay: error: %s\n", message.c_str());
    return 1;
}

bool parse_u64(const char* s, uint64_t* out) {
    if (!*s) return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || s[0] == '-') return false;
    *out = v;
    return true;
}

const char* kUsage =
    "usage: replay [--bind NAME=VALUE]... [--dump-tasks FILE] [--out DIR] [--data DIR] "
    "[--max-tasks N]\n";

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> bind_names;
    std::vector<uint64_t> bind_values;
    std::string dump_path, out_dir, data_dir = std::string(PTO_WSP_TREE_DIR) + "/data";
    uint64_t max_tasks = uint64_t(1) << 24;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](std::string* out) {
            if (i + 1 >= argc) return false;
            *out = argv[++i];
            return true;
        };
        std::string v;
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--bind" && value(&v)) {
            size_t eq = v.find('=');
            uint64_t n = 0;
            if (eq == std::string::npos || eq == 0 || !parse_u64(v.c_str() + eq + 1, &n))
                return fail("--bind takes NAME=VALUE with a non-negative integer value, not `" + v + "`");
            bind_names.push_back(v.substr(0, eq));
            bind_values.push_back(n);
        } else if (a == "--dump-tasks" && value(&v)) {
            dump_path = v;
        } else if (a == "--out" && value(&v)) {
            out_dir = v;
        } else if (a == "--data" && value(&v)) {
            data_dir = v;
        } else if (a == "--max-tasks" && value(&v)) {
            if (!parse_u64(v.c_str(), &max_tasks) || max_tasks == 0 || max_tasks > 0xfffffffeull)
                return fail("--max-tasks takes a count from 1 to 4294967294, not `" + v + "`");
        } else {
            std::fputs(kUsage, stderr);
            return fail("unexpected argument `" + a + "`");
        }
    }
    std::string err;
    std::vector<Binding> overrides;
    for (size_t i = 0; i < bind_names.size(); ++i) {
        std::string shown = "--bind " + bind_names[i] + "=" + std::to_string(bind_values[i]);
        if (!check_binding(kPlan, UINT32_MAX, bind_names[i].c_str(), bind_values[i], shown.c_str(), &err))
            return fail(err);
        overrides.push_back(Binding{bind_names[i].c_str(), bind_values[i]});
    }
    for (uint32_t a = 0; a < kPlan.action_count; ++a) {
        const ActionPlan& act = kPlan.actions[a];
        if (act.kind != ActionKind::Execute) continue;
        const char* prog = kPlan.programs[act.program].name;
        for (uint32_t b = 0; b < act.binding_count; ++b) {
            std::string shown = std::string(prog) + ".execute(" + act.bindings[b].name + "=" +
                                std::to_string(act.bindings[b].value) + ")";
            if (!check_binding(kPlan, act.program, act.bindings[b].name, act.bindings[b].value, shown.c_str(), &err))
                return fail(err);
        }
    }

    Host host;
    host.dumping = !dump_path.empty();
    for (uint32_t t = 0; t < kPlan.tensor_count; ++t) {
        const TensorPlan& tp = kPlan.tensors[t];
        if (tp.base >= 0) {
            // A view has no bytes of its own: its base's, declared before it.
            host.buffers.emplace_back();
            char* base = host.bases[size_t(tp.base)]; // copied first: push_back may reallocate
            host.bases.push_back(base);
            continue;
        }
        uint64_t bytes = dtype_size(tp.dtype);
        for (uint32_t d = 0; d < tp.rank; ++d) {
            if (tp.shape[d] != 0 && bytes > UINT64_MAX / tp.shape[d])
                return fail(std::string("tensor `") + tp.name + "` is larger than memory can address");
            bytes *= tp.shape[d];
        }
        uint64_t words = (bytes + 7) / 8;
        if (words > SIZE_MAX / 8) return fail(std::string("tensor `") + tp.name + "` is too large");
        uint64_t* buf = new (std::nothrow) uint64_t[size_t(words ? words : 1)]();
        if (!buf) return fail(std::string("cannot allocate tensor `") + tp.name + "` (" + std::to_string(bytes) + " bytes)");
        host.buffers.emplace_back(buf);
        host.bases.push_back(reinterpret_cast<char*>(buf));
        std::string path = data_dir + "/" + tp.name + ".npy";
        // A tensor whose `init` is not zeros starts from its file, which must be there: zeros
        // in its place would be wrong numbers, not an error.
        if (tp.from_data && !npy::load(path, tp.dtype, tp.shape, tp.rank, buf, &err)) return fail(err);
    }

    // A tensor, or a view's values gathered from its base.
    auto save_tensor = [&](const std::string& path, uint32_t t, std::string* e) {
        const TensorPlan& tp = kPlan.tensors[t];
        if (tp.base < 0) return npy::save(path, tp.dtype, tp.shape, tp.rank, host.bases[t], e);
        std::vector<char> values = npy::view_values(tp, kPlan.tensors[tp.base], host.bases[size_t(tp.base)]);
        return npy::save(path, tp.dtype, tp.shape, tp.rank, values.data(), e);
    };
    Runner runner;
    runner.user = &host;
    runner.issue = issue;
    runner.complete_one = complete_one;
    runner.read_int = read_int;
    runner.collective = collective;
    runner.satisfied_edge = satisfied_edge;
    ExpanderConfig config;
    config.max_tasks = uint32_t(max_tasks);
    Expander expander(kPlan, host.bases.data(), runner, config);
    if (!expander.init(&err)) return fail(err);

    if (!out_dir.empty() && !make_dirs(out_dir, &err)) return fail(err);
    for (uint32_t a = 0; a < kPlan.action_count; ++a) {
        const ActionPlan& act = kPlan.actions[a];
        if (act.kind == ActionKind::Execute) {
            std::vector<Binding> binds;
            for (uint32_t b = 0; b < act.binding_count; ++b)
                binds.push_back(Binding{act.bindings[b].name, act.bindings[b].value});
            binds.insert(binds.end(), overrides.begin(), overrides.end());
            if (host.dumping)
                host.executions.emplace_back(expander.next_id(), std::string("execution ") +
                                                                     kPlan.programs[act.program].name + "\n");
            if (!expander.execute(act.program, binds.data(), binds.size(), &err))
                return fail(std::string(kPlan.programs[act.program].name) + ": " + err);
        } else {
            const TensorPlan& tp = kPlan.tensors[act.tensor];
            std::string path = out_dir.empty() ? std::string(act.path) : out_dir + "/" + act.path;
            size_t slash = path.rfind('/');
            if (slash != std::string::npos && slash > 0 && !make_dirs(path.substr(0, slash), &err)) return fail(err);
            if (!save_tensor(path, act.tensor, &err)) return fail(err);
        }
    }
    if (host.dumping && !write_dump(host, dump_path, &err)) return fail(err);
    if (!out_dir.empty()) {
        for (uint32_t t = 0; t < kPlan.tensor_count; ++t) {
            if (!npy::dumped(kPlan.tensors, t)) continue;
            if (!save_tensor(out_dir + "/" + kPlan.tensors[t].name + ".npy", t, &err)) return fail(err);
        }
    }
    // As `wsp run`'s task_count: kernel tasks; barriers and collectives apart.
    uint32_t tasks = expander.next_id();
    uint32_t kernels = 0;
    for (uint32_t t = 0; t < tasks && t < host.slots.size(); ++t)
        kernels += host.slots[t].kind == TaskKind::Kernel;
    std::printf("replay: %" PRIu32 " kernel task%s (%" PRIu32 " tasks with barriers and collectives)\n",
                kernels, kernels == 1 ? "" : "s", tasks);
    return 0;
}
