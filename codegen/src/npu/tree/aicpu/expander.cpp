// The AICPU expander: interprets a program of the plan (plan.hpp) with its run-time symbols
// and slots, and issues its tasks in id order to a runner (expander.hpp). A port of the CPU
// runtime's enumeration (runtime/src/enumerate.rs: order, P.seq, sequential barriers, channels
// with back-pressure, predicates, ragged and sparse axes, derived tensors) and of its region
// tracking (runtime/src/graph.rs `Regions`), so that the same program gives the same task ids
// and the same dependencies. The runtime's index launches are not ported: enumerating each
// instance gives the same ids, and its launch records are exact (graph.rs proves it), so the
// same happens-before.
//
// Issue: a task is issued once no later `send` can add a predecessor to it. A `send` adds one
// (channel back-pressure) to the latest instance of the task it names, so the latest instance
// of every task some `send` of the workload names is held, with every task after it, until a
// newer instance replaces it or the workload ends.
#include "pto_wsp/expander.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <unordered_map>
#include <vector>

namespace pto_wsp {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
// More tasks than this in one `P.seq` step are joined by a barrier (enumerate.rs BARRIER_AFTER).
constexpr size_t kBarrierAfter = 8;
// Grids with at most this many tiles keep their records in a table indexed by tile; larger
// ones in a hash map (graph.rs uses 2^24; the records and so the dependencies are the same).
constexpr uint64_t kDenseTiles = uint64_t(1) << 20;
constexpr uint64_t kMaxSymbol = uint64_t(std::numeric_limits<int64_t>::max());

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return std::string();
    if (size_t(n) < sizeof buf) return std::string(buf, size_t(n));
    std::string s(size_t(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(&s[0], s.size(), fmt, ap);
    va_end(ap);
    s.resize(size_t(n));
    return s;
}

bool writes(ParamKind d) { return d == ParamKind::Out || d == ParamKind::InOut; }

// Python's `//` and `%` on i64 (enumerate.rs `scalar`).
int64_t rem_euclid(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r < 0) r = b < 0 ? r - b : r + b;
    return r;
}
int64_t div_euclid(int64_t a, int64_t b) {
    if (b == -1) return int64_t(0 - uint64_t(a));
    int64_t q = a / b;
    if (a % b < 0) q = b > 0 ? q - 1 : q + 1;
    return q;
}

uint64_t mix(int64_t key) {
    // splitmix64, as runtime/src/sim.rs hashes dispatch keys.
    uint64_t z = uint64_t(key) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The last writer and the readers since of one region; task ids plus one, 0 for none.
struct Record {
    uint32_t writer = 0;
    uint32_t reader = 0;
    uint32_t more = 0; // further readers: a list in Regions::lists, plus one
};

struct Grid {
    std::vector<uint64_t> extents;
    std::vector<int32_t> shifts; // log2 of a power-of-two extent, else -1
    std::vector<uint64_t> weights;
    bool dense = true;
    std::vector<Record> table;
    std::unordered_map<uint64_t, Record> sparse;
};

struct GeneralRecord {
    std::vector<uint64_t> lo;
    std::vector<uint64_t> hi;
    Record rec;
};

struct TensorRecords {
    bool has_grid = false;
    Grid grid;
    std::vector<GeneralRecord> general;
};

// graph.rs `Regions`: a task depends on the last writer of every region it reads, and on the
// last writer and the readers since of every region it writes.
struct Regions {
    std::vector<TensorRecords> tensors;
    std::vector<std::vector<uint32_t>> lists;
    std::vector<uint32_t> free;

    void reset(size_t n) {
        tensors.clear();
        tensors.resize(n);
        lists.clear();
        free.clear();
    }

    void release(uint32_t more) {
        if (more != 0) {
            lists[more - 1].clear();
            free.push_back(more - 1);
        }
    }

    void update(Record& rec, uint32_t task, bool w, std::vector<uint32_t>& deps, bool own) {
        uint32_t me = task + 1;
        if (rec.writer != 0 && rec.writer != me) deps.push_back(rec.writer - 1);
        if (w) {
            if (rec.reader != 0 && rec.reader != me) deps.push_back(rec.reader - 1);
            if (rec.more != 0)
                for (uint32_t r : lists[rec.more - 1])
                    if (r != task) deps.push_back(r);
            if (own) {
                release(rec.more);
                rec = Record{me, 0, 0};
            }
        } else if (own) {
            uint32_t last;
            if (rec.more == 0) {
                last = rec.reader;
            } else {
                auto& l = lists[rec.more - 1];
                last = l.empty() ? 0 : l.back() + 1;
            }
            if (rec.reader == 0) {
                rec.reader = me;
            } else if (last != me) {
                if (rec.more == 0) {
                    if (!free.empty()) {
                        rec.more = free.back() + 1;
                        free.pop_back();
                    } else {
                        lists.emplace_back();
                        rec.more = uint32_t(lists.size());
                    }
                }
                lists[rec.more - 1].push_back(task);
            }
        }
    }

    static void make_grid(Grid& g, const uint64_t* shape, const std::vector<uint64_t>& ext) {
        size_t n = ext.size();
        g.extents = ext;
        g.weights.assign(n, 0);
        g.shifts.assign(n, -1);
        uint64_t tiles = 1;
        for (size_t d = n; d-- > 0;) {
            g.weights[d] = tiles;
            uint64_t count = (shape[d] + ext[d] - 1) / ext[d];
            tiles = (count != 0 && tiles > std::numeric_limits<uint64_t>::max() / count)
                        ? std::numeric_limits<uint64_t>::max()
                        : tiles * count;
            uint64_t e = ext[d];
            if ((e & (e - 1)) == 0) {
                int32_t s = 0;
                while ((uint64_t(1) << s) != e) ++s;
                g.shifts[d] = s;
            }
        }
        g.dense = tiles <= kDenseTiles;
        g.table.clear();
        g.sparse.clear();
        if (g.dense) g.table.assign(size_t(tiles), Record{});
    }

    static Record* grid_record(Grid& g, const uint64_t* lo, const uint64_t* hi) {
        uint64_t n = 0;
        for (size_t d = 0; d < g.extents.size(); ++d) {
            uint64_t l = lo[d], e = g.extents[d];
            if (hi[d] - l != e) return nullptr;
            uint64_t tile;
            if (g.shifts[d] >= 0) {
                if ((l & (e - 1)) != 0) return nullptr;
                tile = l >> g.shifts[d];
            } else {
                if (l % e != 0) return nullptr;
                tile = l / e;
            }
            n += tile * g.weights[d];
        }
        if (g.dense) return &g.table[size_t(n)];
        return &g.sparse[n];
    }

    // Every live record of the grid with its region, in tile order (graph.rs `Grid::drain`).
    static std::vector<GeneralRecord> drain(Grid& g) {
        std::vector<GeneralRecord> out;
        size_t rank = g.extents.size();
        auto add = [&](uint64_t n, const Record& r) {
            if (r.writer == 0 && r.reader == 0) return;
            GeneralRecord gr;
            gr.lo.resize(rank);
            gr.hi.resize(rank);
            for (size_t d = 0; d < rank; ++d) {
                uint64_t above = d == 0 ? std::numeric_limits<uint64_t>::max() : g.weights[d - 1];
                gr.lo[d] = n % above / g.weights[d] * g.extents[d];
                gr.hi[d] = gr.lo[d] + g.extents[d];
            }
            gr.rec = r;
            out.push_back(std::move(gr));
        };
        if (g.dense) {
            for (size_t n = 0; n < g.table.size(); ++n) add(n, g.table[n]);
        } else {
            std::vector<std::pair<uint64_t, Record>> v(g.sparse.begin(), g.sparse.end());
            std::sort(v.begin(), v.end(),
                      [](const std::pair<uint64_t, Record>& a,
                         const std::pair<uint64_t, Record>& b) { return a.first < b.first; });
            for (auto& e : v) add(e.first, e.second);
        }
        g = Grid();
        return out;
    }

    void access(uint32_t task, uint32_t tensor, const uint64_t* shape, size_t rank,
                const uint64_t* lo, const uint64_t* hi, bool w, std::vector<uint32_t>& deps) {
        for (size_t d = 0; d < rank; ++d)
            if (lo[d] >= hi[d]) return; // an empty region touches nothing
        TensorRecords& recs = tensors[tensor];
        if (!recs.has_grid && recs.general.empty()) {
            std::vector<uint64_t> ext(rank);
            bool aligned = true;
            for (size_t d = 0; d < rank; ++d) {
                ext[d] = hi[d] - lo[d];
                if (lo[d] % ext[d] != 0) aligned = false;
            }
            if (aligned) {
                make_grid(recs.grid, shape, ext);
                recs.has_grid = true;
            }
        }
        if (recs.has_grid) {
            if (Record* rec = grid_record(recs.grid, lo, hi)) {
                update(*rec, task, w, deps, true);
                return;
            }
            // Leave the fast path for good: the grid's records join the general list.
            recs.general = drain(recs.grid);
            recs.has_grid = false;
        }
        bool exact = false;
        for (auto& g : recs.general) {
            bool overlaps = true, same = true;
            for (size_t d = 0; d < rank; ++d) {
                if (!(g.lo[d] < hi[d] && lo[d] < g.hi[d])) overlaps = false;
                if (g.lo[d] != lo[d] || g.hi[d] != hi[d]) same = false;
            }
            if (overlaps) {
                update(g.rec, task, w, deps, same);
                exact = exact || same;
            }
        }
        if (w) {
            // A write that covers older records supersedes them.
            size_t keep = 0;
            for (size_t i = 0; i < recs.general.size(); ++i) {
                auto& g = recs.general[i];
                bool same = true, covered = true;
                for (size_t d = 0; d < rank; ++d) {
                    if (g.lo[d] != lo[d] || g.hi[d] != hi[d]) same = false;
                    if (g.lo[d] < lo[d] || g.hi[d] > hi[d]) covered = false;
                }
                if (same || !covered) {
                    if (keep != i) recs.general[keep] = std::move(g);
                    ++keep;
                } else {
                    release(g.rec.more);
                }
            }
            recs.general.resize(keep);
        }
        if (!exact) {
            GeneralRecord g;
            g.lo.assign(lo, lo + rank);
            g.hi.assign(hi, hi + rank);
            if (w) g.rec.writer = task + 1;
            else g.rec.reader = task + 1;
            recs.general.push_back(std::move(g));
        }
    }
};

// A tile argument resolved for this execution.
struct Tile {
    uint32_t view;
    uint32_t tensor;  // whose bytes it reads: a view's base
    bool writes;
    bool derived;
    uint32_t rank;
    const uint64_t* shape;         // of the tensor the view names
    std::vector<uint64_t> strides; // in elements of `tensor`, per dimension of `shape`
    uint32_t elem;
    const TensorPlan* in_base;     // a view of `tensor` (`X.T`, `X.reshape(...)`), or null
};

// A workload task resolved for this execution (enumerate.rs `Resolved`).
struct Resolved {
    bool done = false;
    std::vector<Tile> tiles;
    std::vector<int64_t> strides; // 2 per tile: row and column strides of the kept dims
};

// A task enumerated and not yet issued.
struct Pending {
    uint32_t id;
    TaskKind kind;
    uint32_t kernel;
    const char* name;
    uint32_t index_at, index_len;
    int32_t aicpu, stream;
    uint32_t after_at, after_len;
    uint32_t tiles_at;
    uint32_t tile_count;
    const int64_t* strides;
    const double* scalars;
    uint32_t scalar_count;
    const CollectiveOp* collective;
    uint32_t late; // first back-pressure edge in State::late, or kNone
};

struct Consumer {
    uint32_t channel;
    uint32_t slot;
    Range body;
};

struct Pipe {
    std::vector<Consumer> consumers;
    // Per channel: the first task of each delivered item's consumer (kNone: none).
    std::vector<std::vector<uint32_t>> delivered;
    std::vector<uint64_t> unconsumed;
    // The ordered scopes and recordings open where the pipe starts: its consumers wait for and
    // are recorded in these, not in those of the loop that sends (a `P.seq` producer orders its
    // own iterations, not the stages it feeds).
    size_t after_depth = 0;
    size_t recorded_depth = 0;
};

} // namespace

struct Expander::State {
    const Plan& plan;
    char* const* bases;
    Runner runner;
    ExpanderConfig config;

    // Run-wide state.
    uint32_t next = 0;
    // Per task id: its kind, and bit 7 once reported complete.
    uint8_t* kinds = nullptr;
    uint64_t in_flight = 0;
    uint64_t kernels_in_flight = 0;
    std::map<int64_t, uint64_t> slots;
    std::vector<uint64_t> version;
    std::vector<uint64_t> derived_at; // version + 1 the derived tensor was computed from
    std::vector<bool> dirty;

    // Per execution.
    const ProgramPlan* p = nullptr;
    uint32_t program = 0;
    std::vector<uint64_t> dyn; // per axis: its bound size (DenseDyn)
    std::vector<uint64_t> symbols; // per run-time symbol of the program: its bound value
    std::vector<double> scalars_now; // the scalars, symbols filled in (empty: none read one)
    std::vector<int64_t> env;
    std::vector<bool> bound;
    std::vector<Resolved> resolved;
    std::vector<std::vector<uint32_t>> after; // ordered scopes, `after_depth` in use
    size_t after_depth = 0;
    std::vector<std::vector<uint32_t>> recorded;
    size_t recorded_depth = 0;
    std::vector<uint32_t> last_instance;
    std::vector<int64_t> last_value; // its first index value
    std::vector<uint32_t> sent;      // workload task ids some `send` names
    std::vector<Pipe> pipes;
    size_t pipe_depth = 0;
    std::vector<std::vector<int64_t>> lists; // sparse rows' entries, by loop depth
    size_t list_depth = 0;
    std::vector<CollectiveOp> collectives; // per derived entry
    std::vector<int32_t> derived_of;       // per file tensor: derived entry or -1
    const char* workload = "";
    uint64_t ordinal = 0; // kernel tasks of this execution so far
    uint32_t aicpus_rr = 1;

    // Issue staging.
    std::vector<Pending> pending;
    size_t pending_head = 0;
    std::vector<int64_t> index_pool;
    std::vector<uint32_t> after_pool;
    std::vector<char*> ptr_pool;
    // Back-pressure edges to staged tasks: (pred, next edge of the same task or kNone).
    std::vector<std::pair<uint32_t, uint32_t>> late;
    std::vector<uint32_t> issue_after;

    // Scratch.
    std::vector<uint64_t> bounds;
    std::vector<uint64_t> base_lo, base_hi; // a view's region in its base
    std::vector<uint32_t> deps;
    std::vector<int64_t> stack;
    std::vector<uint64_t> whole_lo;

    State(const Plan& pl, char* const* b, const Runner& r, const ExpanderConfig& c)
        : plan(pl), bases(b), runner(r), config(c) {}
    ~State() { delete[] kinds; }

    // ---- issue ----------------------------------------------------------------------------

    bool complete_one(std::string* err) {
        uint32_t id = kNone;
        if (!runner.complete_one(runner.user, &id, err)) return false;
        if (id >= next || (kinds[id] & 0x80) != 0 || in_flight == 0) {
            *err = format("the runner reported task %" PRIu32
                          " complete, which is not an issued task waiting to complete",
                          id);
            return false;
        }
        if ((kinds[id] & 0x7f) == uint8_t(TaskKind::Kernel)) --kernels_in_flight;
        kinds[id] |= 0x80;
        --in_flight;
        return true;
    }

    uint32_t hold() const {
        uint32_t h = kNone;
        for (uint32_t t : sent)
            if (last_instance[t] != kNone) h = std::min(h, last_instance[t]);
        return h;
    }

    bool issue_front(std::string* err) {
        const Pending& t = pending[pending_head];
        issue_after.assign(after_pool.begin() + t.after_at,
                           after_pool.begin() + t.after_at + t.after_len);
        for (uint32_t e = t.late; e != kNone; e = late[e].second)
            issue_after.push_back(late[e].first);
        std::sort(issue_after.begin(), issue_after.end());
        issue_after.erase(std::unique(issue_after.begin(), issue_after.end()), issue_after.end());
        if (t.kind == TaskKind::Kernel && p->schedule.window != 0) {
            // The task window: at most `window` kernel tasks issued and not completed.
            while (kernels_in_flight >= p->schedule.window)
                if (!complete_one(err)) return false;
        }
        TaskRecord r;
        r.id = t.id;
        r.kind = t.kind;
        r.program = program;
        r.kernel = t.kernel;
        r.name = t.name;
        r.index = t.index_len ? &index_pool[t.index_at] : nullptr;
        r.index_len = t.index_len;
        r.aicpu = t.aicpu;
        r.stream = t.stream;
        r.after = issue_after.empty() ? nullptr : issue_after.data();
        r.after_len = uint32_t(issue_after.size());
        r.tiles = t.tile_count ? &ptr_pool[t.tiles_at] : nullptr;
        r.tile_count = t.tile_count;
        r.strides = t.strides;
        r.scalars = t.scalars;
        r.scalar_count = t.scalar_count;
        r.collective = t.collective;
        if (!runner.issue(runner.user, r, err)) return false;
        ++in_flight;
        if (t.kind == TaskKind::Kernel) ++kernels_in_flight;
        ++pending_head;
        if (pending_head == pending.size()) {
            pending.clear();
            pending_head = 0;
            index_pool.clear();
            after_pool.clear();
            ptr_pool.clear();
            late.clear();
        }
        return true;
    }

    // Issues every staged task no `send` may still add a predecessor to (all when `force`).
    bool pump(bool force, std::string* err) {
        uint32_t h = force ? kNone : hold();
        while (pending_head < pending.size() && pending[pending_head].id < h)
            if (!issue_front(err)) return false;
        return true;
    }

    bool drain(std::string* err) {
        if (!pump(true, err)) return false;
        while (in_flight > 0)
            if (!complete_one(err)) return false;
        return true;
    }

    // Before the expander reads a tensor: every task that writes it has completed.
    bool flush_if_dirty(uint32_t tensor, std::string* err) {
        if (!dirty[tensor]) return true;
        if (!drain(err)) return false;
        std::fill(dirty.begin(), dirty.end(), false);
        return true;
    }

    void written(uint32_t tensor) {
        ++version[tensor];
        dirty[tensor] = true;
    }

    // ---- tasks ----------------------------------------------------------------------------

    // Refuses a task past the task table's capacity. `what` names it: a kernel's task when
    // `kernel` is set, else a barrier or collective.
    bool reserve_id(const char* what, const char* kernel, std::string* err) {
        if (next >= config.max_tasks) {
            std::string task = kernel ? format("task `%s`", kernel) : std::string(what);
            *err = format("workload `%s`: %s would make more than the %" PRIu32
                          " tasks the task table holds (ExpanderConfig::max_tasks, "
                          "--max-tasks)",
                          workload, task.c_str(), config.max_tasks);
            return false;
        }
        return true;
    }

    // A new task: its id, the edges of the open ordered scopes, and every open recording.
    uint32_t push_task(TaskKind kind) {
        uint32_t id = next++;
        kinds[id] = uint8_t(kind);
        for (size_t i = 0; i < after_depth; ++i)
            for (uint32_t q : after[i]) deps.push_back(q);
        for (size_t i = 0; i < recorded_depth; ++i) recorded[i].push_back(id);
        return id;
    }

    void stage(uint32_t id, TaskKind kind, uint32_t kernel, const char* name, uint32_t index_at,
               uint32_t index_len, int32_t aicpu, int32_t stream, uint32_t tiles_at,
               uint32_t tile_count, const int64_t* strides, const double* scalars,
               uint32_t scalar_count, const CollectiveOp* coll) {
        Pending t;
        t.id = id;
        t.kind = kind;
        t.kernel = kernel;
        t.name = name;
        t.index_at = index_at;
        t.index_len = index_len;
        t.aicpu = aicpu;
        t.stream = stream;
        t.after_at = uint32_t(after_pool.size());
        t.after_len = uint32_t(deps.size());
        after_pool.insert(after_pool.end(), deps.begin(), deps.end());
        t.tiles_at = tiles_at;
        t.tile_count = tile_count;
        t.strides = strides;
        t.scalars = scalars;
        t.scalar_count = scalar_count;
        t.collective = coll;
        t.late = kNone;
        pending.push_back(t);
    }

    // A predecessor found for a staged task. Staged ids are consecutive, so the task is found
    // by its id; one already issued was drained with its predecessor (see expander.hpp).
    void add_late(uint32_t task, uint32_t pred) {
        if (pending_head == pending.size() || task < pending[pending_head].id) {
            if (runner.satisfied_edge) runner.satisfied_edge(runner.user, pred, task);
            return;
        }
        Pending& t = pending[pending_head + (task - pending[pending_head].id)];
        late.emplace_back(pred, t.late);
        t.late = uint32_t(late.size() - 1);
    }

    bool barrier(const std::vector<uint32_t>& preds, std::string* err) {
        if (!reserve_id("a barrier", nullptr, err)) return false;
        deps.clear();
        uint32_t id = push_task(TaskKind::Barrier);
        deps.insert(deps.end(), preds.begin(), preds.end());
        stage(id, TaskKind::Barrier, kNone, "-", 0, 0, -1, -1, 0, 0, nullptr, nullptr, 0,
              nullptr);
        return pump(false, err);
    }

    const char* slot_name(uint32_t s) const {
        return s < p->slot_count ? p->slot_names[s] : "?";
    }

    int64_t lin(uint32_t l) const {
        const Lin& x = p->lins[l];
        uint64_t v = uint64_t(x.constant);
        for (uint32_t i = 0; i < x.terms.len; ++i) {
            const Term& t = p->terms[x.terms.at + i];
            int64_t e = bound[t.slot] ? env[t.slot] : 0;
            v += uint64_t(t.coef) * uint64_t(e);
        }
        return int64_t(v);
    }

    // Its variables must be in scope (enumerate.rs `lin`).
    bool lin_in_scope(uint32_t l, std::string* err) const {
        const Lin& x = p->lins[l];
        for (uint32_t i = 0; i < x.terms.len; ++i) {
            uint32_t s = p->terms[x.terms.at + i].slot;
            if (!bound[s]) {
                *err = format("`%s` has no value here", slot_name(s));
                return false;
            }
        }
        return true;
    }

    // A view resolved against its tensor (enumerate.rs `tile`): its variables must be in
    // scope. `kept` gets the row and column strides of the last two dimensions it keeps.
    bool make_tile(uint32_t view, ParamKind dir, Tile* tile, int64_t kept[2], std::string* err) {
        const ViewPlan& v = p->views[view];
        for (uint32_t d = 0; d < v.dims.len; ++d) {
            const ViewDim& vd = p->view_dims[v.dims.at + d];
            if (vd.point && !lin_in_scope(vd.lin, err)) return false;
        }
        // A view reads its base's bytes with its own shape and strides (runtime/src/tensors.rs
        // `TensorView`); its regions are its base's.
        const TensorPlan& named = plan.tensors[v.tensor];
        uint32_t mem = named.base >= 0 ? uint32_t(named.base) : v.tensor;
        const TensorPlan& tp = plan.tensors[mem];
        tile->view = view;
        tile->tensor = mem;
        tile->writes = writes(dir);
        tile->derived = derived_of[mem] >= 0;
        tile->rank = named.rank;
        tile->shape = named.shape;
        tile->elem = dtype_size(tp.dtype);
        tile->in_base = named.base >= 0 ? &named : nullptr;
        std::vector<uint64_t> row_major(tp.rank, 1);
        for (size_t d = tp.rank; d-- > 1;) row_major[d - 1] = row_major[d] * tp.shape[d];
        if (tile->in_base) {
            tile->strides.assign(named.rank, 0);
            for (uint32_t d = 0; d < named.rank; ++d) {
                uint64_t bd = named.view[2 * d], step = named.view[2 * d + 1];
                tile->strides[d] = bd < tp.rank ? row_major[bd] * step : 0;
            }
        } else {
            tile->strides = row_major;
        }
        int n = 0;
        kept[0] = 0;
        kept[1] = 1;
        for (uint32_t d = 0; d < named.rank; ++d) {
            // A slice with an affine start (`point` with hi > lo) keeps its dimension.
            const ViewDim* vd = d < v.dims.len ? &p->view_dims[v.dims.at + d] : nullptr;
            bool point = vd && vd->point && vd->hi <= vd->lo;
            if (!point) {
                kept[0] = kept[1];
                kept[1] = int64_t(tile->strides[d]);
                ++n;
            }
        }
        if (n <= 1) kept[0] = 0;
        if (n == 0) kept[1] = 1;
        return true;
    }

    bool resolve(uint32_t ti, std::string* err) {
        Resolved& r = resolved[ti];
        if (r.done) return true;
        const TaskPlan& t = p->tasks[ti];
        for (uint32_t i = 0; i < t.index.len; ++i)
            if (!lin_in_scope(t.index.at + i, err)) return false;
        r.tiles.clear();
        r.strides.clear();
        for (uint32_t i = 0; i < t.tiles.len; ++i) {
            const TileArg& a = p->tile_args[t.tiles.at + i];
            Tile tile;
            int64_t kept[2];
            if (!make_tile(a.view, a.dir, &tile, kept, err)) return false;
            r.strides.push_back(kept[0]);
            r.strides.push_back(kept[1]);
            r.tiles.push_back(std::move(tile));
        }
        r.done = true;
        return true;
    }

    // Appends the tile's region (lo then hi) to `bounds` and stores its first element's
    // offset. Out of bounds is an error naming `what()` (built only then).
    template <typename What>
    bool place(const Tile& tile, uint64_t* offset, const What& what, std::string* err) {
        const ViewPlan& v = p->views[tile.view];
        size_t start = bounds.size();
        uint32_t n = tile.rank;
        bounds.resize(start + 2 * n);
        uint64_t at = 0;
        for (uint32_t d = 0; d < n; ++d) {
            int64_t l, h;
            if (d < v.dims.len) {
                const ViewDim& vd = p->view_dims[v.dims.at + d];
                if (vd.point) {
                    // A point (lo == hi == 0), or the slice `lin + lo : lin + hi`.
                    l = lin(vd.lin);
                    h = int64_t(uint64_t(l) + uint64_t(vd.hi > vd.lo ? vd.hi : 1));
                    l = int64_t(uint64_t(l) + uint64_t(vd.hi > vd.lo ? vd.lo : 0));
                } else {
                    l = vd.lo;
                    h = vd.hi;
                }
            } else {
                l = 0;
                h = int64_t(tile.shape[d]);
            }
            uint64_t extent = tile.shape[d];
            if (l < 0 || h > int64_t(extent) || l > h) {
                *err = format("%s: view `%s` is out of bounds: dimension %" PRIu32
                              " of `%s` has %" PRIu64 " entries, the view takes %" PRId64
                              "..%" PRId64,
                              what().c_str(), v.text, d, plan.tensors[v.tensor].name,
                              extent, l, h);
                return false;
            }
            bounds[start + d] = uint64_t(l);
            bounds[start + n + d] = uint64_t(h);
            at += uint64_t(l) * tile.strides[d];
        }
        *offset = at;
        return true;
    }

    std::string task_text(const TaskPlan& t, const int64_t* index) const {
        std::string s = format("task %s[", plan.kernels[t.kernel].name);
        for (uint32_t i = 0; i < t.index.len; ++i)
            s += format(i ? ", %" PRId64 : "%" PRId64, index[i]);
        return s + "]";
    }

    bool task(uint32_t ti, std::string* err) {
        if (!resolve(ti, err)) return false;
        const TaskPlan& t = p->tasks[ti];
        const KernelPlan& k = plan.kernels[t.kernel];
        const Resolved& r = resolved[ti];
        if (!reserve_id(nullptr, k.name, err)) return false;
        for (const Tile& tile : r.tiles)
            if (tile.derived && !refresh_derived(tile.tensor, err)) return false;
        const SchedulePlan& s = p->schedule;
        int64_t dkey = 0, skey = -1;
        if (s.has_dispatch_key || s.has_stream_key) {
            if (s.has_dispatch_key && !scalar(s.dispatch_key, s.dispatch_key_text, &dkey, err))
                return false;
            if (s.has_stream_key && !scalar(s.stream_key, s.stream_key_text, &skey, err))
                return false;
        }
        uint32_t index_at = uint32_t(index_pool.size());
        for (uint32_t i = 0; i < t.index.len; ++i) index_pool.push_back(lin(t.index.at + i));
        uint32_t tiles_at = uint32_t(ptr_pool.size());
        bounds.clear();
        for (const Tile& tile : r.tiles) {
            uint64_t off = 0;
            auto what = [&] { return task_text(t, &index_pool[index_at]); };
            if (!place(tile, &off, what, err)) return false;
            ptr_pool.push_back(bases[tile.tensor] + off * tile.elem);
        }
        deps.clear();
        uint32_t id = push_task(TaskKind::Kernel);
        size_t at = 0;
        for (const Tile& tile : r.tiles) {
            uint32_t n = tile.rank;
            if (tile.writes) written(tile.tensor);
            if (tile.in_base) {
                // The box of the base the view's box lies in (`TensorView::base_box`).
                const TensorPlan& tp = plan.tensors[tile.tensor];
                const uint64_t* lo = &bounds[at];
                const uint64_t* hi = &bounds[at + n];
                bool empty = false;
                for (uint32_t d = 0; d < n; ++d) empty |= hi[d] <= lo[d];
                if (!empty) {
                    base_lo.assign(tp.rank, 0);
                    base_hi.assign(tp.rank, 1);
                    for (uint32_t d = 0; d < n; ++d) {
                        uint64_t bd = tile.in_base->view[2 * d], step = tile.in_base->view[2 * d + 1];
                        if (step == 0 || bd >= tp.rank) continue;
                        base_lo[bd] += step * lo[d];
                        base_hi[bd] += step * (hi[d] - 1);
                    }
                    regions.access(id, tile.tensor, tp.shape, tp.rank, base_lo.data(),
                                   base_hi.data(), tile.writes, deps);
                }
            } else {
                regions.access(id, tile.tensor, tile.shape, n, &bounds[at], &bounds[at + n],
                               tile.writes, deps);
            }
            at += 2 * n;
        }
        // Queue and stream (runtime/src/sim.rs), in enumeration order of kernel tasks.
        uint32_t aicpus = std::max<uint32_t>(config.aicpus, 1);
        int32_t q = 0;
        switch (s.dispatch) {
        case DispatchKind::RoundRobin: q = int32_t(ordinal % aicpus_rr); break;
        case DispatchKind::WorkSteal: q = 0; break;
        case DispatchKind::Key: q = int32_t(rem_euclid(dkey, int64_t(aicpus_rr))); break;
        case DispatchKind::Hash: q = int32_t(mix(dkey) % aicpus_rr); break;
        }
        int32_t stream = -1;
        if (s.streams > 0)
            stream = s.has_stream_key ? int32_t(rem_euclid(skey, int64_t(s.streams)))
                                      : int32_t(ordinal % s.streams);
        ++ordinal;
        stage(id, TaskKind::Kernel, t.kernel, k.name, index_at, t.index.len, q, stream,
              tiles_at, uint32_t(r.tiles.size()), r.strides.empty() ? nullptr : r.strides.data(),
              t.scalars.len ? (scalars_now.empty() ? &p->scalars[t.scalars.at]
                                                    : &scalars_now[t.scalars.at])
                            : nullptr,
              t.scalars.len, nullptr);
        last_instance[t.id] = id;
        last_value[t.id] = t.index.len ? index_pool[index_at] : 0;
        return pump(false, err);
    }

    // Before a task reads a derived tensor, a collective task recomputes it if its source was
    // written since.
    bool refresh_derived(uint32_t tensor, std::string* err) {
        int32_t di = derived_of[tensor];
        if (di < 0) return true;
        const DerivedPlan& d = p->derived[di];
        if (!refresh_derived(d.source, err)) return false;
        uint64_t v = version[d.source];
        if (derived_at[tensor] == v + 1) return true;
        derived_at[tensor] = v + 1;
        if (d.error) {
            *err = d.error;
            return false;
        }
        if (!reserve_id("a collective", nullptr, err)) return false;
        // The runner computes it once everything before has completed.
        if (!drain(err)) return false;
        std::fill(dirty.begin(), dirty.end(), false);
        if (!runner.collective) {
            *err = "the runner computes no collectives";
            return false;
        }
        if (!runner.collective(runner.user, collectives[size_t(di)], err)) return false;
        deps.clear();
        uint32_t id = push_task(TaskKind::Collective);
        const uint32_t parts[2] = {d.source, tensor};
        for (int i = 0; i < 2; ++i) {
            const TensorPlan& tp = plan.tensors[parts[i]];
            whole_lo.assign(tp.rank, 0);
            regions.access(id, parts[i], tp.shape, tp.rank, whole_lo.data(), tp.shape, i == 1,
                           deps);
        }
        written(tensor);
        stage(id, TaskKind::Collective, kNone, plan.tensors[tensor].name, 0, 0, -1, -1, 0, 0,
              nullptr, nullptr, 0, &collectives[size_t(di)]);
        return pump(true, err);
    }

    Regions regions;

    // ---- scalars --------------------------------------------------------------------------

    bool read_int(uint32_t tensor, uint64_t element, int64_t* out, std::string* err) {
        if (!flush_if_dirty(tensor, err)) return false;
        return runner.read_int(runner.user, tensor, element, out, err);
    }

    bool scalar(Range code, const char* text, int64_t* out, std::string* err) {
        stack.clear();
        for (uint32_t i = 0; i < code.len; ++i) {
            const Instr& in = p->code[code.at + i];
            switch (in.op) {
            case Opcode::Const: stack.push_back(in.arg); break;
            case Opcode::Symbol: stack.push_back(int64_t(symbols[size_t(in.arg)])); break;
            case Opcode::JumpIfZero: {
                int64_t c = stack.back();
                stack.pop_back();
                if (c == 0) i += uint32_t(in.arg);
                break;
            }
            case Opcode::Jump: i += uint32_t(in.arg); break;
            case Opcode::Var: {
                uint32_t s = uint32_t(in.arg);
                if (!bound[s]) {
                    *err = format("`%s` has no value here", slot_name(s));
                    return false;
                }
                stack.push_back(env[s]);
                break;
            }
            case Opcode::Slot: {
                auto it = slots.find(in.arg);
                stack.push_back(it == slots.end() ? 0 : int64_t(it->second));
                break;
            }
            case Opcode::Element: {
                uint32_t tensor = uint32_t(in.arg);
                const TensorPlan& tp = plan.tensors[tensor];
                size_t base = stack.size() - in.dims;
                uint64_t at = 0;
                for (uint32_t d = 0; d < tp.rank; ++d) {
                    int64_t ix = 0;
                    if (d < in.dims) {
                        ix = stack[base + d];
                        if (ix < 0 || ix >= int64_t(tp.shape[d])) {
                            *err = format("`%s` reads `%s` out of bounds: index %" PRId64
                                          " of dimension %" PRIu32 ", which has %" PRIu64
                                          " entries",
                                          text, tp.name, ix, d, tp.shape[d]);
                            return false;
                        }
                    }
                    at = at * tp.shape[d] + uint64_t(ix);
                }
                stack.resize(base);
                int64_t v = 0;
                if (!read_int(tensor, at, &v, err)) return false;
                stack.push_back(v);
                break;
            }
            case Opcode::Not: stack.back() = stack.back() == 0; break;
            case Opcode::Neg: stack.back() = int64_t(0 - uint64_t(stack.back())); break;
            default: {
                int64_t b = stack.back();
                stack.pop_back();
                int64_t a = stack.back();
                int64_t v = 0;
                switch (in.op) {
                case Opcode::Add: v = int64_t(uint64_t(a) + uint64_t(b)); break;
                case Opcode::Sub: v = int64_t(uint64_t(a) - uint64_t(b)); break;
                case Opcode::Mul: v = int64_t(uint64_t(a) * uint64_t(b)); break;
                case Opcode::FloorDiv:
                case Opcode::Mod:
                    if (b == 0) {
                        *err = format("`%s` divides by zero", text);
                        return false;
                    }
                    if (in.op == Opcode::FloorDiv) {
                        v = div_euclid(a, b) - int64_t(b < 0 && rem_euclid(a, b) != 0);
                    } else {
                        int64_t r = rem_euclid(a, b);
                        v = (b < 0 && r != 0) ? r + b : r;
                    }
                    break;
                case Opcode::Lt: v = a < b; break;
                case Opcode::Le: v = a <= b; break;
                case Opcode::Gt: v = a > b; break;
                case Opcode::Ge: v = a >= b; break;
                case Opcode::Eq: v = a == b; break;
                case Opcode::Ne: v = a != b; break;
                case Opcode::And: v = a != 0 && b != 0; break;
                case Opcode::Or: v = a != 0 || b != 0; break;
                case Opcode::Min: v = std::min(a, b); break;
                case Opcode::Max: v = std::max(a, b); break;
                case Opcode::BitAnd: v = a & b; break;
                case Opcode::BitOr: v = a | b; break;
                case Opcode::BitXor: v = a ^ b; break;
                case Opcode::Shl:
                case Opcode::Shr:
                    if (b < 0 || b > 63) {
                        *err = format("`%s` shifts by %" PRId64 ", outside 0..=63", text, b);
                        return false;
                    }
                    v = in.op == Opcode::Shl ? int64_t(uint64_t(a) << b) : a >> b;
                    break;
                default: v = 0; break;
                }
                stack.back() = v;
            }
            }
        }
        *out = stack.empty() ? 0 : stack.back();
        return true;
    }

    // ---- loops ----------------------------------------------------------------------------

    bool range_ok(const LoopVarPlan& v, uint64_t n, std::string* err) {
        if (n > config.max_tasks) {
            std::string over = v.axis < 0
                                   ? format("over `%s`", v.name)
                                   : format("over `%s` (axis `%s`)", v.name, p->axes[v.axis].name);
            *err = format("workload `%s`: the loop %s has %" PRIu64
                          " iterations, more than the %" PRIu32
                          " tasks the task table holds (ExpanderConfig::max_tasks, --max-tasks)",
                          workload, over.c_str(), n, config.max_tasks);
            return false;
        }
        return true;
    }

    bool int_at(const IntSource& src, int64_t i, const char* axis, const char* role,
                int64_t* out, std::string* err) {
        switch (src.kind) {
        case IntSourceKind::None:
            *err = format("axis `%s` has no %s", axis, role);
            return false;
        case IntSourceKind::List:
            if (i < 0 || uint64_t(i) >= src.len) {
                *err = format("axis `%s`: %s[%" PRId64 "] is outside its %" PRIu32 " entries",
                              axis, role, i, src.len);
                return false;
            }
            *out = int64_t(src.values[i]);
            return true;
        case IntSourceKind::Tensor: {
            const TensorPlan& tp = plan.tensors[src.tensor];
            uint64_t n = 1;
            for (uint32_t d = 0; d < tp.rank; ++d) n *= tp.shape[d];
            if (!flush_if_dirty(src.tensor, err)) return false;
            if (i < 0 || uint64_t(i) >= n) {
                *err = format("axis `%s`: %s[%" PRId64 "] is outside its %" PRIu64 " entries",
                              axis, role, i, n);
                return false;
            }
            return runner.read_int(runner.user, src.tensor, uint64_t(i), out, err);
        }
        }
        return false;
    }

    // Row `r`'s length of a ragged axis; a negative one is an error, not an empty row.
    bool length(const AxisPlan& a, int64_t r, uint64_t* out, std::string* err) {
        int64_t len = 0;
        if (!int_at(a.lengths, r, a.name, "lengths", &len, err)) return false;
        if (len < 0) {
            *err = format("axis `%s`: lengths[%" PRId64 "] is %" PRId64
                          "; a row's length is 0 or more",
                          a.name, r, len);
            return false;
        }
        *out = uint64_t(len);
        return true;
    }

    // The values a loop variable takes: 0..*n, or the entries `lists[list_depth - 1]` when
    // `*is_list`.
    bool values(const LoopVarPlan& v, uint64_t* n, bool* is_list, std::string* err) {
        *is_list = false;
        if (v.axis < 0) {
            *n = v.extent;
            return range_ok(v, *n, err);
        }
        const AxisPlan& a = p->axes[v.axis];
        int64_t row = 0;
        if (v.has_row) {
            if (!lin_in_scope(v.row, err)) return false;
            row = lin(v.row);
        }
        switch (a.kind) {
        case AxisKind::Dense: *n = a.size; break;
        case AxisKind::DenseDyn: *n = dyn[size_t(v.axis)]; break;
        case AxisKind::Ragged:
            if (!v.has_row) {
                // The whole axis: every element, row by row (the original's flattening).
                uint64_t total = 0;
                for (uint64_t r = 0; r < a.size; ++r) {
                    uint64_t len = 0;
                    if (!length(a, int64_t(r), &len, err)) return false;
                    total = total + len < total ? UINT64_MAX : total + len;
                }
                *n = total;
            } else if (!length(a, row, n, err)) {
                return false;
            }
            break;
        case AxisKind::Sparse: {
            // One row's entries, or (without a row) every row's in order.
            int64_t first = v.has_row ? row : 0;
            int64_t last = v.has_row ? int64_t(uint64_t(row) + 1) : int64_t(a.size);
            int64_t lo = 0, hi = 0;
            if (!int_at(a.indptr, first, a.name, "indptr", &lo, err)) return false;
            if (!int_at(a.indptr, last, a.name, "indptr", &hi, err)) return false;
            int64_t diff = hi > lo ? hi - lo : 0;
            if (!range_ok(v, uint64_t(diff), err)) return false;
            if (hi < lo) {
                *err = format("axis `%s`: indptr decreases from row %" PRId64 " to row %" PRId64
                              " (%" PRId64 " then %" PRId64 ")",
                              a.name, first, last, lo, hi);
                return false;
            }
            if (lists.size() <= list_depth) lists.emplace_back();
            std::vector<int64_t>& l = lists[list_depth];
            l.clear();
            for (int64_t i = lo; i < hi; ++i) {
                int64_t e = 0;
                if (!int_at(a.indices, i, a.name, "indices", &e, err)) return false;
                l.push_back(e);
            }
            ++list_depth;
            *is_list = true;
            *n = l.size();
            return true;
        }
        }
        return range_ok(v, *n, err);
    }

    bool loop(const NodePlan& nd, std::string* err) {
        if (nd.loop != LoopKind::Sequential) return loop_vars(nd, 0, err);
        // P.seq: each iteration waits for the tasks of the one before, held in this scope.
        push_after();
        bool ok = loop_vars(nd, 0, err);
        --after_depth;
        return ok;
    }

    void push_after() {
        if (after.size() <= after_depth) after.emplace_back();
        after[after_depth++].clear();
    }

    void push_recorded() {
        if (recorded.size() <= recorded_depth) recorded.emplace_back();
        recorded[recorded_depth++].clear();
    }

    bool loop_vars(const NodePlan& nd, uint32_t i, std::string* err) {
        if (i == nd.a.len) return iteration(nd, err);
        const LoopVarPlan& v = p->vars[nd.a.at + i];
        uint64_t n = 0;
        bool is_list = false;
        if (!values(v, &n, &is_list, err)) return false;
        size_t s = v.slot;
        int64_t outer = env[s];
        bool outer_bound = bound[s];
        size_t my_list = list_depth - 1;
        for (uint64_t k = 0; k < n; ++k) {
            env[s] = is_list ? lists[my_list][size_t(k)] : int64_t(k);
            bound[s] = true;
            if (!loop_vars(nd, i + 1, err)) return false;
        }
        env[s] = outer;
        bound[s] = outer_bound;
        if (is_list) --list_depth;
        return true;
    }

    bool iteration(const NodePlan& nd, std::string* err) {
        if (nd.loop != LoopKind::Sequential) return nodes(nd.b, err);
        push_recorded();
        bool ok = nodes(nd.b, err);
        --recorded_depth;
        if (!ok) return false;
        std::vector<uint32_t>& done = recorded[recorded_depth];
        if (!done.empty()) {
            std::vector<uint32_t>& last = after[after_depth - 1];
            if (done.size() > kBarrierAfter) {
                std::vector<uint32_t> preds;
                preds.swap(done);
                if (!barrier(preds, err)) return false;
                uint32_t b = next - 1;
                preds.swap(done);
                last.assign(1, b);
            } else {
                last.assign(done.begin(), done.end());
            }
        }
        return true;
    }

    bool nodes(Range list, std::string* err) {
        for (uint32_t i = 0; i < list.len; ++i)
            if (!node(p->nodes[p->lists[list.at + i]], err)) return false;
        return true;
    }

    bool node(const NodePlan& nd, std::string* err) {
        switch (nd.kind) {
        case NodeKind::Loop: return loop(nd, err);
        case NodeKind::Conditional:
            for (uint32_t i = 0; i < nd.a.len; ++i) {
                const BranchPlan& b = p->branches[nd.a.at + i];
                int64_t holds = 1;
                if (b.has_predicate && !scalar(b.predicate, b.text, &holds, err)) return false;
                if (holds != 0) return nodes(b.body, err);
            }
            return true;
        case NodeKind::Pipeline: return pipeline(nd, err);
        case NodeKind::Consume: return true; // runs when its channel delivers (see `send`)
        case NodeKind::Task: return task(nd.x, err);
        case NodeKind::Send: return send(nd.x, nd.y, err);
        case NodeKind::SlotLoad: return slot_load(nd, err);
        }
        return true;
    }

    bool slot_load(const NodePlan& nd, std::string* err) {
        const ViewPlan& v = p->views[nd.x];
        Tile tile;
        int64_t kept[2];
        if (!make_tile(nd.x, ParamKind::In, &tile, kept, err)) return false;
        // Offsets are in elements of the tensor whose bytes the view reads.
        const TensorPlan& tp = plan.tensors[tile.tensor];
        bounds.clear();
        uint64_t off = 0;
        if (!place(tile, &off, [] { return std::string("slot_load_u64"); }, err)) return false;
        int64_t at = int64_t(off) + nd.row * kept[0] + nd.col * kept[1];
        uint64_t elems = 1;
        for (uint32_t d = 0; d < tp.rank; ++d) elems *= tp.shape[d];
        if (at < 0 || uint64_t(at) >= elems) {
            *err = format("slot_load_u64: element (%" PRId64 ", %" PRId64 ") of view `%s` is "
                          "outside `%s`",
                          nd.row, nd.col, v.text, tp.name);
            return false;
        }
        int64_t value = 0;
        if (!read_int(tile.tensor, uint64_t(at), &value, err)) return false;
        slots[nd.slot] = uint64_t(value);
        return true;
    }

    bool pipeline(const NodePlan& nd, std::string* err) {
        if (pipes.size() <= pipe_depth) pipes.emplace_back();
        {
            Pipe& pipe = pipes[pipe_depth];
            pipe.consumers.clear();
            pipe.delivered.assign(p->channel_count, std::vector<uint32_t>());
            pipe.unconsumed.assign(p->channel_count, 0);
            pipe.after_depth = after_depth;
            pipe.recorded_depth = recorded_depth;
            for (uint32_t i = 0; i < nd.a.len; ++i) {
                const NodePlan& s = p->nodes[p->lists[nd.a.at + i]];
                if (s.kind == NodeKind::Consume) pipe.consumers.push_back({s.x, s.y, s.a});
            }
        }
        ++pipe_depth;
        for (uint32_t i = 0; i < nd.a.len; ++i) {
            const NodePlan& s = p->nodes[p->lists[nd.a.at + i]];
            if (s.kind == NodeKind::Consume) continue;
            if (!node(s, err)) return false;
        }
        --pipe_depth;
        const Pipe& pipe = pipes[pipe_depth];
        for (uint32_t c = 0; c < p->channel_count; ++c) {
            uint64_t n = pipe.unconsumed[c];
            if (n == 0) continue;
            const ChannelPlan& ch = p->channels[c];
            std::string label = ch.declared ? format("\"%s\", depth %" PRIu64, ch.label, ch.depth)
                                            : std::string("undeclared");
            *err = format("%" PRIu64 " task%s sent on channel `%s` (%s) but no stage of the "
                          "pipeline consumes it",
                          n, n == 1 ? " was" : "s were", ch.name, label.c_str());
            return false;
        }
        return true;
    }

    bool send(uint32_t channel, uint32_t task_id, std::string* err) {
        uint32_t instance = task_id < last_instance.size() ? last_instance[task_id] : kNone;
        if (instance == kNone) return true; // the task did not run (a branch not taken)
        const ChannelPlan& ch = p->channels[channel];
        size_t depth = ch.declared ? size_t(std::max<uint64_t>(ch.depth, 1)) : 0;
        if (pipe_depth == 0) {
            *err = format("`send` on channel `%s` outside a `P.pipe()`: nothing can receive it",
                          ch.name);
            return false;
        }
        size_t me = pipe_depth - 1;
        bool any = false;
        for (const Consumer& c : pipes[me].consumers) any = any || c.channel == channel;
        if (!any) {
            ++pipes[me].unconsumed[channel];
            return true;
        }
        // Back-pressure: the channel holds `depth` items, so this producer waited until the
        // consumer of the item `depth` places earlier had taken it.
        {
            const std::vector<uint32_t>& delivered = pipes[me].delivered[channel];
            if (depth > 0 && delivered.size() >= depth) {
                uint32_t c = delivered[delivered.size() - depth];
                if (c != kNone && c < instance) add_late(instance, c);
            }
        }
        int64_t value = last_value[task_id];
        uint32_t first_task = next;
        // The consumers see the scopes open where the pipe starts, and wait for the sent task.
        size_t inner_after_depth = after_depth, inner_recorded_depth = recorded_depth;
        std::vector<std::vector<uint32_t>> inner_after, inner_recorded;
        for (size_t i = pipes[me].after_depth; i < inner_after_depth; ++i)
            inner_after.push_back(std::move(after[i]));
        for (size_t i = pipes[me].recorded_depth; i < inner_recorded_depth; ++i)
            inner_recorded.push_back(std::move(recorded[i]));
        after_depth = pipes[me].after_depth;
        recorded_depth = pipes[me].recorded_depth;
        bool ok = true;
        for (size_t i = 0; ok && i < pipes[me].consumers.size(); ++i) {
            Consumer c = pipes[me].consumers[i];
            if (c.channel != channel) continue;
            push_after();
            after[after_depth - 1].assign(1, instance);
            int64_t outer = env[c.slot];
            bool outer_bound = bound[c.slot];
            env[c.slot] = value;
            bound[c.slot] = true;
            ok = nodes(c.body, err);
            env[c.slot] = outer;
            bound[c.slot] = outer_bound;
            --after_depth;
        }
        for (size_t i = 0; i < inner_after.size(); ++i)
            after[pipes[me].after_depth + i] = std::move(inner_after[i]);
        for (size_t i = 0; i < inner_recorded.size(); ++i)
            recorded[pipes[me].recorded_depth + i] = std::move(inner_recorded[i]);
        after_depth = inner_after_depth;
        recorded_depth = inner_recorded_depth;
        if (!ok) return false;
        pipes[me].delivered[channel].push_back(next > first_task ? first_task : kNone);
        return true;
    }

    // ---- composition ----------------------------------------------------------------------

    void sent_tasks(Range list) {
        for (uint32_t i = 0; i < list.len; ++i) {
            const NodePlan& nd = p->nodes[p->lists[list.at + i]];
            switch (nd.kind) {
            case NodeKind::Loop: sent_tasks(nd.b); break;
            case NodeKind::Conditional:
                for (uint32_t b = 0; b < nd.a.len; ++b) sent_tasks(p->branches[nd.a.at + b].body);
                break;
            case NodeKind::Pipeline:
            case NodeKind::Consume: sent_tasks(nd.a); break;
            case NodeKind::Send:
                if (std::find(sent.begin(), sent.end(), nd.y) == sent.end()) sent.push_back(nd.y);
                break;
            default: break;
            }
        }
    }

    bool composite(uint32_t ci, std::string* err) {
        const CompositePlan& c = p->composites[ci];
        switch (c.kind) {
        case CompositeKind::Call: {
            const WorkloadPlan& w = p->workloads[c.call];
            std::fill(last_instance.begin(), last_instance.end(), kNone);
            sent.clear();
            workload = w.name;
            sent_tasks(w.body);
            if (!nodes(w.body, err)) return false;
            // No send of this workload can name its tasks any more.
            std::fill(last_instance.begin(), last_instance.end(), kNone);
            return pump(false, err);
        }
        case CompositeKind::Combine:
            for (uint32_t i = 0; i < c.parts.len; ++i)
                if (!composite(p->lists[c.parts.at + i], err)) return false;
            return true;
        case CompositeKind::Sequential: {
            push_after();
            for (uint32_t i = 0; i < c.parts.len; ++i) {
                push_recorded();
                bool ok = composite(p->lists[c.parts.at + i], err);
                --recorded_depth;
                if (!ok) return false;
                if (i + 1 < c.parts.len) {
                    std::vector<uint32_t> done;
                    done.swap(recorded[recorded_depth]);
                    if (!barrier(done, err)) return false;
                    done.swap(recorded[recorded_depth]);
                    after[after_depth - 1].assign(1, next - 1);
                }
            }
            --after_depth;
            return true;
        }
        }
        return true;
    }

    bool execute(uint32_t prog, const Binding* bindings, size_t count, std::string* err) {
        if (!kinds) {
            *err = "Expander::init was not called";
            return false;
        }
        if (prog >= plan.program_count) {
            *err = format("no program #%" PRIu32, prog);
            return false;
        }
        program = prog;
        p = &plan.programs[prog];
        // Symbols: defaults, then the bindings in order (lib.rs `execute`).
        dyn.assign(p->axis_count, 0);
        for (uint32_t a = 0; a < p->axis_count; ++a) {
            const AxisPlan& ax = p->axes[a];
            uint64_t v = ax.size;
            for (uint32_t s = 0; s < p->symbol_count; ++s)
                if (std::strcmp(p->symbols[s].name, ax.name) == 0) v = p->symbols[s].default_value;
            for (size_t b = 0; b < count; ++b)
                if (std::strcmp(bindings[b].name, ax.name) == 0) v = bindings[b].value;
            dyn[a] = v;
        }
        // Every run-time symbol's value, for `symbol_u64(...)` in predicates and keys.
        symbols.assign(p->symbol_count, 0);
        for (uint32_t s = 0; s < p->symbol_count; ++s) {
            symbols[s] = p->symbols[s].default_value;
            for (size_t b = 0; b < count; ++b)
                if (std::strcmp(bindings[b].name, p->symbols[s].name) == 0)
                    symbols[s] = bindings[b].value;
        }
        // The task scalars that read a symbol, for this execution: the plan's scalars with
        // those filled in (the tasks staged below point into it until they run).
        scalars_now.clear();
        if (p->scalar_symbol_count > 0) {
            size_t n = 0;
            for (uint32_t t = 0; t < p->task_count; ++t)
                n = std::max<size_t>(n, p->tasks[t].scalars.at + p->tasks[t].scalars.len);
            scalars_now.assign(p->scalars, p->scalars + n);
            for (uint32_t i = 0; i < p->scalar_symbol_count; ++i) {
                const ScalarSymbol& ss = p->scalar_symbols[i];
                uint64_t bits = symbols[ss.symbol];
                float f = 0;
                uint32_t low = uint32_t(bits);
                std::memcpy(&f, &low, sizeof f);
                scalars_now[ss.scalar] = ss.as_f32 ? double(f) : double(int64_t(bits));
            }
        }
        env.assign(p->slot_count, 0);
        bound.assign(p->slot_count, false);
        resolved.clear();
        resolved.resize(p->task_count);
        last_instance.assign(p->max_task_id, kNone);
        last_value.assign(p->max_task_id, 0);
        after_depth = recorded_depth = pipe_depth = list_depth = 0;
        ordinal = 0;
        uint32_t aicpus = std::max<uint32_t>(config.aicpus, 1);
        aicpus_rr = std::min(std::max<uint32_t>(p->schedule.round_robin, 1), aicpus);
        derived_of.assign(plan.tensor_count, -1);
        collectives.clear();
        for (uint32_t i = 0; i < p->derived_count; ++i) {
            const DerivedPlan& d = p->derived[i];
            derived_of[d.tensor] = int32_t(i);
            collectives.push_back(CollectiveOp{d.op, d.source, d.tensor, d.reduce_dim});
        }
        // Tasks of earlier executions have run, and no task here waits for them.
        regions.reset(plan.tensor_count);
        if (!composite(p->root, err)) return false;
        return drain(err);
    }
};

Expander::Expander(const Plan& plan, char* const* tensor_bases, const Runner& runner,
                   const ExpanderConfig& config)
    : state_(new State(plan, tensor_bases, runner, config)) {}

Expander::~Expander() = default;

bool Expander::init(std::string* error) {
    State& s = *state_;
    if (!s.runner.issue || !s.runner.complete_one || !s.runner.read_int) {
        *error = "the runner must provide issue, complete_one and read_int";
        return false;
    }
    if (s.config.max_tasks == 0) {
        *error = "the task table needs room for at least one task (max_tasks = 0)";
        return false;
    }
    s.kinds = new (std::nothrow) uint8_t[s.config.max_tasks];
    if (!s.kinds) {
        *error = format("cannot allocate the task table for %" PRIu32 " tasks", s.config.max_tasks);
        return false;
    }
    size_t n = s.plan.tensor_count;
    s.version.assign(n, 0);
    s.derived_at.assign(n, 0);
    s.dirty.assign(n, false);
    return true;
}

bool Expander::execute(uint32_t program, const Binding* bindings, size_t binding_count,
                       std::string* error) {
    return state_->execute(program, bindings, binding_count, error);
}

bool Expander::drain(std::string* error) { return state_->drain(error); }

uint32_t Expander::next_id() const { return state_->next; }

bool check_binding(const Plan& plan, uint32_t program, const char* name, uint64_t value,
                   const char* shown, std::string* error) {
    // Every program takes the original's channel latency (ir/src/lib.rs
    // CHANNEL_LATENCY_SYMBOL): it delays deliveries in `wsp run`'s simulated clock, and the
    // tasks and their order do not depend on it.
    bool found = std::strcmp(name, "__pto_wsp_channel_latency_cycles") == 0;
    std::string list;
    std::vector<const char*> seen; // symbols of several programs are listed once
    for (uint32_t i = 0; i < plan.program_count; ++i) {
        if (program != kNone && i != program) continue;
        const ProgramPlan& p = plan.programs[i];
        for (uint32_t s = 0; s < p.symbol_count; ++s) {
            const SymbolPlan& sym = p.symbols[s];
            if (std::strcmp(sym.name, name) == 0) found = true;
            bool dup = false;
            for (const char* o : seen) dup = dup || std::strcmp(o, sym.name) == 0;
            if (dup) continue;
            seen.push_back(sym.name);
            list += format("%s`%s` (default %" PRIu64 ")", list.empty() ? "" : ", ", sym.name,
                           sym.default_value);
        }
    }
    if (!found) {
        std::string known = list.empty()
                                ? std::string("the program has no run-time symbols (a `DenseDyn` "
                                              "axis is one)")
                                : "the run-time symbols are " + list;
        *error = format("`%s`: no run-time symbol `%s`; %s", shown, name, known.c_str());
        return false;
    }
    if (value > kMaxSymbol) {
        *error = format("`%s`: %" PRIu64 " is out of range for `%s`: a run-time symbol takes 0 "
                        "to %" PRIu64 " (2^63 - 1)",
                        shown, value, name, kMaxSymbol);
        return false;
    }
    return true;
}

// ---- element conversions (runtime/src/tensors.rs) ----------------------------------------

namespace {

double half_to_double(uint16_t h) {
    uint32_t sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v;
    if (exp == 0) v = std::ldexp(double(frac), -24);
    else if (exp == 31) v = frac ? std::numeric_limits<double>::quiet_NaN()
                                 : std::numeric_limits<double>::infinity();
    else v = std::ldexp(double(frac | 0x400), int(exp) - 25);
    return sign ? -v : v;
}

// Round to nearest even, as the `half` crate's from_f64 does (directly from f64).
uint16_t double_to_half(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    uint16_t sign = uint16_t((bits >> 48) & 0x8000);
    int exp = int((bits >> 52) & 0x7ff);
    uint64_t man = bits & 0xfffffffffffffull;
    if (exp == 0x7ff) return uint16_t(sign | 0x7c00 | (man ? 0x200 | uint16_t(man >> 42) : 0));
    int e = exp - 1023; // unbiased
    if (e > 15) return uint16_t(sign | 0x7c00);
    if (exp == 0) return sign; // f64 subnormals are far below f16's range
    uint64_t m = man | (uint64_t(1) << 52); // 53 bits
    if (e >= -14) {
        // Normal: keep 10 fraction bits; shift 42.
        uint64_t half_man = m >> 42;
        uint64_t rest = m & ((uint64_t(1) << 42) - 1);
        uint64_t halfway = uint64_t(1) << 41;
        uint32_t out = uint32_t((e + 15) << 10) + uint32_t(half_man & 0x3ff);
        if (rest > halfway || (rest == halfway && (half_man & 1))) ++out;
        return uint16_t(sign | out); // a carry into the exponent (or to inf) is correct
    }
    // Subnormal: value = m * 2^(e-52); in units of 2^-24: shift by (-24 - (e - 52)).
    int shift = 28 - e;
    if (shift > 63) return sign;
    uint64_t q = m >> shift;
    uint64_t rest = m & ((uint64_t(1) << shift) - 1);
    uint64_t halfway = uint64_t(1) << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1))) ++q;
    return uint16_t(sign | uint16_t(q));
}

double bf16_to_double(uint16_t h) {
    uint32_t b = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return double(f);
}

// The `half` crate's bf16::from_f64 rounds the f64 to nearest even directly.
uint16_t double_to_bf16(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    uint16_t sign = uint16_t((bits >> 48) & 0x8000);
    int exp = int((bits >> 52) & 0x7ff);
    uint64_t man = bits & 0xfffffffffffffull;
    if (exp == 0x7ff) return uint16_t(sign | 0x7f80 | (man ? 0x40 | uint16_t(man >> 45) : 0));
    int e = exp - 1023;
    if (e > 127) return uint16_t(sign | 0x7f80);
    if (exp == 0) return sign;
    uint64_t m = man | (uint64_t(1) << 52);
    if (e >= -126) {
        uint64_t bm = m >> 45; // 7 fraction bits
        uint64_t rest = m & ((uint64_t(1) << 45) - 1);
        uint64_t halfway = uint64_t(1) << 44;
        uint32_t out = uint32_t((e + 127) << 7) + uint32_t(bm & 0x7f);
        if (rest > halfway || (rest == halfway && (bm & 1))) ++out;
        return uint16_t(sign | out);
    }
    int shift = 45 + (-126 - e);
    if (shift > 63) return sign;
    uint64_t q = m >> shift;
    uint64_t rest = m & ((uint64_t(1) << shift) - 1);
    uint64_t halfway = uint64_t(1) << (shift - 1);
    if (rest > halfway || (rest == halfway && (q & 1))) ++q;
    return uint16_t(sign | uint16_t(q));
}

template <typename T> T load(const void* data, uint64_t i) {
    T v;
    std::memcpy(&v, static_cast<const char*>(data) + i * sizeof(T), sizeof(T));
    return v;
}

template <typename T> void store(void* data, uint64_t i, T v) {
    std::memcpy(static_cast<char*>(data) + i * sizeof(T), &v, sizeof(T));
}

// Rust's saturating `as` from f64 to an integer type (NaN is 0).
template <typename T> T saturate(double v) {
    if (std::isnan(v)) return 0;
    if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(v);
}

} // namespace

double read_element(DType dtype, const void* data, uint64_t i) {
    switch (dtype) {
    case DType::F16: return half_to_double(load<uint16_t>(data, i));
    case DType::BF16: return bf16_to_double(load<uint16_t>(data, i));
    case DType::F32: return double(load<float>(data, i));
    case DType::F64: return load<double>(data, i);
    default: return double(read_element_int(dtype, data, i));
    }
}

int64_t read_element_int(DType dtype, const void* data, uint64_t i) {
    switch (dtype) {
    case DType::I8: return load<int8_t>(data, i);
    case DType::I16: return load<int16_t>(data, i);
    case DType::I32: return load<int32_t>(data, i);
    case DType::I64: return load<int64_t>(data, i);
    case DType::U8: return load<uint8_t>(data, i);
    case DType::U16: return load<uint16_t>(data, i);
    case DType::U32: return load<uint32_t>(data, i);
    case DType::U64: return int64_t(load<uint64_t>(data, i));
    default: return saturate<int64_t>(read_element(dtype, data, i));
    }
}

void write_element(DType dtype, void* data, uint64_t i, double v) {
    switch (dtype) {
    case DType::F16: store<uint16_t>(data, i, double_to_half(v)); break;
    case DType::BF16: store<uint16_t>(data, i, double_to_bf16(v)); break;
    case DType::F32: store<float>(data, i, float(v)); break;
    case DType::F64: store<double>(data, i, v); break;
    case DType::I8: store<int8_t>(data, i, saturate<int8_t>(v)); break;
    case DType::I16: store<int16_t>(data, i, saturate<int16_t>(v)); break;
    case DType::I32: store<int32_t>(data, i, saturate<int32_t>(v)); break;
    case DType::I64: store<int64_t>(data, i, saturate<int64_t>(v)); break;
    case DType::U8: store<uint8_t>(data, i, saturate<uint8_t>(v)); break;
    case DType::U16: store<uint16_t>(data, i, saturate<uint16_t>(v)); break;
    case DType::U32: store<uint32_t>(data, i, saturate<uint32_t>(v)); break;
    case DType::U64: store<uint64_t>(data, i, saturate<uint64_t>(v)); break;
    }
}

void run_collective_host(const Plan& plan, const CollectiveOp& op, const void* src, void* dst) {
    const TensorPlan& s = plan.tensors[op.src];
    const TensorPlan& d = plan.tensors[op.dst];
    uint64_t n_dst = 1;
    for (uint32_t i = 0; i < d.rank; ++i) n_dst *= d.shape[i];
    if (op.reduce_dim < 0) {
        for (uint64_t i = 0; i < n_dst; ++i)
            write_element(d.dtype, dst, i, read_element(s.dtype, src, i));
        return;
    }
    uint32_t r = uint32_t(op.reduce_dim);
    uint64_t outer = 1, inner = 1, k = s.shape[r];
    for (uint32_t i = 0; i < r; ++i) outer *= s.shape[i];
    for (uint32_t i = r + 1; i < s.rank; ++i) inner *= s.shape[i];
    for (uint64_t o = 0; o < outer; ++o)
        for (uint64_t i = 0; i < inner; ++i) {
            double acc = 0.0;
            for (uint64_t j = 0; j < k; ++j) acc += read_element(s.dtype, src, (o * k + j) * inner + i);
            write_element(d.dtype, dst, o * inner + i, acc);
        }
}

} // namespace pto_wsp
