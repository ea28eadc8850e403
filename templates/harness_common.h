{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * What the Verilator harnesses of {= n.name =} share (sim/harness.cpp and,
 * with a trainer, sim/train_harness.cpp): hex vectors and the top level's
 * signals of any width, the clock with an optional VCD trace, and a seeded
 * random source.
 */

#pragma once

// FPTGEN_AXI (sim/build.sh --axi, --axi-train): the AXI wrapper is the top,
// with aclk and the active-low aresetn.
#ifdef FPTGEN_AXI
#include "V{= n.name =}_axi.h"
#define FPTGEN_CLK aclk
#else
#include "V{= n.name =}.h"
#define FPTGEN_CLK clk
#endif
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace harness {

#ifdef FPTGEN_AXI
using Top = V{= n.name =}_axi;
#else
using Top = V{= n.name =};
#endif
using Words = std::vector<uint32_t>;  // little-endian 32-bit words

// A hex string (most significant digit first) as `bits` bits.
inline Words parse_hex(const std::string& s, int bits) {
    Words w((bits + 31) / 32, 0);
    int pos = 0;  // bit position of the current digit
    for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
        const char c = s[i];
        uint32_t d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else continue;
        for (int b = 0; b < 4; ++b, ++pos) {
            if (pos < bits && ((d >> b) & 1)) w[pos / 32] |= 1u << (pos % 32);
        }
    }
    return w;
}

// `bits` bits as ceil(bits / 4) hex digits, most significant first.
inline std::string to_hex(const Words& w, int bits) {
    std::string s;
    for (int d = (bits + 3) / 4 - 1; d >= 0; --d) {
        uint32_t v = 0;
        for (int b = 0; b < 4; ++b) {
            const int p = 4 * d + b;
            if (p < bits && ((w[p / 32] >> (p % 32)) & 1)) v |= 1u << b;
        }
        s.push_back("0123456789abcdef"[v]);
    }
    return s;
}

// The non-empty lines of a file of hex vectors; exits with status 3 if it
// cannot be read.
inline std::vector<Words> read_vectors(const char* path, int bits) {
    std::ifstream f(path);
    if (!f) {
        std::fprintf(stderr, "ERROR cannot open %s\n", path);
        std::exit(3);
    }
    std::vector<Words> v;
    std::string line;
    while (std::getline(f, line)) {
        if (!line.empty()) v.push_back(parse_hex(line, bits));
    }
    return v;
}

// Bits `lo .. lo + width - 1` (width <= 64).
inline uint64_t field(const Words& w, int lo, int width) {
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) {
        const int p = lo + b;
        if ((w[p / 32] >> (p % 32)) & 1) v |= 1ull << b;
    }
    return v;
}

// Bits `lo .. lo + bits - 1` as their own words (a beat of a vector).
inline Words slice(const Words& w, int lo, int bits) {
    Words out((bits + 31) / 32, 0);
    for (int b = 0; b < bits; ++b) {
        const int p = lo + b;
        if ((w[p / 32] >> (p % 32)) & 1) out[b / 32] |= 1u << (b % 32);
    }
    return out;
}

// A port of the top level: up to 64 bits, or Verilator's wide type.
template <typename T>
void set_sig(T& sig, const Words& w) {
    uint64_t v = w[0];
    if (w.size() > 1) v |= static_cast<uint64_t>(w[1]) << 32;
    sig = static_cast<T>(v);
}

template <std::size_t N>
void set_sig(VlWide<N>& sig, const Words& w) {
    for (std::size_t i = 0; i < N; ++i) sig[i] = i < w.size() ? w[i] : 0;
}

template <typename T>
Words get_sig(const T& sig, int bits) {
    const uint64_t v = static_cast<uint64_t>(sig);
    Words w((bits + 31) / 32, 0);
    w[0] = static_cast<uint32_t>(v);
    if (w.size() > 1) w[1] = static_cast<uint32_t>(v >> 32);
    return w;
}

template <std::size_t N>
Words get_sig(const VlWide<N>& sig, int bits) {
    Words w((bits + 31) / 32, 0);
    for (std::size_t i = 0; i < w.size() && i < N; ++i) w[i] = sig[i];
    return w;
}

// xorshift64, seeded by the harness's SEED argument.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed ? seed : 0x9E3779B97F4A7C15ull) {}
    uint64_t next() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    bool chance(int percent) { return static_cast<int>(next() % 100) < percent; }
    bool permille(int p) { return static_cast<int>(next() % 1000) < p; }
};

// The training harnesses' arguments: BUFFER.hex REQUESTS.hex SEED
// ITERATIONS INTERRUPT_PERMILLE LOG.
struct TrainArgs {
    std::vector<std::pair<Words, Words>> buffer;  // M (input, target) pairs
    std::vector<Words> requests;                  // inference requests
    uint64_t seed = 0;
    uint32_t iterations = 0;
    int interrupt = 0;                            // per mille per cycle
    FILE* log = nullptr;
};

// Reads the arguments, or prints why not and returns false (the harness
// then exits 3): the buffer must hold m samples, the requests at least one.
inline bool parse_train_args(int argc, char** argv, size_t m, int in_bits, int out_bits, TrainArgs& a) {
    if (argc < 7) {
        std::fprintf(stderr, "usage: %s BUFFER.hex REQUESTS.hex SEED ITERATIONS INTERRUPT_PERMILLE LOG\n", argv[0]);
        return false;
    }
    {
        std::ifstream f(argv[1]);
        std::string x, t;
        while (f >> x >> t) a.buffer.emplace_back(parse_hex(x, in_bits), parse_hex(t, out_bits));
    }
    a.requests = read_vectors(argv[2], in_bits);
    if (a.buffer.size() != m || a.requests.empty()) {
        std::fprintf(stderr, "ERROR need %zu buffer samples and at least one request (got %zu, %zu)\n", m, a.buffer.size(), a.requests.size());
        return false;
    }
    a.seed = std::strtoull(argv[3], nullptr, 10);
    a.iterations = static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10));
    a.interrupt = std::atoi(argv[5]);
    a.log = std::fopen(argv[6], "w");
    if (!a.log) {
        std::fprintf(stderr, "ERROR cannot write %s\n", argv[6]);
        return false;
    }
    return true;
}

// The design under its clock: `cycle` counts rising edges.
struct Sim {
    VerilatedContext* ctx;
    Top* top;
#if VM_TRACE
    VerilatedVcdC* vcd = nullptr;
#endif
    uint64_t cycle = 0;

    Sim(int argc, char** argv) : ctx(new VerilatedContext) {
        ctx->commandArgs(argc, argv);
#if VM_TRACE
        ctx->traceEverOn(true);
#endif
        top = new Top{ctx};
        top->FPTGEN_CLK = 0;
    }
    ~Sim() {
        delete top;
        delete ctx;
    }
    Sim(const Sim&) = delete;
    Sim& operator=(const Sim&) = delete;

    // Writes a VCD to `path` (in a --trace build; otherwise does nothing).
    void trace(const char* path) {
#if VM_TRACE
        vcd = new VerilatedVcdC;
        top->trace(vcd, 99);
        vcd->open(path);
#else
        (void)path;
#endif
    }
    void dump() {
#if VM_TRACE
        if (vcd) vcd->dump(2 * cycle + (top->FPTGEN_CLK ? 1 : 0));
#endif
    }
    // One rising edge. Inputs are set and evaluated while clk is low; the
    // VCD shows that pre-edge state at time 2*cycle and the edge at 2*cycle+1.
    void edge() {
        top->eval();
        dump();
        top->FPTGEN_CLK = 1;
        top->eval();
        dump();
        ++cycle;
        top->FPTGEN_CLK = 0;
        top->eval();
    }
    // Reset asserted for four edges (the harness sets the other inputs first).
    void reset() {
#ifdef FPTGEN_AXI
        top->aresetn = 0;
        for (int i = 0; i < 4; ++i) edge();
        top->aresetn = 1;
#else
        top->rst = 1;
        for (int i = 0; i < 4; ++i) edge();
        top->rst = 0;
#endif
    }
    // The end of the simulation: closes the trace.
    void finish() {
#if VM_TRACE
        if (vcd) vcd->close();
#endif
        top->final();
    }
};

}  // namespace harness
