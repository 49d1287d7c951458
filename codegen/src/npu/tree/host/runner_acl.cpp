// The ACL runner: runs the tree's programs on an Ascend device through CANN's ACL.
//
// The expander (aicpu/expander.cpp) runs here on the host CPU. It is the same code the replay
// runs, and it issues tasks in dependency order and holds back at the task window. This runner:
// - owns device memory: one aclrtMalloc per tensor, initial values from data/NAME.npy;
// - launches each kernel task's AICore entry `wsp_aicore_<kernel>`, loaded from the object
//   bisheng compiled (build/aicore/<kernel>.o), on one ACL stream;
// - writes the tensors back as .npy.
//
// One stream runs its launches in issue order, and issue order respects every dependency, so
// no further synchronisation is needed between tasks. When the expander needs a task completed
// (a full window, a data-dependent axis, a collective, the end of an execution), the runner
// synchronises the stream; every launched task is then complete.
//
// Built only with -DPTO_WSP_ENABLE_ASCEND=ON. Not run on a device by the project's tests: see
// README.md, "What is verified where".
//
//   runner_acl [--device N] [--bind NAME=VALUE]... [--out DIR] [--data DIR]
//              [--dump-tasks FILE] [--max-tasks N]
//
// As the host replay: initial tensors from DIR/NAME.npy (--data, default the tree's data/),
// zeros otherwise; `save_npy` actions write under --out, and at the end every tensor is written
// there as NAME.npy.

#include <acl/acl.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "npy.hpp"
#include "task_stream.hpp"
#include "pto_wsp/expander.hpp"
#include "pto_wsp/plan.hpp"

#ifndef PTO_WSP_TREE_DIR
#error "PTO_WSP_TREE_DIR must name the tree (CMakeLists.txt defines it)"
#endif
#ifndef PTO_WSP_AICORE_DIR
#error "PTO_WSP_AICORE_DIR must name the folder of the AICore objects (CMakeLists.txt defines it)"
#endif

namespace fs = std::filesystem;
using namespace pto_wsp;

namespace {

struct Options {
    int32_t device = 0;
    std::vector<std::pair<std::string, uint64_t>> binds;
    std::string out = "out";
    std::string data = std::string(PTO_WSP_TREE_DIR) + "/data";
    std::string dump_tasks;
    uint32_t max_tasks = ExpanderConfig().max_tasks;
};

// An ACL call's result as a message: the call, its code, and ACL's own explanation.
bool acl_ok(aclError code, const char* call, std::string* err) {
    if (code == ACL_SUCCESS) return true;
    const char* recent = aclGetRecentErrMsg();
    *err = std::string(call) + " failed with ACL error " + std::to_string(int(code));
    if (recent && *recent) *err += ": " + std::string(recent);
    return false;
}

#define ACL_TRY(call)                                        \
    do {                                                     \
        if (!acl_ok((call), #call, err)) return false;       \
    } while (0)

uint64_t tensor_elements(const TensorPlan& t) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t.rank; ++d) n *= t.shape[d];
    return n;
}

// The dtype of a kernel's j-th scalar parameter: the AICore entry takes a Scalar[D] parameter
// as D's compute type and a constexpr one as int64_t (aicore/src/lib.rs).
DType scalar_dtype(const KernelPlan& kernel, uint32_t j) {
    return kernel.scalar_dtypes[j];
}

// Appends one kernel argument by value.
template <typename T>
bool append(aclrtArgsHandle args, T value, std::string* err) {
    aclrtParamHandle param;
    ACL_TRY(aclrtKernelArgsAppend(args, &value, sizeof(T), &param));
    return true;
}

// A scalar argument in the type the entry declares: f16/bf16/f32 as float (the AICore scalar
// unit computes them in f32), the others as themselves.
bool append_scalar(aclrtArgsHandle args, DType dtype, double v, std::string* err) {
    switch (dtype) {
    case DType::F16: case DType::BF16: case DType::F32: return append(args, float(v), err);
    case DType::F64: return append(args, v, err);
    case DType::I8: return append(args, int8_t(v), err);
    case DType::I16: return append(args, int16_t(v), err);
    case DType::I32: return append(args, int32_t(v), err);
    case DType::I64: return append(args, int64_t(v), err);
    case DType::U8: return append(args, uint8_t(v), err);
    case DType::U16: return append(args, uint16_t(v), err);
    case DType::U32: return append(args, uint32_t(v), err);
    case DType::U64: return append(args, uint64_t(v), err);
    }
    *err = "unknown scalar dtype";
    return false;
}

class Device {
public:
    explicit Device(const Options& options) : options_(options) {}

    ~Device() {
        // A view's pointer is its base's: freed once, as the base.
        for (size_t i = 0; i < tensors_.size(); ++i)
            if (tensors_[i] && kPlan.tensors[i].base < 0) aclrtFree(tensors_[i]);
        for (aclrtBinHandle b : binaries_)
            if (b) aclrtBinaryUnLoad(b);
        if (stream_) aclrtDestroyStream(stream_);
        if (device_set_) aclrtResetDevice(options_.device);
        if (initialised_) aclFinalize();
        if (tasks_) std::fclose(tasks_);
    }

    bool run(std::string* err) {
        for (const auto& [name, value] : options_.binds) {
            std::string shown = "--bind " + name + "=" + std::to_string(value);
            if (!check_binding(kPlan, UINT32_MAX, name.c_str(), value, shown.c_str(), err))
                return false;
        }
        for (uint32_t a = 0; a < kPlan.action_count; ++a) {
            const ActionPlan& act = kPlan.actions[a];
            if (act.kind != ActionKind::Execute) continue;
            for (uint32_t b = 0; b < act.binding_count; ++b) {
                const BindingPlan& bind = act.bindings[b];
                std::string shown = std::string(kPlan.programs[act.program].name) +
                                    ".execute(" + bind.name + "=" +
                                    std::to_string(bind.value) + ")";
                if (!check_binding(kPlan, act.program, bind.name, bind.value, shown.c_str(), err))
                    return false;
            }
        }
        if (!open_device(err) || !load_tensors(err) || !load_kernels(err)) return false;
        if (!options_.dump_tasks.empty()) {
            tasks_ = std::fopen(options_.dump_tasks.c_str(), "w");
            if (!tasks_) {
                *err = options_.dump_tasks + ": cannot write: " + std::strerror(errno);
                return false;
            }
            std::fputs("# wsp tasks v1\n", tasks_);
        }

        Runner runner;
        runner.user = this;
        runner.issue = [](void* u, const TaskRecord& t, std::string* e) {
            return static_cast<Device*>(u)->issue(t, e);
        };
        runner.complete_one = [](void* u, uint32_t* id, std::string* e) {
            return static_cast<Device*>(u)->complete_one(id, e);
        };
        runner.read_int = [](void* u, uint32_t tensor, uint64_t element, int64_t* v,
                             std::string* e) {
            return static_cast<Device*>(u)->read_int(tensor, element, v, e);
        };
        runner.collective = [](void* u, const CollectiveOp& op, std::string* e) {
            return static_cast<Device*>(u)->collective(op, e);
        };
        ExpanderConfig config;
        config.max_tasks = options_.max_tasks;
        std::vector<char*> bases;
        for (void* p : tensors_) bases.push_back(static_cast<char*>(p));
        Expander expander(kPlan, bases.data(), runner, config);
        if (!expander.init(err)) return false;

        for (uint32_t a = 0; a < kPlan.action_count; ++a) {
            const ActionPlan& act = kPlan.actions[a];
            if (act.kind == ActionKind::Execute) {
                // The action's bindings, then --bind: a later binding of a name wins.
                std::vector<Binding> binds;
                for (uint32_t b = 0; b < act.binding_count; ++b)
                    binds.push_back(Binding{act.bindings[b].name, act.bindings[b].value});
                for (const auto& [name, value] : options_.binds)
                    binds.push_back(Binding{name.c_str(), value});
                if (tasks_) std::fprintf(tasks_, "execution %s\n", kPlan.programs[act.program].name);
                if (!expander.execute(act.program, binds.data(), binds.size(), err)) return false;
            } else {
                if (!save(act.tensor, fs::path(options_.out) / act.path, err)) return false;
            }
        }
        if (!synchronize(err)) return false;
        for (uint32_t i = 0; i < kPlan.tensor_count; ++i) {
            if (!npy::dumped(kPlan.tensors, i)) continue;
            fs::path path = fs::path(options_.out) / (std::string(kPlan.tensors[i].name) + ".npy");
            if (!save(i, path, err)) return false;
        }
        if (tasks_ && std::fflush(tasks_) != 0) {
            *err = options_.dump_tasks + ": cannot write: " + std::strerror(errno);
            return false;
        }
        return true;
    }

private:
    bool open_device(std::string* err) {
        ACL_TRY(aclInit(nullptr));
        initialised_ = true;
        ACL_TRY(aclrtSetDevice(options_.device));
        device_set_ = true;
        ACL_TRY(aclrtCreateStream(&stream_));
        return true;
    }

    // Every tensor in device memory: from --data's NAME.npy when there is one (the tree's data/
    // has one per tensor whose `init` is not zeros), else zeros.
    bool load_tensors(std::string* err) {
        for (uint32_t i = 0; i < kPlan.tensor_count; ++i) {
            const TensorPlan& t = kPlan.tensors[i];
            if (t.base >= 0) {
                // A view has no bytes of its own: its base's, declared before it.
                // Copied first: push_back may reallocate.
                uint64_t bytes = bytes_[size_t(t.base)];
                void* dev = tensors_[size_t(t.base)];
                bytes_.push_back(bytes);
                tensors_.push_back(dev);
                continue;
            }
            uint64_t bytes = tensor_elements(t) * dtype_size(t.dtype);
            bytes_.push_back(bytes);
            void* dev = nullptr;
            // aclrtMalloc refuses size 0; an empty tensor still needs a distinct address.
            ACL_TRY(aclrtMalloc(&dev, bytes ? bytes : 1, ACL_MEM_MALLOC_HUGE_FIRST));
            tensors_.push_back(dev);
            if (bytes == 0) continue;
            fs::path data = fs::path(options_.data) / (std::string(t.name) + ".npy");
            if (t.from_data) {
                std::vector<char> host(bytes);
                if (!npy::load(data.string(), t.dtype, t.shape, t.rank, host.data(), err))
                    return false;
                ACL_TRY(aclrtMemcpy(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
            } else {
                ACL_TRY(aclrtMemset(dev, bytes, 0, bytes));
            }
        }
        return true;
    }

    // Each kernel's AICore object, and its entry. A kernel without an object (a `cpp_src`
    // kernel): an error only if a task launches it.
    bool load_kernels(std::string* err) {
        for (uint32_t k = 0; k < kPlan.kernel_count; ++k) {
            const char* name = kPlan.kernels[k].name;
            // aclrtBinaryLoadFromFile wants an absolute path.
            fs::path object = fs::absolute(fs::path(PTO_WSP_AICORE_DIR) / (std::string(name) + ".o"));
            aclrtBinHandle binary = nullptr;
            aclrtFuncHandle entry = nullptr;
            if (fs::exists(object)) {
                // A bare `--cce-aicore-only` object carries no core type: say which core runs
                // it, as the stack's own loaders do (the object was built for dav-c220-cube or
                // dav-c220-vec by the same `cube` flag).
                aclrtBinaryLoadOption magic{};
                magic.type = ACL_RT_BINARY_LOAD_OPT_MAGIC;
                magic.value.magic = kPlan.kernels[k].cube ? ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE
                                                          : ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE;
                aclrtBinaryLoadOptions options{};
                options.options = &magic;
                options.numOpt = 1;
                ACL_TRY(aclrtBinaryLoadFromFile(object.c_str(), &options, &binary));
                std::string symbol = std::string("wsp_aicore_") + name;
                ACL_TRY(aclrtBinaryGetFunction(binary, symbol.c_str(), &entry));
            }
            binaries_.push_back(binary);
            entries_.push_back(entry);
        }
        return true;
    }

    bool issue(const TaskRecord& t, std::string* err) {
        if (tasks_) dump(t);
        if (t.kind == TaskKind::Kernel && !launch(t, err)) return false;
        pending_.push_back(t.id);
        return true;
    }

    // The entry's arguments in its order (aicore.rs): the tiles' global-memory addresses, their
    // row strides in elements, then the scalars.
    bool launch(const TaskRecord& t, std::string* err) {
        const KernelPlan& k = kPlan.kernels[t.kernel];
        aclrtFuncHandle entry = entries_[t.kernel];
        if (!entry) {
            *err = std::string("kernel `") + k.name +
                   "` has no AICore object in " PTO_WSP_AICORE_DIR
                   ": a `cpp_src` kernel has no AICore form (see README.md)";
            return false;
        }
        aclrtArgsHandle args = nullptr;
        ACL_TRY(aclrtKernelArgsInit(entry, &args));
        for (uint32_t i = 0; i < t.tile_count; ++i)
            if (!append(args, static_cast<void*>(t.tiles[i]), err)) return false;
        for (uint32_t i = 0; i < t.tile_count; ++i) {
            // A row-major (ND) parameter takes its row stride and needs contiguous columns; a
            // column-major (DN) one its column stride, and needs contiguous rows. `wsp emit`
            // chose each from the program's views; a tile that breaks it is an error here.
            bool dn = k.tile_layouts && k.tile_layouts[i] == GmLayout::Dn;
            int64_t unit = t.strides[2 * i + (dn ? 0 : 1)];
            if (unit != 1 && !(dn && t.strides[2 * i] == 0)) {
                *err = "task " + std::to_string(t.id) + " (`" + k.name + "`): tile " +
                       std::to_string(i) + (dn ? " has row stride " : " has column stride ") +
                       std::to_string(unit) + "; its AICore kernel reads " +
                       (dn ? "columns" : "rows") + " of contiguous elements";
                return false;
            }
            if (!append(args, int64_t(t.strides[2 * i + (dn ? 1 : 0)]), err)) return false;
        }
        uint32_t j = 0;
        for (uint32_t p = 0; p < k.param_count; ++p) {
            if (k.params[p] == ParamKind::Constexpr) {
                if (!append(args, int64_t(t.scalars[j]), err)) return false;
                ++j;
            } else if (k.params[p] == ParamKind::Scalar) {
                if (!append_scalar(args, scalar_dtype(k, j), t.scalars[j], err)) return false;
                ++j;
            }
        }
        ACL_TRY(aclrtKernelArgsFinalize(args));
        // One block: a task is one tile's work on one core.
        ACL_TRY(aclrtLaunchKernelWithConfig(entry, 1, stream_, nullptr, args, nullptr));
        return true;
    }

    // Tasks complete in issue order: one synchronisation completes every task launched so far.
    bool complete_one(uint32_t* id, std::string* err) {
        if (pending_.empty()) {
            *err = "the expander waited for a task, but none is outstanding";
            return false;
        }
        if (completed_ == 0) {
            if (!synchronize(err)) return false;
            completed_ = pending_.size();
        }
        *id = pending_.front();
        pending_.pop_front();
        --completed_;
        return true;
    }

    bool synchronize(std::string* err) {
        ACL_TRY(aclrtSynchronizeStream(stream_));
        return true;
    }

    bool read_int(uint32_t tensor, uint64_t element, int64_t* value, std::string* err) {
        const TensorPlan& t = kPlan.tensors[tensor];
        uint32_t size = dtype_size(t.dtype);
        unsigned char buf[8] = {};
        if (!synchronize(err)) return false;
        ACL_TRY(aclrtMemcpy(buf, sizeof buf, static_cast<char*>(tensors_[tensor]) + element * size,
                            size, ACL_MEMCPY_DEVICE_TO_HOST));
        *value = read_element_int(t.dtype, buf, 0);
        return true;
    }

    // A derived tensor, computed on the host from the device's values, as the replay does.
    bool collective(const CollectiveOp& op, std::string* err) {
        std::vector<char> src, dst;
        if (!synchronize(err) || !to_host(op.src, &src, err) || !to_host(op.dst, &dst, err))
            return false;
        run_collective_host(kPlan, op, src.data(), dst.data());
        if (!dst.empty())
            ACL_TRY(aclrtMemcpy(tensors_[op.dst], bytes_[op.dst], dst.data(), dst.size(),
                                ACL_MEMCPY_HOST_TO_DEVICE));
        return true;
    }

    bool to_host(uint32_t tensor, std::vector<char>* out, std::string* err) {
        out->assign(bytes_[tensor], 0);
        if (!out->empty())
            ACL_TRY(aclrtMemcpy(out->data(), out->size(), tensors_[tensor], out->size(),
                                ACL_MEMCPY_DEVICE_TO_HOST));
        return true;
    }

    bool save(uint32_t tensor, const fs::path& path, std::string* err) {
        // A view's values are gathered from its base's bytes, in the view's own order.
        const TensorPlan& v = kPlan.tensors[tensor];
        uint32_t stored = v.base >= 0 ? uint32_t(v.base) : tensor;
        std::vector<char> host;
        if (!synchronize(err) || !to_host(stored, &host, err)) return false;
        if (v.base >= 0) host = npy::view_values(v, kPlan.tensors[stored], host.data());
        std::error_code ec;
        if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
        if (ec) {
            *err = path.parent_path().string() + ": cannot create: " + ec.message();
            return false;
        }
        const TensorPlan& t = kPlan.tensors[tensor];
        return npy::save(path.string(), t.dtype, t.shape, t.rank, host.data(), err);
    }

    // One line of the task stream (the format `wsp run --dump-tasks` writes).
    void dump(const TaskRecord& t) {
        std::string line = task_line_head(t);
        append_list(line, t.after, t.after_len);
        line += "\n";
        std::fputs(line.c_str(), tasks_);
    }

    const Options& options_;
    bool initialised_ = false;
    bool device_set_ = false;
    aclrtStream stream_ = nullptr;
    std::vector<void*> tensors_;
    std::vector<uint64_t> bytes_;
    std::vector<aclrtBinHandle> binaries_;
    std::vector<aclrtFuncHandle> entries_;
    std::deque<uint32_t> pending_; // issued, not yet reported complete, in issue order
    size_t completed_ = 0;         // how many of pending_'s first entries are known complete
    FILE* tasks_ = nullptr;
};

bool parse_u64(const char* text, uint64_t* out) {
    if (!*text || *text == '-') return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

bool parse(int argc, char** argv, Options* o, std::string* err) {
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&](const char** v) {
            if (i + 1 >= argc) {
                *err = arg + " needs a value";
                return false;
            }
            *v = argv[++i];
            return true;
        };
        const char* v = nullptr;
        uint64_t n = 0;
        if (arg == "--device") {
            if (!value(&v) || !parse_u64(v, &n) || n > INT32_MAX) {
                if (err->empty()) *err = std::string("--device ") + v + ": expected a device number";
                return false;
            }
            o->device = int32_t(n);
        } else if (arg == "--bind") {
            if (!value(&v)) return false;
            const char* eq = std::strchr(v, '=');
            if (!eq || eq == v || !parse_u64(eq + 1, &n)) {
                *err = std::string("`--bind ") + v + "`: expected name=value with an integer value";
                return false;
            }
            o->binds.emplace_back(std::string(v, eq), n);
        } else if (arg == "--out") {
            if (!value(&v)) return false;
            o->out = v;
        } else if (arg == "--data") {
            if (!value(&v)) return false;
            o->data = v;
        } else if (arg == "--dump-tasks") {
            if (!value(&v)) return false;
            o->dump_tasks = v;
        } else if (arg == "--max-tasks") {
            if (!value(&v) || !parse_u64(v, &n) || n == 0 || n > UINT32_MAX) {
                if (err->empty()) *err = std::string("--max-tasks ") + v + ": expected 1 to 4294967295";
                return false;
            }
            o->max_tasks = uint32_t(n);
        } else if (arg == "-h" || arg == "--help") {
            std::printf("usage: runner_acl [--device N] [--bind NAME=VALUE]... [--out DIR] "
                        "[--data DIR] [--dump-tasks FILE] [--max-tasks N]\n");
            std::exit(0);
        } else {
            *err = "unknown argument `" + arg + "` (see --help)";
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    std::string err;
    if (!parse(argc, argv, &options, &err)) {
        std::fprintf(stderr, "runner_acl: %s\n", err.c_str());
        return 2;
    }
    Device device(options);
    if (!device.run(&err)) {
        std::fprintf(stderr, "runner_acl: %s\n", err.c_str());
        return 1;
    }
    return 0;
}
