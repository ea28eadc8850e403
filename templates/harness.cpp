{% import "macros.txt" as m -%}
/*
{% call m::header(" *", gen) %}{% endcall %}
 *
 * Verilator co-simulation harness for {= n.name =}{% if let Some(a) = axi %}, through its AXI wrapper
 * {= a.module =} (s_axis, m_axis with TLAST checked, the AXI4-Lite ID registers printed
 * as "REG NAME VALUE" lines){% endif %}.
 *
 * usage: V{= n.name =}{% if axi.is_some() %}_axi{% endif %} INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]
 *   INPUTS.hex    one input vector per line, hex, element k at bits [k*{= n.x.width =} +: {= n.x.width =}]
 *   EXPECTED.hex  the simulator's output for each vector, same layout ({= n.y.width =}-bit elements)
 *
 * A vector streams as kCoreInBeats beats of kCoreInBits bits (an image: one
 * pixel per beat, beat b = bits [b*kCoreInBits +: kCoreInBits] of the
 * vector), each as kInPer transfers of the port (1 without the AXI wrapper),
 * an output as kCoreOutBeats beats of kOutPer transfers; "beat" below counts
 * transfers.
 *
 * Phase A streams the vectors with in_valid and out_ready held high (cycling
 * through them until at least kTimingVectors have passed, so the pipeline
 * fills) and measures latency (edges from accepting the first beat of vector
 * 0 to the last beat of its output being valid) and the initiation interval
 * (edges between the last beats of successive outputs, which must be
 * constant in the second half of the run). Phase B resets and streams every
 * vector again with random input gaps and random output back-pressure
 * (xorshift64 seeded with SEED). Every output beat of both phases is
 * compared bit for bit with EXPECTED; the first difference stops the run
 * with the vector, the beat, the output element and the bits named. The
 * last line is
 *   RESULT vectors=N mismatches=M ii=I latency=L
 */

#include "harness_common.h"
{%- if axi.is_some() %}
#include "axi_lite.h"
{%- endif %}

using namespace harness;

namespace {

constexpr int kInElems = {= n.inputs =};
constexpr int kInW = {= n.x.width =};
constexpr int kOutElems = {= n.outputs =};
constexpr int kOutW = {= n.y.width =};
constexpr int kOutBits = kOutElems * kOutW;
// A vector is kCoreInBeats beats of the design's stream, each sent as kInPer
// transfers of kInBusBits bits on the port (beat bits [k*kInBusBits +:
// kInBusBits] in transfer k, the padding zero); likewise outputs.
constexpr int kCoreInBeats = {= n.in_port_beats =};
constexpr int kCoreInBits = kInElems / kCoreInBeats * kInW;
constexpr int kCoreOutBeats = {= core_out_beats =};
constexpr int kCoreOutBits = kOutElems / kCoreOutBeats * kOutW;
constexpr int kInPer = {= in_per =};
constexpr int kOutPer = {= out_per =};
constexpr int kInBusBits = {= in_bus =};
constexpr int kOutBusBits = {= out_bus =};
constexpr int kInBeats = kCoreInBeats * kInPer;     // transfers per input vector
constexpr int kOutBeats = kCoreOutBeats * kOutPer;  // transfers per output vector
{%- if let Some(a) = axi %}
constexpr uint64_t kBatch = {= a.batch =};          // vectors per m_axis TLAST
{%- endif %}
// Enough vectors for the interval between outputs to be constant in the
// second half of phase A (the generator's cycle model finds the number).
constexpr size_t kTimingVectors = {= n.timing_vectors =};

// Reset with the streams idle.
void reset(Sim& sim) {
    sim.top->{= p.in_valid =} = 0;
    sim.top->{= p.out_ready =} = 0;
    sim.reset();
    sim.top->eval();
}

// Transfer k of every vector: beats of core_bits bits, each as `per`
// transfers of bus_bits bits (the last one's bits beyond the beat zero).
std::vector<std::vector<Words>> beats_of(const std::vector<Words>& vs, int core_beats, int core_bits, int per, int bus_bits) {
    std::vector<std::vector<Words>> out;
    for (const Words& v : vs) {
        std::vector<Words> b;
        for (int k = 0; k < core_beats; ++k) {
            for (int j = 0; j < per; ++j) {
                const int lo = j * bus_bits;
                const int n = core_bits - lo < bus_bits ? core_bits - lo : bus_bits;
                Words t = slice(v, k * core_bits + lo, n);
                t.resize((bus_bits + 31) / 32, 0);
                b.push_back(t);
            }
        }
        out.push_back(b);
    }
    return out;
}

// Names the first differing element of output transfer `beat` (its bits in
// the transfer; bits beyond the vector are padding, which must be zero).
[[noreturn]] void mismatch(char phase, size_t vec, int beat, const Words& got, const Words& want) {
    const int base = (beat / kOutPer) * kCoreOutBits + (beat % kOutPer) * kOutBusBits;  // vector bit of transfer bit 0
    for (int b = 0; b < kOutBusBits; ++b) {
        if (field(got, b, 1) == field(want, b, 1)) continue;
        const int pos = base + b;
        const bool pad = b + (beat % kOutPer) * kOutBusBits >= kCoreOutBits;
        const int e = pos / kOutW;
        int lo = pad ? b : e * kOutW - base, hi = pad ? b : lo + kOutW - 1;
        if (lo < 0) lo = 0;
        if (hi > kOutBusBits - 1) hi = kOutBusBits - 1;
        const uint64_t g = field(got, lo, hi - lo + 1);
        const uint64_t x = field(want, lo, hi - lo + 1);
        if (pad) {
            std::printf("MISMATCH phase=%c vector=%zu beat=%d padding signal={= p.out_data =}[%d] got=0x%llx expected=0x%llx\n",
                        phase, vec, beat, b, static_cast<unsigned long long>(g), static_cast<unsigned long long>(x));
        } else {
            std::printf("MISMATCH phase=%c vector=%zu beat=%d output=%d signal={= p.out_data =}[%d:%d] got=0x%llx expected=0x%llx\n",
                        phase, vec, beat, e, hi, lo, static_cast<unsigned long long>(g), static_cast<unsigned long long>(x));
        }
        std::printf("RESULT vectors=%zu mismatches=1 ii=0 latency=0\n", vec);
        std::exit(1);
    }
    std::exit(4);
}
{%- if let Some(a) = axi %}

// m_axis_tlast must mark the last transfer of every kBatch-th vector
// (`count` vectors have ended before this one since reset).
void check_last(Sim& sim, char phase, size_t vec, int beat, uint64_t count) {
    const bool want = beat == kOutBeats - 1 && (count + 1) % kBatch == 0;
    if (static_cast<bool>(sim.top->m_axis_tlast) != want) {
        std::printf("MISMATCH phase=%c vector=%zu beat=%d signal=m_axis_tlast got=%d expected=%d\n", phase, vec, beat,
                    static_cast<int>(sim.top->m_axis_tlast), static_cast<int>(want));
        std::printf("RESULT vectors=%zu mismatches=1 ii=0 latency=0\n", vec);
        std::exit(1);
    }
}
{%- endif %}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s INPUTS.hex EXPECTED.hex SEED [TRACE.vcd]\n", argv[0]);
        return 3;
    }
    const std::vector<Words> inputs = read_vectors(argv[1], kInElems * kInW);
    const std::vector<Words> expected = read_vectors(argv[2], kOutBits);
    Rng rng(std::strtoull(argv[3], nullptr, 10));
    if (inputs.size() != expected.size() || inputs.empty()) {
        std::fprintf(stderr, "ERROR %zu input vectors but %zu expected outputs\n", inputs.size(), expected.size());
        return 3;
    }
    const size_t n = inputs.size();
    const auto in_beats = beats_of(inputs, kCoreInBeats, kCoreInBits, kInPer, kInBusBits);
    const auto out_beats = beats_of(expected, kCoreOutBeats, kCoreOutBits, kOutPer, kOutBusBits);

    Sim sim(argc, argv);
    if (argc > 4) sim.trace(argv[4]);
{%- for p in tied_inputs %}
    sim.top->{= p =} = 0;
{%- endfor %}
    sim.top->eval();
{%- if axi.is_some() %}

    // The AXI4-Lite registers that describe the design, for fptgen to
    // compare with the model.
    reset(sim);
    axi::print_info(sim);
{%- endif %}

    const uint64_t limit = (n + kTimingVectors + 16) * ({= n.ii =} + {= n.latency =} + 4) * 8 + 1000;

    // Phase A: full rate, outputs always ready.
    reset(sim);
    const size_t n_a = n > kTimingVectors ? n : kTimingVectors;
    size_t sent = 0, recv = 0;  // beats
    int64_t first_accept = -1;
    std::vector<uint64_t> valid_at;  // edge after which output k's last beat became valid
    sim.top->{= p.out_ready =} = 1;
    while (recv < n_a * kOutBeats) {
        if (sim.cycle > limit) {
            std::printf("TIMEOUT phase=A after %llu cycles: %zu of %zu output beats\n", static_cast<unsigned long long>(sim.cycle), recv, n_a * kOutBeats);
            return 2;
        }
        sim.top->{= p.in_valid =} = sent < n_a * kInBeats;
        if (sent < n_a * kInBeats) set_sig(sim.top->{= p.in_data =}, in_beats[(sent / kInBeats) % n][sent % kInBeats]);
{%- if axi.is_some() %}
        sim.top->s_axis_tlast = sent % kInBeats == kInBeats - 1;
{%- endif %}
        sim.top->eval();
        const bool take_in = sim.top->{= p.in_valid =} && sim.top->{= p.in_ready =};
        // out_ready is high, so every cycle with out_valid is one output beat.
        if (sim.top->{= p.out_valid =}) {
            const size_t v = (recv / kOutBeats) % n;
            const int b = static_cast<int>(recv % kOutBeats);
            if (b == kOutBeats - 1) valid_at.push_back(sim.cycle);
            const Words got = get_sig(sim.top->{= p.out_data =}, kOutBusBits);
            if (got != out_beats[v][b]) mismatch('A', v, b, got, out_beats[v][b]);
{%- if axi.is_some() %}
            check_last(sim, 'A', v, b, recv / kOutBeats);
{%- endif %}
            ++recv;
        }
        sim.edge();
        if (take_in) {
            if (first_accept < 0) first_accept = static_cast<int64_t>(sim.cycle);
            ++sent;
        }
    }
    const long long latency = static_cast<long long>(valid_at[0]) - first_accept;
    long long ii = 0;
    bool steady = true;
    // Intervals in the second half of the run: the pipeline is full by then.
    for (size_t k = valid_at.size() / 2 + 1; k < valid_at.size(); ++k) {
        const long long d = static_cast<long long>(valid_at[k] - valid_at[k - 1]);
        if (ii == 0) ii = d;
        if (d != ii) steady = false;
    }
    if (!steady) {
        std::printf("UNSTEADY phase=A output intervals vary:");
        for (size_t k = 1; k < valid_at.size(); ++k) std::printf(" %llu", static_cast<unsigned long long>(valid_at[k] - valid_at[k - 1]));
        std::printf("\n");
        ii = -1;
    }

    // Phase B: random input gaps and output back-pressure.
    reset(sim);
    sent = 0;
    recv = 0;
    bool presenting = false;
    const uint64_t start = sim.cycle;
    while (recv < n * kOutBeats) {
        if (sim.cycle - start > limit * 4) {
            std::printf("TIMEOUT phase=B after %llu cycles: %zu of %zu output beats\n", static_cast<unsigned long long>(sim.cycle - start), recv, n * kOutBeats);
            return 2;
        }
        // A presented beat stays valid and unchanged until accepted.
        if (!presenting && sent < n * kInBeats && rng.chance(70)) presenting = true;
        sim.top->{= p.in_valid =} = presenting;
        if (presenting) set_sig(sim.top->{= p.in_data =}, in_beats[sent / kInBeats][sent % kInBeats]);
{%- if axi.is_some() %}
        sim.top->s_axis_tlast = sent % kInBeats == kInBeats - 1;
{%- endif %}
        sim.top->{= p.out_ready =} = rng.chance(50);
        sim.top->eval();
        const bool take_in = sim.top->{= p.in_valid =} && sim.top->{= p.in_ready =};
        if (sim.top->{= p.out_valid =} && sim.top->{= p.out_ready =}) {
            const size_t v = recv / kOutBeats;
            const int b = static_cast<int>(recv % kOutBeats);
            const Words got = get_sig(sim.top->{= p.out_data =}, kOutBusBits);
            if (got != out_beats[v][b]) mismatch('B', v, b, got, out_beats[v][b]);
{%- if axi.is_some() %}
            check_last(sim, 'B', v, b, recv / kOutBeats);
{%- endif %}
            ++recv;
        }
        sim.edge();
        if (take_in) {
            ++sent;
            presenting = false;
        }
    }
    sim.finish();
    std::printf("RESULT vectors=%zu mismatches=0 ii=%lld latency=%lld\n", n, ii, latency);
    return 0;
}
