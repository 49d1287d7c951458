// NumPy .npy files (format versions 1, 2 and 3) for the host replay and wsp_compare: the
// header is validated and the data's size checked against the file before anything is
// allocated. Tensors are little-endian and C-ordered in memory; a file in another byte order or
// in Fortran order is converted on reading. bf16, which NumPy has no dtype for, is written as
// f32, as the runtime writes it (runtime/src/tensors.rs `save_npy`).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "pto_wsp/expander.hpp"

namespace pto_wsp {
namespace npy {

// A file's contents: its type string without the byte-order mark (`f4`, `i8`, `u1`, `b1`),
// shape, and elements as little-endian bytes in C order.
struct Array {
    char kind = 'f'; // f, i, u or b
    uint32_t itemsize = 0;
    std::vector<uint64_t> shape;
    std::vector<unsigned char> data;

    uint64_t count() const {
        uint64_t n = 1;
        for (uint64_t d : shape) n *= d;
        return n;
    }
};

inline std::string descr_of(const Array& a) { return std::string(1, a.kind) + std::to_string(a.itemsize); }

namespace detail {

inline bool fail(std::string* err, const std::string& path, const std::string& what) {
    *err = "`" + path + "`: " + what;
    return false;
}

inline void skip_space(const std::string& h, size_t& i) {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == ',')) ++i;
}

// The value text after `'key':` in the header dict.
inline bool find_key(const std::string& h, const char* key, size_t* at) {
    std::string k1 = std::string("'") + key + "'";
    std::string k2 = std::string("\"") + key + "\"";
    size_t p = h.find(k1);
    if (p == std::string::npos) p = h.find(k2);
    if (p == std::string::npos) return false;
    p = h.find(':', p);
    if (p == std::string::npos) return false;
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    *at = p;
    return true;
}

inline bool mul_checked(uint64_t a, uint64_t b, uint64_t* out) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return false;
    *out = a * b;
    return true;
}

} // namespace detail

// Reads a .npy file whole.
inline bool read(const std::string& path, Array* out, std::string* err) {
    using detail::fail;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fail(err, path, std::string("cannot open: ") + std::strerror(errno));
    std::vector<unsigned char> bytes;
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
    bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad) return fail(err, path, "cannot read");
    if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
        return fail(err, path, "not a .npy file (no \\x93NUMPY magic)");
    unsigned major = bytes[6];
    size_t header_len, header_at;
    if (major == 1) {
        header_len = size_t(bytes[8]) | (size_t(bytes[9]) << 8);
        header_at = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) return fail(err, path, "truncated header");
        header_len = size_t(bytes[8]) | (size_t(bytes[9]) << 8) | (size_t(bytes[10]) << 16) |
                     (size_t(bytes[11]) << 24);
        header_at = 12;
    } else {
        return fail(err, path, "unsupported .npy format version " + std::to_string(major));
    }
    if (header_len > bytes.size() - header_at) return fail(err, path, "truncated header");
    std::string h(bytes.begin() + long(header_at), bytes.begin() + long(header_at + header_len));
    size_t at;
    if (!detail::find_key(h, "descr", &at) || at >= h.size() || (h[at] != '\'' && h[at] != '"'))
        return fail(err, path, "header has no 'descr' string");
    size_t end = h.find(h[at], at + 1);
    if (end == std::string::npos) return fail(err, path, "unterminated 'descr'");
    std::string descr = h.substr(at + 1, end - at - 1);
    char order = '<';
    if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '='))
        order = descr[0], descr = descr.substr(1);
    if (descr.size() < 2 || std::strchr("fiub", descr[0]) == nullptr)
        return fail(err, path, "holds dtype `" + descr + "`, which WSP cannot read");
    out->kind = descr[0];
    out->itemsize = uint32_t(std::strtoul(descr.c_str() + 1, nullptr, 10));
    bool ok_size = (out->kind == 'f' && (out->itemsize == 2 || out->itemsize == 4 || out->itemsize == 8)) ||
                   ((out->kind == 'i' || out->kind == 'u') &&
                    (out->itemsize == 1 || out->itemsize == 2 || out->itemsize == 4 || out->itemsize == 8)) ||
                   (out->kind == 'b' && out->itemsize == 1);
    if (!ok_size) return fail(err, path, "holds dtype `" + descr + "`, which WSP cannot read");
    bool fortran = false;
    if (detail::find_key(h, "fortran_order", &at)) fortran = h.compare(at, 4, "True") == 0;
    if (!detail::find_key(h, "shape", &at) || at >= h.size() || h[at] != '(')
        return fail(err, path, "header has no 'shape' tuple");
    out->shape.clear();
    size_t i = at + 1;
    for (;;) {
        detail::skip_space(h, i);
        if (i >= h.size()) return fail(err, path, "unterminated 'shape'");
        if (h[i] == ')') break;
        if (h[i] < '0' || h[i] > '9') return fail(err, path, "bad 'shape'");
        uint64_t v = 0;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') {
            if (!detail::mul_checked(v, 10, &v) || v > std::numeric_limits<uint64_t>::max() - 9)
                return fail(err, path, "shape too large");
            v += uint64_t(h[i] - '0');
            ++i;
        }
        if (i < h.size() && h[i] == 'L') ++i;
        out->shape.push_back(v);
        if (out->shape.size() > 64) return fail(err, path, "too many dimensions");
    }
    uint64_t count = 1, size = 0;
    for (uint64_t d : out->shape)
        if (!detail::mul_checked(count, d, &count)) return fail(err, path, "shape too large");
    if (!detail::mul_checked(count, out->itemsize, &size)) return fail(err, path, "shape too large");
    size_t data_at = header_at + header_len;
    if (size > bytes.size() - data_at)
        return fail(err, path, "holds " + std::to_string(bytes.size() - data_at) +
                                   " data bytes, its header says " + std::to_string(size));
    out->data.assign(bytes.begin() + long(data_at), bytes.begin() + long(data_at + size));
    if (order == '>' && out->itemsize > 1)
        for (uint64_t e = 0; e < count; ++e) {
            unsigned char* p = &out->data[size_t(e * out->itemsize)];
            for (uint32_t a = 0, b = out->itemsize - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
        }
    if (fortran && out->shape.size() > 1) {
        // Fortran order: the first index varies fastest. Reorder to C order.
        std::vector<unsigned char> c(out->data.size());
        size_t rank = out->shape.size();
        std::vector<uint64_t> idx(rank, 0), fstride(rank, 1);
        for (size_t d = 1; d < rank; ++d) fstride[d] = fstride[d - 1] * out->shape[d - 1];
        for (uint64_t e = 0; e < count; ++e) {
            uint64_t from = 0;
            for (size_t d = 0; d < rank; ++d) from += idx[d] * fstride[d];
            std::memcpy(&c[size_t(e * out->itemsize)], &out->data[size_t(from * out->itemsize)],
                        out->itemsize);
            for (size_t d = rank; d-- > 0;) {
                if (++idx[d] < out->shape[d]) break;
                idx[d] = 0;
            }
        }
        out->data.swap(c);
    }
    return true;
}

// Element `i` of an array, as f64; as an integer (exact for integer kinds).
inline double value(const Array& a, uint64_t i) {
    const unsigned char* p = &a.data[size_t(i * a.itemsize)];
    switch (a.kind) {
    case 'f':
        if (a.itemsize == 2) return read_element(DType::F16, p, 0);
        if (a.itemsize == 4) return read_element(DType::F32, p, 0);
        return read_element(DType::F64, p, 0);
    case 'u':
    case 'b': {
        uint64_t v = 0;
        std::memcpy(&v, p, a.itemsize);
        return double(v);
    }
    default: {
        DType d = a.itemsize == 1 ? DType::I8 : a.itemsize == 2 ? DType::I16 : a.itemsize == 4 ? DType::I32 : DType::I64;
        return double(read_element_int(d, p, 0));
    }
    }
}

// The .npy type string of a dtype whose bytes in memory are NumPy's (all but bf16).
inline const char* descr(DType d) {
    switch (d) {
    case DType::F16: return "<f2";
    case DType::F32: return "<f4";
    case DType::F64: return "<f8";
    case DType::I8: return "|i1";
    case DType::I16: return "<i2";
    case DType::I32: return "<i4";
    case DType::I64: return "<i8";
    case DType::U8: return "|u1";
    case DType::U16: return "<u2";
    case DType::U32: return "<u4";
    case DType::U64: return "<u8";
    case DType::BF16: return nullptr;
    }
    return nullptr;
}

// Fills a tensor buffer of `dtype` and `shape` from a file: its bytes when the file's dtype is
// the tensor's, else each element converted as the runtime does (through f64).
inline bool load(const std::string& path, DType dtype, const uint64_t* shape, uint32_t rank,
                 void* data, std::string* err) {
    Array a;
    if (!read(path, &a, err)) return false;
    bool same_shape = a.shape.size() == rank;
    for (uint32_t d = 0; same_shape && d < rank; ++d) same_shape = a.shape[d] == shape[d];
    if (!same_shape) {
        std::string s = "(", t = "(";
        for (uint64_t d : a.shape) s += std::to_string(d) + ",";
        for (uint32_t d = 0; d < rank; ++d) t += std::to_string(shape[d]) + ",";
        return detail::fail(err, path, "has shape " + s + ") but the tensor is " + t + ")");
    }
    const char* ours = descr(dtype);
    if (ours && descr_of(a) == std::string(ours + 1)) {
        std::memcpy(data, a.data.data(), a.data.size());
        return true;
    }
    uint64_t n = a.count();
    bool integer = a.kind != 'f' && !dtype_is_float(dtype);
    for (uint64_t i = 0; i < n; ++i) {
        if (integer && a.kind == 'i' && a.itemsize == 8) {
            // Exact for 64-bit integers, which f64 would round.
            int64_t v;
            std::memcpy(&v, &a.data[size_t(i * 8)], 8);
            write_element(dtype, data, i, double(v));
        } else {
            write_element(dtype, data, i, value(a, i));
        }
    }
    return true;
}

namespace detail {

inline std::string header(const char* descr, const uint64_t* shape, uint32_t rank) {
    std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
    for (uint32_t d = 0; d < rank; ++d) h += std::to_string(shape[d]) + (rank == 1 ? "," : d + 1 < rank ? ", " : "");
    h += "), }";
    return h;
}

inline bool write_file(const std::string& path, const std::string& h, const void* data,
                       uint64_t bytes, std::string* err) {
    // Version 1 has a 16-bit header length; version 2 a 32-bit one. Data starts 64-aligned.
    bool v1 = h.size() + 11 <= 65535;
    size_t pre = v1 ? 10 : 12;
    size_t total = pre + h.size() + 1;
    size_t pad = (64 - total % 64) % 64;
    std::string header = h + std::string(pad, ' ') + "\n";
    std::string head = "\x93NUMPY";
    head += char(v1 ? 1 : 2);
    head += char(0);
    size_t len = header.size();
    head += char(len & 0xff);
    head += char((len >> 8) & 0xff);
    if (!v1) {
        head += char((len >> 16) & 0xff);
        head += char((len >> 24) & 0xff);
    }
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return fail(err, path, std::string("cannot write: ") + std::strerror(errno));
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
              std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
              (bytes == 0 || std::fwrite(data, 1, size_t(bytes), f) == size_t(bytes));
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return fail(err, path, std::string("cannot write: ") + std::strerror(errno));
    }
    return true;
}

} // namespace detail

// Writes a tensor buffer as .npy (bf16 as f32).
inline bool save(const std::string& path, DType dtype, const uint64_t* shape, uint32_t rank,
                 const void* data, std::string* err) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < rank; ++d) n *= shape[d];
    if (const char* d = descr(dtype))
        return detail::write_file(path, detail::header(d, shape, rank), data, n * dtype_size(dtype), err);
    std::vector<float> f(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) f[size_t(i)] = float(read_element(dtype, data, i));
    return detail::write_file(path, detail::header("<f4", shape, rank), f.data(), n * 4, err);
}

// A view's values (`X.T`, a tensor in another memory order) in its own row-major order,
// gathered from its base's bytes: what `wsp run` saves and dumps of it.
inline std::vector<char> view_values(const TensorPlan& v, const TensorPlan& base, const char* bytes) {
    size_t size = dtype_size(v.dtype);
    // Row-major strides of the base, in elements; then the view's per dimension.
    std::vector<uint64_t> base_strides(base.rank, 1);
    for (uint32_t d = base.rank; d-- > 1;) base_strides[d - 1] = base_strides[d] * base.shape[d];
    std::vector<uint64_t> strides(v.rank, 0);
    for (uint32_t d = 0; d < v.rank; ++d) {
        uint64_t bd = v.view[2 * d], step = v.view[2 * d + 1];
        strides[d] = bd < base.rank ? base_strides[bd] * step : 0;
    }
    uint64_t n = 1;
    for (uint32_t d = 0; d < v.rank; ++d) n *= v.shape[d];
    std::vector<char> out(size_t(n) * size);
    std::vector<uint64_t> index(v.rank, 0);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t at = 0;
        for (uint32_t d = 0; d < v.rank; ++d) at += index[d] * strides[d];
        std::memcpy(out.data() + i * size, bytes + at * size, size);
        for (uint32_t d = v.rank; d-- > 0;) {
            if (++index[d] < v.shape[d]) break;
            index[d] = 0;
        }
    }
    return out;
}

// Whether a dump of every tensor (`wsp run --dump-tensors`) writes tensor `t`: every tensor,
// and of the views only a tensor in another memory order, whose base is its storage
// `NAME.storage` (`wsp_ir::plan::storage_name`); a view such as `X.T` is written as its base.
inline bool dumped(const TensorPlan* tensors, uint32_t t) {
    const TensorPlan& tp = tensors[t];
    return tp.base < 0 || std::string(tensors[tp.base].name) == std::string(tp.name) + ".storage";
}

} // namespace npy
} // namespace pto_wsp
