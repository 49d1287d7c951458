// The AICPU expander's interface: it walks a program of the plan (plan.hpp) with its run-time
// symbols and slots, and issues one task record at a time, in task-id order, to a runner (the
// host replay, or the ACL runner on a device). The expander derives the dependencies exactly as
// the CPU runtime does (the tensor regions each task touches, ordered scopes, channels), assigns
// each kernel task its AICPU queue and stream by the program's schedule, and enforces the task
// window in its issue loop: when `window` kernel tasks are issued and not completed, it asks
// the runner to complete one before issuing more.
//
// The runner owns memory and execution. Tensor addresses are opaque to the expander (device
// pointers on an NPU): it only adds byte offsets to them.
//
// A task is issued once nothing can add a predecessor to it: a `send` adds one (channel
// back-pressure) to the latest instance of the task it names, so such an instance, and the tasks
// after it, are held until a newer instance replaces it or its workload ends. When the expander
// must read a tensor (a slot load, a predicate's element, a ragged length) while such an instance
// is held, it issues and drains everything first; a back-pressure edge to that instance found
// later is then already satisfied, and is reported through Runner::satisfied_edge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pto_wsp/plan.hpp"

namespace pto_wsp {

enum class TaskKind : uint8_t {
    Kernel,     // runs `kernel` on `tiles`
    Barrier,    // no work: an ordering point (`sequential()`, a `P.seq` step of many tasks)
    Collective, // no work left: the runner computed the derived tensor (Runner::collective)
};

// What a collective computes: dst[i] = src[i] converted to dst's dtype (relayout, allgather,
// allreduce of an unsharded shape), or, with reduce_dim >= 0, dst = src summed over that
// dimension of src (allreduce), accumulated in double, converted as NumPy's astype does.
struct CollectiveOp {
    const char* op;
    uint32_t src; // file tensor index
    uint32_t dst;
    int32_t reduce_dim;
};

// One issued task. Pointers are valid during the `issue` call only.
struct TaskRecord {
    uint32_t id; // global over the run: ids continue across executions
    TaskKind kind;
    uint32_t program;
    uint32_t kernel;  // Kernel: file kernel index (kPlan.kernels); else UINT32_MAX
    const char* name; // kernel name, collective op, or "-"
    const int64_t* index;
    uint32_t index_len;
    int32_t aicpu;  // Kernel: the AICPU queue by the dispatch policy; else -1
    int32_t stream; // Kernel with streams: its stream; else -1
    // Direct predecessors, sorted, no duplicates: every one was issued before this task.
    const uint32_t* after;
    uint32_t after_len;
    // Kernel: element (0, 0) of each tile parameter (tensor base + offset), their row and
    // column strides in elements (2 per tile), and the scalar parameters.
    char* const* tiles;
    uint32_t tile_count;
    const int64_t* strides;
    const double* scalars;
    uint32_t scalar_count;
    const CollectiveOp* collective; // Collective only
};

// The runner's side. Each callback returns false and sets `*error` to stop the expansion.
struct Runner {
    void* user = nullptr;
    // A task, in id order. Barriers and collectives complete as soon as their predecessors
    // have; kernel tasks when their kernel has run.
    bool (*issue)(void* user, const TaskRecord& task, std::string* error) = nullptr;
    // Wait until one issued task that has not been reported yet completes (a host runs a ready
    // one) and store its id. Every issued task, of any kind, is reported exactly once. Called
    // when the window is full, before the expander reads a tensor tasks wrote, and to drain.
    bool (*complete_one)(void* user, uint32_t* id, std::string* error) = nullptr;
    // Element `element` (flat, row-major) of tensor `tensor` as an integer (exact for integer
    // dtypes, truncated toward zero for floats). Called only when every issued task completed.
    bool (*read_int)(void* user, uint32_t tensor, uint64_t element, int64_t* value,
                     std::string* error) = nullptr;
    // Compute a derived tensor now. Called only when every issued task completed; the
    // collective's task record is issued right after.
    bool (*collective)(void* user, const CollectiveOp& op, std::string* error) = nullptr;
    // Optional: an edge `pred` -> `task` found after both were issued and completed (see
    // above). Nothing to enforce; a runner that records the task stream adds it to `task`'s
    // predecessors.
    void (*satisfied_edge)(void* user, uint32_t pred, uint32_t task) = nullptr;
};

struct ExpanderConfig {
    // The most tasks (all kinds, over all executions) the run may have: the task table's
    // capacity, allocated once. More is an error naming the task that would overflow it.
    uint32_t max_tasks = 1u << 24;
    // AICPU queues the dispatch policy spreads kernel tasks over (6 on the default target).
    uint32_t aicpus = 6;
};

struct Binding {
    const char* name;
    uint64_t value;
};

class Expander {
public:
    // `tensor_bases[i]` is the first byte of file tensor i (kPlan.tensors).
    Expander(const Plan& plan, char* const* tensor_bases, const Runner& runner,
             const ExpanderConfig& config = ExpanderConfig());
    ~Expander();
    Expander(const Expander&) = delete;
    Expander& operator=(const Expander&) = delete;

    // False, with `*error`, if the task table cannot be allocated. Call once before executing.
    bool init(std::string* error);

    // One execution of program `program`: symbols take their defaults, then `bindings` in
    // order (a later binding of a name wins; pass an action's bindings, then --bind ones).
    // Every task has been issued and reported complete on return (the runtime's flush after an
    // execution), so the runner may read any tensor. Ids continue from the previous execution;
    // region records start afresh. After an error the expander must not be used again.
    bool execute(uint32_t program, const Binding* bindings, size_t binding_count,
                 std::string* error);

    // Waits until every issued task completed.
    bool drain(std::string* error);

    // The id the next task gets.
    uint32_t next_id() const;

    struct State;

private:
    std::unique_ptr<State> state_;
};

// Checks a binding as `wsp run` does: `name` must be a run-time symbol of program `program`
// (of any program when `program` is UINT32_MAX) and `value` at most 2^63 - 1. `shown` is how
// the binding was written, for the message.
bool check_binding(const Plan& plan, uint32_t program, const char* name, uint64_t value,
                   const char* shown, std::string* error);

// Element `i` of a host buffer of `dtype`, as f64 / as an integer (the runtime's conversions).
double read_element(DType dtype, const void* data, uint64_t i);
int64_t read_element_int(DType dtype, const void* data, uint64_t i);
// Sets element `i`, converting as NumPy's astype does (round to nearest even for f16/bf16,
// truncation toward zero for integers).
void write_element(DType dtype, void* data, uint64_t i, double v);

// Computes a collective on host buffers of the plan's tensors (the host replay; a device
// runner copies to the host and back, or runs its own).
void run_collective_host(const Plan& plan, const CollectiveOp& op, const void* src, void* dst);

} // namespace pto_wsp
