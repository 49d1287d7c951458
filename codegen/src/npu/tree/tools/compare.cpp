// wsp_compare: compares what the host replay produced with what `wsp run` produced.
//
//   wsp_compare tasks EXPECTED ACTUAL   task streams (`--dump-tasks`): per execution, the same
//                                       tasks in the same order (kind, name, index, AICPU,
//                                       stream; barriers aside) and the same happens-before
//                                       among kernel tasks (the transitive closure of `after`
//                                       restricted to kernel tasks). Exit 0 when equal.
//   wsp_compare differ A B              exit 0 iff the two streams differ (rebinding test)
//   wsp_compare tensors EXPECTED ACTUAL [--via FILE]
//                                       every EXPECTED/*.npy in ACTUAL with the same shape and
//                                       dtype, max|a-b|/max|a| within 1e-5 (f32), 1e-12 (f64),
//                                       1e-2 (f16, bf16); integers exact. FILE lists `NAME DTYPE`
//                                       lines: tensor NAME is compared at DTYPE's tolerance (a
//                                       value computed through a narrower float). Prints each
//                                       tensor's error.
#include <dirent.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../host/npy.hpp"

namespace {

struct Task {
    uint32_t id = 0;
    std::string kind, name, index, aicpu, stream;
    std::vector<uint32_t> after;
    size_t line = 0;
};

struct Execution {
    std::string program;
    size_t line = 0;
    std::vector<Task> tasks;
};

bool parse_ids(const std::string& s, std::vector<uint32_t>* out) {
    out->clear();
    if (s == "-") return true;
    size_t i = 0;
    while (i < s.size()) {
        char* end = nullptr;
        unsigned long v = std::strtoul(s.c_str() + i, &end, 10);
        if (end == s.c_str() + i) return false;
        out->push_back(uint32_t(v));
        i = size_t(end - s.c_str());
        if (i < s.size()) {
            if (s[i] != ',') return false;
            ++i;
        }
    }
    return true;
}

bool load_stream(const char* path, std::vector<Execution>* out, std::string* err) {
    std::ifstream in(path);
    if (!in) {
        *err = std::string("cannot read `") + path + "`";
        return false;
    }
    std::string line;
    size_t n = 0;
    bool header = false;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty()) continue;
        if (!header) {
            if (line != "# wsp tasks v1") {
                *err = std::string(path) + ":1: not a task stream (expected `# wsp tasks v1`)";
                return false;
            }
            header = true;
            continue;
        }
        if (line.compare(0, 10, "execution ") == 0) {
            Execution e;
            e.program = line.substr(10);
            e.line = n;
            out->push_back(e);
            continue;
        }
        if (out->empty()) {
            *err = std::string(path) + ":" + std::to_string(n) + ": a task before any `execution` line";
            return false;
        }
        Task t;
        t.line = n;
        std::map<std::string, std::string> f;
        size_t i = 0;
        while (i < line.size()) {
            size_t sp = line.find(' ', i);
            if (sp == std::string::npos) sp = line.size();
            std::string kv = line.substr(i, sp - i);
            size_t eq = kv.find('=');
            if (eq == std::string::npos) {
                *err = std::string(path) + ":" + std::to_string(n) + ": `" + kv + "` is not KEY=VALUE";
                return false;
            }
            f[kv.substr(0, eq)] = kv.substr(eq + 1);
            i = sp + 1;
        }
        for (const char* k : {"task", "kind", "name", "index", "aicpu", "stream", "after"})
            if (!f.count(k)) {
                *err = std::string(path) + ":" + std::to_string(n) + ": no `" + k + "=`";
                return false;
            }
        t.id = uint32_t(std::strtoul(f["task"].c_str(), nullptr, 10));
        t.kind = f["kind"];
        t.name = f["name"];
        t.index = f["index"];
        t.aicpu = f["aicpu"];
        t.stream = f["stream"];
        if (!parse_ids(f["after"], &t.after)) {
            *err = std::string(path) + ":" + std::to_string(n) + ": bad `after=`";
            return false;
        }
        out->back().tasks.push_back(t);
    }
    if (!header) {
        *err = std::string(path) + ": empty, not a task stream";
        return false;
    }
    return true;
}

std::string describe(const Task& t) {
    return "task=" + std::to_string(t.id) + " kind=" + t.kind + " name=" + t.name + " index=" + t.index +
           " aicpu=" + t.aicpu + " stream=" + t.stream;
}

// Per kernel task of an execution (in order): the kernel tasks (by ordinal) that happen
// before it, as bitsets of `words` words each.
bool closure(const Execution& e, std::vector<uint64_t>* bits, size_t* words, std::vector<int64_t>* ordinal,
             std::string* err) {
    size_t n = e.tasks.size(), k = 0;
    std::map<uint32_t, size_t> pos;
    ordinal->assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
        pos[e.tasks[i].id] = i;
        if (e.tasks[i].kind == "kernel") (*ordinal)[i] = int64_t(k++);
    }
    *words = (k + 63) / 64;
    // At most 2^27 words (1 GiB) per stream.
    if (*words != 0 && n > (size_t(1) << 27) / *words) {
        *err = "execution `" + e.program + "`: " + std::to_string(n) + " tasks of which " + std::to_string(k) +
               " kernels are too many to compare happens-before relations that differ in their edges";
        return false;
    }
    bits->assign(n * *words, 0);
    for (size_t i = 0; i < n; ++i) {
        for (uint32_t p : e.tasks[i].after) {
            auto it = pos.find(p);
            if (it == pos.end() || it->second >= i) {
                *err = "line " + std::to_string(e.tasks[i].line) + ": task " + std::to_string(e.tasks[i].id) +
                       " waits for task " + std::to_string(p) + ", which is not an earlier task of its execution";
                return false;
            }
            size_t j = it->second;
            for (size_t w = 0; w < *words; ++w) (*bits)[i * *words + w] |= (*bits)[j * *words + w];
            if ((*ordinal)[j] >= 0) (*bits)[i * *words + size_t((*ordinal)[j]) / 64] |= uint64_t(1) << ((*ordinal)[j] % 64);
        }
    }
    return true;
}

// Empty when the streams are equal; else the first difference.
std::string difference(const char* pa, const char* pb, bool* failed) {
    std::vector<Execution> a, b;
    std::string err;
    *failed = false;
    if (!load_stream(pa, &a, &err) || !load_stream(pb, &b, &err)) {
        *failed = true;
        return err;
    }
    if (a.size() != b.size())
        return std::to_string(a.size()) + " executions expected, " + std::to_string(b.size()) + " found";
    for (size_t x = 0; x < a.size(); ++x) {
        const Execution &ea = a[x], &eb = b[x];
        std::string where = "execution " + std::to_string(x + 1) + " (`" + ea.program + "`)";
        if (ea.program != eb.program) return where + ": the actual stream runs `" + eb.program + "`";
        std::vector<size_t> ka, kb; // non-barrier tasks, by position
        for (size_t i = 0; i < ea.tasks.size(); ++i) if (ea.tasks[i].kind != "barrier") ka.push_back(i);
        for (size_t i = 0; i < eb.tasks.size(); ++i) if (eb.tasks[i].kind != "barrier") kb.push_back(i);
        for (size_t i = 0; i < std::min(ka.size(), kb.size()); ++i) {
            const Task &ta = ea.tasks[ka[i]], &tb = eb.tasks[kb[i]];
            if (ta.kind != tb.kind || ta.name != tb.name || ta.index != tb.index || ta.aicpu != tb.aicpu ||
                ta.stream != tb.stream)
                return where + ": task " + std::to_string(i + 1) + " (not counting barriers) differs:\n  expected (line " +
                       std::to_string(ta.line) + "): " + describe(ta) + "\n  actual   (line " + std::to_string(tb.line) +
                       "): " + describe(tb);
        }
        if (ka.size() != kb.size())
            return where + ": " + std::to_string(ka.size()) + " tasks (not counting barriers) expected, " +
                   std::to_string(kb.size()) + " found";
        // The same edges give the same happens-before; only streams whose edges differ need
        // their transitive closures compared.
        bool same_edges = ea.tasks.size() == eb.tasks.size();
        for (size_t i = 0; same_edges && i < ea.tasks.size(); ++i)
            same_edges = ea.tasks[i].id == eb.tasks[i].id && ea.tasks[i].kind == eb.tasks[i].kind &&
                         ea.tasks[i].after == eb.tasks[i].after;
        if (same_edges) continue;
        std::vector<uint64_t> ba, bb;
        std::vector<int64_t> oa, ob;
        size_t wa = 0, wb = 0;
        if (!closure(ea, &ba, &wa, &oa, &err) || !closure(eb, &bb, &wb, &ob, &err)) {
            *failed = true;
            return err;
        }
        // Kernel tasks correspond by ordinal, since the non-barrier sequences are equal.
        std::vector<size_t> kernel_a, kernel_b;
        for (size_t i = 0; i < ea.tasks.size(); ++i) if (oa[i] >= 0) kernel_a.push_back(i);
        for (size_t i = 0; i < eb.tasks.size(); ++i) if (ob[i] >= 0) kernel_b.push_back(i);
        for (size_t k = 0; k < kernel_a.size(); ++k) {
            const uint64_t* x1 = &ba[kernel_a[k] * wa];
            const uint64_t* x2 = &bb[kernel_b[k] * wb];
            for (size_t w = 0; w < wa; ++w) {
                if (x1[w] == x2[w]) continue;
                uint64_t diff = x1[w] ^ x2[w];
                size_t p = w * 64 + size_t(__builtin_ctzll(diff));
                bool in_expected = (x1[w] >> (p % 64)) & 1;
                const Task& t = ea.tasks[kernel_a[k]];
                const Task& pa_t = ea.tasks[kernel_a[p]];
                const Task& pb_t = eb.tasks[kernel_b[p]];
                return where + ": " + describe(t) + " (expected line " + std::to_string(t.line) + ", actual line " +
                       std::to_string(eb.tasks[kernel_b[k]].line) + ") " +
                       (in_expected ? "must happen after " : "must not be ordered after ") +
                       describe(in_expected ? pa_t : pb_t) + (in_expected ? ", which the actual stream does not order before it"
                                                                          : ", which the actual stream orders before it");
            }
        }
    }
    return std::string();
}

double tolerance(const pto_wsp::npy::Array& a) {
    if (a.kind != 'f') return 0.0;
    if (a.itemsize == 2) return 1e-2;
    if (a.itemsize == 4) return 1e-5;
    return 1e-12;
}

// `NAME DTYPE` lines (`#` starts a comment): the tolerance each named tensor is compared at.
bool read_via(const char* path, std::map<std::string, double>* out, std::string* err) {
    std::ifstream in(path);
    if (!in) {
        *err = std::string("cannot read `") + path + "`";
        return false;
    }
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
        size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        char name[256], dtype[16], extra[2];
        int got = std::sscanf(line.c_str(), "%255s %15s %1s", name, dtype, extra);
        if (got <= 0) continue;
        std::string d = got >= 2 ? dtype : "";
        double tol;
        if (d == "F16" || d == "BF16") tol = 1e-2;
        else if (d == "F32") tol = 1e-5;
        else if (d == "F64") tol = 1e-12;
        else {
            *err = std::string(path) + ":" + std::to_string(n) + ": expected `NAME DTYPE` with a float dtype "
                   "(F16, BF16, F32, F64), not `" + line + "`";
            return false;
        }
        if (got == 3) {
            *err = std::string(path) + ":" + std::to_string(n) + ": expected `NAME DTYPE`, not `" + line + "`";
            return false;
        }
        (*out)[name] = tol;
    }
    return true;
}

int tensors(const char* expected, const char* actual, const char* via_path) {
    std::map<std::string, double> via;
    std::string via_err;
    if (via_path && !read_via(via_path, &via, &via_err)) {
        std::fprintf(stderr, "wsp_compare: %s\n", via_err.c_str());
        return 2;
    }
    DIR* d = opendir(expected);
    if (!d) {
        std::fprintf(stderr, "wsp_compare: cannot read folder `%s`\n", expected);
        return 2;
    }
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0) names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    if (names.empty()) {
        std::fprintf(stderr, "wsp_compare: no .npy files in `%s`\n", expected);
        return 2;
    }
    int bad = 0;
    for (const std::string& n : names) {
        pto_wsp::npy::Array a, b;
        std::string err;
        if (!pto_wsp::npy::read(std::string(expected) + "/" + n, &a, &err) ||
            !pto_wsp::npy::read(std::string(actual) + "/" + n, &b, &err)) {
            std::printf("%s: FAIL: %s\n", n.c_str(), err.c_str());
            ++bad;
            continue;
        }
        if (a.shape != b.shape || a.kind != b.kind || a.itemsize != b.itemsize) {
            auto shape = [](const pto_wsp::npy::Array& x) {
                std::string s = "(";
                for (uint64_t v : x.shape) s += std::to_string(v) + ",";
                return s + ")";
            };
            std::printf("%s: FAIL: expected %s %s, found %s %s\n", n.c_str(), pto_wsp::npy::descr_of(a).c_str(),
                        shape(a).c_str(), pto_wsp::npy::descr_of(b).c_str(), shape(b).c_str());
            ++bad;
            continue;
        }
        uint64_t count = a.count();
        if (a.kind != 'f') {
            uint64_t diffs = 0, first = 0;
            for (uint64_t i = 0; i < count; ++i)
                if (std::memcmp(&a.data[size_t(i * a.itemsize)], &b.data[size_t(i * a.itemsize)], a.itemsize) != 0) {
                    if (diffs++ == 0) first = i;
                }
            if (diffs) {
                std::printf("%s: FAIL: %" PRIu64 " of %" PRIu64 " elements differ, first at flat index %" PRIu64
                            " (expected %.17g, found %.17g)\n",
                            n.c_str(), diffs, count, first, pto_wsp::npy::value(a, first), pto_wsp::npy::value(b, first));
                ++bad;
            } else {
                std::printf("%s: ok (exact, %" PRIu64 " elements)\n", n.c_str(), count);
            }
            continue;
        }
        double max_abs = 0.0, max_diff = 0.0;
        uint64_t nan_mismatch = 0;
        for (uint64_t i = 0; i < count; ++i) {
            double x = pto_wsp::npy::value(a, i), y = pto_wsp::npy::value(b, i);
            if (std::isnan(x) || std::isnan(y)) {
                if (std::isnan(x) != std::isnan(y)) ++nan_mismatch;
                continue;
            }
            if (std::isinf(x) || std::isinf(y)) {
                if (x != y) ++nan_mismatch;
                continue;
            }
            max_abs = std::max(max_abs, std::fabs(x));
            max_diff = std::max(max_diff, std::fabs(x - y));
        }
        double rel = max_abs > 0 ? max_diff / max_abs : max_diff;
        double tol = tolerance(a);
        auto narrower = via.find(n.substr(0, n.size() - 4));
        if (narrower != via.end()) tol = std::max(tol, narrower->second);
        bool ok = nan_mismatch == 0 && rel <= tol;
        std::printf("%s: %s max|a-b|/max|a| = %.3g (tolerance %.0e%s)%s\n", n.c_str(), ok ? "ok" : "FAIL:", rel, tol,
                    narrower != via.end() ? ", computed through a narrower float" : "",
                    nan_mismatch ? ", NaN/inf at different places" : "");
        if (!ok) ++bad;
    }
    if (bad) std::printf("%d of %zu tensors differ\n", bad, names.size());
    return bad ? 1 : 0;
}

const char* kUsage =
    "usage: wsp_compare tasks EXPECTED ACTUAL\n"
    "       wsp_compare differ A B\n"
    "       wsp_compare tensors EXPECTED_DIR ACTUAL_DIR [--via TOLERANCES]\n";

} // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "tensors" && argc == 6 && std::string(argv[4]) == "--via") return tensors(argv[2], argv[3], argv[5]);
    if (mode == "tensors" && argc == 4) return tensors(argv[2], argv[3], nullptr);
    if (argc != 4) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    if (mode != "tasks" && mode != "differ") {
        std::fputs(kUsage, stderr);
        return 2;
    }
    bool failed = false;
    std::string diff = difference(argv[2], argv[3], &failed);
    if (failed) {
        std::fprintf(stderr, "wsp_compare: %s\n", diff.c_str());
        return 2;
    }
    if (mode == "tasks") {
        if (diff.empty()) {
            std::printf("task streams match: %s and %s\n", argv[2], argv[3]);
            return 0;
        }
        std::printf("task streams differ: %s\n", diff.c_str());
        return 1;
    }
    if (diff.empty()) {
        std::printf("the task streams are the same; expected them to differ\n");
        return 1;
    }
    std::printf("the task streams differ, as expected: %s\n", diff.c_str());
    return 0;
}
